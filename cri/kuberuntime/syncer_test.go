package kuberuntime

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
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	fakecri "k8s.io/cri-api/pkg/apis/testing"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/internal/crifake"
	"github.com/podlife/podlife/internal/testevents"
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

// ---- harness ---------------------------------------------------------------

// epoch is the fake clock's start.
var epoch = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

type harness struct {
	t        *testing.T
	fake     *fakecri.FakeRuntimeService
	rt       *crifake.HookRuntime
	images   *fakecri.FakeImageService
	imgs     *crifake.HookImages
	clock    *testingclock.FakeClock
	statuses *statusLog
	events   *testevents.Recorder
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
		events:   &testevents.Recorder{},
	}
	h.rt = &crifake.HookRuntime{FakeRuntimeService: h.fake}
	h.imgs = &crifake.HookImages{FakeImageService: h.images}
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
		if sb.Labels[cri.PodUIDLabel] == string(uid) {
			sandboxes = append(sandboxes, id)
		}
	}
	for id, c := range h.fake.Containers {
		if c.Labels[cri.PodUIDLabel] == string(uid) {
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
	h.rt.OnRemove = func(ctx context.Context, id string, next func() error) error {
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
	pod := crifake.MakePod("zero", v1.RestartPolicyAlways, crifake.Ctr{Name: "c"})
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
		pods[i] = crifake.MakePod(fmt.Sprintf("p%d", i), v1.RestartPolicyAlways, crifake.Ctr{Name: "a"}, crifake.Ctr{Name: "b"})
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
			a := h.fake.Containers[crifake.ContainerID(pod, 0, "a", 0)]
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
