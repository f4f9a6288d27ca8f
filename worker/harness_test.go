package worker

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/kubetypes"
)

// call is one sync call the recording syncer saw.
type call struct {
	fn         string // SyncPod, SyncTerminatingPod, SyncTerminatingRuntimePod, SyncTerminatedPod
	uid        types.UID
	updateType UpdateType
	grace      int64 // SyncTerminatingPod: the grace period, -1 when nil
	hadStatus  bool  // SyncTerminatingPod: a status function was passed
}

// outcome scripts one sync call's result.
type outcome struct {
	terminal bool
	err      error
	block    chan struct{} // when set, the call waits for it (or its ctx)
}

var errSync = errors.New("injected sync error")

// recorder is a PodSyncer that records every call and returns scripted
// outcomes per (pod, function); by default every call succeeds.
type recorder struct {
	mu      sync.Mutex
	calls   []call
	scripts map[types.UID]map[string][]outcome
}

func newRecorder() *recorder { return &recorder{scripts: map[types.UID]map[string][]outcome{}} }

// script queues outcomes for the next calls of fn for uid.
func (r *recorder) script(uid types.UID, fn string, outs ...outcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.scripts[uid] == nil {
		r.scripts[uid] = map[string][]outcome{}
	}
	r.scripts[uid][fn] = append(r.scripts[uid][fn], outs...)
}

func (r *recorder) record(ctx context.Context, c call) (bool, error) {
	r.mu.Lock()
	r.calls = append(r.calls, c)
	var out outcome
	if q := r.scripts[c.uid][c.fn]; len(q) > 0 {
		out, r.scripts[c.uid][c.fn] = q[0], q[1:]
	}
	r.mu.Unlock()
	if out.block != nil {
		select {
		case <-out.block:
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	return out.terminal, out.err
}

func (r *recorder) SyncPod(ctx context.Context, t UpdateType, pod, _ *v1.Pod, _ *PodStatus) (bool, error) {
	return r.record(ctx, call{fn: "SyncPod", uid: pod.UID, updateType: t})
}

func (r *recorder) SyncTerminatingPod(ctx context.Context, pod *v1.Pod, _ *PodStatus, grace *int64, fn func(*v1.PodStatus)) error {
	g := int64(-1)
	if grace != nil {
		g = *grace
	}
	_, err := r.record(ctx, call{fn: "SyncTerminatingPod", uid: pod.UID, grace: g, hadStatus: fn != nil})
	return err
}

func (r *recorder) SyncTerminatingRuntimePod(ctx context.Context, rp *RunningPod) error {
	_, err := r.record(ctx, call{fn: "SyncTerminatingRuntimePod", uid: rp.ID})
	return err
}

func (r *recorder) SyncTerminatedPod(ctx context.Context, pod *v1.Pod, _ *PodStatus) error {
	_, err := r.record(ctx, call{fn: "SyncTerminatedPod", uid: pod.UID})
	return err
}

// fns lists the functions called for uid, in order.
func (r *recorder) fns(uid types.UID) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, c := range r.calls {
		if c.uid == uid {
			out = append(out, c.fn)
		}
	}
	return out
}

func (r *recorder) last(uid types.UID) call {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.calls) - 1; i >= 0; i-- {
		if r.calls[i].uid == uid {
			return r.calls[i]
		}
	}
	return call{}
}

// env is a PodWorkers under test with a fake clock.
type env struct {
	t     *testing.T
	w     *PodWorkers
	rec   *recorder
	clock *clocktesting.FakeClock
}

func newEnv(t *testing.T, opts Options) *env {
	t.Helper()
	// Snapshot before the engine starts: taken at cleanup, it would ignore
	// every goroutine still alive and the check could never fail.
	ignore := goleak.IgnoreCurrent()
	e := &env{t: t, rec: newRecorder(), clock: clocktesting.NewFakeClock(time.Unix(1_700_000_000, 0))}
	opts.Clock = e.clock
	e.w = New(e.rec, opts)
	t.Cleanup(func() {
		e.w.Stop()
		goleak.VerifyNone(t, ignore)
	})
	return e
}

// settle waits until no worker loop runs (nothing in flight except calls
// blocked by the test).
func (e *env) settle() { e.w.waitIdle() }

// advance moves the fake clock, fires due timers and settles.
func (e *env) advance(d time.Duration) {
	e.clock.Step(d)
	e.w.fireDue()
	e.settle()
}

func (e *env) update(o UpdatePodOptions) {
	e.t.Helper()
	if err := e.w.UpdatePod(o); err != nil {
		e.t.Fatalf("UpdatePod: %v", err)
	}
	e.settle()
}

func (e *env) wantState(uid types.UID, want fsm.State) {
	e.t.Helper()
	if got, _ := e.w.State(uid); got != want {
		e.t.Fatalf("pod %s is %s, want %s", uid, got, want)
	}
}

// newPod returns a pod with a UID and a 30 s grace period; static pods carry
// the config-source annotation the kubelet sets for files.
func newPod(uid, name string, static bool) *v1.Pod {
	grace := int64(30)
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), Name: name, Namespace: "default"},
		Spec:       v1.PodSpec{TerminationGracePeriodSeconds: &grace},
	}
	if static {
		p.Annotations = map[string]string{kubetypes.ConfigSourceAnnotation: "file"}
	}
	return p
}

func int64p(v int64) *int64 { return &v }
