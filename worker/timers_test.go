package worker

import (
	"fmt"
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
				uid, _, ok := q.popDue(at(100))
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

// TestTimerQueueDropsDeadEntries removes most of many timers, so that the
// dead entries left in the heap outnumber the live ones and the heap is
// rebuilt without them, and checks that the live timers still come due in
// time order, each once, with no dead entry left.
func TestTimerQueueDropsDeadEntries(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	tests := []struct {
		name         string
		pods, remove int // set pods timers (pod i due at i s, in reverse), remove the first ones
		wantCompact  bool
	}{
		{"few removed: dead entries stay", 100, 10, false},
		{"most removed: heap rebuilt", 400, 350, true},
		{"all removed", 300, 300, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := newTimerQueue()
			uid := func(i int) types.UID { return types.UID(fmt.Sprintf("pod-%03d", i)) }
			for i := tc.pods - 1; i >= 0; i-- {
				q.set(uid(i), t0.Add(time.Duration(i)*time.Second))
			}
			for i := range tc.remove {
				q.remove(uid(i))
			}
			if compacted := len(q.items) < tc.pods; compacted != tc.wantCompact {
				t.Fatalf("%d heap entries for %d timers, %d removed: compacted = %v, want %v", len(q.items), tc.pods, tc.remove, compacted, tc.wantCompact)
			}
			var want, got []types.UID
			for i := tc.remove; i < tc.pods; i++ {
				want = append(want, uid(i))
			}
			for {
				u, _, ok := q.popDue(t0.Add(time.Hour))
				if !ok {
					break
				}
				got = append(got, u)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("due order %v, want %v", got, want)
			}
			if len(q.items) != 0 || len(q.byUID) != 0 || q.dead != 0 {
				t.Fatalf("after popping all: %d entries, %d timers, %d dead", len(q.items), len(q.byUID), q.dead)
			}
		})
	}
}
