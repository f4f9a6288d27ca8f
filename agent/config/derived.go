package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"
	"unicode"

	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/agent/admission"
	"github.com/podlife/podlife/agent/shutdown"
	"github.com/podlife/podlife/cri/securitycontext"
)

// AllocatableResources is the CPU and memory pods may request: the configured
// amounts, or the machine's (machineErr: why its memory is unknown).
func (c *Config) AllocatableResources(machine v1.ResourceList, machineErr error) (admission.Resources, error) {
	cpu := c.allocatableQuantity(v1.ResourceCPU, machine[v1.ResourceCPU])
	mem, ok := c.Allocatable[v1.ResourceMemory]
	if !ok {
		if machineErr != nil {
			return admission.Resources{}, fmt.Errorf("allocatable memory is not set and %w", machineErr)
		}
		mem = machine[v1.ResourceMemory]
	}
	return admission.Resources{MilliCPU: cpu.MilliValue(), Memory: mem.Value()}, nil
}

// ShutdownBands are the node-shutdown priority bands; none disables
// graceful node shutdown.
func (c *Config) ShutdownBands() ([]shutdown.Band, error) {
	var byPriority []shutdown.Band
	for _, b := range c.ShutdownGracePeriodByPodPriority {
		if b.ShutdownGracePeriodSeconds < 0 {
			return nil, fmt.Errorf("shutdownGracePeriodByPodPriority: priority %d has a negative period", b.Priority)
		}
		byPriority = append(byPriority, shutdown.Band{Priority: b.Priority, Period: time.Duration(b.ShutdownGracePeriodSeconds) * time.Second})
	}
	bands, err := shutdown.Bands(c.ShutdownGracePeriod.Duration, c.ShutdownGracePeriodCriticalPods.Duration, byPriority)
	if err != nil {
		return nil, fmt.Errorf("graceful node shutdown: %w", err)
	}
	return bands, nil
}

// PodLogRoot is where a real runtime writes container logs: PodLogsDir,
// or <rootDir>/pods. The embedded runtime runs no process that could
// write them, so it gets none.
func (c *Config) PodLogRoot() string {
	if c.RuntimeEndpoint == "" {
		return ""
	}
	return c.ResolvedPodLogsDir()
}

// ResolvedPodLogsDir is PodLogsDir, or <rootDir>/pods.
func (c *Config) ResolvedPodLogsDir() string {
	if c.PodLogsDir != "" {
		return c.PodLogsDir
	}
	return filepath.Join(c.RootDir, "pods")
}

// PodsRoot is where the syncer keeps each pod's files (/etc/hosts,
// termination messages, volumes; in <uid> directories) on a real runtime:
// <rootDir>/pods, the kubelet's <root-dir>/pods. The embedded runtime
// runs no process that could read them, so it gets none.
func (c *Config) PodsRoot() string {
	if c.RuntimeEndpoint == "" {
		return ""
	}
	return filepath.Join(c.RootDir, "pods")
}

// defaultPodLogsDir is the kubelet's /var/log/pods for root, and "" (under
// the root directory) for other users.
func defaultPodLogsDir(euid int) string {
	if euid == 0 {
		return "/var/log/pods"
	}
	return ""
}

// checkPodLogsDir refuses a pod log root the kubelet's validation refuses:
// not absolute, not clean, or not ASCII (it names metrics' series).
func checkPodLogsDir(dir string) error {
	switch {
	case dir == "":
		return nil
	case !filepath.IsAbs(dir):
		return fmt.Errorf("podLogsDir %q must be an absolute path", dir)
	case filepath.Clean(dir) != dir:
		return fmt.Errorf("podLogsDir %q must be a clean path (%q)", dir, filepath.Clean(dir))
	case dir == "/":
		return errors.New(`podLogsDir must not be "/": its sibling "containers" holds the log links`)
	}
	for _, r := range dir {
		if r > unicode.MaxASCII {
			return fmt.Errorf("podLogsDir %q must have ASCII characters only", dir)
		}
	}
	return nil
}

// SecurityOptions are the syncer's seccomp settings: Localhost profiles
// under <rootDir>/seccomp, as the kubelet's under its root directory.
func (c *Config) SecurityOptions() securitycontext.Options {
	return securitycontext.Options{SeccompProfileRoot: filepath.Join(c.RootDir, "seccomp"), SeccompDefault: c.SeccompDefault}
}
