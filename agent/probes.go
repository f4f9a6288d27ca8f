package agent

import (
	"k8s.io/utils/clock"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/lifecycle"
	"github.com/podlife/podlife/cri/prober"
	"github.com/podlife/podlife/worker"
)

// newProber returns the manager of the containers' probes, which runs them
// on the agent's clock (the real one if that clock cannot run timers).
func (a *Agent) newProber(rt cri.Runtime) *prober.Manager {
	clk, _ := a.clock.(clock.WithDelayedExecution)
	return prober.NewManager(prober.Config{
		Runner: lifecycle.NewProbeRunner(rt), Clock: clk, Events: a.events, Logger: a.log, OnChange: a.probeChanged,
		Registerer: a.probeMetrics,
	})
}

// probeChanged acts on a changed probe result: a startup or readiness
// result changes the pod's status at once (through the status manager,
// whatever its sync is doing); a startup or liveness failure asks the
// engine for a sync, in which SyncPod kills the container and restarts it
// (the engine ignores it once termination was requested). A startup
// success asks for one too, as the kubelet syncs on every startup result:
// a sidecar's turn ends when its startup probe succeeds, and the next
// container starts in that sync.
func (a *Agent) probeChanged(u prober.Update) {
	if u.Kind != prober.Liveness {
		a.statuses.ProbesChanged(u.Pod.UID)
	}
	startupSucceeded := u.Kind == prober.Startup && u.Result == prober.Success
	if u.Kind == prober.Readiness || (u.Result != prober.Failure && !startupSucceeded) {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if e, ok := a.pods[u.Pod.UID]; ok && e.rejection == nil {
		if !startupSucceeded {
			a.log.Info("probe failed: the container is restarted", "probe", u.Kind.String(),
				"pod", e.pod.Namespace+"/"+e.pod.Name, "container", u.ContainerName)
		}
		a.updatePod(worker.SyncPodSync, e.pod)
	}
}
