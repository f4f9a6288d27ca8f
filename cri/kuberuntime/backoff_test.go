package kuberuntime

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"
)

func TestRestartBackoff(t *testing.T) {
	const initial, maxDelay = 10 * time.Second, 40 * time.Second
	s := time.Second
	// Each step is one restart decision: the container exited at exitAt,
	// it is now, and want is the wait (0: restart now, counted).
	type step struct{ exitAt, now, want time.Duration }
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"first exit restarts at once", []step{{0, 0, 0}}},
		{"first exit, seen late", []step{{0, time.Hour, 0}}},
		{"second exit waits the initial delay", []step{{0, 0, 0}, {1 * s, 1 * s, initial}}},
		{"the wait shrinks as time passes", []step{{0, 0, 0}, {1 * s, 5 * s, 6 * s}, {1 * s, 10 * s, 1 * s}, {1 * s, 11 * s, 0}}},
		{"asking again inside the back-off does not raise it", []step{{0, 0, 0}, {0, 0, 10 * s}, {0, 5 * s, 5 * s}, {0, 5 * s, 5 * s}, {0, 10 * s, 0}, {10 * s, 10 * s, 20 * s}}},
		{"an exit seen after its delay restarts at once", []step{{0, 0, 0}, {1 * s, 30 * s, 0}, {30 * s, 30 * s, 20 * s}}},
		{"doubles up to the cap", []step{
			{0, 0, 0},
			{0, 0, 10 * s}, {0, 10 * s, 0},
			{10 * s, 10 * s, 20 * s}, {10 * s, 30 * s, 0},
			{30 * s, 30 * s, 40 * s}, {30 * s, 70 * s, 0},
			{70 * s, 70 * s, 40 * s}, {70 * s, 110 * s, 0},
			{110 * s, 110 * s, 40 * s},
		}},
		{"a quiet period of twice the cap starts over", []step{
			{0, 0, 0},
			{1 * s, 1 * s, 10 * s}, {1 * s, 11 * s, 0},
			{12 * s, 12 * s, 20 * s}, {12 * s, 32 * s, 0},
			// 88 s since the last exit (> 2*40 s): a fresh start.
			{100 * s, 100 * s, 0},
			{101 * s, 101 * s, initial},
		}},
		{"exactly twice the cap is not quiet enough", []step{
			{0, 0, 0},
			{1 * s, 1 * s, 10 * s}, {1 * s, 11 * s, 0},
			{12 * s, 12 * s, 20 * s}, {12 * s, 32 * s, 0},
			{92 * s, 92 * s, 40 * s},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := testingclock.NewFakePassiveClock(epoch)
			b := newRestartBackoff(clk, initial, maxDelay)
			for i, st := range tc.steps {
				clk.SetTime(epoch.Add(st.now))
				// The plan's question first: it counts nothing, and
				// restart then answers the same.
				if got := b.wait("uid", "c", epoch.Add(st.exitAt)); got != st.want {
					t.Fatalf("step %d %+v: wait() %s, want %s", i, st, got, st.want)
				}
				if got := b.restart("uid", "c", epoch.Add(st.exitAt)); got != st.want {
					t.Fatalf("step %d %+v: wait %s, want %s", i, st, got, st.want)
				}
			}
		})
	}
}

func TestRestartBackoffKeys(t *testing.T) {
	clk := testingclock.NewFakePassiveClock(epoch)
	b := newRestartBackoff(clk, 10*time.Second, time.Minute)
	crash := func(uid types.UID, name string) time.Duration {
		b.restart(uid, name, clk.Now()) // the first exit: restarted
		return b.restart(uid, name, clk.Now())
	}
	if w := crash("p1", "a"); w != 10*time.Second {
		t.Fatalf("p1/a waits %s", w)
	}
	// Other containers and other pods have back-offs of their own.
	for _, k := range []struct {
		uid  types.UID
		name string
	}{{"p1", "b"}, {"p2", "a"}} {
		if w := b.restart(k.uid, k.name, clk.Now()); w != 0 {
			t.Errorf("%s/%s waits %s on its first exit", k.uid, k.name, w)
		}
	}
	// forget drops a pod's state, and only that pod's.
	b.forget("p1")
	if _, ok := b.entries["p1"]; ok {
		t.Error("p1 kept after forget")
	}
	if len(b.entries["p2"]) != 1 {
		t.Error("p2 lost")
	}
	if w := b.restart("p1", "a", clk.Now()); w != 0 {
		t.Errorf("p1/a waits %s after forget", w)
	}
	b.forget("unknown") // a no-op
}
