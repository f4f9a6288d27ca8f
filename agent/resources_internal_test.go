package agent

import (
	"net"
	"testing"

	v1 "k8s.io/api/core/v1"

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
