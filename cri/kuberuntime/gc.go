package kuberuntime

import (
	"context"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/cri/containergc"
)

// GarbageCollect runs, in the background, one container garbage
// collection under policy (cri/containergc): the dead instances of the
// pods that still exist beyond what it keeps go, with their logs and
// termination message files. A pod whose removal is in flight is that
// removal's. One collection runs at a time: a call while one is in flight
// starts nothing, and Close waits for it, as for removals.
func (s *Syncer) GarbageCollect(policy containergc.Policy) {
	if !s.collecting.CompareAndSwap(false, true) {
		return
	}
	s.removals.Go(func() {
		defer s.collecting.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.RemovalTimeout)
		defer cancel()
		s.gc.Collect(ctx, policy, s.removalInFlight)
	})
}

// removalInFlight reports whether a removal of the pod runs.
func (s *Syncer) removalInFlight(uid types.UID) bool {
	s.removingMu.Lock()
	defer s.removingMu.Unlock()
	return s.removing[uid]
}
