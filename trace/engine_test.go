package trace_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/kubetypes"
	"github.com/podlife/podlife/trace"
	"github.com/podlife/podlife/worker"
)

// The traces in testdata/ are recorded from real engine runs by the
// scenarios below. TestTraces records each scenario again, checks it with
// trace.Check and compares it with the committed file; run
//
//	go test ./trace -run TestTraces -update
//
// to rewrite the files after a change of the engine or the table.
var update = flag.Bool("update", false, "rewrite trace/testdata/*.ndjson from engine runs")

// Each scenario drives a worker.PodWorkers whose observer is a trace.Writer
// and settles between steps without sleeping or polling: it waits for the
// transition that ends the step, which the observer (a tap around the
// Writer) reports under the engine's lock, or for a kill's completion. A
// syncer that signalled when a call returned would not do: the engine
// records the call's outcome after the syncer returned, so the test's next
// update could come first and the order of the lines would vary. The scenario
// ends with every pod idle, so the trace is the same on every run.
var scenarios = []struct {
	name string
	run  func(s *scenario)
}{
	{"lifecycle", lifecycle},
	{"static", staticPods},
	{"orphan", orphan},
	{"runtime", runtimeOnly},
	{"restart", restart},
}

// lifecycle: one pod from create to removal, with a failed SyncPod and a
// kill with a grace override.
func lifecycle(s *scenario) {
	pod := newPod("p1", "web")
	s.do(func() { s.update(worker.SyncPodCreate, pod) }, "p1", fsm.SyncPodDone)

	s.syncer.failNext("p1", "SyncPod")
	pod2 := pod.DeepCopy()
	pod2.ResourceVersion = "2"
	s.do(func() { s.update(worker.SyncPodUpdate, pod2) }, "p1", fsm.SyncPodFailed)
	// A sync is an Update too (fsm.Update covers SyncPodUpdate and SyncPodSync).
	s.do(func() { s.update(worker.SyncPodSync, pod2) }, "p1", fsm.SyncPodDone)

	s.do(func() { s.kill(pod2, 5) }, "p1", fsm.TerminatedDone)
	s.w.SyncKnownPods(nil) // not desired: the tombstone is removed
}

// staticPods: two static pods with one full name. The second waits (parks)
// while the first holds the slot, and starts from its back-off timer once
// the first finished.
func staticPods(s *scenario) {
	a := newStaticPod("s1", "etcd")
	b := newStaticPod("s2", "etcd")
	s.do(func() { s.update(worker.SyncPodCreate, a) }, "s1", fsm.SyncPodDone)

	s.do(func() { s.update(worker.SyncPodCreate, b) }, "s2", fsm.Dequeue) // parked, back-off 10-15 s

	s.do(func() { s.kill(a, -1) }, "s1", fsm.TerminatedDone)
	s.do(func() { s.clock.Step(16 * time.Second) }, "s2", fsm.SyncPodDone)

	s.do(func() { s.kill(b, 1) }, "s2", fsm.TerminatedDone)
	s.w.SyncKnownPods(nil)
}

// orphan: SyncKnownPods drives a running pod that is no longer desired to
// termination, and a later call removes its tombstone.
func orphan(s *scenario) {
	p1 := newPod("p1", "web")
	p2 := newPod("p2", "db")
	s.do(func() { s.update(worker.SyncPodCreate, p1) }, "p1", fsm.SyncPodDone)
	s.do(func() { s.update(worker.SyncPodCreate, p2) }, "p2", fsm.SyncPodDone)
	s.do(func() { s.w.SyncKnownPods([]*v1.Pod{p2}) }, "p1", fsm.TerminatedDone)
	s.w.SyncKnownPods([]*v1.Pod{p2})
}

// runtimeOnly: a pod known only to the runtime is killed and its record
// deleted; a non-kill update of it is ignored, and a second kill starts a
// new incarnation from Absent.
func runtimeOnly(s *scenario) {
	rp := &worker.RunningPod{ID: "r1", Name: "ghost", Namespace: "default"}
	s.do(func() { s.runtimeKill(rp) }, "r1", fsm.TerminatingDone)
	// A runtime-only pod accepts only kills: UpdatePod reports the misuse,
	// and the machine records the event, which changes nothing.
	if err := s.w.UpdatePod(worker.UpdatePodOptions{UpdateType: worker.SyncPodSync, RunningPod: rp}); !errors.Is(err, worker.ErrInvalidUpdate) {
		s.t.Fatalf("runtime-only sync: err %v, want ErrInvalidUpdate", err)
	}
	s.do(func() { s.runtimeKill(rp) }, "r1", fsm.TerminatingDone)
}

// restart: a UID created again while it terminates restarts after it
// finished, once SyncKnownPods (which still lists it) removed the tombstone.
func restart(s *scenario) {
	pod := newPod("p1", "web")
	s.do(func() { s.update(worker.SyncPodCreate, pod) }, "p1", fsm.SyncPodDone)

	release := s.syncer.hold("p1", "SyncTerminatingPod")
	done := make(chan struct{})
	s.do(func() {
		s.updateOpts(worker.UpdatePodOptions{UpdateType: worker.SyncPodKill, Pod: pod, KillPodOptions: &worker.KillPodOptions{CompletedCh: done}})
	}, "p1", fsm.Dequeue) // SyncTerminatingPod is running, held
	s.update(worker.SyncPodCreate, pod) // while terminating: restart requested
	s.do(func() { close(release) }, "p1", fsm.TerminatedDone)
	s.await(done, "the kill's completion")

	s.w.SyncKnownPods([]*v1.Pod{pod}) // desired, restart requested: the tombstone goes
	s.do(func() { s.update(worker.SyncPodCreate, pod) }, "p1", fsm.SyncPodDone)
}

func TestTraces(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			got := record(t, sc.run)
			lines, err := trace.Read(bytes.NewReader(got))
			if err != nil {
				t.Fatal(err)
			}
			if err := trace.Check(lines); err != nil {
				t.Fatalf("the engine's trace fails the check: %v\n%s", err, got)
			}
			path := filepath.Join("testdata", sc.name+".ndjson")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("wrote %s (%d lines)", path, len(lines))
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./trace -run TestTraces -update)", err)
			}
			committed, err := trace.Read(bytes.NewReader(want))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if err := trace.Check(committed); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("the engine's trace differs from %s (run go test ./trace -run TestTraces -update if the change is intended)\ngot:\n%s", path, got)
			}
		})
	}
}

// TestTracesHaveOneStaticFullName keeps the committed traces within what
// tla/TracePodLifecycle.tla can replay: its model has one full name.
func TestTracesHaveOneStaticFullName(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.ndjson"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no traces in testdata (%v)", err)
	}
	for _, f := range files {
		lines := readFile(t, f)
		names := map[string]bool{}
		for _, l := range lines {
			if l.FullName != "" {
				names[l.FullName] = true
			}
		}
		if len(names) > 1 {
			t.Errorf("%s: static pods of %d full names %v; the TLA+ trace module allows one", f, len(names), names)
		}
	}
}

func readFile(t *testing.T, path string) []trace.Line {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines, err := trace.Read(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return lines
}

// record runs a scenario on a fresh engine and returns its trace.
func record(t *testing.T, run func(*scenario)) []byte {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	var buf bytes.Buffer
	s := &scenario{
		t:      t,
		buf:    &buf,
		syncer: &syncer{fail: map[key]int{}, holds: map[key]chan struct{}{}},
		clock:  newTimerClock(),
	}
	s.tap = &tap{Writer: trace.NewWriter(&buf)}
	s.w = worker.New(s.syncer, worker.Options{Observer: s.tap, Clock: s.clock})
	stopped := false
	defer func() {
		if !stopped {
			s.w.Stop()
		}
	}()
	run(s)
	s.w.Stop()
	stopped = true
	goleak.VerifyNone(t, ignore)
	if err := s.tap.Err(); err != nil {
		t.Fatalf("trace writer: %v", err)
	}
	if r := s.tap.rejected(); len(r) > 0 {
		t.Fatalf("the machine rejected events: %v", r)
	}
	return buf.Bytes()
}

type scenario struct {
	t      *testing.T
	w      *worker.PodWorkers
	tap    *tap
	syncer *syncer
	clock  *timerClock
	buf    *bytes.Buffer // the trace; read it only after Stop
}

// do runs action and waits until the machine fired ev for pod.
func (s *scenario) do(action func(), pod types.UID, ev fsm.Event) {
	s.t.Helper()
	ch := s.tap.expect(pod, ev)
	action()
	s.await(ch, string(pod)+" "+ev.String())
}

func (s *scenario) await(ch <-chan struct{}, what string) {
	s.t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		s.w.Stop() // no more lines: the buffer may be read
		s.t.Fatalf("timed out waiting for %s; the trace so far:\n%s", what, s.buf.Bytes())
	}
}

func (s *scenario) update(t worker.UpdateType, pod *v1.Pod) {
	s.t.Helper()
	s.updateOpts(worker.UpdatePodOptions{UpdateType: t, Pod: pod})
}

func (s *scenario) updateOpts(o worker.UpdatePodOptions) {
	s.t.Helper()
	if err := s.w.UpdatePod(o); err != nil {
		s.t.Fatalf("UpdatePod: %v", err)
	}
}

// kill calls KillPod, which returns once no container runs; grace < 0
// keeps the pod's own grace period.
func (s *scenario) kill(pod *v1.Pod, grace int64) {
	s.t.Helper()
	var override *int64
	if grace >= 0 {
		override = &grace
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.w.KillPod(ctx, pod, false, override, nil); err != nil {
		s.t.Fatalf("KillPod: %v", err)
	}
}

func (s *scenario) runtimeKill(rp *worker.RunningPod) {
	s.t.Helper()
	done := make(chan struct{})
	s.updateOpts(worker.UpdatePodOptions{UpdateType: worker.SyncPodKill, RunningPod: rp, KillPodOptions: &worker.KillPodOptions{CompletedCh: done}})
	s.await(done, "the runtime kill's completion")
}

// tap is the engine's observer: the trace.Writer, plus notification of
// chosen transitions. Like the Writer it is called under the engine's lock;
// its own mutex only guards the expectations the test registers.
type tap struct {
	*trace.Writer
	mu     sync.Mutex
	waits  []expectation
	reject []string
}

type expectation struct {
	pod types.UID
	ev  fsm.Event
	ch  chan struct{}
}

func (t *tap) Transition(tr fsm.Transition) {
	t.Writer.Transition(tr)
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, w := range t.waits {
		if w.pod == tr.Pod && w.ev == tr.Event {
			close(w.ch)
			t.waits = append(t.waits[:i], t.waits[i+1:]...)
			return
		}
	}
}

func (t *tap) Rejected(pod types.UID, s fsm.State, ev fsm.Event, err error) {
	t.Writer.Rejected(pod, s, ev, err)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.reject = append(t.reject, string(pod)+" "+s.String()+" "+ev.String()+": "+err.Error())
}

// expect returns a channel closed when the machine next fires ev for pod.
func (t *tap) expect(pod types.UID, ev fsm.Event) <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	ch := make(chan struct{})
	t.waits = append(t.waits, expectation{pod, ev, ch})
	return ch
}

func (t *tap) rejected() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.reject
}

// timerClock is the fake clock with the timing of a real one. The engine's
// timer goroutine reads the clock, computes a duration and creates a timer;
// with a fake clock the test may step time between the reading and
// NewTimer, which would delay that timer by the whole step (and the test
// would wait forever). So a timer is due at the creating goroutine's last
// reading plus its duration, and a timer already due fires at once, as a
// real one does.
type timerClock struct {
	*clocktesting.FakeClock
	mu   sync.Mutex
	read map[uint64]time.Time // goroutine ID -> its last reading of the clock
}

var _ clock.WithTicker = (*timerClock)(nil)

func newTimerClock() *timerClock {
	return &timerClock{FakeClock: clocktesting.NewFakeClock(time.Unix(1_700_000_000, 0)), read: map[uint64]time.Time{}}
}

func (c *timerClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.FakeClock.Now()
	c.read[goroutineID()] = now
	return now
}

func (c *timerClock) NewTimer(d time.Duration) clock.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.read[goroutineID()]; ok {
		d -= c.FakeClock.Now().Sub(r)
	}
	t := c.FakeClock.NewTimer(d)
	if d <= 0 {
		c.FakeClock.Step(0) // fire it now
	}
	return t
}

// Step moves the clock; it does not run while a timer is being created.
func (c *timerClock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.FakeClock.Step(d)
}

// goroutineID parses the current goroutine's ID from its stack header
// ("goroutine 42 [running]:").
func goroutineID() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		panic("goroutineID: unexpected stack header " + string(b))
	}
	return id
}

// syncer succeeds at every call, except the calls the test scripted to
// fail once or to wait until released.
type syncer struct {
	mu    sync.Mutex
	fail  map[key]int
	holds map[key]chan struct{}
}

type key struct {
	uid types.UID
	fn  string
}

var errInjected = errors.New("injected sync failure")

// failNext makes the next call of fn for uid fail.
func (s *syncer) failNext(uid types.UID, fn string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail[key{uid, fn}]++
}

// hold makes the next call of fn for uid wait until the returned channel is
// closed.
func (s *syncer) hold(uid types.UID, fn string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan struct{})
	s.holds[key{uid, fn}] = ch
	return ch
}

func (s *syncer) call(ctx context.Context, uid types.UID, fn string) error {
	k := key{uid, fn}
	s.mu.Lock()
	hold := s.holds[k]
	delete(s.holds, k)
	fail := s.fail[k] > 0
	if fail {
		s.fail[k]--
	}
	s.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if fail {
		return errInjected
	}
	return nil
}

func (s *syncer) SyncPod(ctx context.Context, _ worker.UpdateType, pod, _ *v1.Pod, _ *worker.PodStatus) (bool, error) {
	return false, s.call(ctx, pod.UID, "SyncPod")
}

func (s *syncer) SyncTerminatingPod(ctx context.Context, pod *v1.Pod, _ *worker.PodStatus, _ *int64, _ func(*v1.PodStatus)) error {
	return s.call(ctx, pod.UID, "SyncTerminatingPod")
}

func (s *syncer) SyncTerminatingRuntimePod(ctx context.Context, rp *worker.RunningPod) error {
	return s.call(ctx, rp.ID, "SyncTerminatingRuntimePod")
}

func (s *syncer) SyncTerminatedPod(ctx context.Context, pod *v1.Pod, _ *worker.PodStatus) error {
	return s.call(ctx, pod.UID, "SyncTerminatedPod")
}

// newPod returns an API pod with a 30 s grace period.
func newPod(uid, name string) *v1.Pod {
	grace := int64(30)
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), Name: name, Namespace: "default"},
		Spec:       v1.PodSpec{TerminationGracePeriodSeconds: &grace},
	}
}

// newStaticPod returns a pod from a manifest file in kube-system.
func newStaticPod(uid, name string) *v1.Pod {
	p := newPod(uid, name)
	p.Namespace = "kube-system"
	p.Annotations = map[string]string{kubetypes.ConfigSourceAnnotation: "file"}
	return p
}
