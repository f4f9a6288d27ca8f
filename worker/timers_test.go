package worker

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// TestTimerQueueReusesItems drives a timer queue through sets, resets,
// removals and pops, so that removed items are reused by later sets, and
// checks that the pods come due in time order, each once, and that a
// reused item carries nothing of its earlier pod.
func TestTimerQueueReusesItems(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	type op struct {
		set    types.UID // set this pod at due ...
		due    int
		remove types.UID // ... or remove this one
	}
	tests := []struct {
		name string
		ops  []op
		want []types.UID // popDue(at(100)) until empty
	}{
		{"plain order", []op{{set: "a", due: 3}, {set: "b", due: 1}, {set: "c", due: 2}}, []types.UID{"b", "c", "a"}},
		{"reset moves a pod", []op{{set: "a", due: 1}, {set: "b", due: 2}, {set: "a", due: 3}}, []types.UID{"b", "a"}},
		{"removed items reused", []op{{set: "a", due: 1}, {set: "b", due: 2}, {remove: "a"}, {remove: "b"},
			{set: "c", due: 5}, {set: "d", due: 4}, {set: "e", due: 6}}, []types.UID{"d", "c", "e"}},
		{"remove of an unknown pod", []op{{remove: "x"}, {set: "a", due: 1}}, []types.UID{"a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := newTimerQueue()
			// Items popped from a first round are on the free list.
			for _, uid := range []types.UID{"old1", "old2"} {
				q.set(uid, at(0))
			}
			for range 2 {
				q.popDue(at(0))
			}
			for _, o := range tc.ops {
				if o.remove != "" {
					q.remove(o.remove)
				} else {
					q.set(o.set, at(o.due))
				}
			}
			var got []types.UID
			for {
				uid, ok := q.popDue(at(100))
				if !ok {
					break
				}
				got = append(got, uid)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("due order %v, want %v", got, tc.want)
			}
			if len(q.byUID) != 0 || len(q.items) != 0 {
				t.Fatalf("queue not empty after popping all: %d items", len(q.items))
			}
		})
	}
}
