package securitycontext

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
)

// defaultMaskedPaths are the kubelet's (kept in sync with moby's, as its
// are): /proc and /sys files that tell a container about the host or let
// it reach the hardware, plus each CPU's thermal_throttle directory that
// exists on this node.
var defaultMaskedPaths = sync.OnceValue(func() []string {
	paths := []string{
		"/proc/asound",
		"/proc/acpi",
		"/proc/interrupts",
		"/proc/kcore",
		"/proc/keys",
		"/proc/latency_stats",
		"/proc/timer_list",
		"/proc/timer_stats",
		"/proc/sched_debug",
		"/proc/scsi",
		"/sys/firmware",
		"/sys/devices/virtual/powercap",
	}
	for _, cpu := range possibleCPUs() {
		p := fmt.Sprintf("/sys/devices/system/cpu/cpu%d/thermal_throttle", cpu)
		if _, err := os.Stat(p); err == nil {
			paths = append(paths, p)
		}
	}
	return paths
})

// defaultReadonlyPaths are the kubelet's read-only /proc paths.
var defaultReadonlyPaths = []string{
	"/proc/bus",
	"/proc/fs",
	"/proc/irq",
	"/proc/sys",
	"/proc/sysrq-trigger",
}

// MaskedPaths are the paths masked in the container: none with procMount
// Unmasked, the default list otherwise (the kubelet's
// ConvertToRuntimeMaskedPaths). A fresh slice each time: callers may keep
// it in a config.
func MaskedPaths(pm *v1.ProcMountType) []string {
	if pm != nil && *pm == v1.UnmaskedProcMount {
		return []string{}
	}
	return append([]string(nil), defaultMaskedPaths()...)
}

// ReadonlyPaths are the paths made read-only, as MaskedPaths.
func ReadonlyPaths(pm *v1.ProcMountType) []string {
	if pm != nil && *pm == v1.UnmaskedProcMount {
		return []string{}
	}
	return append([]string(nil), defaultReadonlyPaths...)
}

// possibleCPUs are the CPUs /sys/devices/system/cpu/possible lists (as
// "0-3,5"), or 0 to NumCPU-1 when it cannot be read.
func possibleCPUs() []int {
	data, err := os.ReadFile("/sys/devices/system/cpu/possible")
	if cpus, ok := parseCPUList(string(data)); err == nil && ok {
		return cpus
	}
	cpus := make([]int, runtime.NumCPU())
	for i := range cpus {
		cpus[i] = i
	}
	return cpus
}

// parseCPUList parses a kernel CPU list ("0-3,5"); false when malformed.
func parseCPUList(s string) ([]int, bool) {
	var cpus []int
	for r := range strings.SplitSeq(strings.TrimSpace(s), ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		start, err := strconv.Atoi(lo)
		if err != nil {
			return nil, false
		}
		end := start
		if isRange {
			if end, err = strconv.Atoi(hi); err != nil || end < start {
				return nil, false
			}
		}
		for i := start; i <= end; i++ {
			cpus = append(cpus, i)
		}
	}
	return cpus, true
}
