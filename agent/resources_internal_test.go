package agent

import (
	"errors"
	"net"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/podlife/podlife/agent/admission"
)

// The syncer's stand-in for unset limits is the allocatable CPU and memory,
// and the root directory's filesystem size.
func TestDownwardAllocatable(t *testing.T) {
	got := downwardAllocatable(admission.Resources{MilliCPU: 1500, Memory: 2 << 30}, t.TempDir())
	cpu, mem, disk := got[v1.ResourceCPU], got[v1.ResourceMemory], got[v1.ResourceEphemeralStorage]
	if cpu.MilliValue() != 1500 || mem.Value() != 2<<30 || disk.Value() <= 0 {
		t.Errorf("allocatable %v, want cpu 1500m, memory 2Gi and the disk's size", got)
	}
	if got := downwardAllocatable(admission.Resources{MilliCPU: 1000, Memory: 1}, "/does/not/exist"); len(got) != 2 {
		t.Errorf("allocatable %v without a root directory, want cpu and memory only", got)
	}
	for _, ip := range hostIPs() {
		if net.ParseIP(ip) == nil {
			t.Errorf("host IP %q", ip)
		}
	}
}

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
			c := Config{Allocatable: tt.configured}
			got, err := c.allocatable(tt.machine, tt.machineErr)
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

// The machine's capacity has its CPUs and, on Linux, its memory.
func TestMachineCapacity(t *testing.T) {
	got, err := machineCapacity()
	if err != nil {
		t.Fatal(err)
	}
	if got.Cpu().Value() < 1 || got.Memory().Value() <= 0 {
		t.Errorf("machine capacity %v, want CPUs and memory", got)
	}
}
