package worker

import (
	"context"
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/fsm"
)

// recordGrace is the grace period stored in the pod's record.
func (e *env) recordGrace(uid string) int64 {
	var g int64
	e.locked(func(c *Core) {
		r, _ := c.machine.Get(types.UID(uid))
		g = r.Vars.Grace
	})
	return g
}

// TestFirstGracePeriod: the grace period set when termination is requested
// is the requested one (the smaller of the deletion grace and the kill's
// override) if any, else the spec's, and never below 1 s.
func TestFirstGracePeriod(t *testing.T) {
	cases := []struct {
		name string
		op   func(p *v1.Pod) UpdatePodOptions
		want int64
	}{
		{"kill without override: the spec", func(p *v1.Pod) UpdatePodOptions { return killOp(p, nil) }, 30},
		{"kill with override", killWith(int64p(5)), 5},
		{"override 0 gives 1", killWith(int64p(0)), 1},
		{"first override longer than the spec", killWith(int64p(60)), 60},
		{"no spec, no override", func(p *v1.Pod) UpdatePodOptions { return killOp(withSpecGrace(p, nil), nil) }, 1},
		{"deletion grace", func(p *v1.Pod) UpdatePodOptions { return updateOp(deleting(p, 7)) }, 7},
		{"force deletion", func(p *v1.Pod) UpdatePodOptions { return updateOp(deleting(p, 0)) }, 1},
		{"override below the deletion grace", func(p *v1.Pod) UpdatePodOptions {
			return killOp(deleting(p, 7), &KillPodOptions{PodTerminationGracePeriodSecondsOverride: int64p(3)})
		}, 3},
		{"deletion grace below the override", func(p *v1.Pod) UpdatePodOptions {
			return killOp(deleting(p, 2), &KillPodOptions{PodTerminationGracePeriodSecondsOverride: int64p(9)})
		}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := start(t, Options{})
			pod := newPod("a", "web", false)
			e.update(createOp(pod))
			e.update(c.op(pod))
			e.wantState("a", fsm.Finished)
			e.wantFns("a", "SyncPod", "SyncTerminatingPod", "SyncTerminatedPod")
			e.wantGraces("a", c.want)
		})
	}
}

func killWith(grace *int64) func(p *v1.Pod) UpdatePodOptions {
	return func(p *v1.Pod) UpdatePodOptions {
		return killOp(p, &KillPodOptions{PodTerminationGracePeriodSecondsOverride: grace})
	}
}

// TestGraceDuringTermination: while SyncTerminatingPod runs with 30 s, a
// shorter request cancels it and the next attempt receives the shorter
// value; an equal, longer or absent request changes nothing and cancels
// nothing.
func TestGraceDuringTermination(t *testing.T) {
	cases := []struct {
		name   string
		op     func(p *v1.Pod) UpdatePodOptions
		cancel bool
		next   int64
	}{
		{"shorter override", killWith(int64p(10)), true, 10},
		{"override 0", killWith(int64p(0)), true, 1},
		{"shorter deletion grace", func(p *v1.Pod) UpdatePodOptions { return updateOp(deleting(p, 5)) }, true, 5},
		{"equal override", killWith(int64p(30)), false, 30},
		{"longer override", killWith(int64p(60)), false, 30},
		{"longer deletion grace", func(p *v1.Pod) UpdatePodOptions { return updateOp(deleting(p, 45)) }, false, 30},
		{"no request", func(p *v1.Pod) UpdatePodOptions { return syncOp(p) }, false, 30},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := start(t, Options{})
			pod := newPod("a", "web", false)
			e.update(createOp(pod))
			// The first attempt fails unless cancelled, so a second one runs
			// in every case.
			g := e.hold("a", "SyncTerminatingPod", outcome{err: errSync})
			e.send(killOp(pod, nil))
			g.wait()
			e.send(c.op(pod))
			if got := e.recordGrace("a"); got != c.next {
				t.Fatalf("record grace %d, want %d", got, c.next)
			}
			if !c.cancel {
				g.release()
			} // else the cancellation alone ends the call
			e.settle()
			e.wantFns("a", "SyncPod", "SyncTerminatingPod", "SyncTerminatingPod", "SyncTerminatedPod")
			e.wantGraces("a", 30, c.next)
			first := e.syncer.calls("a")[1]
			if c.cancel && (!errors.Is(first.err, context.Canceled) || !first.ctxDone) {
				t.Fatalf("first attempt returned %v (ctx done %v), want it cancelled", first.err, first.ctxDone)
			}
			if !c.cancel && (first.err != errSync || first.ctxDone) {
				t.Fatalf("first attempt returned %v (ctx done %v), want it left alone", first.err, first.ctxDone)
			}
		})
	}
}

// TestGraceOnlyShrinks: a sequence of requests during a failing
// termination; each attempt receives the smallest value requested so far,
// never below 1.
func TestGraceOnlyShrinks(t *testing.T) {
	e := start(t, Options{})
	pod := newPod("a", "web", false)
	e.update(createOp(pod))
	e.syncer.script("a", "SyncTerminatingPod", outcome{err: errSync}, outcome{err: errSync}, outcome{err: errSync}, outcome{err: errSync})
	want := []int64{20}
	e.update(killOp(pod, &KillPodOptions{PodTerminationGracePeriodSecondsOverride: int64p(20)}))
	for _, req := range []int64{25, 8, 12, 0} { // one failed attempt each, the last succeeds
		e.update(killOp(pod, &KillPodOptions{PodTerminationGracePeriodSecondsOverride: int64p(req)}))
		want = append(want, max(min(want[len(want)-1], req), 1))
	}
	e.wantState("a", fsm.Finished)
	e.wantGraces("a", want...) // 20 20 8 8 1
}

// TestStatusFuncLatestWins: the status function of the latest kill is the
// one handed to the terminating sync.
func TestStatusFuncLatestWins(t *testing.T) {
	e := start(t, Options{})
	pod := newPod("a", "web", false)
	e.update(createOp(pod))
	g := e.hold("a", "SyncTerminatingPod", outcome{err: errSync})
	e.send(killOp(pod, &KillPodOptions{PodStatusFunc: statusReason("Preempted")}))
	g.wait()
	e.send(killOp(pod, &KillPodOptions{PodStatusFunc: statusReason("Shutdown")}))
	e.send(killOp(pod, nil)) // no status function: the last one stays
	g.release()
	e.settle()
	calls := e.syncer.calls("a")
	if len(calls) != 4 || calls[1].reason != "Preempted" || calls[2].reason != "Shutdown" {
		t.Fatalf("calls %+v, want Preempted then Shutdown", calls)
	}
}
