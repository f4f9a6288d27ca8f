package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/internal/testevents"
)

// TestInvalidUpdates: bad input is refused with an error wrapping
// ErrInvalidUpdate that names the problem; nothing changes, and a
// completion channel carried by the update is closed.
func TestInvalidUpdates(t *testing.T) {
	pod := newPod("a", "web", false)
	noUID := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}}
	cases := []struct {
		name string
		o    UpdatePodOptions
		msg  string
	}{
		{"neither Pod nor RunningPod", UpdatePodOptions{UpdateType: SyncPodKill}, "neither Pod nor RunningPod is set"},
		{"pod without UID", killOp(noUID, nil), "pod default/web has no UID"},
		{"runtime pod without UID", runtimeKillOp("", "ghost", nil), "runtime pod default/ghost has no UID"},
		{"runtime-only pod with a non-kill type", UpdatePodOptions{UpdateType: SyncPodUpdate, RunningPod: runningPod("a", "web")}, "can only be killed"},
		{"unknown update type", UpdatePodOptions{UpdateType: 7, Pod: pod}, "unknown update type 7"},
		{"negative update type", UpdatePodOptions{UpdateType: -1, Pod: pod}, "unknown update type -1"},
		{"negative grace override", killOp(pod, &KillPodOptions{PodTerminationGracePeriodSecondsOverride: int64p(-1)}), "negative grace period override -1"},
		{"negative deletion grace", updateOp(deleting(pod, -5)), "negative deletion grace period -5"},
		{"negative spec grace", updateOp(withSpecGrace(pod, int64p(-2))), "negative terminationGracePeriodSeconds -2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := start(t, Options{})
			e.update(createOp(pod))
			done := make(chan struct{})
			o := c.o
			if o.KillPodOptions == nil {
				o.KillPodOptions = &KillPodOptions{}
			}
			o.KillPodOptions.CompletedCh = done
			err := e.w.UpdatePod(o)
			if !errors.Is(err, ErrInvalidUpdate) {
				t.Fatalf("err %v, want one wrapping ErrInvalidUpdate", err)
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("err %q does not name the problem (%q)", err, c.msg)
			}
			wantClosed(t, done, "completion channel of an invalid update")
			e.settle()
			e.wantState("a", fsm.Running)
			e.wantFns("a", "SyncPod")
			if n := e.w.core.machine.Len(); n != 1 {
				t.Fatalf("%d records, want only a's", n)
			}
			if e.w.IsPodTerminationRequested("a") {
				t.Fatal("an invalid kill requested termination")
			}
		})
	}
}

// TestUpdatePodAfterStop: after Stop every update is refused with
// ErrStopped, and its completion channel is closed.
func TestUpdatePodAfterStop(t *testing.T) {
	e := start(t, Options{})
	pod := newPod("a", "web", false)
	e.update(createOp(pod))
	e.w.Stop()
	kpo, done := notify(nil)
	if err := e.w.UpdatePod(killOp(pod, kpo)); !errors.Is(err, ErrStopped) {
		t.Fatalf("err %v, want ErrStopped", err)
	}
	wantClosed(t, done, "kill after Stop")
	if err := e.w.KillPod(context.Background(), pod, false, nil, nil); !errors.Is(err, ErrStopped) {
		t.Fatalf("KillPod after Stop: %v, want ErrStopped", err)
	}
	e.wantState("a", fsm.Running)
	e.wantFns("a", "SyncPod")
}

// TestStopCancelsSyncsInFlight: Stop cancels the context of every running
// sync call and returns once they all returned.
func TestStopCancelsSyncsInFlight(t *testing.T) {
	e := start(t, Options{})
	ga := e.hold("a", "SyncPod", outcome{})
	gb := e.hold("b", "SyncTerminatingPod", outcome{})
	e.send(createOp(newPod("a", "web", false)))
	e.send(killOp(newPod("b", "db", false), nil))
	ga.wait()
	gb.wait()
	e.w.Stop()
	for _, uid := range []string{"a", "b"} {
		calls := e.syncer.calls(types.UID(uid))
		if len(calls) != 1 || !calls[0].ctxDone || !errors.Is(calls[0].err, context.Canceled) {
			t.Fatalf("pod %s: calls %+v, want one cancelled call", uid, calls)
		}
	}
}

// TestKillPodBlocksUntilTerminated: KillPod returns once the terminating
// sync succeeded, not before.
func TestKillPodBlocksUntilTerminated(t *testing.T) {
	e := start(t, Options{})
	pod := newPod("a", "web", false)
	e.update(createOp(pod))
	g := e.hold("a", "SyncTerminatingPod", outcome{})
	res := make(chan error, 1)
	go func() { res <- e.w.KillPod(context.Background(), pod, true, int64p(3), statusReason("Evicted")) }()
	g.wait()
	select {
	case err := <-res:
		t.Fatalf("KillPod returned %v while SyncTerminatingPod runs", err)
	default:
	}
	g.release()
	if err := <-res; err != nil {
		t.Fatalf("KillPod: %v", err)
	}
	if e.w.CouldHaveRunningContainers("a") || !e.w.IsPodKnownTerminated("a") {
		t.Fatal("KillPod returned before the pod terminated")
	}
	e.settle()
	e.wantState("a", fsm.Finished)
	e.wantGraces("a", 3)
	if c := e.syncer.calls("a")[1]; c.reason != "Evicted" {
		t.Fatalf("status function not passed: %+v", c)
	}
	if !e.w.ShouldPodContentBeRemoved("a") {
		t.Fatal("KillPod with evict: the pod is evicted")
	}
}

// TestKillPodContextEnds: KillPod returns the context's error when it ends
// first; the termination goes on.
func TestKillPodContextEnds(t *testing.T) {
	for _, c := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{"cancelled", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}, context.Canceled},
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithDeadline(context.Background(), time.Unix(0, 0))
		}, context.DeadlineExceeded},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := start(t, Options{})
			pod := newPod("a", "web", false)
			e.update(createOp(pod))
			g := e.hold("a", "SyncTerminatingPod", outcome{})
			ctx, cancel := c.ctx()
			defer cancel()
			err := e.w.KillPod(ctx, pod, false, nil, nil)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), "default/web") {
				t.Fatalf("KillPod: %v, want %v naming the pod", err, c.want)
			}
			g.wait()
			e.wantState("a", fsm.Terminating)
			g.release()
			e.settle()
			e.wantState("a", fsm.Finished)
		})
	}
}

// TestKillPodReturnsAtOnce: KillPod of a pod that cannot be kept waiting
// returns without blocking.
func TestKillPodReturnsAtOnce(t *testing.T) {
	e := start(t, Options{})
	a, b := newPod("a", "etcd", true), newPod("b", "etcd", true)
	e.update(createOp(a))
	e.update(createOp(b))
	if err := e.w.KillPod(context.Background(), b, false, nil, nil); err != nil { // static, never started
		t.Fatalf("KillPod of a waiting static pod: %v", err)
	}
	e.settle()
	e.wantFns("b")
	if err := e.w.KillPod(context.Background(), b, false, nil, nil); err != nil { // finished
		t.Fatalf("KillPod of a finished pod: %v", err)
	}
	if err := e.w.KillPod(context.Background(), &v1.Pod{}, false, nil, nil); !errors.Is(err, ErrInvalidUpdate) {
		t.Fatalf("KillPod of a pod without UID: %v", err)
	}
	if err := e.w.KillPod(context.Background(), a, false, int64p(-3), nil); !errors.Is(err, ErrInvalidUpdate) {
		t.Fatalf("KillPod with a negative grace period: %v", err)
	}
	e.wantState("a", fsm.Running)
}

// TestPanickingSyncerIsRetried: a panic in a sync function is a failed
// sync: logged, and retried after the back-off.
func TestPanickingSyncerIsRetried(t *testing.T) {
	sink := &logSink{}
	e := start(t, Options{Logger: slog.New(sink)})
	pod := newPod("a", "web", false)
	e.syncer.panicNext("a", "SyncPod", 1)
	e.update(createOp(pod))
	e.wantState("a", fsm.Running)
	e.wantFns("a", "SyncPod")
	if sink.count("SyncPod panicked") == 0 {
		t.Fatalf("panic not logged: %v", sink.all())
	}
	e.advance(e.backoff() * 3 / 2)
	e.wantFns("a", "SyncPod", "SyncPod")
	for _, fn := range []string{"SyncTerminatingPod", "SyncTerminatedPod"} {
		e.syncer.panicNext("a", fn, 1)
	}
	e.update(killOp(pod, nil))
	e.wantState("a", fsm.Terminating)
	e.advance(e.backoff() * 3 / 2)
	e.wantState("a", fsm.Terminated)
	e.advance(e.backoff() * 3 / 2)
	e.wantState("a", fsm.Finished)
	e.wantFns("a", "SyncPod", "SyncPod", "SyncTerminatingPod", "SyncTerminatingPod", "SyncTerminatedPod", "SyncTerminatedPod")

	e.syncer.panicNext("r", "SyncTerminatingRuntimePod", 1)
	e.update(runtimeKillOp("r", "ghost", nil))
	e.wantState("r", fsm.Terminating)
	e.advance(e.backoff() * 3 / 2)
	e.wantState("r", fsm.Absent)
	e.wantFns("r", "SyncTerminatingRuntimePod", "SyncTerminatingRuntimePod")
}

// TestSyncPanicsBackOffGrows: a pod whose sync function panics N times
// then succeeds is retried after a back-off that doubles from BackOffPeriod
// with each consecutive panic, up to 5 minutes; each panic is counted by
// function and recorded as a Warning event on the pod (none for a
// runtime-only pod, which has no object); a call that returns resets the
// back-off.
func TestSyncPanicsBackOffGrows(t *testing.T) {
	const backoff = 40 * time.Second
	reg := prometheus.NewPedanticRegistry()
	events := &testevents.Recorder{}
	e := start(t, Options{BackOffPeriod: backoff, Registerer: reg, Recorder: events})
	armed := func(uid types.UID) time.Duration {
		t.Helper()
		e.w.mu.Lock()
		defer e.w.mu.Unlock()
		it, ok := e.w.timers.byUID[uid]
		if !ok {
			t.Fatalf("pod %s has no timer armed", uid)
		}
		return it.due.Sub(e.clock.Now())
	}
	wantBackOff := func(what string, d time.Duration) {
		t.Helper()
		if got := armed("a"); got < d || got >= d*3/2 {
			t.Fatalf("%s: the retry is due in %v, want [%v, %v)", what, got, d, d*3/2)
		}
	}
	delays := []time.Duration{backoff, 2 * backoff, 4 * backoff, 5 * time.Minute, 5 * time.Minute}
	e.syncer.panicNext("a", "SyncPod", len(delays))
	e.update(createOp(newPod("a", "web", false)))
	for i, d := range delays {
		wantBackOff(fmt.Sprintf("after panic %d", i+1), d)
		e.advance(armed("a"))
		if n := len(e.syncer.fns("a")); n != i+2 {
			t.Fatalf("after retry %d: %d calls, want %d", i+1, n, i+2)
		}
	}
	e.wantState("a", fsm.Running)
	if got := armed("a"); got < e.resync() {
		t.Fatalf("after the call that returned, the pod is due in %v, want its resync (%v)", got, e.resync())
	}
	e.syncer.panicNext("a", "SyncPod", 1)
	e.advance(armed("a")) // the resync panics: the back-off starts over
	wantBackOff("after a panic that follows a call that returned", backoff)

	e.syncer.panicNext("r", "SyncTerminatingRuntimePod", 1)
	e.update(runtimeKillOp("r", "ghost", nil))

	want := `
# HELP podlife_sync_panics_total Sync calls that panicked, by sync function (each is retried as a failed sync, after a growing back-off).
# TYPE podlife_sync_panics_total counter
podlife_sync_panics_total{function="SyncPod"} 6
podlife_sync_panics_total{function="SyncTerminatingRuntimePod"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "podlife_sync_panics_total"); err != nil {
		t.Error(err)
	}
	got := events.Events()
	if len(got) != 6 {
		t.Fatalf("%d events, want 6 (one per panic of a): %+v", len(got), got)
	}
	wantEvent := testevents.Event{UID: "a", Pod: "web", Type: v1.EventTypeWarning, Reason: "SyncPanic", Message: "SyncPod panicked: injected panic in SyncPod"}
	for _, ev := range got {
		if ev != wantEvent {
			t.Fatalf("event %+v, want a Warning SyncPanic naming the function and the panic value", ev)
		}
	}
}

// TestTruncate: a SyncPanic event quotes at most maxEventValue bytes of the
// panic value, cut on a rune boundary and marked.
func TestTruncate(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"short", "short"},
		{strings.Repeat("x", maxEventValue), strings.Repeat("x", maxEventValue)},
		{strings.Repeat("x", maxEventValue+1), strings.Repeat("x", maxEventValue) + "…"},
		{strings.Repeat("x", maxEventValue-1) + "é", strings.Repeat("x", maxEventValue-1) + "…"}, // é is 2 bytes
	} {
		if got := truncate(c.in, maxEventValue); got != c.want {
			t.Errorf("truncate(%d bytes) = %q (%d bytes), want %d bytes", len(c.in), got, len(got), len(c.want))
		}
	}
}

// TestRetryAndResyncTiming: a failed sync is retried after BackOffPeriod
// (jittered up to 1.5x), a successful SyncPod runs again after
// ResyncInterval (jittered the same way), never earlier.
func TestRetryAndResyncTiming(t *testing.T) {
	const backoff, resync = 4 * time.Second, 20 * time.Second
	e := start(t, Options{BackOffPeriod: backoff, ResyncInterval: resync})
	e.syncer.script("a", "SyncPod", outcome{err: errSync})
	e.update(createOp(newPod("a", "web", false)))
	e.advance(backoff - time.Nanosecond)
	e.wantFns("a", "SyncPod")
	e.advance(backoff/2 + time.Nanosecond)
	e.wantFns("a", "SyncPod", "SyncPod")
	e.advance(resync - time.Nanosecond)
	e.wantFns("a", "SyncPod", "SyncPod")
	e.advance(resync/2 + time.Nanosecond)
	e.wantFns("a", "SyncPod", "SyncPod", "SyncPod")
	if c := e.syncer.calls("a")[2]; c.updateType != SyncPodSync {
		t.Fatalf("resync ran %s, want sync", c.updateType)
	}
	// An idle running pod keeps resyncing.
	e.advance(resync * 3 / 2)
	e.wantFns("a", "SyncPod", "SyncPod", "SyncPod", "SyncPod")
}

// TestCanceledIsNotAnError: a sync that returns context.Canceled (bare or
// wrapped) is not logged as a failure; any other error is.
func TestCanceledIsNotAnError(t *testing.T) {
	sink := &logSink{}
	e := start(t, Options{Logger: slog.New(sink)})
	e.syncer.script("a", "SyncPod", outcome{err: context.Canceled}, outcome{err: fmt.Errorf("runtime: %w", context.Canceled)}, outcome{err: errSync})
	e.update(createOp(newPod("a", "web", false)))
	e.advance(e.backoff() * 3 / 2)
	if n := sink.count("sync failed"); n != 0 {
		t.Fatalf("cancellations logged as failures: %v", sink.all())
	}
	e.advance(e.backoff() * 3 / 2)
	if n := sink.count("sync failed"); n != 1 || sink.count(errSync.Error()) != 1 {
		t.Fatalf("want one failure logged with its error, got %v", sink.all())
	}
	e.advance(e.backoff() * 3 / 2)
	e.wantFns("a", "SyncPod", "SyncPod", "SyncPod", "SyncPod")
	e.wantState("a", fsm.Running)
}

// TestStatusCacheError: when the status cache fails, the sync function is
// not called; the attempt counts as failed and is retried after the
// back-off.
func TestStatusCacheError(t *testing.T) {
	sink := &logSink{}
	cache := newFakeCache()
	e := start(t, Options{StatusCache: cache, Logger: slog.New(sink)})
	cache.fail(errors.New("cache unavailable"))
	e.update(createOp(newPod("a", "web", false)))
	e.wantState("a", fsm.Running)
	e.wantFns("a")
	if sink.count("cache unavailable") != 1 {
		t.Fatalf("cache error not reported: %v", sink.all())
	}
	e.advance(e.backoff() * 3 / 2)
	e.wantFns("a")
	cache.fail(nil)
	e.advance(e.backoff() * 3 / 2)
	e.wantFns("a", "SyncPod")
}

// TestSyncersReadRuntime: a syncer that reads the runtime itself gets the
// pod's identity, not the cache's status (whose read would be thrown
// away), and a failing cache does not hold its syncs back; the cache
// still tells that a pod in a terminal phase runs nothing.
func TestSyncersReadRuntime(t *testing.T) {
	cache := newFakeCache()
	e := start(t, Options{StatusCache: cache, SyncersReadRuntime: true})
	cache.fail(errors.New("cache unavailable"))
	e.update(createOp(newPod("a", "web", false)))
	e.wantFns("a", "SyncPod")
	if s := e.syncer.calls("a")[0].status; s == nil || s.ID != "a" || s.Name != "web" || len(s.ContainerStatuses) != 0 {
		t.Fatalf("status %+v, want the pod's identity", s)
	}
	cache.fail(nil)
	cache.set("b", exitedStatus("b"))
	e.update(createOp(inPhase(newPod("b", "web2", false), v1.PodSucceeded)))
	e.wantFns("b", "SyncTerminatedPod")
}

// TestNoStatusCache: without a StatusCache, syncers get the pod's identity.
func TestNoStatusCache(t *testing.T) {
	e := start(t, Options{})
	e.update(createOp(newPod("a", "web", false)))
	s := e.syncer.calls("a")[0].status
	if s == nil || s.ID != "a" || s.Name != "web" || s.Namespace != "default" {
		t.Fatalf("status %+v, want the pod's identity", s)
	}
}
