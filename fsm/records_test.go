package fsm

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// finish drives a created pod to Finished (Dequeue, SyncPodDone, Kill,
// Dequeue, TerminatingDone, Dequeue, TerminatedDone).
func finish(t *testing.T, m *Machine, uid types.UID) {
	t.Helper()
	for _, s := range []struct {
		ev Event
		p  Params
	}{
		{Dequeue, Params{}}, {SyncPodDone, Params{}}, {Kill, Params{GraceOverride: 5}}, {Dequeue, Params{}},
		{TerminatingDone, Params{}}, {Dequeue, Params{}}, {TerminatedDone, Params{}},
	} {
		mustFire(t, m, uid, "", s.ev, s.p)
	}
}

// TestRecordsSurviveRemovals creates pods, finishes some and removes them
// with SyncKnownPods (a removed record's slot is taken by the last one),
// and checks that every remaining pod keeps its own record through Get,
// Len and Range, that the bookkeeping holds (CheckBookkeeping), that a clone taken before the removal is untouched, and
// that a removed UID can start again.
func TestRecordsSurviveRemovals(t *testing.T) {
	tests := []struct {
		name     string
		pods     []types.UID
		finished []types.UID // finished, then removed by SyncKnownPods
	}{
		{"remove the last", []types.UID{"a", "b", "c"}, []types.UID{"c"}},
		{"remove the first", []types.UID{"a", "b", "c"}, []types.UID{"a"}},
		{"remove every other", []types.UID{"a", "b", "c", "d", "e"}, []types.UID{"b", "d"}},
		{"remove all", []types.UID{"a", "b"}, []types.UID{"b", "a"}},
		{"remove none", []types.UID{"a"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := New(nil)
			for _, uid := range tc.pods {
				mustFire(t, m, uid, "", Create, plain)
			}
			for _, uid := range tc.finished {
				finish(t, m, uid)
			}
			before := m.Clone()
			orphan := func(uid types.UID) Params { // only the finished are undesired
				return Params{Orphan: slices.Contains(tc.finished, uid), GraceOverride: NoGrace}
			}
			if err := m.SyncKnownPods(orphan, nil); err != nil {
				t.Fatal(err)
			}
			if err := m.CheckBookkeeping(); err != nil {
				t.Fatalf("after the removals: %v", err)
			}
			var want []types.UID
			for _, uid := range tc.pods {
				r, ok := m.Get(uid)
				gone := slices.Contains(tc.finished, uid)
				switch {
				case gone && (ok || r.State != Absent):
					t.Errorf("%s: removed, but Get = %v, %v", uid, r.State, ok)
				case !gone && (!ok || r.State != Waiting):
					t.Errorf("%s: Get = %v, %v, want Waiting", uid, r.State, ok)
				case !gone:
					want = append(want, uid)
				}
				if r, ok := before.Get(uid); !ok || (gone && r.State != Finished) || (!gone && r.State != Waiting) {
					t.Errorf("%s: the clone changed with the machine: %v, %v", uid, r.State, ok)
				}
			}
			var got []types.UID
			m.Range(func(uid types.UID, r Record) bool {
				got = append(got, uid)
				return true
			})
			slices.Sort(got)
			if !slices.Equal(got, want) || m.Len() != len(want) {
				t.Fatalf("Range = %v, Len = %d, want %v", got, m.Len(), want)
			}
			for _, uid := range tc.finished {
				if tr := mustFire(t, m, uid, "", Create, plain); tr.To != Waiting {
					t.Fatalf("%s: a removed UID's create went to %s", uid, tr.To)
				}
			}
			if err := m.CheckBookkeeping(); err != nil {
				t.Fatalf("after the removed UIDs started again: %v", err)
			}
		})
	}
}
