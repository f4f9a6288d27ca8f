package kuberuntime

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/internal/crifake"
)

func TestGraceArithmetic(t *testing.T) {
	for _, tc := range []struct {
		name     string
		grace    int64
		spent    time.Duration // by the hook and the wait for the turn
		wantLeft int64
		wantStop int64
	}{
		{"nothing spent", 30, 0, 30, 30},
		{"whole seconds", 30, 3 * time.Second, 27, 27},
		{"truncated down", 30, 2900 * time.Millisecond, 28, 28},
		{"under a second counts nothing", 30, 999 * time.Millisecond, 30, 30},
		{"hook took all the grace: the 2 s minimum", 10, 10 * time.Second, 0, minimumGracePeriod},
		{"beyond the grace", 10, 12 * time.Second, 0, minimumGracePeriod},
		{"1 s left: the minimum", 10, 9 * time.Second, 1, minimumGracePeriod},
		{"2 s left", 10, 8 * time.Second, 2, 2},
		{"zero grace", 0, 0, 0, minimumGracePeriod},
		{"huge grace clamped", 9.3e9, 0, 9.3e9, maxStopTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			left := spend(tc.grace, tc.spent)
			if left != tc.wantLeft {
				t.Errorf("spend(%d, %v) = %d, want %d", tc.grace, tc.spent, left, tc.wantLeft)
			}
			if got := stopGrace(left); got != tc.wantStop {
				t.Errorf("stopGrace(%d) = %d, want %d", left, got, tc.wantStop)
			}
		})
	}
}

// A sidecar's budget: what its wait for its turn leaves, then the minimum.
func TestSidecarBudget(t *testing.T) {
	for _, tc := range []struct {
		name           string
		grace          int64
		hook, turnWait time.Duration
		want           int64
	}{
		{"no hook, mains stopped in 4 s", 30, 0, 4 * time.Second, 26},
		{"hook 5 s, then the turn 10 s", 30, 5 * time.Second, 10 * time.Second, 15},
		{"the turn took the rest", 30, 5 * time.Second, 25 * time.Second, minimumGracePeriod},
		{"each step truncated", 30, 1500 * time.Millisecond, 1500 * time.Millisecond, 28},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := stopGrace(spend(spend(tc.grace, tc.hook), tc.turnWait)); got != tc.want {
				t.Errorf("budget = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestNewTermOrder(t *testing.T) {
	always := v1.ContainerRestartPolicyAlways
	pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"}, crifake.Ctr{Name: "b"})
	pod.Spec.InitContainers = []v1.Container{
		{Name: "s1", RestartPolicy: &always}, {Name: "init"}, {Name: "s2", RestartPolicy: &always}, {Name: "s3", RestartPolicy: &always},
	}
	if o := newTermOrder(crifake.MakePod("q", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"}), []string{"a"}); o != nil {
		t.Errorf("a pod without sidecars has an order: %+v", o)
	}
	o := newTermOrder(pod, []string{"a", "b", "s1", "s2", "s3"})
	// Each sidecar waits for the regular containers and the next sidecar.
	want := map[string][]chan struct{}{
		"s3": {o.gone["a"], o.gone["b"]},
		"s2": {o.gone["a"], o.gone["b"], o.gone["s3"]},
		"s1": {o.gone["a"], o.gone["b"], o.gone["s2"]},
	}
	for name, chans := range want {
		if !slices.Equal(o.after[name], chans) {
			t.Errorf("%s waits on %d channels, want %v", name, len(o.after[name]), len(chans))
		}
	}
	if len(o.after["a"])+len(o.after["init"]) != 0 {
		t.Errorf("regular containers wait: %v", o.after)
	}
	// A container not stopping holds no one back.
	select {
	case <-o.gone["init"]:
	default:
		t.Errorf("the init container, which does not run, is waited for")
	}
	ctx := context.Background()
	waited := make(chan string, 3)
	for _, name := range []string{"s1", "s2", "s3"} {
		go func() {
			if _, err := o.waitForTurn(ctx, name, 60); err != nil {
				t.Error(err)
			}
			waited <- name
			o.stopped(name)
		}()
	}
	o.stopped("a")
	select {
	case name := <-waited:
		t.Fatalf("%s had its turn before b stopped", name)
	case <-time.After(50 * time.Millisecond):
	}
	o.stopped("b")
	var got []string
	for range 3 {
		got = append(got, crifake.WaitFor(t, waited, "a sidecar's turn"))
	}
	if want := []string{"s3", "s2", "s1"}; !slices.Equal(got, want) {
		t.Errorf("sidecars had their turn in order %v, want %v", got, want)
	}
}

// callLog records ExecSync and StopContainer calls in order.
type callLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *callLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, s)
}

func (l *callLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.calls)
}

// record makes the harness log execs ("exec <container> <cmd>") and stops
// ("stop <container> <timeout>"); exec runs each exec.
func record(h *harness, exec func(ctx context.Context, id string) error) *callLog {
	l := &callLog{}
	name := func(id string) string { return h.container(id).GetMetadata().GetName() }
	h.rt.OnExec = func(ctx context.Context, id string, cmd []string) error {
		l.add("exec " + name(id) + " " + strings.Join(cmd, " "))
		if exec != nil {
			return exec(ctx, id)
		}
		return nil
	}
	h.rt.OnStop = func(_ context.Context, id string, timeout int64, next func() error) error {
		l.add("stop " + name(id) + " " + time.Duration(timeout*int64(time.Second)).String())
		return next()
	}
	return l
}

func preStopExec(cmd ...string) *v1.Lifecycle {
	return &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: cmd}}}
}

func TestPreStopHookBeforeStop(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"}, crifake.Ctr{Name: "b"})
	pod.Spec.TerminationGracePeriodSeconds = new(int64(20))
	pod.Spec.Containers[0].Lifecycle = preStopExec("drain")
	h.mustSync(pod)
	log := record(h, nil)
	h.events.Reset()
	if err := h.s.SyncTerminatingPod(context.Background(), pod, nil, nil, nil); err != nil {
		t.Fatalf("SyncTerminatingPod: %v", err)
	}
	got := log.get()
	ia, ib := slices.Index(got, "exec a drain"), slices.Index(got, "stop a 20s")
	if ia < 0 || ib < ia || !slices.Contains(got, "stop b 20s") || len(got) != 3 {
		t.Errorf("calls %q, want the hook of a, then its stop with the grace, and b's stop", got)
	}
	// Done once: a retry runs no hook again.
	if err := h.s.SyncTerminatingPod(context.Background(), pod, nil, nil, nil); err != nil {
		t.Fatalf("second SyncTerminatingPod: %v", err)
	}
	if n := len(log.get()); n != 3 {
		t.Errorf("calls after the retry: %q", log.get())
	}
	if ev := h.events.Reasons(pod.UID); slices.Contains(ev, "FailedPreStopHook") {
		t.Errorf("events %v", ev)
	}
}

func TestPreStopHookFails(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"})
	pod.Spec.Containers[0].Lifecycle = preStopExec("false")
	h.mustSync(pod)
	log := record(h, func(context.Context, string) error { return errors.New("exit code 1") })
	if err := h.s.SyncTerminatingPod(context.Background(), pod, nil, new(int64(9)), nil); err != nil {
		t.Fatalf("SyncTerminatingPod: %v", err)
	}
	if got, want := log.get(), []string{"exec a false", "stop a 9s"}; !slices.Equal(got, want) {
		t.Errorf("calls %q, want %q", got, want)
	}
	if got := h.events.Messages(pod.UID, "FailedPreStopHook"); !slices.Equal(got, []string{"PreStopHook failed"}) {
		t.Errorf("FailedPreStopHook events %q", got)
	}
}

// A hook that outlives the grace period keeps running through the stop,
// which gets the 2 s minimum, as the kubelet stops waiting for it but does
// not end it: it ends with its container (the node e2e "should terminate
// sidecars simultaneously if prestop doesn't exit" sees a looping hook live
// 32 s of a 30 s grace). Once the container stopped, the hook is cut off.
func TestPreStopHookRunsThroughTheStop(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"})
	pod.Spec.Containers[0].Lifecycle = preStopExec("sleep", "600")
	h.mustSync(pod)
	hookCtx := make(chan context.Context, 1)
	cut := make(chan error, 1)
	log := record(h, func(ctx context.Context, _ string) error {
		hookCtx <- ctx
		<-ctx.Done()
		cut <- ctx.Err()
		return ctx.Err()
	})
	stopped := h.rt.OnStop
	var atStop error
	h.rt.OnStop = func(ctx context.Context, id string, timeout int64, next func() error) error {
		atStop = (<-hookCtx).Err()
		return stopped(ctx, id, timeout, next)
	}
	if err := h.s.SyncTerminatingPod(context.Background(), pod, nil, new(int64(1)), nil); err != nil {
		t.Fatalf("SyncTerminatingPod: %v", err)
	}
	if atStop != nil {
		t.Errorf("the hook had ended (%v) when its container was stopped: it was cut off at the grace period", atStop)
	}
	if err := crifake.WaitFor(t, cut, "the hook to be cut off after the stop"); err == nil {
		t.Errorf("the hook's context ended without an error")
	}
	if got, want := log.get(), []string{"exec a sleep 600", "stop a 2s"}; !slices.Equal(got, want) {
		t.Errorf("calls %q, want %q", got, want)
	}
}

// A shorter grace period arriving during a long hook brings the stop to
// the new deadline; the hook is not run a second time.
func TestPreStopHookShortenedGrace(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"})
	pod.Spec.Containers[0].Lifecycle = preStopExec("sleep", "600")
	h.mustSync(pod)
	running := make(chan struct{}, 1)
	log := record(h, func(ctx context.Context, _ string) error {
		running <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	})
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() { first <- h.s.SyncTerminatingPod(ctx, pod, nil, new(int64(300)), nil) }()
	crifake.WaitFor(t, running, "the hook to run")
	cancel() // the engine cancels the sync when a shorter grace arrives
	if err := crifake.WaitFor(t, first, "the first SyncTerminatingPod"); !errors.Is(err, context.Canceled) {
		t.Fatalf("first SyncTerminatingPod = %v, want Canceled", err)
	}
	if err := h.s.SyncTerminatingPod(context.Background(), pod, nil, new(int64(1)), nil); err != nil {
		t.Fatalf("SyncTerminatingPod(grace 1): %v", err)
	}
	if got, want := log.get(), []string{"exec a sleep 600", "stop a 2s"}; !slices.Equal(got, want) {
		t.Errorf("calls %q, want %q: one hook, then the stop", got, want)
	}
}

func TestSidecarsStopAfterRegularContainersInReverseOrder(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	always := v1.ContainerRestartPolicyAlways
	pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"}, crifake.Ctr{Name: "b"})
	pod.Spec.TerminationGracePeriodSeconds = new(int64(30))
	pod.Spec.InitContainers = []v1.Container{
		{Name: "s1", Image: "img", RestartPolicy: &always},
		{Name: "s2", Image: "img", RestartPolicy: &always, Lifecycle: preStopExec("flush")},
	}
	for range 4 { // s1, s2, then the regular containers
		h.mustSync(pod)
	}
	// b's stop takes a while: the sidecars wait for it.
	log := record(h, nil)
	stopped := h.rt.OnStop
	h.rt.OnStop = func(ctx context.Context, id string, timeout int64, next func() error) error {
		if id == crifake.ContainerID(pod, 0, "b", 0) {
			time.Sleep(100 * time.Millisecond)
		}
		return stopped(ctx, id, timeout, next)
	}
	if err := h.s.SyncTerminatingPod(context.Background(), pod, nil, nil, nil); err != nil {
		t.Fatalf("SyncTerminatingPod: %v", err)
	}
	got := log.get()
	pos := func(call string) int {
		i := slices.Index(got, call)
		if i < 0 {
			t.Fatalf("no %q in %q", call, got)
		}
		return i
	}
	// The sidecars' hooks run at once, like everybody's; their stops wait.
	if !(pos("exec s2 flush") < pos("stop b 30s") && pos("stop a 30s") < pos("stop s2 30s") &&
		pos("stop b 30s") < pos("stop s2 30s") && pos("stop s2 30s") < pos("stop s1 30s")) {
		t.Errorf("calls %q: want s2's hook at once, a and b stopped before s2, s2 before s1", got)
	}
}

func TestPostStartHookFailureKillsContainer(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"}, crifake.Ctr{Name: "b"})
	pod.Spec.TerminationGracePeriodSeconds = new(int64(7))
	pod.Spec.Containers[0].Lifecycle = &v1.Lifecycle{
		PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"setup"}}},
		PreStop:   &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"drain"}}},
	}
	log := record(h, nil)
	h.rt.OnExec = func(ctx context.Context, id string, cmd []string) error {
		log.add("exec " + strings.Join(cmd, " "))
		if cmd[0] == "setup" {
			return errors.New("exit code 3")
		}
		return nil
	}
	_, err := h.syncPod(pod)
	if err == nil || !strings.Contains(err.Error(), `container "a" in pod ns/p`) {
		t.Fatalf("SyncPod = %v, want the hook's failure", err)
	}
	if got, want := log.get(), []string{"exec setup", "exec drain", "stop a 7s"}; !slices.Equal(got, want) {
		t.Errorf("calls %q, want %q", got, want)
	}
	if st := h.containerState(crifake.ContainerID(pod, 0, "a", 0)); st != runtimeapi.ContainerState_CONTAINER_EXITED {
		t.Errorf("a is %v after its postStart hook failed", st)
	}
	if st := h.containerState(crifake.ContainerID(pod, 0, "b", 0)); st != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Errorf("b is %v", st)
	}
	if got := h.events.Messages(pod.UID, "FailedPostStartHook"); !slices.Equal(got, []string{"PostStartHook failed"}) {
		t.Errorf("FailedPostStartHook events %q", got)
	}
	cs := h.statuses.last(t, pod.UID).ContainerStatuses[0]
	if w := cs.State.Waiting; w == nil || w.Reason != "PostStartHookError" || !strings.Contains(w.Message, "exit code 3") {
		t.Errorf("status of a: %+v, want waiting PostStartHookError", cs.State)
	}
}

func TestRuntimeSignal(t *testing.T) {
	for _, tc := range []struct {
		sig  v1.Signal
		want runtimeapi.Signal
		ok   bool
	}{
		{v1.SIGUSR1, runtimeapi.Signal_SIGNAL_SIGUSR1, true},
		{v1.SIGINT, runtimeapi.Signal_SIGNAL_SIGINT, true},
		{v1.SIGTERM, runtimeapi.Signal_SIGNAL_SIGTERM, true},
		{v1.SIGRTMINPLUS1, runtimeapi.Signal_SIGNAL_SIGRTMINPLUS1, true},
		{v1.SIGRTMAXMINUS1, runtimeapi.Signal_SIGNAL_SIGRTMAXMINUS1, true},
		{"SIGNOPE", 0, false},
		{"RUNTIME_DEFAULT", 0, false},
		{"", 0, false},
	} {
		got, ok := cri.RuntimeSignal(tc.sig)
		if got != tc.want || ok != tc.ok {
			t.Errorf("runtimeSignal(%q) = %v, %v; want %v, %v", tc.sig, got, ok, tc.want, tc.ok)
		}
	}
	pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"})
	sig := v1.SIGUSR1
	pod.Spec.Containers[0].Lifecycle = &v1.Lifecycle{StopSignal: &sig}
	cfg, err := containerConfig(pod, &pod.Spec.Containers[0], 0, false)
	if err != nil || cfg.StopSignal != runtimeapi.Signal_SIGNAL_SIGUSR1 {
		t.Errorf("containerConfig: stop signal %v, %v", cfg.GetStopSignal(), err)
	}
	sig = "SIGNOPE"
	if _, err := containerConfig(pod, &pod.Spec.Containers[0], 0, false); err == nil || !strings.Contains(err.Error(), `container "a" of pod ns/p`) {
		t.Errorf("containerConfig with an unknown stop signal: %v", err)
	}
}

// orderedRuntime records, in order, the hooks' execs and the stops a
// runtime gets.
type orderedRuntime struct {
	cri.Runtime
	log callLog
}

func (r *orderedRuntime) ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) ([]byte, []byte, error) {
	r.log.add("exec " + strings.Join(cmd, " "))
	return r.Runtime.ExecSync(ctx, id, cmd, timeout)
}

func (r *orderedRuntime) StopContainer(ctx context.Context, id string, timeout int64) error {
	err := r.Runtime.StopContainer(ctx, id, timeout)
	// The embedded runtime's container IDs end in _<name>_<attempt>.
	r.log.add("stopped " + id[strings.LastIndex(id[:strings.LastIndex(id, "_")], "_")+1:])
	return err
}

// On the embedded runtime, through the CRI client: each container's
// preStop hook before its stop, the regular container stopped before the
// sidecars, the later sidecar first, as the runtime's FinishedAt shows too.
func TestEmbeddedTerminationOrder(t *testing.T) {
	_, rt, images := embeddedClients(t)
	ort := &orderedRuntime{Runtime: rt}
	s := NewSyncer(ort, images, Options{})
	defer s.Close()
	ctx := context.Background()
	always := v1.ContainerRestartPolicyAlways
	pod := crifake.MakePod("order", v1.RestartPolicyAlways, crifake.Ctr{Name: "main"})
	pod.Spec.Containers[0].Lifecycle = preStopExec("main-hook")
	pod.Spec.InitContainers = []v1.Container{
		{Name: "first", Image: "img", RestartPolicy: &always, Lifecycle: preStopExec("first-hook")},
		{Name: "second", Image: "img", RestartPolicy: &always},
	}
	for range 3 {
		if _, err := s.SyncPod(ctx, 0, pod, nil, nil); err != nil {
			t.Fatalf("SyncPod: %v", err)
		}
	}
	if err := s.SyncTerminatingPod(ctx, pod, nil, nil, nil); err != nil {
		t.Fatalf("SyncTerminatingPod: %v", err)
	}
	got := ort.log.get()
	pos := func(call string) int {
		i := slices.Index(got, call)
		if i < 0 {
			t.Fatalf("no %q in %q", call, got)
		}
		return i
	}
	if !(pos("exec main-hook") < pos("stopped main_0") && pos("exec first-hook") < pos("stopped first_0") &&
		pos("stopped main_0") < pos("stopped second_0") && pos("stopped second_0") < pos("stopped first_0")) {
		t.Errorf("calls %q: want each hook before its stop, then main, second, first", got)
	}
	p, err := readPod(ctx, rt, pod.UID)
	if err != nil {
		t.Fatal(err)
	}
	at := map[string]int64{}
	for _, c := range p.Containers {
		at[c.GetMetadata().GetName()] = c.FinishedAt
	}
	if !(at["main"] < at["second"] && at["second"] < at["first"]) {
		t.Errorf("FinishedAt %v: want main, then second, then first", at)
	}
}

// An httpGet preStop hook calls the host and the named port with its path
// and headers before the stop.
func TestPreStopHTTPGetHook(t *testing.T) {
	got := make(chan *http.Request, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r
		w.WriteHeader(http.StatusInternalServerError) // the status code does not matter
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())

	h := newHarness(t, Options{}, "img")
	pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"})
	c := &pod.Spec.Containers[0]
	c.Ports = []v1.ContainerPort{{Name: "web", ContainerPort: int32(port)}}
	c.Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{
		Host: "127.0.0.1", Port: intstr.FromString("web"), Path: "drain",
		HTTPHeaders: []v1.HTTPHeader{{Name: "X-Why", Value: "stop"}, {Name: "Host", Value: "svc.example"}},
	}}}
	h.mustSync(pod)
	if err := h.s.SyncTerminatingPod(context.Background(), pod, nil, nil, nil); err != nil {
		t.Fatalf("SyncTerminatingPod: %v", err)
	}
	r := crifake.WaitFor(t, got, "the hook's request")
	if r.Method != http.MethodGet || r.URL.Path != "/drain" || r.Header.Get("X-Why") != "stop" || r.Host != "svc.example" {
		t.Errorf("request %s %s host %s headers %v", r.Method, r.URL, r.Host, r.Header)
	}
	if ev := h.events.Reasons(pod.UID); slices.Contains(ev, "FailedPreStopHook") {
		t.Errorf("events %v: a 500 failed the hook", ev)
	}
}
