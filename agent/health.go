package agent

import (
	"fmt"
	"sync"
	"time"
)

// failedReadsUnhealthy is how many housekeeping runtime reads in a row must
// fail for /healthz to fail, as the kubelet's health check fails once its
// pod lifecycle event generator has not listed the runtime for a while.
const failedReadsUnhealthy = 3

// runtimeReads is how housekeeping's runtime reads fare: a run of failures
// and when it began.
type runtimeReads struct {
	mu       sync.Mutex
	failures int
	since    time.Time
	lastErr  error
}

// observe records the outcome of one read at now.
func (r *runtimeReads) observe(err error, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil {
		r.failures, r.lastErr = 0, nil
		return
	}
	if r.failures == 0 {
		r.since = now
	}
	r.failures++
	r.lastErr = err
}

// problem says what fails once failedReadsUnhealthy reads in a row have
// failed, and is "" otherwise.
func (r *runtimeReads) problem() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failures < failedReadsUnhealthy {
		return ""
	}
	return fmt.Sprintf("runtime reads failing since %s (%d housekeeping intervals in a row): %v",
		r.since.UTC().Format(time.RFC3339), r.failures, r.lastErr)
}

// HealthProblem says what is wrong with the agent, "" when nothing is
// (GET /healthz): housekeeping has not run for a while, or its runtime
// reads fail.
func (a *Agent) HealthProblem() string {
	if ok, age := a.healthy(); !ok {
		return fmt.Sprintf("housekeeping last ran %s ago", age.Round(time.Millisecond))
	}
	return a.runtimeReads.problem()
}
