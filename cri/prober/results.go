package prober

import "sync"

// Results holds the latest recorded result of each probe, keyed by
// container ID and kind. A container without an entry has no result yet:
// not started (startup), not ready (readiness), not failed (liveness).
type Results struct {
	mu sync.RWMutex
	m  map[resultKey]Result
}

type resultKey struct {
	id   string
	kind Kind
}

func newResults() *Results { return &Results{m: map[resultKey]Result{}} }

// Get returns the container's recorded result of kind k, and whether it
// has one.
func (r *Results) Get(k Kind, containerID string) (Result, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	res, ok := r.m[resultKey{containerID, k}]
	return res, ok
}

// set records res and reports whether it changed the recorded result.
func (r *Results) set(k Kind, containerID string, res Result) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := resultKey{containerID, k}
	old, ok := r.m[key]
	r.m[key] = res
	return !ok || old != res
}

// remove drops the container's results.
func (r *Results) remove(containerID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range []Kind{Startup, Liveness, Readiness} {
		delete(r.m, resultKey{containerID, k})
	}
}

// len is the number of results held (for tests: nothing is left behind).
func (r *Results) len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.m)
}
