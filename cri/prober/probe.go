package prober

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
)

// Kind is a probe's kind.
type Kind int

// The probe kinds.
const (
	Startup Kind = iota
	Liveness
	Readiness
)

func (k Kind) String() string {
	switch k {
	case Startup:
		return "Startup"
	case Liveness:
		return "Liveness"
	case Readiness:
		return "Readiness"
	}
	return "Unknown"
}

// Result is a probe's outcome.
type Result int

// The probe results. A Runner returns Success, Warning or Failure; Unknown
// is a result not known yet. Warning is a success the kubelet warns about
// (an httpGet probe's redirect to another host, not followed): it is
// recorded as Success, and the run's output goes into a ProbeWarning
// event.
const (
	Unknown Result = iota
	Success
	Failure
	Warning
)

func (r Result) String() string {
	switch r {
	case Success:
		return "Success"
	case Failure:
		return "Failure"
	case Warning:
		return "Warning"
	}
	return "Unknown"
}

// Target is the container a probe runs against.
type Target struct {
	Pod       *v1.Pod
	Container *v1.Container
	// ContainerID is the runtime's ID of the running instance.
	ContainerID string
	// SandboxID is its sandbox, whose IP network probes call.
	SandboxID string
}

// Runner runs one probe once. It returns Success, Warning or Failure with
// the probe's output (for the Unhealthy or ProbeWarning event), or an error when the probe
// could not be run at all (the runtime failed, a port name is unknown):
// such a run is not counted, as in the kubelet. p has the API's defaults
// applied; the runner bounds the probe by p.TimeoutSeconds.
type Runner interface {
	Probe(ctx context.Context, t Target, p *v1.Probe) (Result, string, error)
}

// The API's defaults for a probe's fields (k8s.io/api core/v1 Probe).
const (
	defaultPeriodSeconds    = 10
	defaultTimeoutSeconds   = 1
	defaultSuccessThreshold = 1
	defaultFailureThreshold = 3
)

// withDefaults is a copy of p with the API's defaults for the fields left
// 0 (an API server defaults them; a manifest may leave them out). Liveness
// and startup probes need one success, whatever successThreshold says: the
// API allows no other value for them.
func withDefaults(p *v1.Probe, k Kind) *v1.Probe {
	d := p.DeepCopy()
	if d.PeriodSeconds <= 0 {
		d.PeriodSeconds = defaultPeriodSeconds
	}
	if d.TimeoutSeconds <= 0 {
		d.TimeoutSeconds = defaultTimeoutSeconds
	}
	if d.SuccessThreshold <= 0 || k != Readiness {
		d.SuccessThreshold = defaultSuccessThreshold
	}
	if d.FailureThreshold <= 0 {
		d.FailureThreshold = defaultFailureThreshold
	}
	d.InitialDelaySeconds = max(d.InitialDelaySeconds, 0)
	return d
}

// MaxTimeout caps a probe's timeout: the kubelet's runtimeRequestTimeout
// default, the bound of every other runtime call (the API accepts a
// timeoutSeconds of 100,000, which would hold an exec slot for a day).
const MaxTimeout = 2 * time.Minute

// Timeout is the probe's timeoutSeconds as a duration (the API's default
// when unset), bounded by the node: by its period (the next run is due by
// then; the kubelet lets a probe overrun its period, so a hung one only
// delays its own next run, but here it also holds an exec slot) and by
// MaxTimeout.
func Timeout(p *v1.Probe) time.Duration {
	timeout := time.Duration(p.TimeoutSeconds) * time.Second
	if p.TimeoutSeconds <= 0 {
		timeout = defaultTimeoutSeconds * time.Second
	}
	period := time.Duration(p.PeriodSeconds) * time.Second
	if p.PeriodSeconds <= 0 {
		period = defaultPeriodSeconds * time.Second
	}
	return min(timeout, period, MaxTimeout)
}

// probeOf is container c's probe of kind k, nil when it has none.
func probeOf(c *v1.Container, k Kind) *v1.Probe {
	switch k {
	case Startup:
		return c.StartupProbe
	case Liveness:
		return c.LivenessProbe
	}
	return c.ReadinessProbe
}

// threshold counts a probe's consecutive results, and says when the
// latest is to be recorded: after failureThreshold failures in a row, or
// successThreshold successes in a row (the kubelet's resultRun).
type threshold struct {
	last Result
	run  int32
}

// observe counts r and reports whether it is to be recorded.
func (t *threshold) observe(r Result, p *v1.Probe) bool {
	if r == t.last {
		t.run++
	} else {
		t.last, t.run = r, 1
	}
	switch r {
	case Failure:
		return t.run >= p.FailureThreshold
	case Success:
		return t.run >= p.SuccessThreshold
	}
	return false
}
