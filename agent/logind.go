package agent

import (
	"context"
	"sync"
	"time"

	"github.com/podlife/podlife/agent/shutdown/logind"
)

// watchLogind takes systemd-logind's delay inhibitor lock and runs the
// node shutdown that logind announces, as the kubelet's graceful node
// shutdown manager does, when shutdown grace periods are configured. With
// no system bus or no logind the agent runs on without it (the kubelet
// logs "Failed to start node shutdown manager" and runs on too); 'podlife
// shutdown' still starts a node shutdown by hand. It runs in a goroutine
// of wg's, so that a bus that hangs does not hold up the agent; the
// watcher ends with ctx, releasing the lock.
func (a *Agent) watchLogind(ctx context.Context, wg *sync.WaitGroup) {
	if !a.shutdown.Enabled() || a.opts.NoLogind {
		return
	}
	wg.Go(func() {
		w, err := logind.Start(ctx, logind.Config{
			Address: a.opts.SystemBusAddress, GracePeriod: a.shutdownGracePeriod(),
			Handler: logindHandler{a}, Logger: a.log,
		})
		if err != nil {
			if ctx.Err() == nil {
				a.log.Warn("graceful node shutdown through systemd-logind is unavailable: pods are stopped before a node shutdown only when 'podlife shutdown' asks", "err", err)
			}
			return
		}
		<-w.Done()
	})
}

// shutdownGracePeriod is the whole time a node shutdown takes: the sum of
// its bands' periods (the kubelet's periodRequested).
func (a *Agent) shutdownGracePeriod() time.Duration {
	bands, _ := a.cfg.ShutdownBands()
	var total time.Duration
	for _, b := range bands {
		total += b.Period
	}
	return total
}

// logindHandler runs the node shutdown logind announces. Unlike a shutdown
// asked for by hand, the agent does not exit after it: the system stops it
// once the shutdown goes on, or logind cancels the shutdown and the node
// returns to service. The status manager still runs: the stopped pods'
// statuses reach the API server while the lock is released.
type logindHandler struct{ a *Agent }

func (h logindHandler) NodeShutdown(ctx context.Context) {
	if err := h.a.nodeShutdown(ctx); err != nil {
		h.a.log.Error("node shutdown announced by logind", "err", err)
	}
}

func (h logindHandler) ShutdownCancelled(context.Context) {
	if !h.a.shutdown.Cancel() {
		h.a.log.Warn("logind cancelled the node shutdown while pods were still stopping: the node stays shutting down")
		return
	}
	if h.a.cluster != nil {
		h.a.cluster.node.ClearShuttingDown()
	}
	h.a.log.Info("node shutdown cancelled by logind: pods are admitted again")
}
