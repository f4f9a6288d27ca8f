package worker

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/fsm"
)

// TestWaitingFor: only a static pod held back by another UID that holds
// its full name waits for someone, and it names that UID.
func TestWaitingFor(t *testing.T) {
	e := start(t, Options{})
	a, b := newPod("a", "etcd", true), newPod("b", "etcd", true)
	e.update(createOp(a))
	e.update(createOp(b))
	e.update(createOp(newPod("x", "apiserver", true)))
	e.update(createOp(newPod("n", "etcd", false))) // not static: no full name to wait for
	check := func(when string, want map[types.UID]types.UID) {
		t.Helper()
		for _, uid := range []types.UID{"a", "b", "x", "n", "unknown"} {
			got, ok := e.w.WaitingFor(uid)
			if w, waits := want[uid]; ok != waits || got != w {
				t.Errorf("%s: WaitingFor(%s) = %q, %v; want %q, %v", when, uid, got, ok, w, waits)
			}
		}
	}
	check("a holds etcd", map[types.UID]types.UID{"b": "a"})
	g := e.hold("a", "SyncTerminatingPod", outcome{})
	e.send(killOp(a, nil))
	g.wait()
	check("a stops, and holds etcd until it finished", map[types.UID]types.UID{"b": "a"})
	g.release()
	e.settle()
	e.wantState("b", fsm.Waiting)
	check("a finished; b starts at its next try", nil)
	e.advance(e.backoff() * 3 / 2)
	e.wantState("b", fsm.Running)
	check("b holds etcd", nil)
}
