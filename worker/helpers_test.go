package worker

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/kubetypes"
)

// Helpers of the engine tests besides the harness (harness_test.go): pods
// and updates, a status cache, an observer, an event sink and a log sink.

func wantClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	default:
		t.Fatalf("%s: channel still open", what)
	}
}

func wantOpen(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
		t.Fatalf("%s: channel closed", what)
	default:
	}
}

// Pods and updates.

// newPod returns a pod with a UID and a 30 s grace period; static pods carry
// the config-source annotation the kubelet sets for files.
func newPod(uid, name string, static bool) *v1.Pod {
	grace := int64(30)
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), Name: name, Namespace: "default"},
		Spec:       v1.PodSpec{TerminationGracePeriodSeconds: &grace},
	}
	if static {
		p.Annotations = map[string]string{kubetypes.ConfigSourceAnnotation: kubetypes.SourceFile}
	}
	return p
}

func int64p(v int64) *int64 { return &v }

func withVersion(p *v1.Pod, rv string) *v1.Pod {
	q := p.DeepCopy()
	q.ResourceVersion = rv
	return q
}

// deleting returns the pod with a deletion timestamp and grace period.
func deleting(p *v1.Pod, grace int64) *v1.Pod {
	q := p.DeepCopy()
	ts := metav1.NewTime(time.Unix(1_700_000_000, 0))
	q.DeletionTimestamp, q.DeletionGracePeriodSeconds = &ts, &grace
	return q
}

func inPhase(p *v1.Pod, phase v1.PodPhase) *v1.Pod {
	q := p.DeepCopy()
	q.Status.Phase = phase
	return q
}

func createOp(p *v1.Pod) UpdatePodOptions { return UpdatePodOptions{UpdateType: SyncPodCreate, Pod: p} }
func updateOp(p *v1.Pod) UpdatePodOptions { return UpdatePodOptions{UpdateType: SyncPodUpdate, Pod: p} }
func syncOp(p *v1.Pod) UpdatePodOptions   { return UpdatePodOptions{UpdateType: SyncPodSync, Pod: p} }

func killOp(p *v1.Pod, kpo *KillPodOptions) UpdatePodOptions {
	return UpdatePodOptions{UpdateType: SyncPodKill, Pod: p, KillPodOptions: kpo}
}

func runningPod(uid, name string) *RunningPod {
	return &RunningPod{ID: types.UID(uid), Name: name, Namespace: "default"}
}

// runtimeKillOp is a kill of a pod known only to the runtime.
func runtimeKillOp(uid, name string, kpo *KillPodOptions) UpdatePodOptions {
	return UpdatePodOptions{UpdateType: SyncPodKill, RunningPod: runningPod(uid, name), KillPodOptions: kpo}
}

// notify returns kill options with a fresh completion channel.
func notify(grace *int64) (*KillPodOptions, chan struct{}) {
	ch := make(chan struct{})
	return &KillPodOptions{CompletedCh: ch, PodTerminationGracePeriodSecondsOverride: grace}, ch
}

func statusReason(reason string) func(*v1.PodStatus) {
	return func(s *v1.PodStatus) { s.Reason = reason }
}

// fakeCache is a StatusCache. A UID without an entry reads as running.
type fakeCache struct {
	mu       sync.Mutex
	statuses map[types.UID]*PodStatus
	err      error
}

func newFakeCache() *fakeCache { return &fakeCache{statuses: map[types.UID]*PodStatus{}} }

func (c *fakeCache) Get(uid types.UID) (*PodStatus, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return nil, c.err
	}
	if s, ok := c.statuses[uid]; ok {
		return s, nil
	}
	return runningStatus(uid), nil
}

func (c *fakeCache) set(uid types.UID, s *PodStatus) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.statuses[uid] = s
}

func (c *fakeCache) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.err = err
}

func runningStatus(uid types.UID) *PodStatus {
	return &PodStatus{ID: uid,
		SandboxStatuses:   []*runtimeapi.PodSandboxStatus{{State: runtimeapi.PodSandboxState_SANDBOX_READY}},
		ContainerStatuses: []*runtimeapi.ContainerStatus{{State: runtimeapi.ContainerState_CONTAINER_RUNNING}},
	}
}

// exitedStatus has no running container and no ready sandbox.
func exitedStatus(uid types.UID) *PodStatus {
	return &PodStatus{ID: uid,
		SandboxStatuses:   []*runtimeapi.PodSandboxStatus{{State: runtimeapi.PodSandboxState_SANDBOX_NOTREADY}},
		ContainerStatuses: []*runtimeapi.ContainerStatus{{State: runtimeapi.ContainerState_CONTAINER_EXITED}},
	}
}

// rowLog is an fsm.Observer that counts the rows that fired.
type rowLog struct {
	mu       sync.Mutex
	rows     map[string]int
	rejected []string
}

func newRowLog() *rowLog { return &rowLog{rows: map[string]int{}} }

func (l *rowLog) Transition(t fsm.Transition) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rows[t.Row]++
}

func (l *rowLog) Rejected(uid types.UID, s fsm.State, ev fsm.Event, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rejected = append(l.rejected, fmt.Sprintf("pod %s: %s in %s: %v", uid, ev, s, err))
}

func (l *rowLog) fired() map[string]bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]bool, len(l.rows))
	for r := range l.rows {
		out[r] = true
	}
	return out
}

// logSink is a slog handler that keeps the messages logged.
type logSink struct {
	mu   sync.Mutex
	msgs []string
}

func (s *logSink) Enabled(context.Context, slog.Level) bool { return true }
func (s *logSink) Handle(_ context.Context, r slog.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	s.msgs = append(s.msgs, b.String())
	return nil
}
func (s *logSink) WithAttrs([]slog.Attr) slog.Handler { return s }
func (s *logSink) WithGroup(string) slog.Handler      { return s }

func (s *logSink) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.msgs)
}

func (s *logSink) count(substr string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, m := range s.msgs {
		if strings.Contains(m, substr) {
			n++
		}
	}
	return n
}

// hangDeadline bounds a wait that ends at once when the engine is right (a
// Stop, a released KillPod, quiescence): a wait past it is a hang, reported
// by name with what is stuck and the engine's state, instead of the test
// binary's -timeout panic. It is a hang guard, not a timing assertion.
const hangDeadline = 20 * time.Second

// fataler is what the hang guards need of a *testing.T or a *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// describeLocked describes, with w.mu held, every record of the engine and
// what the shell holds for it: the stuck pod of a hang report.
func (w *PodWorkers) describeLocked() string {
	var b strings.Builder
	fmt.Fprintf(&b, "engine: %d worker loops running, %d kill waiters open, stopped %v\n", w.runningLoops, len(w.waiters), w.stopped)
	w.core.machine.Range(func(uid types.UID, r fsm.Record) bool {
		_, armed := w.timers.byUID[uid]
		_, ctx := w.syncCtxs[uid]
		fmt.Fprintf(&b, "  pod %s: %s %+v, timer armed %v, sync context %v\n", uid, r.State, r.Vars, armed, ctx)
		return true
	})
	return b.String()
}

// describe is describeLocked, taking w.mu unless a goroutine holds it
// for good (which is then the report).
func (w *PodWorkers) describe() string {
	for range 100 {
		if w.mu.TryLock() {
			defer w.mu.Unlock()
			return w.describeLocked()
		}
		time.Sleep(10 * time.Millisecond)
	}
	return "engine: its mutex is held and not released (a goroutine stuck or panicked holding it)\n"
}

// within runs f (a call that must return) and fails the test, naming what
// and describing the engine, if it has not returned after hangDeadline.
func within(t fataler, what string, w *PodWorkers, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(hangDeadline):
		t.Fatalf("hang: %s has not returned after %v\n%s", what, hangDeadline, w.describe())
	}
}

// receiveWithin receives from ch, failing the test as within does.
func receiveWithin[T any](t fataler, what string, w *PodWorkers, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(hangDeadline):
		t.Fatalf("hang: %s has not happened after %v\n%s", what, hangDeadline, w.describe())
	}
	var zero T
	return zero
}
