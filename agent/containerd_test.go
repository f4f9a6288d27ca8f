package agent_test

// Integration tests of the node agent on a real containerd: the acceptance
// list of the agent's issue, each run by a real agent.Agent reading static
// pod manifests. They skip unless $PODLIFE_CRI_ENDPOINT names a runtime
// (cri/critest); CI sets it:
//
//	ENDPOINT=$(tools/containerd-up.sh | tail -1)
//	PODLIFE_CRI_ENDPOINT=$ENDPOINT go test -race -count=1 -v -run Containerd ./agent/
//	tools/containerd-down.sh "$ENDPOINT"
//
// An agent owns the runtime it is given: its housekeeping kills every pod
// labelled io.kubernetes.pod.uid that it does not know. So these tests do
// not run in parallel, each removes the sandboxes of its pod UIDs when it
// ends, and each first waits until no other pod runs on the runtime (other
// packages' tests, such as cri/critest's, may share it under
// `go test ./...`). TestContainerdRuntimeRestart restarts containerd itself
// (tools/containerd-restart.sh), so it needs one started by
// tools/containerd-up.sh.
//
// Times are measured, where possible, with the runtime's own container
// timestamps (StartedAt, FinishedAt): the instant a container died, not the
// instant a poll noticed it. The instant of a kill is the test's wall
// clock just before it asked for the kill; both clocks are the host's.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/agent"
	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/internal/critest"
	"github.com/podlife/podlife/internal/testlog"
)

// ctrdTimeout bounds each wait for an outcome that should come within a
// few seconds.
const ctrdTimeout = 30 * time.Second

// ctrdNamespace is the namespace of every test pod.
const ctrdNamespace = "podlife-it"

// ctrdTrapper handles SIGTERM: its shell (PID 1 of its container) exits 0
// on TERM, at the latest when the current 0.2 s sleep ends.
func ctrdTrapper(name string) ctrdContainer {
	return ctrdContainer{name: name, command: []string{"sh", "-c", `trap "exit 0" TERM; while true; do sleep 0.2; done`}}
}

// ctrdIgnorer ignores SIGTERM: sleep is PID 1 of its container (the syncer
// gives each container its own PID namespace, as the kubelet does) and has
// no handler, and the kernel does not deliver a signal PID 1 does not
// handle. Only SIGKILL ends it, exit code 137.
func ctrdIgnorer(name string) ctrdContainer {
	return ctrdContainer{name: name, command: []string{"sleep", "1000"}}
}

type ctrdContainer struct {
	name    string
	command []string
}

// ctrdPod is a static pod manifest with restartPolicy Always.
type ctrdPod struct {
	name, uid  string
	grace      int64
	priority   int32
	containers []ctrdContainer
}

func (p ctrdPod) file() string { return p.name + ".yaml" }

func (p ctrdPod) yaml() string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: %s\n  uid: %s\n", p.name, ctrdNamespace, p.uid)
	fmt.Fprintf(&b, "spec:\n  restartPolicy: Always\n  terminationGracePeriodSeconds: %d\n", p.grace)
	if p.priority != 0 {
		fmt.Fprintf(&b, "  priority: %d\n", p.priority)
	}
	b.WriteString("  containers:\n")
	for _, c := range p.containers {
		cmd, _ := json.Marshal(c.command) // a JSON array is a YAML flow sequence
		fmt.Fprintf(&b, "  - name: %s\n    image: %s\n    imagePullPolicy: Never\n    command: %s\n", c.name, critest.BusyboxImage, cmd)
	}
	return b.String()
}

// ctrdEnv is one test's connection to the runtime and its scratch space.
type ctrdEnv struct {
	t        testing.TB
	endpoint string
	rt       internalapi.RuntimeService
	dir      string

	// uids are the pods removed from the runtime when the test ends,
	// after every agent of the test stopped: a running agent would
	// recreate a sandbox removed under it, and leave it to the next test.
	uidsMu sync.Mutex
	uids   []string
}

// newCtrdEnv skips the test without a runtime, and checks that the image
// the pods use is there (nothing can be pulled).
func newCtrdEnv(t testing.TB) *ctrdEnv {
	t.Helper()
	critest.Exclusive(t)
	ep := critest.Endpoint(t)
	rt, img := critest.Connect(t)
	// Made first, so removed last: after the agents stopped and the pods
	// were removed (containerd writes their logs under it).
	dir := t.TempDir()
	unmountOnCleanup(t, dir)
	st, err := img.ImageStatus(t.Context(), &runtimeapi.ImageSpec{Image: critest.BusyboxImage}, false)
	if err != nil {
		t.Fatalf("ImageStatus(%s): %v", critest.BusyboxImage, err)
	}
	if st.GetImage() == nil {
		t.Fatalf("image %s is not on the runtime; tools/containerd-up.sh imports it", critest.BusyboxImage)
	}
	e := &ctrdEnv{t: t, endpoint: ep, rt: rt, dir: dir}
	// Registered before any agent is started, so run after they stopped.
	t.Cleanup(func() {
		e.uidsMu.Lock()
		defer e.uidsMu.Unlock()
		for _, uid := range e.uids {
			e.removePod(uid)
		}
	})
	e.waitNoOtherPods()
	return e
}

// waitNoOtherPods waits until the runtime runs no pod labelled with a pod
// UID: the agents of these tests would take any for an orphan and kill it.
// critest.Exclusive keeps other tests away; what is left is a failed test's
// leftovers, which this names.
func (e *ctrdEnv) waitNoOtherPods() {
	e.t.Helper()
	const patience = time.Minute
	deadline := time.Now().Add(patience)
	for {
		sbs, err := e.rt.ListPodSandbox(e.t.Context(), &runtimeapi.PodSandboxFilter{State: &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}})
		if err != nil {
			e.t.Fatalf("ListPodSandbox: %v", err)
		}
		cs, err := e.rt.ListContainers(e.t.Context(), &runtimeapi.ContainerFilter{State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}})
		if err != nil {
			e.t.Fatalf("ListContainers: %v", err)
		}
		others := map[string]bool{}
		for _, sb := range sbs {
			if uid := sb.Labels[cri.PodUIDLabel]; uid != "" {
				others[sb.Labels[cri.PodNamespaceLabel]+"/"+sb.Labels[cri.PodNameLabel]+" "+uid] = true
			}
		}
		for _, c := range cs {
			if uid := c.Labels[cri.PodUIDLabel]; uid != "" {
				others[c.Labels[cri.PodNamespaceLabel]+"/"+c.Labels[cri.PodNameLabel]+" "+uid] = true
			}
		}
		if len(others) == 0 {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("the runtime still runs pods of others after %v: %v; an agent would kill them as orphans, so these tests need the runtime to themselves", patience, slices.Sorted(maps.Keys(others)))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// newUID returns a fresh pod UID whose sandboxes and containers are
// removed when the test ends.
func (e *ctrdEnv) newUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	uid := fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
	e.removeAtEnd(uid)
	return uid
}

// removeAtEnd removes every sandbox and container of uid when the test
// ends, once its agents stopped.
func (e *ctrdEnv) removeAtEnd(uid string) {
	e.uidsMu.Lock()
	defer e.uidsMu.Unlock()
	e.uids = append(e.uids, uid)
}

// removePod stops and removes every sandbox of uid (which removes their
// containers), then any container of uid left over.
func (e *ctrdEnv) removePod(uid string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sel := map[string]string{cri.PodUIDLabel: uid}
	sbs, err := e.rt.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: sel})
	if err != nil {
		e.t.Errorf("cleanup of pod %s: ListPodSandbox: %v", uid, err)
		return
	}
	for _, sb := range sbs {
		if err := untilGone(ctx, func() error { return e.rt.StopPodSandbox(ctx, sb.Id) }); err != nil {
			e.t.Errorf("cleanup of pod %s: StopPodSandbox(%.12s): %v", uid, sb.Id, err)
		}
		if err := untilGone(ctx, func() error { return e.rt.RemovePodSandbox(ctx, sb.Id) }); err != nil {
			e.t.Errorf("cleanup of pod %s: RemovePodSandbox(%.12s): %v", uid, sb.Id, err)
		}
	}
	cs, err := e.rt.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: sel})
	if err != nil {
		e.t.Errorf("cleanup of pod %s: ListContainers: %v", uid, err)
		return
	}
	for _, c := range cs {
		if err := untilGone(ctx, func() error { return e.rt.RemoveContainer(ctx, c.Id) }); err != nil {
			e.t.Errorf("cleanup of pod %s: RemoveContainer(%.12s): %v", uid, c.Id, err)
		}
	}
}

// untilGone calls a CRI stop or remove until it succeeds or finds nothing,
// for as long as ctx allows: a sandbox the stopped agent was still stopping
// can fail a second stop for a moment (containerd 1.6: "ttrpc: closed",
// its shim going away).
func untilGone(ctx context.Context, call func() error) error {
	for {
		err := call()
		if err == nil || status.Code(err) == codes.NotFound {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// sandboxes lists the sandboxes of uid.
func (e *ctrdEnv) sandboxes(uid string) []*runtimeapi.PodSandbox {
	e.t.Helper()
	return podSandboxes(e.t, e.rt, uid)
}

// containers lists the containers of uid.
func (e *ctrdEnv) containers(uid string) []*runtimeapi.Container {
	e.t.Helper()
	return podContainers(e.t, e.rt, uid)
}

// runningContainers maps the names of the running containers of uid to
// their IDs.
func (e *ctrdEnv) runningContainers(uid string) map[string]string {
	e.t.Helper()
	return runningByName(e.containers(uid))
}

// waitRuntimeGone waits until the runtime holds no sandbox and no
// container of uid: the agent removed them in the background.
func (e *ctrdEnv) waitRuntimeGone(uid string) {
	e.t.Helper()
	ctrdEventually(e.t, "the runtime removed every sandbox and container of pod "+uid, func() (bool, string) {
		sbs, cs := e.sandboxes(uid), e.containers(uid)
		return len(sbs) == 0 && len(cs) == 0, fmt.Sprintf("%d sandbox(es), %d container(s) left", len(sbs), len(cs))
	})
}

// ctrdEventually polls cond until it holds, failing the test with cond's
// last description after ctrdTimeout.
func ctrdEventually(t testing.TB, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(ctrdTimeout)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting until %s; last: %s", ctrdTimeout, what, state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ctrdAgent is a running agent.
type ctrdAgent struct {
	*agent.Agent
	t         testing.TB
	node      string
	manifests string
	logs      *testlog.Buffer
	obs       *ctrdObserver
	cancel    context.CancelFunc
	done      chan struct{}
	runErr    error // set before done is closed
}

// startAgent runs an agent on the test's runtime with the manifests in
// manifestDir, fast polling and a 500 ms sync back-off; edit may change
// its configuration. The agent stops (as on SIGINT: pods keep running) when
// the test ends, if it has not before.
func (e *ctrdEnv) startAgent(manifestDir string, edit func(*agent.Config)) *ctrdAgent {
	t := e.t
	t.Helper()
	var suffix [3]byte
	_, _ = rand.Read(suffix[:])
	cfg := agent.DefaultConfig()
	cfg.NodeName = "ctrd-" + hex.EncodeToString(suffix[:])
	cfg.RuntimeEndpoint = e.endpoint
	cfg.StaticPodPath = manifestDir
	cfg.RootDir = filepath.Join(e.dir, "root-"+cfg.NodeName)
	cfg.Address = "127.0.0.1:0"
	cfg.FileCheckFrequency.Duration = 100 * time.Millisecond
	cfg.HousekeepingInterval.Duration = 200 * time.Millisecond
	cfg.RuntimePollInterval.Duration = 100 * time.Millisecond
	if edit != nil {
		edit(&cfg)
	}
	for _, d := range []string{manifestDir, cfg.RootDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	logs := &testlog.Buffer{}
	obs := &ctrdObserver{}
	a, err := agent.New(t.Context(), cfg, agent.Options{
		Logger:      slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Observer:    obs,
		SyncBackOff: 500 * time.Millisecond,
	})
	if err != nil {
		t.Fatalf("agent.New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ca := &ctrdAgent{Agent: a, t: t, node: cfg.NodeName, manifests: manifestDir, logs: logs, obs: obs, cancel: cancel, done: make(chan struct{})}
	go func() {
		ca.runErr = a.Run(ctx)
		close(ca.done)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-ca.done:
		case <-time.After(ctrdTimeout):
			t.Errorf("agent %s: Run did not return within %v of its context's end", ca.node, ctrdTimeout)
		}
		if r := obs.rejections(); len(r) > 0 {
			t.Errorf("agent %s: the lifecycle table rejected events (a bug of the engine): %s", ca.node, strings.Join(r, "; "))
		}
		if t.Failed() {
			t.Logf("logs of agent %s:\n%s", ca.node, logs.String())
		}
	})
	return ca
}

// stop ends Run as SIGINT does (pods keep running) and returns its error.
func (a *ctrdAgent) stop() error {
	a.t.Helper()
	a.cancel()
	return a.wait()
}

// wait waits for Run to return and returns its error.
func (a *ctrdAgent) wait() error {
	a.t.Helper()
	select {
	case <-a.done:
		return a.runErr
	case <-time.After(ctrdTimeout):
		a.t.Fatalf("agent %s: Run did not return within %v", a.node, ctrdTimeout)
		return nil
	}
}

// writePod writes the pod's manifest atomically: a scan never reads half a
// file (dotfiles are skipped).
func (a *ctrdAgent) writePod(p ctrdPod) {
	a.t.Helper()
	tmp := filepath.Join(a.manifests, "."+p.file()+".tmp")
	if err := os.WriteFile(tmp, []byte(p.yaml()), 0o644); err != nil {
		a.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(a.manifests, p.file())); err != nil {
		a.t.Fatal(err)
	}
}

// removePod removes the pod's manifest and returns when it did.
func (a *ctrdAgent) removePod(p ctrdPod) time.Time {
	a.t.Helper()
	at := time.Now()
	if err := os.Remove(filepath.Join(a.manifests, p.file())); err != nil {
		a.t.Fatal(err)
	}
	return at
}

// pod is the agent's view of uid.
func (a *ctrdAgent) pod(uid string) (agent.PodInfo, bool) {
	for _, p := range a.Pods() {
		if p.UID == types.UID(uid) {
			return p, true
		}
	}
	return agent.PodInfo{}, false
}

// waitPod waits until the agent's view of uid satisfies cond.
func (a *ctrdAgent) waitPod(uid, what string, cond func(agent.PodInfo) bool) agent.PodInfo {
	a.t.Helper()
	var p agent.PodInfo
	ctrdEventually(a.t, what, func() (bool, string) {
		var ok bool
		p, ok = a.pod(uid)
		if !ok {
			return false, "the agent does not know the pod"
		}
		return cond(p), ctrdDescribe(p)
	})
	return p
}

// waitRunning waits until the agent reports uid running with every one of
// its containers.
func (a *ctrdAgent) waitRunning(uid string, containers int) agent.PodInfo {
	a.t.Helper()
	return a.waitPod(uid, "pod "+uid+" runs", func(p agent.PodInfo) bool {
		if p.Lifecycle != "Running" || p.Phase != v1.PodRunning || len(p.Containers) != containers {
			return false
		}
		for _, c := range p.Containers {
			if c.State != "running" {
				return false
			}
		}
		return true
	})
}

// waitGone waits until the agent no longer knows uid.
func (a *ctrdAgent) waitGone(uid string) {
	a.t.Helper()
	ctrdEventually(a.t, "the agent forgot pod "+uid, func() (bool, string) {
		p, ok := a.pod(uid)
		return !ok, ctrdDescribe(p)
	})
}

// counter sums the samples of a metric family of the agent.
func (a *ctrdAgent) counter(name string) float64 {
	a.t.Helper()
	families, err := a.Registry().Gather()
	if err != nil {
		a.t.Fatalf("gather metrics: %v", err)
	}
	total := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			total += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return total
}

func ctrdDescribe(p agent.PodInfo) string {
	b, _ := json.Marshal(p)
	return string(b)
}

// ctrdTerminated reports whether the agent shows every container of p
// terminated.
func ctrdTerminated(p agent.PodInfo) bool {
	if len(p.Containers) == 0 {
		return false
	}
	for _, c := range p.Containers {
		if c.State != "terminated" || c.ExitCode == nil {
			return false
		}
	}
	return true
}

// ctrdExitCodes maps container names to their exit codes in p.
func ctrdExitCodes(p agent.PodInfo) map[string]int32 {
	out := map[string]int32{}
	for _, c := range p.Containers {
		if c.ExitCode != nil {
			out[c.Name] = *c.ExitCode
		}
	}
	return out
}

// ctrdObserver records an agent's engine transitions and pokes watchers
// when a pod's terminating sync succeeded: its final status is written and
// its containers are stopped but not yet removed, the moment to read both.
// It runs with the engine's lock held, so it never blocks.
type ctrdObserver struct {
	mu          sync.Mutex
	transitions []fsm.Transition
	rejected    []string
	pokes       []chan struct{}
}

func (o *ctrdObserver) Transition(tr fsm.Transition) {
	o.mu.Lock()
	o.transitions = append(o.transitions, tr)
	pokes := o.pokes
	o.mu.Unlock()
	if tr.Event == fsm.TerminatingDone {
		for _, p := range pokes {
			select {
			case p <- struct{}{}:
			default:
			}
		}
	}
}

func (o *ctrdObserver) Rejected(uid types.UID, s fsm.State, ev fsm.Event, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.rejected = append(o.rejected, fmt.Sprintf("%s: %s in %s: %v", uid, ev, s, err))
}

func (o *ctrdObserver) rejections() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.rejected...)
}

// poke returns a channel that receives (without blocking the engine) when
// a terminating sync succeeds.
func (o *ctrdObserver) poke() chan struct{} {
	ch := make(chan struct{}, 1)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.pokes = append(o.pokes, ch)
	return ch
}

// events lists the events of uid's transitions, in order.
func (o *ctrdObserver) events(uid string) []fsm.Event {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []fsm.Event
	for _, tr := range o.transitions {
		if tr.Pod == types.UID(uid) {
			out = append(out, tr.Event)
		}
	}
	return out
}

// ctrdWatch follows containers through ContainerStatus, every 5 ms and at
// every poke, keeping the last status of each: the agent removes a pod's
// containers soon after they stopped, and the exit code and FinishedAt
// must be read before.
type ctrdWatch struct {
	t   testing.TB
	rt  internalapi.RuntimeService
	ids map[string]string // name -> container ID

	mu   sync.Mutex
	last map[string]*runtimeapi.ContainerStatus // by name
	gone map[string]bool                        // removed (NotFound)

	poller ctrdPoller
}

// watch follows the running containers of uid, which must be want.
func (e *ctrdEnv) watch(uid string, poke <-chan struct{}, want ...string) *ctrdWatch {
	e.t.Helper()
	ids := e.runningContainers(uid)
	if len(ids) != len(want) {
		e.t.Fatalf("running containers of pod %s: %v, want %v", uid, ids, want)
	}
	for _, name := range want {
		if ids[name] == "" {
			e.t.Fatalf("running containers of pod %s: %v, want %v", uid, ids, want)
		}
	}
	w := &ctrdWatch{
		t: e.t, rt: e.rt, ids: ids,
		last: map[string]*runtimeapi.ContainerStatus{}, gone: map[string]bool{},
	}
	w.poll()
	w.poller.start(poke, w.poll)
	e.t.Cleanup(w.poller.close)
	return w
}

// ctrdPoller calls a function every 5 ms and at every poke, until closed.
type ctrdPoller struct {
	stop chan struct{}
	done chan struct{}
}

func (p *ctrdPoller) start(poke <-chan struct{}, poll func()) {
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(p.done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-poke:
			case <-tick.C:
			}
			poll()
		}
	}()
}

// close stops the poller and waits for it; it may be called again.
func (p *ctrdPoller) close() {
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	<-p.done
}

// poll reads the status of every container not yet removed. Errors other
// than NotFound (containerd restarting) are ignored: the next poll tries
// again.
func (w *ctrdWatch) poll() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for name, id := range w.ids {
		w.mu.Lock()
		gone := w.gone[name]
		w.mu.Unlock()
		if gone {
			continue
		}
		resp, err := w.rt.ContainerStatus(ctx, id, false)
		w.mu.Lock()
		switch {
		case status.Code(err) == codes.NotFound || (err == nil && resp.GetStatus() == nil):
			w.gone[name] = true
		case err == nil:
			w.last[name] = resp.GetStatus()
		}
		w.mu.Unlock()
	}
}

// get returns the last status seen of the named container and whether it
// was removed since.
func (w *ctrdWatch) get(name string) (*runtimeapi.ContainerStatus, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last[name], w.gone[name]
}

// exited waits until the named container exited and returns its status;
// it fails the test if the container was removed before its exit was seen.
func (w *ctrdWatch) exited(name string) *runtimeapi.ContainerStatus {
	w.t.Helper()
	var st *runtimeapi.ContainerStatus
	ctrdEventually(w.t, "container "+name+" exited", func() (bool, string) {
		var gone bool
		st, gone = w.get(name)
		if st.GetState() == runtimeapi.ContainerState_CONTAINER_EXITED {
			return true, ""
		}
		if gone {
			w.t.Fatalf("container %s (%.12s) was removed before its exit status was read; last seen %v", name, w.ids[name], st.GetState())
		}
		return false, st.GetState().String()
	})
	return st
}

// exitedWithin waits up to d for the named container to exit and returns
// its status, or false.
func (w *ctrdWatch) exitedWithin(name string, d time.Duration) (*runtimeapi.ContainerStatus, bool) {
	deadline := time.Now().Add(d)
	for {
		st, _ := w.get(name)
		if st.GetState() == runtimeapi.ContainerState_CONTAINER_EXITED {
			return st, true
		}
		if time.Now().After(deadline) {
			return nil, false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// exitedOrGone waits until the named container exited or was removed (a
// running container cannot be removed); st is nil when its exit was not
// seen.
func (w *ctrdWatch) exitedOrGone(name string) (st *runtimeapi.ContainerStatus) {
	w.t.Helper()
	ctrdEventually(w.t, "container "+name+" exited", func() (bool, string) {
		var gone bool
		st, gone = w.get(name)
		if st.GetState() == runtimeapi.ContainerState_CONTAINER_EXITED {
			return true, ""
		}
		if gone {
			st = nil
			return true, ""
		}
		return false, st.GetState().String()
	})
	return st
}

// ctrdFinal keeps the agent's view of a pod at the moment its terminating
// sync succeeded (its final status, with exit codes), before housekeeping
// forgets a pod whose manifest is gone. It also polls, in case a poke is
// missed.
type ctrdFinal struct {
	mu   sync.Mutex
	info *agent.PodInfo

	poller ctrdPoller
}

func (a *ctrdAgent) recordFinal(uid string) *ctrdFinal {
	f := &ctrdFinal{}
	f.poller.start(a.obs.poke(), func() {
		if p, ok := a.pod(uid); ok && ctrdTerminated(p) {
			f.mu.Lock()
			f.info = &p
			f.mu.Unlock()
		}
	})
	a.t.Cleanup(f.poller.close)
	return f
}

// get stops recording and returns the last view with every container
// terminated, or nil.
func (f *ctrdFinal) get() *agent.PodInfo {
	f.poller.close()
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.info
}

// ctrdSince is how long after t the runtime timestamp ns is.
func ctrdSince(t time.Time, ns int64) time.Duration { return time.Unix(0, ns).Sub(t) }

// TestContainerdPodRuns: a manifest's pod runs on containerd, and the
// agent and the runtime agree on it; removing the manifest stops it (its
// container exits 0 on SIGTERM) and removes it from both.
func TestContainerdPodRuns(t *testing.T) {
	e := newCtrdEnv(t)
	uid := e.newUID()
	a := e.startAgent(filepath.Join(e.dir, "manifests"), nil)
	pod := ctrdPod{name: "web", uid: uid, grace: 10, containers: []ctrdContainer{ctrdTrapper("main")}}
	a.writePod(pod)

	p := a.waitRunning(uid, 1)
	if want := "web-" + a.node; p.Name != want || p.Namespace != ctrdNamespace || !p.Static || p.Config != "desired" {
		t.Errorf("agent's pod = %s, want %s/%s, static, config desired", ctrdDescribe(p), ctrdNamespace, want)
	}
	if p.Containers[0].Name != "main" || p.Containers[0].Restarts != 0 {
		t.Errorf("agent's container = %+v, want main with no restart", p.Containers[0])
	}

	sbs := e.sandboxes(uid)
	if len(sbs) != 1 {
		t.Fatalf("sandboxes of pod %s: %d, want 1", uid, len(sbs))
	}
	sb := sbs[0]
	sbStatus, err := e.rt.PodSandboxStatus(t.Context(), sb.Id, false)
	if err != nil {
		t.Fatalf("PodSandboxStatus: %v", err)
	}
	if got := sbStatus.GetStatus().GetState(); got != runtimeapi.PodSandboxState_SANDBOX_READY {
		t.Errorf("sandbox state = %v, want SANDBOX_READY", got)
	}
	if sb.Labels[cri.PodUIDLabel] != uid || sb.Labels[cri.PodNameLabel] != p.Name || sb.Labels[cri.PodNamespaceLabel] != ctrdNamespace {
		t.Errorf("sandbox labels = %v, want uid %s, name %s, namespace %s", sb.Labels, uid, p.Name, ctrdNamespace)
	}
	if md := sb.GetMetadata(); md.GetUid() != uid || md.GetName() != p.Name || md.GetNamespace() != ctrdNamespace {
		t.Errorf("sandbox metadata = %v, want uid %s, name %s, namespace %s", md, uid, p.Name, ctrdNamespace)
	}
	cs := e.containers(uid)
	if len(cs) != 1 {
		t.Fatalf("containers of pod %s: %d, want 1", uid, len(cs))
	}
	cst, err := e.rt.ContainerStatus(t.Context(), cs[0].Id, false)
	if err != nil {
		t.Fatalf("ContainerStatus: %v", err)
	}
	c := cst.GetStatus()
	if c.GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING || c.GetStartedAt() == 0 {
		t.Errorf("container state %v, started at %d; want CONTAINER_RUNNING, started", c.GetState(), c.GetStartedAt())
	}
	if c.Labels[cri.PodUIDLabel] != uid || c.Labels[cri.ContainerNameLabel] != "main" || cs[0].PodSandboxId != sb.Id {
		t.Errorf("container labels %v in sandbox %.12s; want uid %s, container main, in sandbox %.12s", c.Labels, cs[0].PodSandboxId, uid, sb.Id)
	}
	t.Logf("pod %s runs: sandbox %.12s, container %.12s started %v after the sandbox was created",
		p.Name, sb.Id, c.Id, time.Duration(c.GetStartedAt()-sb.CreatedAt).Round(time.Millisecond))

	w := e.watch(uid, a.obs.poke(), "main")
	killAt := a.removePod(pod)
	main := w.exited("main")
	t.Logf("manifest removed: main exited %d after %v", main.GetExitCode(), ctrdSince(killAt, main.GetFinishedAt()).Round(time.Millisecond))
	if main.GetExitCode() != 0 {
		t.Errorf("main exit code = %d, want 0: it exits 0 on SIGTERM", main.GetExitCode())
	}
	a.waitGone(uid)
	e.waitRuntimeGone(uid)
}

// TestContainerdGracePeriods: removing the manifest kills the pod with its
// own grace period (3 s): a container that handles SIGTERM exits at once,
// one that ignores it is killed when the grace period is over; the final
// status has both exit codes; then the pod is removed.
func TestContainerdGracePeriods(t *testing.T) {
	e := newCtrdEnv(t)
	uid := e.newUID()
	a := e.startAgent(filepath.Join(e.dir, "manifests"), nil)
	const grace = 3 * time.Second
	pod := ctrdPod{name: "graceful", uid: uid, grace: int64(grace / time.Second),
		containers: []ctrdContainer{ctrdTrapper("trapper"), ctrdIgnorer("ignorer")}}
	a.writePod(pod)
	a.waitRunning(uid, 2)
	w := e.watch(uid, a.obs.poke(), "trapper", "ignorer")
	final := a.recordFinal(uid)
	// The trap is set within milliseconds of the shell's start; give it
	// time, or a SIGTERM before it would be ignored.
	time.Sleep(300 * time.Millisecond)

	killAt := a.removePod(pod)
	trapper, ignorer := w.exited("trapper"), w.exited("ignorer")
	trapperTook, ignorerTook := ctrdSince(killAt, trapper.GetFinishedAt()), ctrdSince(killAt, ignorer.GetFinishedAt())
	t.Logf("manifest removed (grace %v): trapper exited %d after %v, ignorer exited %d after %v",
		grace, trapper.GetExitCode(), trapperTook.Round(time.Millisecond), ignorer.GetExitCode(), ignorerTook.Round(time.Millisecond))
	if trapper.GetExitCode() != 0 || trapperTook >= time.Second {
		t.Errorf("trapper exited %d, %v after the kill; want 0, well under 1 s: it exits on SIGTERM", trapper.GetExitCode(), trapperTook)
	}
	// SIGKILL comes grace after StopContainer, which comes after the
	// manifest's removal was noticed (within a 100 ms file check).
	if ignorer.GetExitCode() != 137 || ignorerTook < grace || ignorerTook > grace+time.Second {
		t.Errorf("ignorer exited %d, %v after the kill; want 137 (SIGKILL) within [%v, %v]", ignorer.GetExitCode(), ignorerTook, grace, grace+time.Second)
	}

	a.waitGone(uid)
	p := final.get()
	if p == nil {
		t.Fatal("the agent never reported the pod with both containers terminated before forgetting it")
	}
	t.Logf("final status: %s", ctrdDescribe(*p))
	codes := ctrdExitCodes(*p)
	if codes["trapper"] != 0 || codes["ignorer"] != 137 || len(codes) != 2 {
		t.Errorf("final exit codes = %v, want trapper 0, ignorer 137", codes)
	}
	if p.Phase != v1.PodFailed {
		t.Errorf("final phase = %s, want Failed (a container exited 137)", p.Phase)
	}
	if p.Lifecycle != "Terminated" && p.Lifecycle != "Finished" {
		t.Errorf("final lifecycle = %s, want Terminated or Finished", p.Lifecycle)
	}
	if n := len(e.runningContainers(uid)); n != 0 {
		t.Errorf("%d container(s) of the pod still run", n)
	}
	e.waitRuntimeGone(uid)
}

// TestContainerdShortenedGrace: a kill with a shorter grace period cuts
// short a kill in progress: the pod's own 30 s give way to 2 s.
func TestContainerdShortenedGrace(t *testing.T) {
	e := newCtrdEnv(t)
	uid := e.newUID()
	a := e.startAgent(filepath.Join(e.dir, "manifests"), nil)
	pod := ctrdPod{name: "slow", uid: uid, grace: 30, containers: []ctrdContainer{ctrdIgnorer("ignorer")}}
	a.writePod(pod)
	a.waitRunning(uid, 1)
	w := e.watch(uid, a.obs.poke(), "ignorer")

	// The first kill: the pod's own grace period (KillPod keeps the pod
	// known while its manifest is there; a removed manifest would make the
	// agent forget it, and a second KillPod fail).
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	firstAt := time.Now()
	first := make(chan error, 1)
	go func() { first <- a.KillPod(ctx, types.UID(uid), nil) }()
	a.waitPod(uid, "the first kill is in progress", func(p agent.PodInfo) bool { return p.Lifecycle == "Terminating" })
	time.Sleep(time.Second)
	if st, _ := w.get("ignorer"); st.GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("ignorer is %v 1 s into a 30 s grace period, want running", st.GetState())
	}

	short := int64(2)
	secondAt := time.Now()
	if err := a.KillPod(ctx, types.UID(uid), &short); err != nil {
		t.Fatalf("KillPod(grace 2): %v", err)
	}
	returned := time.Since(secondAt)
	ignorer := w.exited("ignorer")
	took := ctrdSince(secondAt, ignorer.GetFinishedAt())
	t.Logf("kill with grace 30, then %v later with grace %d: ignorer exited %d %v after the second kill (%v after the first); KillPod returned after %v",
		secondAt.Sub(firstAt).Round(time.Millisecond), short, ignorer.GetExitCode(), took.Round(time.Millisecond),
		ctrdSince(firstAt, ignorer.GetFinishedAt()).Round(time.Millisecond), returned.Round(time.Millisecond))
	if ignorer.GetExitCode() != 137 || took < 2*time.Second || took > 3*time.Second {
		t.Errorf("ignorer exited %d, %v after the kill with grace 2; want 137 within [2s, 3s]", ignorer.GetExitCode(), took)
	}
	select {
	case err := <-first:
		if err != nil {
			t.Errorf("KillPod(pod's own grace 30) = %v, want nil once the pod stopped", err)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("KillPod(pod's own grace 30) still waits 5 s after the pod stopped")
	}
	p := a.waitPod(uid, "the pod finished and stays finished while its manifest is there", func(p agent.PodInfo) bool {
		return p.Lifecycle == "Finished" && ctrdTerminated(p)
	})
	if codes := ctrdExitCodes(p); codes["ignorer"] != 137 {
		t.Errorf("final exit codes = %v, want ignorer 137", codes)
	}
}

// TestContainerdRuntimeRestart: containerd restarts while a pod's
// containers are being stopped; the StopContainer in flight fails, the
// engine retries the terminating sync after its back-off, and the pod ends
// stopped and removed all the same.
func TestContainerdRuntimeRestart(t *testing.T) {
	e := newCtrdEnv(t)
	sock := strings.TrimPrefix(e.endpoint, "unix://")
	dir := filepath.Dir(sock)
	if _, err := os.Stat(filepath.Join(dir, "podlife-containerd.env")); err != nil {
		t.Skipf("restarts containerd, which needs one started by tools/containerd-up.sh; %s is not: %v", e.endpoint, err)
	}
	script, err := filepath.Abs("../tools/containerd-restart.sh")
	if err != nil {
		t.Fatal(err)
	}
	uid := e.newUID()
	a := e.startAgent(filepath.Join(e.dir, "manifests"), nil)
	const grace = 5 * time.Second
	pod := ctrdPod{name: "restart", uid: uid, grace: int64(grace / time.Second), containers: []ctrdContainer{ctrdIgnorer("ignorer")}}
	a.writePod(pod)
	a.waitRunning(uid, 1)
	w := e.watch(uid, a.obs.poke(), "ignorer")

	killAt := a.removePod(pod)
	time.Sleep(time.Second)
	if st, _ := w.get("ignorer"); st.GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("ignorer is %v 1 s into a %v grace period, want running", st.GetState(), grace)
	}
	restartAt := time.Now()
	out, err := exec.Command(script, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", script, dir, err, out)
	}
	restarted := time.Now()
	t.Logf("containerd restarted in %v, %v after the manifest's removal: %s", restarted.Sub(restartAt).Round(time.Millisecond),
		restartAt.Sub(killAt).Round(time.Millisecond), strings.TrimSpace(string(out)))

	ignorer := w.exited("ignorer")
	t.Logf("ignorer exited %d, %v after the restart (%v after the manifest's removal)", ignorer.GetExitCode(),
		ctrdSince(restarted, ignorer.GetFinishedAt()).Round(time.Millisecond), ctrdSince(killAt, ignorer.GetFinishedAt()).Round(time.Millisecond))
	if ignorer.GetExitCode() != 137 {
		t.Errorf("ignorer exit code = %d, want 137: SIGKILL at the end of the retried stop's grace period", ignorer.GetExitCode())
	}
	// The restart cut the first stop short (before its SIGKILL); the retry,
	// after the back-off (and the client's reconnection), gives the grace
	// period again.
	if took := ctrdSince(restarted, ignorer.GetFinishedAt()); took < grace || took > grace+5*time.Second {
		t.Errorf("ignorer died %v after containerd was back, want within [%v, %v]: a retried stop with the pod's grace period", took, grace, grace+5*time.Second)
	}
	a.waitGone(uid)
	if n := len(e.runningContainers(uid)); n != 0 {
		t.Errorf("%d container(s) of the pod still run", n)
	}
	e.waitRuntimeGone(uid)

	// In the logs: the stop, its failure, and the retry's stop.
	lines := a.logs.Lines(uid)
	failedAt := slices.IndexFunc(lines, func(l string) bool {
		return strings.Contains(l, "sync failed; will retry") && strings.Contains(l, "SyncTerminatingPod")
	})
	if failedAt < 0 {
		t.Errorf("the agent's logs show no failed SyncTerminatingPod for pod %s", uid)
	} else {
		t.Logf("failed sync: %s", lines[failedAt])
		retryAt := slices.IndexFunc(lines[failedAt+1:], func(l string) bool { return strings.Contains(l, "Stopping container ignorer") })
		if retryAt < 0 {
			t.Errorf("the agent's logs show no stop of container ignorer after the failed sync")
		} else {
			t.Logf("retry: %s", lines[failedAt+1+retryAt])
		}
	}
	events := a.obs.events(uid)
	retried := false
	for i, ev := range events {
		if ev == fsm.TerminatingFailed {
			for _, later := range events[i+1:] {
				retried = retried || later == fsm.TerminatingDone
			}
			break
		}
	}
	if !retried {
		t.Errorf("engine events of pod %s = %v, want TerminatingFailed, then (the retry) TerminatingDone", uid, events)
	}
}

// TestContainerdOrphanOfKilledAgent: an agent stopped as by SIGINT leaves
// its pods running; with the pod's manifest gone, the next agent's first
// housekeeping finds the pod in the runtime, unknown, and kills it.
func TestContainerdOrphanOfKilledAgent(t *testing.T) {
	e := newCtrdEnv(t)
	uid := e.newUID()
	manifests := filepath.Join(e.dir, "manifests")
	a := e.startAgent(manifests, nil)
	pod := ctrdPod{name: "left", uid: uid, grace: 30, containers: []ctrdContainer{ctrdTrapper("trapper"), ctrdIgnorer("ignorer")}}
	a.writePod(pod)
	a.waitRunning(uid, 2)
	time.Sleep(300 * time.Millisecond) // the trap is set

	if err := a.stop(); err != nil {
		t.Fatalf("agent A: Run = %v, want nil after its context ended", err)
	}
	time.Sleep(500 * time.Millisecond)
	running := e.runningContainers(uid)
	if len(running) != 2 {
		t.Fatalf("after agent A stopped, running containers of the pod = %v, want trapper and ignorer: pods outlive the agent", running)
	}
	for _, sb := range e.sandboxes(uid) {
		if sb.State != runtimeapi.PodSandboxState_SANDBOX_READY {
			t.Errorf("after agent A stopped, sandbox %.12s is %v, want ready", sb.Id, sb.State)
		}
	}
	a.removePod(pod)

	b := e.startAgent(manifests, nil)
	w := e.watch(uid, b.obs.poke(), "trapper", "ignorer")
	startedAt := time.Now()
	b.waitGone(uid) // it was only ever a runtime-only pod to B
	trapper, ignorer := w.exitedOrGone("trapper"), w.exitedOrGone("ignorer")
	for name, st := range map[string]*runtimeapi.ContainerStatus{"trapper": trapper, "ignorer": ignorer} {
		if st == nil {
			t.Logf("orphan's %s: removed before its exit was read", name)
			continue
		}
		t.Logf("orphan's %s: exited %d, %v after agent B started", name, st.GetExitCode(), ctrdSince(startedAt, st.GetFinishedAt()).Round(time.Millisecond))
	}
	if trapper != nil && trapper.GetExitCode() != 0 {
		t.Errorf("orphan's trapper exit code = %d, want 0 (SIGTERM)", trapper.GetExitCode())
	}
	ctrdEventually(t, "the orphan's sandbox is not ready (or removed)", func() (bool, string) {
		var states []string
		for _, sb := range e.sandboxes(uid) {
			if sb.State == runtimeapi.PodSandboxState_SANDBOX_READY {
				return false, "sandbox " + sb.Id[:12] + " ready"
			}
			states = append(states, sb.State.String())
		}
		return true, strings.Join(states, ",")
	})
	if n := len(e.runningContainers(uid)); n != 0 {
		t.Errorf("%d container(s) of the orphan still run", n)
	}
	if got := b.counter("kubelet_orphaned_runtime_pods_total"); got != 1 {
		t.Errorf("agent B's kubelet_orphaned_runtime_pods_total = %g, want 1", got)
	}
	if kills := b.logs.Lines("killing a runtime pod nobody knows", uid); len(kills) != 1 {
		t.Errorf("agent B logged %d orphan kills of pod %s, want 1: %q", len(kills), uid, kills)
	}
	e.waitRuntimeGone(uid)
}

// TestContainerdNodeShutdown: a graceful node shutdown stops the pods
// band by band: the priority-0 pod first, within its band's 3 s, then the
// critical one; each pod's grace period is the shorter of its band's
// period and its own (30 s).
func TestContainerdNodeShutdown(t *testing.T) {
	e := newCtrdEnv(t)
	lowUID, criticalUID := e.newUID(), e.newUID()
	a := e.startAgent(filepath.Join(e.dir, "manifests"), func(c *agent.Config) {
		c.ShutdownGracePeriod.Duration = 6 * time.Second
		c.ShutdownGracePeriodCriticalPods.Duration = 3 * time.Second
	})
	const band = 3 * time.Second
	low := ctrdPod{name: "low", uid: lowUID, grace: 30, containers: []ctrdContainer{ctrdIgnorer("ignorer")}}
	critical := ctrdPod{name: "critical", uid: criticalUID, grace: 30, priority: 2000000000, containers: []ctrdContainer{ctrdIgnorer("ignorer")}}
	a.writePod(low)
	a.writePod(critical)
	a.waitRunning(lowUID, 1)
	a.waitRunning(criticalUID, 1)
	lowWatch := e.watch(lowUID, a.obs.poke(), "ignorer")
	criticalWatch := e.watch(criticalUID, a.obs.poke(), "ignorer")

	start := time.Now()
	a.RequestShutdown()
	if err := a.wait(); err != nil {
		t.Fatalf("Run after RequestShutdown = %v, want nil", err)
	}
	ran := time.Since(start)
	// Run returned: the shutdown is complete, so nothing of the pods may run.
	for name, uid := range map[string]string{"low": lowUID, "critical": criticalUID} {
		if running := e.runningContainers(uid); len(running) != 0 {
			t.Errorf("pod %s: containers %v still run after Run returned from the node shutdown (%v)", name, running, ran.Round(time.Millisecond))
		}
	}
	lowC, lowOK := lowWatch.exitedWithin("ignorer", 2*time.Second)
	criticalC, criticalOK := criticalWatch.exitedWithin("ignorer", 2*time.Second)
	if !lowOK || !criticalOK {
		t.Fatalf("after the node shutdown, low's container exited: %v, critical's: %v; want both (Run returned after %v)", lowOK, criticalOK, ran.Round(time.Millisecond))
	}
	lowTook, criticalTook := ctrdSince(start, lowC.GetFinishedAt()), ctrdSince(start, criticalC.GetFinishedAt())
	t.Logf("node shutdown (bands of %v each): low killed (%d) after %v, critical (%d) after %v (%v after low); Run returned after %v",
		band, lowC.GetExitCode(), lowTook.Round(time.Millisecond), criticalC.GetExitCode(), criticalTook.Round(time.Millisecond),
		time.Duration(criticalC.GetFinishedAt()-lowC.GetFinishedAt()).Round(time.Millisecond), ran.Round(time.Millisecond))
	if lowC.GetExitCode() != 137 || lowTook < band || lowTook > band+1500*time.Millisecond {
		t.Errorf("low's container exited %d, %v after the shutdown began; want 137 within [%v, %v]: grace min(band %v, own 30s)",
			lowC.GetExitCode(), lowTook, band, band+1500*time.Millisecond, band)
	}
	// The critical band starts when low's band is over: its period elapsed
	// (low ignores SIGTERM, so its kill does not return sooner). Its pod's
	// grace is min(band 3 s, own 30 s) from then.
	if criticalC.GetExitCode() != 137 || criticalC.GetFinishedAt() <= lowC.GetFinishedAt() {
		t.Errorf("critical's container exited %d at +%v, low's at +%v; want 137, after low's", criticalC.GetExitCode(), criticalTook, lowTook)
	}
	if criticalTook < 2*band || criticalTook > 2*band+1500*time.Millisecond {
		t.Errorf("critical's container died %v after the shutdown began, want within [%v, %v]: low's band, then its own grace", criticalTook, 2*band, 2*band+1500*time.Millisecond)
	}
	for _, uid := range []string{lowUID, criticalUID} {
		p, ok := a.pod(uid)
		if !ok {
			t.Errorf("after the shutdown the agent does not know pod %s", uid)
			continue
		}
		t.Logf("final status: %s", ctrdDescribe(p))
		if p.Phase != v1.PodFailed || p.Reason != "Terminated" || !ctrdTerminated(p) || ctrdExitCodes(p)["ignorer"] != 137 {
			t.Errorf("pod %s after the shutdown: %s; want phase Failed, reason Terminated, ignorer terminated 137", p.Name, ctrdDescribe(p))
		}
	}
	for _, uid := range []string{lowUID, criticalUID} {
		if n := len(e.runningContainers(uid)); n != 0 {
			t.Errorf("%d container(s) of pod %s still run after the shutdown", n, uid)
		}
	}
}

// TestContainerdCompletedPodStaysCompleted: a restartPolicy Never pod whose
// container exits 3 ends Failed; an agent restarted on the same node finds
// it Failed with exit code 3 and creates nothing; once its manifest is
// removed, its containers, its sandbox and its log directory are removed.
func TestContainerdCompletedPodStaysCompleted(t *testing.T) {
	e := newCtrdEnv(t)
	uid := e.newUID()
	manifests := filepath.Join(e.dir, "manifests")
	first := e.startAgent(manifests, nil)
	sameNode := func(c *agent.Config) {
		c.NodeName = first.node
		c.RootDir = filepath.Join(e.dir, "root-"+first.node)
	}
	manifest := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: done, namespace: %s, uid: %s}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 5
  containers:
  - {name: main, image: %s, imagePullPolicy: Never, command: [sh, -c, "exit 3"]}
`, ctrdNamespace, uid, critest.BusyboxImage)
	if err := os.WriteFile(filepath.Join(manifests, "done.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	failedWith3 := func(p agent.PodInfo) bool {
		return p.Lifecycle == "Finished" && p.Phase == v1.PodFailed && ctrdTerminated(p) && ctrdExitCodes(p)["main"] == 3
	}
	first.waitPod(uid, "done finished Failed with exit code 3", failedWith3)
	before := containerIDs(e.containers(uid))
	logDir := filepath.Join(e.dir, "root-"+first.node, "pods", ctrdNamespace+"_done-"+first.node+"_"+uid)
	if len(before) != 1 || len(e.sandboxes(uid)) != 1 {
		t.Fatalf("the finished pod's containers %v, sandboxes %d; want its one container in its sandbox, kept", before, len(e.sandboxes(uid)))
	}
	if _, err := os.Stat(logDir); err != nil {
		t.Fatalf("the pod's log directory: %v", err)
	}
	if err := first.stop(); err != nil {
		t.Fatalf("first agent: %v", err)
	}

	next := e.startAgent(manifests, sameNode)
	next.waitPod(uid, "done still Failed with exit code 3 after the restart", failedWith3)
	// Finished means the engine ran the pod's last sync: nothing more starts.
	if now := containerIDs(e.containers(uid)); !slices.Equal(now, before) || len(e.runningContainers(uid)) > 0 {
		t.Errorf("containers after the restart: %v (running %v), want only %v, exited", now, e.runningContainers(uid), before)
	}
	for _, sb := range e.sandboxes(uid) {
		if sb.State == runtimeapi.PodSandboxState_SANDBOX_READY {
			t.Errorf("sandbox %.12s is ready after the restart", sb.Id)
		}
	}

	if err := os.Remove(filepath.Join(manifests, "done.yaml")); err != nil {
		t.Fatal(err)
	}
	next.waitGone(uid)
	e.waitRuntimeGone(uid)
	ctrdEventually(t, "the pod's log directory is removed", func() (bool, string) {
		_, err := os.Stat(logDir)
		return os.IsNotExist(err), fmt.Sprint(err)
	})
}

// TestContainerdReadmeExample: the manifest the README's containerd
// commands copy runs as written, and a pull that cannot succeed (the same
// image pulled Always) is reported once per back-off in one short line.
func TestContainerdReadmeExample(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const copyCmd = "mkdir -p manifests && cp examples/busybox.yaml manifests/"
	if !strings.Contains(string(readme), copyCmd) {
		t.Fatalf("README.md no longer says %q: keep this test on the manifest it copies", copyCmd)
	}
	example, err := os.ReadFile("../examples/busybox.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e := newCtrdEnv(t)
	manifests := filepath.Join(e.dir, "manifests")
	a := e.startAgent(manifests, nil)
	if err := os.WriteFile(filepath.Join(manifests, "busybox.yaml"), example, 0o644); err != nil {
		t.Fatal(err)
	}
	var uid string
	ctrdEventually(t, "the example's pod is known", func() (bool, string) {
		for _, p := range a.Pods() {
			if p.Name == "hello-"+a.node {
				uid = string(p.UID)
				return true, ""
			}
		}
		return false, fmt.Sprint(len(a.Pods()), " pods")
	})
	e.removeAtEnd(uid)
	a.waitRunning(uid, 1)

	// The same pod pulling its image: the pull fails, once per back-off.
	pulled := strings.Replace(string(example), "imagePullPolicy: IfNotPresent", "imagePullPolicy: Always", 1)
	pulled = strings.Replace(pulled, "name: hello\n  namespace", "name: pulled\n  namespace", 1)
	if err := os.WriteFile(filepath.Join(manifests, "pulled.yaml"), []byte(pulled), 0o644); err != nil {
		t.Fatal(err)
	}
	var pulledUID string
	ctrdEventually(t, "the pulled pod waits for its image", func() (bool, string) {
		for _, p := range a.Pods() {
			if p.Name == "pulled-"+a.node && len(p.Containers) == 1 && p.Containers[0].Reason == "ImagePullBackOff" {
				pulledUID = string(p.UID)
				return true, ""
			}
		}
		return false, a.logs.Tail(3)
	})
	e.removeAtEnd(pulledUID)
	var failed []string
	for line := range strings.Lines(a.logs.String()) {
		if strings.Contains(line, "Failed to pull image") || strings.Contains(line, "PullImage from image service failed") {
			failed = append(failed, line)
		}
	}
	if len(failed) != 1 || len(failed[0]) > 500 || strings.Contains(failed[0], "rpc error") {
		t.Errorf("log lines of the failed pull: %q; want one short line before the back-off ends", failed)
	}
	t.Logf("the failed pull, as logged: %s", strings.TrimSpace(failed[0]))

	for _, f := range []string{"busybox.yaml", "pulled.yaml"} {
		if err := os.Remove(filepath.Join(manifests, f)); err != nil {
			t.Fatal(err)
		}
	}
	a.waitGone(uid)
	e.waitRuntimeGone(uid)
}
