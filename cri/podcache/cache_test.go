package podcache

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	apitest "k8s.io/cri-api/pkg/apis/testing"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/internal/testlog"
	"github.com/podlife/podlife/worker"
)

// cacheFixture is a cache of cri-api's fake runtime, used directly.
type cacheFixture struct {
	t  *testing.T
	rt *apitest.FakeRuntimeService
	c  *Cache
}

func newCacheFixture(t *testing.T) *cacheFixture {
	rt := apitest.NewFakeRuntimeService()
	return &cacheFixture{t: t, rt: rt, c: New(rt, nil)}
}

func cacheLabels(uid string) map[string]string {
	if uid == "" {
		return nil // not ours
	}
	return map[string]string{cri.PodUIDLabel: uid, cri.PodNameLabel: "name-" + uid, cri.PodNamespaceLabel: "ns"}
}

// sandbox adds a sandbox of uid created at createdAt, ready or stopped.
func (f *cacheFixture) sandbox(uid string, attempt uint32, createdAt int64, ready bool) string {
	f.t.Helper()
	id, err := f.rt.RunPodSandbox(f.t.Context(), &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "meta-" + uid, Namespace: "ns", Uid: uid, Attempt: attempt},
		Labels:   cacheLabels(uid),
	}, "")
	if err != nil {
		f.t.Fatal(err)
	}
	f.rt.Lock()
	defer f.rt.Unlock()
	s := f.rt.Sandboxes[id]
	s.CreatedAt = createdAt
	if !ready {
		s.State = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	}
	return id
}

// container adds a container in state; an exited one ended with exitCode.
func (f *cacheFixture) container(sandboxID, uid, name string, attempt uint32, createdAt int64, state runtimeapi.ContainerState, exitCode int32) string {
	f.t.Helper()
	id, err := f.rt.CreateContainer(f.t.Context(), sandboxID, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: name, Attempt: attempt},
		Image:    &runtimeapi.ImageSpec{Image: "busybox"},
		Labels:   cacheLabels(uid),
	}, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	f.rt.Lock()
	defer f.rt.Unlock()
	c := f.rt.Containers[id]
	c.CreatedAt, c.State = createdAt, state
	if state == runtimeapi.ContainerState_CONTAINER_EXITED {
		c.ExitCode, c.Reason, c.FinishedAt = exitCode, "Error", createdAt+5
	}
	return id
}

func (f *cacheFixture) refresh() {
	f.t.Helper()
	if err := f.c.Refresh(f.t.Context()); err != nil {
		f.t.Fatal(err)
	}
}

func (f *cacheFixture) get(uid string) *worker.PodStatus {
	f.t.Helper()
	s, err := f.c.Get(types.UID(uid))
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

func (f *cacheFixture) calls(method string) int {
	n := 0
	for _, c := range f.rt.GetCalls() {
		if c == method {
			n++
		}
	}
	return n
}

func cacheSandboxIDs(ss []*runtimeapi.PodSandboxStatus) []string {
	var ids []string
	for _, s := range ss {
		ids = append(ids, s.Id)
	}
	return ids
}

func cacheContainerIDs(cs []*runtimeapi.ContainerStatus) []string {
	var ids []string
	for _, c := range cs {
		ids = append(ids, c.Id)
	}
	return ids
}

func TestCacheGroupsByUID(t *testing.T) {
	f := newCacheFixture(t)
	if _, err := f.c.Get("u1"); !errors.Is(err, ErrNotFilled) {
		t.Fatalf("Get before the first poll: %v, want ErrCacheNotFilled", err)
	}
	old := f.sandbox("u1", 0, 100, false)
	cur := f.sandbox("u1", 1, 200, true)
	exited := f.container(old, "u1", "app", 0, 110, runtimeapi.ContainerState_CONTAINER_EXITED, 2)
	running := f.container(cur, "u1", "app", 1, 210, runtimeapi.ContainerState_CONTAINER_RUNNING, 0)
	other := f.sandbox("u2", 0, 300, true)
	created := f.container(other, "u2", "web", 0, 310, runtimeapi.ContainerState_CONTAINER_CREATED, 0)
	foreign := f.sandbox("", 0, 400, true)
	f.container(foreign, "", "x", 0, 410, runtimeapi.ContainerState_CONTAINER_RUNNING, 0)
	f.refresh()

	s := f.get("u1")
	if s.ID != "u1" || s.Name != "name-u1" || s.Namespace != "ns" {
		t.Errorf("identity %q %q %q", s.ID, s.Name, s.Namespace)
	}
	if got := cacheSandboxIDs(s.SandboxStatuses); !slices.Equal(got, []string{cur, old}) {
		t.Errorf("sandboxes %v, want newest first %v", got, []string{cur, old})
	}
	sb := s.SandboxStatuses[0]
	if sb.State != runtimeapi.PodSandboxState_SANDBOX_READY || sb.CreatedAt != 200 || sb.Metadata.GetAttempt() != 1 || sb.Labels[cri.PodUIDLabel] != "u1" {
		t.Errorf("sandbox status %v", sb)
	}
	if got := cacheContainerIDs(s.ContainerStatuses); !slices.Equal(got, []string{running, exited}) {
		t.Fatalf("containers %v, want newest first %v", got, []string{running, exited})
	}
	if r := s.ContainerStatuses[0]; r.State != runtimeapi.ContainerState_CONTAINER_RUNNING || r.Metadata.GetName() != "app" || r.Image.GetImage() != "busybox" {
		t.Errorf("running status %v", r)
	}
	if e := s.ContainerStatuses[1]; e.State != runtimeapi.ContainerState_CONTAINER_EXITED || e.ExitCode != 2 || e.Reason != "Error" || e.FinishedAt != 115 {
		t.Errorf("exited status %v", e)
	}

	s2 := f.get("u2")
	if got := cacheContainerIDs(s2.ContainerStatuses); len(s2.SandboxStatuses) != 1 || !slices.Equal(got, []string{created}) {
		t.Errorf("u2: sandboxes %v containers %v", cacheSandboxIDs(s2.SandboxStatuses), got)
	}
	if got := f.get("nope"); got.ID != "nope" || got.Name != "" || got.SandboxStatuses != nil || got.ContainerStatuses != nil {
		t.Errorf("unknown UID: %+v, want only the ID", got)
	}
	var ids []types.UID
	for _, p := range f.c.RunningPods() {
		ids = append(ids, p.ID)
	}
	if !slices.Equal(ids, []types.UID{"u1", "u2"}) {
		t.Errorf("running pods %v: the foreign sandbox must be ignored", ids)
	}
}

func TestCacheExitedStatusFetchedOnce(t *testing.T) {
	f := newCacheFixture(t)
	sb := f.sandbox("u1", 0, 100, true)
	exited := f.container(sb, "u1", "app", 0, 110, runtimeapi.ContainerState_CONTAINER_EXITED, 1)
	f.container(sb, "u1", "side", 0, 120, runtimeapi.ContainerState_CONTAINER_RUNNING, 0)
	f.refresh()
	f.refresh()
	if n := f.calls("ContainerStatus"); n != 1 {
		t.Fatalf("ContainerStatus called %d times in two polls, want once (for the exited container)", n)
	}
	if got := f.get("u1").ContainerStatuses; len(got) != 2 || got[1].ExitCode != 1 {
		t.Fatalf("statuses %v", got)
	}

	// Once removed, the container leaves the snapshot and the cache.
	if err := f.rt.RemoveContainer(t.Context(), exited); err != nil {
		t.Fatal(err)
	}
	f.refresh()
	if got := cacheContainerIDs(f.get("u1").ContainerStatuses); len(got) != 1 || got[0] == exited {
		t.Errorf("after removal: %v", got)
	}
	if len(f.c.exited) != 0 {
		t.Errorf("cache still holds %d exited statuses", len(f.c.exited))
	}
}

func TestCacheFailedPollKeepsSnapshot(t *testing.T) {
	f := newCacheFixture(t)
	sb := f.sandbox("u1", 0, 100, true)
	f.refresh()
	f.container(sb, "u1", "app", 0, 110, runtimeapi.ContainerState_CONTAINER_RUNNING, 0)
	f.sandbox("u2", 0, 200, true)

	for _, method := range []string{"ListPodSandbox", "ListContainers"} {
		f.rt.InjectError(method, errors.New("runtime down"))
		if err := f.c.Refresh(t.Context()); err == nil || !strings.Contains(err.Error(), "runtime down") {
			t.Fatalf("%s failed, Refresh: %v", method, err)
		}
		if s := f.get("u2"); s.SandboxStatuses != nil {
			t.Errorf("%s failed, yet the snapshot changed: %v", method, s)
		}
		if s := f.get("u1"); len(s.SandboxStatuses) != 1 || len(s.ContainerStatuses) != 0 {
			t.Errorf("%s failed, previous snapshot lost: %v", method, s)
		}
	}

	// An exited container whose status cannot be read fails the poll, unless
	// it is gone.
	ended := f.container(sb, "u1", "init", 0, 105, runtimeapi.ContainerState_CONTAINER_EXITED, 0)
	f.rt.InjectError("ContainerStatus", errors.New("timeout"))
	if err := f.c.Refresh(t.Context()); err == nil {
		t.Fatal("Refresh ignored a failed ContainerStatus")
	}
	if s := f.get("u2"); s.SandboxStatuses != nil {
		t.Error("a poll with a failed ContainerStatus replaced the snapshot")
	}
	f.rt.InjectError("ContainerStatus", status.Error(codes.NotFound, "gone"))
	f.refresh()
	if got := cacheContainerIDs(f.get("u1").ContainerStatuses); slices.Contains(got, ended) || len(got) != 1 {
		t.Errorf("a container removed since the list: %v", got)
	}
	if len(f.get("u2").SandboxStatuses) != 1 {
		t.Error("the successful poll did not replace the snapshot")
	}
	f.refresh() // now readable: fetched and kept
	if got := cacheContainerIDs(f.get("u1").ContainerStatuses); !slices.Contains(got, ended) {
		t.Errorf("exited container missing once readable: %v", got)
	}
}

func TestCacheRunningPods(t *testing.T) {
	f := newCacheFixture(t)
	// u3: ready sandbox, no container.
	ready := f.sandbox("u3", 0, 100, true)
	// u1: stopped sandbox, but a container still runs.
	stopped := f.sandbox("u1", 0, 200, false)
	runs := f.container(stopped, "u1", "app", 0, 210, runtimeapi.ContainerState_CONTAINER_RUNNING, 0)
	done := f.container(stopped, "u1", "init", 0, 205, runtimeapi.ContainerState_CONTAINER_EXITED, 0)
	// u2: everything ended.
	over := f.sandbox("u2", 0, 300, false)
	f.container(over, "u2", "app", 0, 310, runtimeapi.ContainerState_CONTAINER_EXITED, 0)
	f.refresh()

	got := f.c.RunningPods()
	if len(got) != 2 || got[0].ID != "u1" || got[1].ID != "u3" {
		t.Fatalf("running pods %v, want u1 then u3", got)
	}
	p := got[0]
	if p.Name != "name-u1" || p.Namespace != "ns" || len(p.Sandboxes) != 1 || p.Sandboxes[0].Id != stopped {
		t.Errorf("u1: %q %q sandboxes %v", p.Name, p.Namespace, p.Sandboxes)
	}
	if len(p.Containers) != 2 || p.Containers[0].Id != runs || p.Containers[1].Id != done || p.Containers[0].PodSandboxId != stopped {
		t.Errorf("u1 containers %v, want %s then %s", p.Containers, runs, done)
	}
	if q := got[1]; len(q.Sandboxes) != 1 || q.Sandboxes[0].Id != ready || len(q.Containers) != 0 {
		t.Errorf("u3: %v", q)
	}
}

func TestCacheResultsAreCopies(t *testing.T) {
	f := newCacheFixture(t)
	sb := f.sandbox("u1", 0, 100, true)
	f.container(sb, "u1", "app", 0, 110, runtimeapi.ContainerState_CONTAINER_RUNNING, 0)
	f.refresh()
	s := f.get("u1")
	s.ContainerStatuses[0].State = runtimeapi.ContainerState_CONTAINER_EXITED
	s.SandboxStatuses[0].Labels[cri.PodUIDLabel] = "changed"
	r := f.c.RunningPods()
	r[0].Containers[0].State = runtimeapi.ContainerState_CONTAINER_EXITED
	if again := f.get("u1"); again.ContainerStatuses[0].State != runtimeapi.ContainerState_CONTAINER_RUNNING || again.SandboxStatuses[0].Labels[cri.PodUIDLabel] != "u1" {
		t.Errorf("Get's result shares the snapshot: %v", again)
	}
	if again := f.c.RunningPods(); again[0].Containers[0].State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Error("RunningPods' result shares the snapshot")
	}
}

// cacheEventually waits for cond, failing after a while.
func cacheEventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestCacheRun(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent()) // other tests' goroutines are not ours to judge
	rt := apitest.NewFakeRuntimeService()
	var log testlog.Buffer
	c := New(rt, slog.New(slog.NewTextHandler(&log, nil)))
	f := &cacheFixture{t: t, rt: rt, c: c}
	f.sandbox("u1", 0, 100, true)
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx, 10*time.Second, clk, nil)
	}()
	defer func() { cancel(); <-done }()

	known := func(uid string) func() bool {
		return func() bool {
			s, err := c.Get(types.UID(uid))
			return err == nil && len(s.SandboxStatuses) > 0
		}
	}
	cacheEventually(t, "the first poll", known("u1"))
	polls := func() int { return f.calls("ListPodSandbox") }
	if n := polls(); n != 1 {
		t.Fatalf("%d polls before the first tick", n)
	}

	f.sandbox("u2", 0, 200, true)
	cacheEventually(t, "the ticker", clk.HasWaiters)
	clk.Step(10 * time.Second)
	cacheEventually(t, "the poll of a tick", known("u2"))

	rt.InjectError("ListPodSandbox", errors.New("runtime down"))
	f.sandbox("u3", 0, 300, true)
	clk.Step(10 * time.Second)
	cacheEventually(t, "the failed poll", func() bool { return strings.Contains(log.String(), "runtime down") })
	if !strings.Contains(log.String(), "keeping the previous snapshot") {
		t.Errorf("log %q does not say the snapshot was kept", log.String())
	}
	if known("u3")() || !known("u2")() {
		t.Error("a failed poll changed the snapshot")
	}
	clk.Step(10 * time.Second)
	cacheEventually(t, "recovery", known("u3"))
	if n := polls(); n != 4 {
		t.Errorf("%d polls after three ticks, want 4", n)
	}

	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return when its context ended")
	}
}

// Changed is the PLEG's relist: the pods asked about whose sandboxes or
// containers changed state since the previous call, however many polls
// came between, and those it was not asked about before.
func TestCacheChanged(t *testing.T) {
	f := newCacheFixture(t)
	var sb, ctr string
	for i, step := range []struct {
		what    string
		change  func()
		refresh int // polls before asking
		ask     []types.UID
		want    []types.UID
	}{
		{what: "before the first poll, nothing", ask: []types.UID{"a"}},
		{what: "the first poll: every pod asked about is new", change: func() {
			sb = f.sandbox("a", 0, 1, true)
			ctr = f.container(sb, "a", "c", 0, 2, runtimeapi.ContainerState_CONTAINER_RUNNING, 0)
		}, refresh: 1, ask: []types.UID{"a", "b"}, want: []types.UID{"a", "b"}},
		{what: "nothing changed", refresh: 1, ask: []types.UID{"a", "b"}},
		{what: "a change the cache did not poll yet", change: func() {
			f.rt.Lock()
			f.rt.Containers[ctr].State = runtimeapi.ContainerState_CONTAINER_EXITED
			f.rt.Unlock()
		}, ask: []types.UID{"a", "b"}},
		{what: "polled", refresh: 1, ask: []types.UID{"a", "b"}, want: []types.UID{"a"}},
		{what: "two polls since (housekeeping's) do not hide a change", change: func() {
			f.container(sb, "a", "c", 1, 3, runtimeapi.ContainerState_CONTAINER_RUNNING, 0)
		}, refresh: 2, ask: []types.UID{"a", "b"}, want: []types.UID{"a"}},
		{what: "a pod not asked about is forgotten", refresh: 1, ask: []types.UID{"a"}},
		{what: "and new when asked about again", ask: []types.UID{"a", "b"}, want: []types.UID{"b"}},
	} {
		if step.change != nil {
			step.change()
		}
		for range step.refresh {
			f.refresh()
		}
		got := f.c.Changed(step.ask)
		slices.Sort(got)
		if !slices.Equal(got, step.want) {
			t.Fatalf("step %d (%s): changed %v, want %v", i, step.what, got, step.want)
		}
	}
}
