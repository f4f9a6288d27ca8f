package cri

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	fakecri "k8s.io/cri-api/pkg/apis/testing"
	testingclock "k8s.io/utils/clock/testing"
)

// The syncer removes pods in background goroutines; every test must leave
// none behind (each harness closes its syncer).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// ---- recorders -------------------------------------------------------------

// statusLog records every status the syncer writes.
type statusLog struct {
	mu  sync.Mutex
	all map[types.UID][]v1.PodStatus
}

func (l *statusLog) SetPodStatus(pod *v1.Pod, status v1.PodStatus) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.all == nil {
		l.all = map[types.UID][]v1.PodStatus{}
	}
	l.all[pod.UID] = append(l.all[pod.UID], *status.DeepCopy())
}

// count is how many statuses were written for uid.
func (l *statusLog) count(uid types.UID) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.all[uid])
}

// last is the current status of uid; it fails the test if there is none.
func (l *statusLog) last(t *testing.T, uid types.UID) v1.PodStatus {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.all[uid]
	if len(s) == 0 {
		t.Fatalf("no status written for pod %s", uid)
	}
	return s[len(s)-1]
}

type recordedEvent struct {
	uid         types.UID
	typ, reason string
	message     string
}

// eventLog records every event, in order.
type eventLog struct {
	mu     sync.Mutex
	events []recordedEvent
}

func (l *eventLog) Eventf(pod *v1.Pod, eventType, reason, messageFmt string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, recordedEvent{uid: pod.UID, typ: eventType, reason: reason, message: fmt.Sprintf(messageFmt, args...)})
}

// reasons lists the reasons of uid's events, in order.
func (l *eventLog) reasons(uid types.UID) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.events {
		if e.uid == uid {
			out = append(out, e.reason)
		}
	}
	return out
}

// messages lists uid's events with the given reason.
func (l *eventLog) messages(uid types.UID, reason string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.events {
		if e.uid == uid && e.reason == reason {
			out = append(out, e.message)
		}
	}
	return out
}

func (l *eventLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = nil
}

// ---- a runtime wrapper to observe and distort the fake ---------------------

type stopCall struct {
	id      string
	timeout int64
}

// hookRuntime is the fake runtime with optional hooks in front of some
// calls; a nil hook passes the call to the fake. It records every
// StopContainer with its timeout.
type hookRuntime struct {
	*fakecri.FakeRuntimeService

	onCreate func(ctx context.Context, sandboxID string, cfg *runtimeapi.ContainerConfig) error // before the fake's CreateContainer; an error fails the call
	onStart  func(ctx context.Context, id string, next func() error) error
	onStop   func(ctx context.Context, id string, timeout int64, next func() error) error
	onRemove func(ctx context.Context, id string, next func() error) error
	onExec   func(ctx context.Context, id string, cmd []string) error // instead of the fake's ExecSync

	mu    sync.Mutex
	stops []stopCall
}

func (r *hookRuntime) CreateContainer(ctx context.Context, sandboxID string, cfg *runtimeapi.ContainerConfig, sbCfg *runtimeapi.PodSandboxConfig) (string, error) {
	if r.onCreate != nil {
		if err := r.onCreate(ctx, sandboxID, cfg); err != nil {
			return "", err
		}
	}
	return r.FakeRuntimeService.CreateContainer(ctx, sandboxID, cfg, sbCfg)
}

func (r *hookRuntime) StartContainer(ctx context.Context, id string) error {
	next := func() error { return r.FakeRuntimeService.StartContainer(ctx, id) }
	if r.onStart != nil {
		return r.onStart(ctx, id, next)
	}
	return next()
}

func (r *hookRuntime) StopContainer(ctx context.Context, id string, timeout int64) error {
	r.mu.Lock()
	r.stops = append(r.stops, stopCall{id, timeout})
	r.mu.Unlock()
	next := func() error { return r.FakeRuntimeService.StopContainer(ctx, id, timeout) }
	if r.onStop != nil {
		return r.onStop(ctx, id, timeout, next)
	}
	return next()
}

func (r *hookRuntime) ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) ([]byte, []byte, error) {
	if r.onExec != nil {
		return nil, nil, r.onExec(ctx, id, cmd)
	}
	return r.FakeRuntimeService.ExecSync(ctx, id, cmd, timeout)
}

func (r *hookRuntime) RemoveContainer(ctx context.Context, id string) error {
	next := func() error { return r.FakeRuntimeService.RemoveContainer(ctx, id) }
	if r.onRemove != nil {
		return r.onRemove(ctx, id, next)
	}
	return next()
}

// stopCalls returns the StopContainer calls so far, sorted by ID (they run
// concurrently).
func (r *hookRuntime) stopCalls() []stopCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.stops)
	slices.SortFunc(out, func(a, b stopCall) int {
		if a.id < b.id {
			return -1
		}
		if a.id > b.id {
			return 1
		}
		return 0
	})
	return out
}

func (r *hookRuntime) resetStops() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stops = nil
}

// hookImages is the fake image service with an optional hook in front of
// PullImage.
type hookImages struct {
	*fakecri.FakeImageService
	onPull func(ctx context.Context, image string, next func() (string, error)) (string, error)
}

func (i *hookImages) PullImage(ctx context.Context, spec *runtimeapi.ImageSpec, auth *runtimeapi.AuthConfig, sbCfg *runtimeapi.PodSandboxConfig) (string, error) {
	next := func() (string, error) { return i.FakeImageService.PullImage(ctx, spec, auth, sbCfg) }
	if i.onPull != nil {
		return i.onPull(ctx, spec.Image, next)
	}
	return next()
}

// ---- harness ---------------------------------------------------------------

// epoch is the fake clock's start.
var epoch = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

type harness struct {
	t        *testing.T
	fake     *fakecri.FakeRuntimeService
	rt       *hookRuntime
	images   *fakecri.FakeImageService
	imgs     *hookImages
	clock    *testingclock.FakeClock
	statuses *statusLog
	events   *eventLog
	s        *Syncer
}

// newHarness returns a syncer over the fakes with a fake clock; the images
// given are present. opts may set options; the recorders and the clock are
// the harness's. The syncer is closed when the test ends.
func newHarness(t *testing.T, opts Options, presentImages ...string) *harness {
	t.Helper()
	h := &harness{
		t:        t,
		fake:     fakecri.NewFakeRuntimeService(),
		images:   fakecri.NewFakeImageService(),
		clock:    testingclock.NewFakeClock(epoch),
		statuses: &statusLog{},
		events:   &eventLog{},
	}
	h.rt = &hookRuntime{FakeRuntimeService: h.fake}
	h.imgs = &hookImages{FakeImageService: h.images}
	h.images.SetFakeImages(presentImages)
	opts.Statuses, opts.Events, opts.Clock = h.statuses, h.events, h.clock
	if opts.RestartBackoff == 0 {
		opts.RestartBackoff = 10 * time.Second
	}
	if opts.MaxRestartBackoff == 0 {
		opts.MaxRestartBackoff = 40 * time.Second
	}
	h.s = NewSyncer(h.rt, h.imgs, opts)
	t.Cleanup(h.s.Close)
	return h
}

// ctr is a container spec with an image and a pull policy.
type ctr struct {
	name, image string
	pull        v1.PullPolicy
}

// makePod returns a pod named name (UID "uid-"+name) with the containers
// given; each defaults to image "img" and pull policy IfNotPresent.
func makePod(name string, policy v1.RestartPolicy, containers ...ctr) *v1.Pod {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name)},
		Spec:       v1.PodSpec{RestartPolicy: policy},
	}
	for _, c := range containers {
		if c.image == "" {
			c.image = "img"
		}
		if c.pull == "" {
			c.pull = v1.PullIfNotPresent
		}
		pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: c.name, Image: c.image, ImagePullPolicy: c.pull})
	}
	return pod
}

// sandboxID is the fake's ID of pod's attempt-th sandbox.
func sandboxID(pod *v1.Pod, attempt uint32) string {
	return fakecri.BuildSandboxName(&runtimeapi.PodSandboxMetadata{Name: pod.Name, Namespace: pod.Namespace, Uid: string(pod.UID), Attempt: attempt})
}

// containerID is the fake's ID of the attempt-th instance of container name
// in pod's sbAttempt-th sandbox.
func containerID(pod *v1.Pod, sbAttempt uint32, name string, attempt uint32) string {
	return fakecri.BuildContainerName(&runtimeapi.ContainerMetadata{Name: name, Attempt: attempt}, sandboxID(pod, sbAttempt))
}

// syncPod runs SyncPod with a live context.
func (h *harness) syncPod(pod *v1.Pod) (bool, error) {
	return h.s.SyncPod(context.Background(), 0, pod, nil, nil)
}

// mustSync runs SyncPod and fails the test on an error or a terminal pod.
func (h *harness) mustSync(pod *v1.Pod) {
	h.t.Helper()
	terminal, err := h.syncPod(pod)
	if err != nil || terminal {
		h.t.Fatalf("SyncPod(%s) = %v, %v; want false, nil", pod.Name, terminal, err)
	}
}

// container returns a copy of the fake's container id.
func (h *harness) container(id string) *runtimeapi.ContainerStatus {
	h.t.Helper()
	h.fake.Lock()
	defer h.fake.Unlock()
	c, ok := h.fake.Containers[id]
	if !ok {
		h.t.Fatalf("container %s does not exist; have %v", id, sortedKeys(h.fake.Containers))
	}
	return proto.Clone(&c.ContainerStatus).(*runtimeapi.ContainerStatus)
}

// containerState is the fake's state of container id.
func (h *harness) containerState(id string) runtimeapi.ContainerState {
	h.t.Helper()
	return h.container(id).State
}

// sandboxState is the fake's state of sandbox id.
func (h *harness) sandboxState(id string) runtimeapi.PodSandboxState {
	h.t.Helper()
	h.fake.Lock()
	defer h.fake.Unlock()
	sb, ok := h.fake.Sandboxes[id]
	if !ok {
		h.t.Fatalf("sandbox %s does not exist; have %v", id, sortedKeys(h.fake.Sandboxes))
	}
	return sb.State
}

// exit makes container id exit with code, now by the fake clock.
func (h *harness) exit(id string, code int32) {
	h.t.Helper()
	h.fake.Lock()
	defer h.fake.Unlock()
	c, ok := h.fake.Containers[id]
	if !ok {
		h.t.Fatalf("container %s does not exist; have %v", id, sortedKeys(h.fake.Containers))
	}
	c.State = runtimeapi.ContainerState_CONTAINER_EXITED
	c.ExitCode = code
	c.Reason = "Error"
	if code == 0 {
		c.Reason = "Completed"
	}
	c.FinishedAt = h.clock.Now().UnixNano()
}

// killSandbox makes sandbox id not ready, as if it died.
func (h *harness) killSandbox(id string) {
	h.t.Helper()
	h.fake.Lock()
	defer h.fake.Unlock()
	sb, ok := h.fake.Sandboxes[id]
	if !ok {
		h.t.Fatalf("sandbox %s does not exist", id)
	}
	sb.State = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
}

// calls counts the fake runtime's calls of method.
func (h *harness) calls(method string) int {
	n := 0
	for _, c := range h.fake.GetCalls() {
		if c == method {
			n++
		}
	}
	return n
}

// imageCalls counts the fake image service's calls of method.
func (h *harness) imageCalls(method string) int {
	h.images.Lock()
	defer h.images.Unlock()
	n := 0
	for _, c := range h.images.Called {
		if c == method {
			n++
		}
	}
	return n
}

// podObjects lists the IDs of the sandboxes and containers the fake holds
// for uid.
func (h *harness) podObjects(uid types.UID) (sandboxes, containers []string) {
	h.fake.Lock()
	defer h.fake.Unlock()
	for id, sb := range h.fake.Sandboxes {
		if sb.Labels[PodUIDLabel] == string(uid) {
			sandboxes = append(sandboxes, id)
		}
	}
	for id, c := range h.fake.Containers {
		if c.Labels[PodUIDLabel] == string(uid) {
			containers = append(containers, id)
		}
	}
	slices.Sort(sandboxes)
	slices.Sort(containers)
	return sandboxes, containers
}

// blockRemovals makes every RemoveContainer report its ID on removing and
// wait for release to be closed (or its context to end).
func (h *harness) blockRemovals() (removing <-chan string, release chan<- struct{}) {
	ids := make(chan string, 8)
	gate := make(chan struct{})
	h.rt.onRemove = func(ctx context.Context, id string, next func() error) error {
		ids <- id
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
		return next()
	}
	return ids, gate
}

// backoffEntries is how many containers of uid have back-off state.
func (h *harness) backoffEntries(uid types.UID) int {
	h.s.backoff.mu.Lock()
	defer h.s.backoff.mu.Unlock()
	return len(h.s.backoff.entries[uid])
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// waitFor waits for ch to be closed or to deliver, failing after a bound
// that is only there so a broken test does not hang.
func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
	panic("unreachable")
}

// ---- tests of syncer.go ----------------------------------------------------

func TestNewSyncerDefaults(t *testing.T) {
	s := NewSyncer(fakecri.NewFakeRuntimeService(), fakecri.NewFakeImageService(), Options{})
	defer s.Close()
	o := s.opts
	if o.Statuses == nil || o.Events == nil || o.Clock == nil || o.Logger == nil {
		t.Fatalf("nil defaults: %+v", o)
	}
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"RuntimeName", o.RuntimeName, "cri"},
		{"RestartBackoff", o.RestartBackoff, 10 * time.Second},
		{"MaxRestartBackoff", o.MaxRestartBackoff, 5 * time.Minute},
		{"RemovalTimeout", o.RemovalTimeout, time.Minute},
		{"backoff.initial", s.backoff.initial, 10 * time.Second},
		{"backoff.max", s.backoff.max, 5 * time.Minute},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// The zero Options work end to end: statuses and events are dropped.
	pod := makePod("zero", v1.RestartPolicyAlways, ctr{name: "c"})
	if terminal, err := s.SyncPod(context.Background(), 0, pod, nil, nil); terminal || err != nil {
		t.Fatalf("SyncPod = %v, %v", terminal, err)
	}
	if err := s.SyncTerminatingPod(context.Background(), pod, nil, nil, nil); err != nil {
		t.Fatalf("SyncTerminatingPod: %v", err)
	}
	if err := s.SyncTerminatedPod(context.Background(), pod, nil); err != nil {
		t.Fatalf("SyncTerminatedPod: %v", err)
	}
}

// Pods are independent: concurrent calls for different pods share the
// syncer (its back-off and its removals) without races.
func TestSyncerConcurrentPods(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	const n = 8
	pods := make([]*v1.Pod, n)
	for i := range pods {
		pods[i] = makePod(fmt.Sprintf("p%d", i), v1.RestartPolicyAlways, ctr{name: "a"}, ctr{name: "b"})
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, pod := range pods {
		wg.Go(func() {
			ctx := context.Background()
			if _, err := h.s.SyncPod(ctx, 0, pod, nil, nil); err != nil {
				errs[i] = err
				return
			}
			// A crash and its restart touch the shared back-off.
			h.fake.Lock()
			a := h.fake.Containers[containerID(pod, 0, "a", 0)]
			a.State, a.ExitCode, a.FinishedAt = runtimeapi.ContainerState_CONTAINER_EXITED, 1, h.clock.Now().UnixNano()
			h.fake.Unlock()
			if _, err := h.s.SyncPod(ctx, 0, pod, nil, nil); err != nil {
				errs[i] = err
				return
			}
			if err := h.s.SyncTerminatingPod(ctx, pod, nil, nil, nil); err != nil {
				errs[i] = err
				return
			}
			errs[i] = h.s.SyncTerminatedPod(ctx, pod, nil)
		})
	}
	wg.Wait()
	h.s.Close()
	for i, err := range errs {
		if err != nil {
			t.Errorf("pod %d: %v", i, err)
		}
	}
	for _, pod := range pods {
		h.s.RemoveDeadPod(pod.UID)
	}
	h.s.Close()
	for _, pod := range pods {
		if sbs, cs := h.podObjects(pod.UID); len(sbs)+len(cs) > 0 {
			t.Errorf("pod %s left %v %v", pod.Name, sbs, cs)
		}
		if st := h.statuses.last(t, pod.UID); st.Phase != v1.PodSucceeded {
			t.Errorf("pod %s phase %s", pod.Name, st.Phase)
		}
		if n := h.backoffEntries(pod.UID); n != 0 {
			t.Errorf("pod %s keeps back-off state for %d containers", pod.Name, n)
		}
	}
}
