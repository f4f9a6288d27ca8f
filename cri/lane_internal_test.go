package cri

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// waitQueued polls until the lane has ahead and others waiters: the
// queue's order is what the tests below set up, one waiter at a time.
func waitQueued(t *testing.T, l *changeLane, ahead, others int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		a, o := l.waiting()
		if a == ahead && o == others {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting: %d ahead, %d others; want %d, %d", a, o, ahead, others)
		}
		time.Sleep(time.Millisecond)
	}
}

// The change lane hands a freed slot to the calls ahead (a pod's container
// create and start) before the others (new sandboxes, removals), each
// class in arrival order; a waiter whose context ends leaves its place and
// no slot is lost.
func TestChangeLaneOrder(t *testing.T) {
	tests := []struct {
		name   string
		arrive []bool // true: ahead
		want   []int  // the arrivals in the order they get the slot
	}{
		{"ahead before earlier others", []bool{false, false, true}, []int{2, 0, 1}},
		{"each class in arrival order", []bool{true, false, true, false}, []int{0, 2, 1, 3}},
		{"others alone: arrival order", []bool{false, false, false}, []int{0, 1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newChangeLane(1)
			hold, err := l.acquire(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			got := make(chan int, len(tt.arrive))
			releases := make(chan func(), len(tt.arrive))
			ahead, others := 0, 0
			for i, a := range tt.arrive {
				take := l.acquire
				if a {
					take, ahead = l.acquireAhead, ahead+1
				} else {
					others++
				}
				go func() {
					release, err := take(context.Background())
					if err != nil {
						t.Error(err)
						return
					}
					got <- i
					releases <- release
				}()
				waitQueued(t, l, ahead, others)
			}
			hold()
			for _, want := range tt.want {
				if g := <-got; g != want {
					t.Fatalf("arrival %d got the slot, want %d", g, want)
				}
				(<-releases)()
			}
			if l.free != 1 {
				t.Errorf("%d free slots at the end, want 1", l.free)
			}
		})
	}
}

func TestChangeLaneCancelledWaiter(t *testing.T) {
	l := newChangeLane(1)
	hold, err := l.acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := l.acquireAhead(ctx)
		done <- err
	}()
	waitQueued(t, l, 1, 0)
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a waiter whose context ended got a slot")
	}
	waitQueued(t, l, 0, 0)
	hold()
	release, err := l.acquire(t.Context())
	if err != nil {
		t.Fatalf("the slot after a cancelled waiter: %v", err)
	}
	release()
	if l.free != 1 {
		t.Errorf("%d free slots, want 1", l.free)
	}
	if release, err := (*changeLane)(nil).acquireAhead(t.Context()); err != nil {
		t.Errorf("a nil lane (no limit): %v", err)
	} else {
		release()
	}
}

// The exec lane's cost per call, uncontended and with 64 pods' calls
// contending for its 32 slots (every release wakes the waiters).
func BenchmarkSharedLane(b *testing.B) {
	for _, pods := range []int{1, 64} {
		b.Run(fmt.Sprintf("pods=%d", pods), func(b *testing.B) {
			s := newSharedLane(DefaultExecPerPod, DefaultExecPerNode)
			var next atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				key := fmt.Sprintf("pod/%d", next.Add(1)%int64(pods))
				for pb.Next() {
					release, err := s.acquire(context.Background(), key)
					if err != nil {
						b.Fatal(err)
					}
					release()
				}
			})
		})
	}
}
