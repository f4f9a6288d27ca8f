package config

import (
	"fmt"
	"path/filepath"
	"time"

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

// PodLogRoot is where a real runtime writes container logs, and where the
// syncer keeps each pod's files (/etc/hosts, termination messages; in
// <uid> directories, beside the logs' <namespace>_<name>_<uid>): under the
// agent's root directory. The embedded runtime runs no process that could
// read or write them, so it gets neither.
func (c *Config) PodLogRoot() string {
	if c.RuntimeEndpoint == "" {
		return ""
	}
	return filepath.Join(c.RootDir, "pods")
}

// SecurityOptions are the syncer's seccomp settings: Localhost profiles
// under <rootDir>/seccomp, as the kubelet's under its root directory.
func (c *Config) SecurityOptions() securitycontext.Options {
	return securitycontext.Options{SeccompProfileRoot: filepath.Join(c.RootDir, "seccomp"), SeccompDefault: c.SeccompDefault}
}
