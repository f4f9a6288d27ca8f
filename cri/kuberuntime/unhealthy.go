package kuberuntime

import (
	"context"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/events"
	"github.com/podlife/podlife/cri/prober"
)

// What the syncer does with the probes' results: it tells the prober which
// containers run (setStatus), and SyncPod kills and restarts a container
// whose startup or liveness probe failed. Readiness needs nothing here: the
// status generation applies it (apistatus).

// running lists the pod's running containers in the sandbox, for the
// prober; none without a sandbox.
func running(p *cri.PodRuntime, sbID string) []prober.Running {
	var out []prober.Running
	for _, c := range p.Containers {
		if sbID == "" || p.SandboxOf[c.Id] != sbID || c.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		out = append(out, prober.Running{Name: c.GetMetadata().GetName(), ID: c.Id, SandboxID: sbID, StartedAt: time.Unix(0, c.StartedAt)})
	}
	return out
}

// started reports whether running container c, instance cur, is started:
// it has no startup probe, or its startup probe succeeded. Without a
// prober no probe runs, so every container counts as started.
func (s *Syncer) started(c *v1.Container, cur *runtimeapi.ContainerStatus) bool {
	results := s.opts.Probes.Results()
	if c.StartupProbe == nil || results == nil {
		return true
	}
	r, ok := results.Get(prober.Startup, cur.Id)
	return ok && r == prober.Success
}

// failedKind is the kind of the probe whose recorded failure condemns the
// running container id, if one did.
func (s *Syncer) failedKind(id string) (prober.Kind, bool) {
	results := s.opts.Probes.Results()
	if results == nil {
		return 0, false
	}
	for _, k := range []prober.Kind{prober.Startup, prober.Liveness} {
		if r, ok := results.Get(k, id); ok && r == prober.Failure {
			return k, true
		}
	}
	return 0, false
}

// killUnhealthy kills a container whose startup or liveness probe failed,
// after its preStop hook, within the probe's terminationGracePeriodSeconds
// or else the pod's, as the kubelet does; the plan restarts it (restart)
// unless the restart policy is Never. Nothing is killed once termination
// was requested (ctx cancelled): the termination stops the container
// anyway.
func (s *Syncer) killUnhealthy(ctx context.Context, ps *podSync, c *v1.Container, cur *runtimeapi.ContainerStatus, k prober.Kind, restart bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	grace := podGracePeriod(ps.pod)
	p := c.LivenessProbe
	if k == prober.Startup {
		p = c.StartupProbe
	}
	if p != nil && p.TerminationGracePeriodSeconds != nil && *p.TerminationGracePeriodSeconds >= 0 {
		grace = *p.TerminationGracePeriodSeconds
	}
	msg := events.FailedProbe(c.Name, strings.ToLower(k.String()))
	if restart {
		msg = events.WillRestart(msg)
	}
	err := s.killContainer(ctx, kill{pod: ps.pod, spec: c, status: cur, sbID: ps.sbID, grace: grace, event: msg})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("kill unhealthy container: %w", err)
	}
	return err
}
