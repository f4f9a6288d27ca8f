package stats

import (
	"sync"
	"time"
)

// cpuSample is one reading of a cumulative CPU usage.
type cpuSample struct {
	at    int64 // nanoseconds since the epoch
	usage uint64
	// nanoCores is the rate computed when this sample was taken, kept so
	// that a second reading of the same sample answers the same.
	nanoCores *uint64
}

// cpuRates turns cumulative CPU usage into a rate from two samples
// (kubelet: criStatsProvider.getAndUpdateContainerUsageNanoCores): it keeps
// each object's previous sample, keyed by "container/<id>", "pod/<id>" or
// "node".
type cpuRates struct {
	mu   sync.Mutex
	last map[string]cpuSample
	seen map[string]bool // the keys sampled since the last prune
}

func newCPURates() *cpuRates {
	return &cpuRates{last: map[string]cpuSample{}, seen: map[string]bool{}}
}

// nanoCores records a sample of key's cumulative usage (nanoseconds of
// CPU) taken at at, and returns the usage in nanocores since the previous
// sample: nil for the first sample, after the counter went back (a new
// container under a reused key) or with no time between them.
func (r *cpuRates) nanoCores(key string, at time.Time, usage uint64) *uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen[key] = true
	now := cpuSample{at: at.UnixNano(), usage: usage}
	prev, ok := r.last[key]
	switch {
	case ok && prev.at == now.at && prev.usage == now.usage:
		// The runtime answered from the same sample (it caches its own).
		return prev.nanoCores
	case !ok || usage < prev.usage || now.at <= prev.at:
		r.last[key] = now
		return nil
	}
	rate := uint64(float64(usage-prev.usage) / float64(now.at-prev.at) * float64(time.Second))
	now.nanoCores = &rate
	r.last[key] = now
	return &rate
}

// prune forgets the samples of every key not sampled since the last prune:
// containers and pods that are gone.
func (r *cpuRates) prune() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k := range r.last {
		if !r.seen[k] {
			delete(r.last, k)
		}
	}
	r.seen = map[string]bool{}
}
