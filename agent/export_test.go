package agent

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// StatusOf is the latest API status the agent recorded for uid: PodInfo
// carries no conditions, which node shutdown's tests need to see.
func (a *Agent) StatusOf(uid types.UID) (v1.PodStatus, bool) { return a.statuses.Get(uid) }

// Resync polls the runtime and resyncs the pods whose containers changed,
// as the cache's poller does, and returns once that is done. A test that
// needs a sync retry to wait for its back-off calls it first: afterwards
// the agent's view of an unchanged pod is current, so no later poll takes
// a catch-up for a change and retries the pod's sync at once.
func (a *Agent) Resync(ctx context.Context) error {
	if err := a.cache.Refresh(ctx); err != nil {
		return err
	}
	a.resyncChanged()
	return nil
}

// AppArmorEnabledForTest is whether this host enforces AppArmor, as the
// agent's admission reads it.
func AppArmorEnabledForTest() bool { return appArmorEnabled() }

// HealthzOnAnyPort opens the agent's healthz port on a free port rather
// than its configured one: tests never bind the kubelet's 10248.
func HealthzOnAnyPort(o Options) Options {
	o.healthzAnyPort = true
	return o
}
