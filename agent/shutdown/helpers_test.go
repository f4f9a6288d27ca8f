package shutdown

import (
	"context"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/podlife/podlife/internal/testlog"
)

// pod returns a pod; a nil priority or grace leaves the field unset.
func pod(name string, priority *int32, grace *int64) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name)},
		Spec:       v1.PodSpec{Priority: priority, TerminationGracePeriodSeconds: grace},
	}
}

func prio(p int32) *int32 { return ptr.To(p) }
func secs(s int64) *int64 { return ptr.To(s) }

// killCall is one KillPod call, held until the test releases it or its
// context ends; returned then carries what KillPod returned.
type killCall struct {
	pod      *v1.Pod
	evict    bool
	grace    *int64
	statusFn func(*v1.PodStatus)
	release  chan error
	returned chan error
}

// fakeKiller hands every call to the test and records the order in which
// kills start and return.
type fakeKiller struct {
	calls chan *killCall
	mu    sync.Mutex
	log   []string // "start NAME" and "return NAME"
}

func newFakeKiller() *fakeKiller { return &fakeKiller{calls: make(chan *killCall, 100)} }

func (k *fakeKiller) KillPod(ctx context.Context, pod *v1.Pod, evict bool, grace *int64, statusFn func(*v1.PodStatus)) error {
	c := &killCall{pod: pod, evict: evict, grace: grace, statusFn: statusFn, release: make(chan error, 1), returned: make(chan error, 1)}
	k.record("start " + pod.Name)
	k.calls <- c
	var err error
	select {
	case err = <-c.release:
	case <-ctx.Done():
		err = ctx.Err()
	}
	k.record("return " + pod.Name)
	c.returned <- err
	return err
}

func (k *fakeKiller) record(s string) {
	k.mu.Lock()
	k.log = append(k.log, s)
	k.mu.Unlock()
}

func (k *fakeKiller) events() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.log...)
}

// watchdog bounds every wait of a test, so that a broken Manager fails
// the test instead of hanging it. Correct runs never come near it.
const watchdog = 30 * time.Second

// next returns the next kill call.
func (k *fakeKiller) next(t *testing.T) *killCall {
	t.Helper()
	select {
	case c := <-k.calls:
		return c
	case <-time.After(watchdog):
		t.Fatal("no KillPod call")
		return nil
	}
}

// nextN returns the next n kill calls by pod name.
func (k *fakeKiller) nextN(t *testing.T, n int) map[string]*killCall {
	t.Helper()
	calls := map[string]*killCall{}
	for range n {
		c := k.next(t)
		calls[c.pod.Name] = c
	}
	return calls
}

// noMoreCalls fails if a call is queued. It cannot see calls that have not
// been made yet; tests use it after a point where any such call would be.
func (k *fakeKiller) noMoreCalls(t *testing.T) {
	t.Helper()
	select {
	case c := <-k.calls:
		t.Errorf("unexpected KillPod call for %s", c.pod.Name)
	default:
	}
}

func wait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(watchdog):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

// waitForLog waits until the log holds a line containing want.
func waitForLog(t *testing.T, logs *testlog.Buffer, want string) {
	t.Helper()
	deadline := time.Now().Add(watchdog)
	for len(logs.Lines(want)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for a log line with %q:\n%s", want, logs)
		}
		time.Sleep(time.Millisecond)
	}
}

// timerClock is a fake clock that remembers the duration of every timer,
// so that tests can check a band waits exactly its period.
type timerClock struct {
	*clocktesting.FakeClock
	mu     sync.Mutex
	timers []time.Duration
}

func (c *timerClock) NewTimer(d time.Duration) clock.Timer {
	c.mu.Lock()
	c.timers = append(c.timers, d)
	c.mu.Unlock()
	return c.FakeClock.NewTimer(d)
}

func (c *timerClock) durations() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.timers...)
}
