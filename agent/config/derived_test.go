package config_test

import (
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/podlife/podlife/agent/admission"
	"github.com/podlife/podlife/agent/config"
)

// Configured allocatable wins over the machine's, resource by resource; an
// unknown machine memory is an error only when none is configured.
func TestAllocatable(t *testing.T) {
	machine := v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("8Gi")}
	cpuOnly := v1.ResourceList{v1.ResourceCPU: resource.MustParse("4")}
	unreadable := errors.New("no /proc/meminfo")
	tests := []struct {
		name       string
		configured v1.ResourceList
		machine    v1.ResourceList
		machineErr error
		want       admission.Resources
		wantErr    string
	}{
		{name: "the machine's", machine: machine, want: admission.Resources{MilliCPU: 4000, Memory: 8 << 30}},
		{name: "configured", configured: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1500m"), v1.ResourceMemory: resource.MustParse("1Gi")},
			machine: machine, want: admission.Resources{MilliCPU: 1500, Memory: 1 << 30}},
		{name: "memory configured, CPU the machine's", configured: v1.ResourceList{v1.ResourceMemory: resource.MustParse("1Gi")},
			machine: machine, want: admission.Resources{MilliCPU: 4000, Memory: 1 << 30}},
		{name: "machine memory unknown but configured", configured: v1.ResourceList{v1.ResourceMemory: resource.MustParse("1Gi")},
			machine: cpuOnly, machineErr: unreadable, want: admission.Resources{MilliCPU: 4000, Memory: 1 << 30}},
		{name: "machine memory unknown", machine: cpuOnly, machineErr: unreadable, wantErr: "allocatable memory is not set and no /proc/meminfo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := config.Config{Allocatable: tt.configured}
			got, err := c.AllocatableResources(tt.machine, tt.machineErr)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("allocatable %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}
