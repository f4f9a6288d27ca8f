package fsm

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// lifecycle is one pod's whole life: 11 fires.
var lifecycle = []struct {
	ev Event
	p  Params
}{
	{Create, plain}, {Dequeue, Params{}}, {SyncPodDone, Params{}}, {Requeue, Params{}}, {Dequeue, Params{}},
	{Kill, Params{GraceOverride: 5}}, {SyncPodDone, Params{}}, {Dequeue, Params{}}, {TerminatingDone, Params{}},
	{Dequeue, Params{}}, {TerminatedDone, Params{}},
}

// BenchmarkFire reports the cost of one Fire (generated guard, looplab's
// check, generated update) averaged over a pod's lifecycle.
func BenchmarkFire(b *testing.B) { benchFire(b, New(nil)) }

// BenchmarkFireChecked is BenchmarkFire in the checked mode (looplab's full
// Event per state change).
func BenchmarkFireChecked(b *testing.B) { benchFire(b, NewChecked(nil)) }

func benchFire(b *testing.B, m *Machine) {
	uid := types.UID("pod")
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		s := lifecycle[n%len(lifecycle)]
		if _, err := m.Fire(uid, "", s.ev, s.p); err != nil {
			b.Fatal(err)
		}
		if n%len(lifecycle) == len(lifecycle)-1 {
			if err := m.SyncKnownPods(func(types.UID) Params { return Params{Orphan: true} }, nil); err != nil {
				b.Fatal(err)
			}
		}
		n++
	}
}

// BenchmarkGuardAndApply is Fire without looplab, the map and the world
// facts: the generated guard and update of one row.
func BenchmarkGuardAndApply(b *testing.B) {
	r := &rows[rowsByPair[Running][Kill][0]]
	v := Vars{HasConfig: true, Started: true}
	p := Params{GraceOverride: 5, SpecGrace: 30, Notify: true}
	b.ReportAllocs()
	for b.Loop() {
		if r.guard(v, p) {
			_ = r.apply(v, p)
		}
	}
}
