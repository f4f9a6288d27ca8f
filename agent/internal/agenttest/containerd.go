package agenttest

// Agents on a real CRI runtime (containerd in CI): CtrdEnv is a test's
// connection to the runtime, CtrdAgent an agent on it reading static pod
// manifests. NewCtrdEnv skips the test unless $PODLIFE_CRI_ENDPOINT names
// a runtime (internal/critest).
//
// An agent owns the runtime it is given: its housekeeping kills every pod
// labelled io.kubernetes.pod.uid that it does not know. So these tests do
// not run in parallel, each removes the sandboxes of its pod UIDs when it
// ends, and each first waits until no other pod runs on the runtime (other
// packages' tests, such as internal/critest's, may share it under
// `go test ./...`).
//
// Times are measured, where possible, with the runtime's own container
// timestamps (StartedAt, FinishedAt): the instant a container died, not the
// instant a poll noticed it. The instant of a kill is the test's wall
// clock just before it asked for the kill; both clocks are the host's.

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/agent"
	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/agent/client"
	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/internal/critest"
	"github.com/podlife/podlife/internal/testlog"
)

// CtrdTimeout bounds each wait for an outcome that should come within a
// few seconds.
const CtrdTimeout = 30 * time.Second

// CtrdNamespace is the namespace of every test pod.
const CtrdNamespace = "podlife-it"

// signalsSet is the line CtrdTrapper and CtrdIgnorer print once their
// SIGTERM disposition is in place. Until then PID 1 of the container is
// runc's init, whose Go runtime dies on SIGTERM, or a shell without its
// trap: a kill in that window, which a loaded machine widens to seconds,
// would end an ignorer early or leave a trapper to SIGKILL.
const signalsSet = "podlife-test: signals set"

// CtrdTrapper handles SIGTERM: its shell (PID 1 of its container) exits 0
// on TERM, at the latest when the current 0.2 s sleep ends.
func CtrdTrapper(name string) CtrdContainer {
	return CtrdContainer{Name: name, SignalsSet: true,
		Command: []string{"sh", "-c", `trap "exit 0" TERM; echo "` + signalsSet + `"; while true; do sleep 0.2; done`}}
}

// CtrdIgnorer ignores SIGTERM: its shell ignores TERM, then becomes sleep,
// PID 1 of its container (the syncer gives each container its own PID
// namespace, as the kubelet does), which keeps the signal ignored. Only
// SIGKILL ends it, exit code 137.
func CtrdIgnorer(name string) CtrdContainer {
	return CtrdContainer{Name: name, SignalsSet: true,
		Command: []string{"sh", "-c", `trap "" TERM; echo "` + signalsSet + `"; exec sleep 1000`}}
}

// CtrdContainer is a container of a CtrdPod: its name, command and image
// (critest.BusyboxImage when empty).
type CtrdContainer struct {
	Name    string
	Command []string
	Image   string
	// SignalsSet: the command prints signalsSet once it handles SIGTERM
	// as it means to; WaitRunning waits for that line.
	SignalsSet bool
}

// CtrdPod is a static pod manifest with restartPolicy Always.
type CtrdPod struct {
	Name, UID  string
	Grace      int64
	Priority   int32
	Containers []CtrdContainer
}

func (p CtrdPod) file() string { return p.Name + ".yaml" }

func (p CtrdPod) yaml() string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: %s\n  uid: %s\n", p.Name, CtrdNamespace, p.UID)
	fmt.Fprintf(&b, "spec:\n  restartPolicy: Always\n  terminationGracePeriodSeconds: %d\n", p.Grace)
	if p.Priority != 0 {
		fmt.Fprintf(&b, "  priority: %d\n", p.Priority)
	}
	b.WriteString("  containers:\n")
	for _, c := range p.Containers {
		cmd, _ := json.Marshal(c.Command) // a JSON array is a YAML flow sequence
		image := cmp.Or(c.Image, critest.BusyboxImage)
		fmt.Fprintf(&b, "  - name: %s\n    image: %s\n    imagePullPolicy: Never\n    command: %s\n", c.Name, image, cmd)
	}
	return b.String()
}

// CtrdEnv is one test's connection to the runtime and its scratch space.
type CtrdEnv struct {
	T        testing.TB
	Endpoint string
	RT       internalapi.RuntimeService
	Dir      string

	// uids are the pods removed from the runtime when the test ends,
	// after every agent of the test stopped: a running agent would
	// recreate a sandbox removed under it, and leave it to the next test.
	uidsMu sync.Mutex
	uids   []string

	// RestartBackoff, when set, is the crash-loop back-off's first delay
	// and cap of the agents started after (agent.Options).
	RestartBackoff time.Duration
}

// NewCtrdEnv skips the test without a runtime, and checks that the image
// the pods use is there (nothing can be pulled).
func NewCtrdEnv(t testing.TB) *CtrdEnv {
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
	e := &CtrdEnv{T: t, Endpoint: ep, RT: rt, Dir: dir}
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
func (e *CtrdEnv) waitNoOtherPods() {
	e.T.Helper()
	const patience = time.Minute
	deadline := time.Now().Add(patience)
	for {
		sbs, err := e.RT.ListPodSandbox(e.T.Context(), &runtimeapi.PodSandboxFilter{State: &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}})
		if err != nil {
			e.T.Fatalf("ListPodSandbox: %v", err)
		}
		cs, err := e.RT.ListContainers(e.T.Context(), &runtimeapi.ContainerFilter{State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}})
		if err != nil {
			e.T.Fatalf("ListContainers: %v", err)
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
			e.T.Fatalf("the runtime still runs pods of others after %v: %v; an agent would kill them as orphans, so these tests need the runtime to themselves", patience, slices.Sorted(maps.Keys(others)))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// NewUID returns a fresh pod UID whose sandboxes and containers are
// removed when the test ends.
func (e *CtrdEnv) NewUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	uid := fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
	e.RemoveAtEnd(uid)
	return uid
}

// RemoveAtEnd removes every sandbox and container of uid when the test
// ends, once its agents stopped.
func (e *CtrdEnv) RemoveAtEnd(uid string) {
	e.uidsMu.Lock()
	defer e.uidsMu.Unlock()
	e.uids = append(e.uids, uid)
}

// removePod stops and removes every sandbox of uid (which removes their
// containers), then any container of uid left over.
func (e *CtrdEnv) removePod(uid string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sel := map[string]string{cri.PodUIDLabel: uid}
	sbs, err := e.RT.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: sel})
	if err != nil {
		e.T.Errorf("cleanup of pod %s: ListPodSandbox: %v", uid, err)
		return
	}
	for _, sb := range sbs {
		if err := untilGone(ctx, func() error { return e.RT.StopPodSandbox(ctx, sb.Id) }); err != nil {
			e.T.Errorf("cleanup of pod %s: StopPodSandbox(%.12s): %v", uid, sb.Id, err)
		}
		if err := untilGone(ctx, func() error { return e.RT.RemovePodSandbox(ctx, sb.Id) }); err != nil {
			e.T.Errorf("cleanup of pod %s: RemovePodSandbox(%.12s): %v", uid, sb.Id, err)
		}
	}
	cs, err := e.RT.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: sel})
	if err != nil {
		e.T.Errorf("cleanup of pod %s: ListContainers: %v", uid, err)
		return
	}
	for _, c := range cs {
		if err := untilGone(ctx, func() error { return e.RT.RemoveContainer(ctx, c.Id) }); err != nil {
			e.T.Errorf("cleanup of pod %s: RemoveContainer(%.12s): %v", uid, c.Id, err)
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

// Sandboxes lists the sandboxes of uid.
func (e *CtrdEnv) Sandboxes(uid string) []*runtimeapi.PodSandbox {
	e.T.Helper()
	return podSandboxes(e.T, e.RT, uid)
}

// Containers lists the containers of uid.
func (e *CtrdEnv) Containers(uid string) []*runtimeapi.Container {
	e.T.Helper()
	return podContainers(e.T, e.RT, uid)
}

// RunningContainers maps the names of the running containers of uid to
// their IDs.
func (e *CtrdEnv) RunningContainers(uid string) map[string]string {
	e.T.Helper()
	return runningByName(e.Containers(uid))
}

// WaitRuntimeGone waits until the runtime holds no sandbox and no
// container of uid: the agent removed them in the background.
func (e *CtrdEnv) WaitRuntimeGone(uid string) {
	e.T.Helper()
	CtrdEventually(e.T, "the runtime removed every sandbox and container of pod "+uid, func() (bool, string) {
		sbs, cs := e.Sandboxes(uid), e.Containers(uid)
		return len(sbs) == 0 && len(cs) == 0, fmt.Sprintf("%d sandbox(es), %d container(s) left", len(sbs), len(cs))
	})
}

// CtrdEventually polls cond until it holds, failing the test with cond's
// last description after CtrdTimeout.
func CtrdEventually(t testing.TB, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(CtrdTimeout)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting until %s; last: %s", CtrdTimeout, what, state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// CtrdAgent is a running agent.
type CtrdAgent struct {
	*agent.Agent
	t         testing.TB
	Node      string
	manifests string
	Logs      *testlog.Buffer
	Obs       *CtrdObserver
	cancel    context.CancelFunc
	done      chan struct{}
	runErr    error // set before done is closed

	mu      sync.Mutex
	written map[string]CtrdPod // by UID: the pods WritePod wrote
}

// StartAgent runs an agent on the test's runtime with the manifests in
// manifestDir, fast polling and a 500 ms sync back-off; edit may change
// its configuration. The agent stops (as on SIGINT: pods keep running) when
// the test ends, if it has not before.
func (e *CtrdEnv) StartAgent(manifestDir string, edit func(*config.Config)) *CtrdAgent {
	t := e.T
	t.Helper()
	var suffix [3]byte
	_, _ = rand.Read(suffix[:])
	cfg := config.Default()
	cfg.NodeName = "ctrd-" + hex.EncodeToString(suffix[:])
	cfg.RuntimeEndpoint = e.Endpoint
	cfg.StaticPodPath = manifestDir
	cfg.RootDir = filepath.Join(e.Dir, "root-"+cfg.NodeName)
	// Logs under the root directory, not the machine's /var/log (a test
	// may set PodLogsDir itself).
	cfg.PodLogsDir = ""
	cfg.Port = 0 // no kubelet API unless a test asks (on a free port)
	// No healthz port: tests in parallel never bind the kubelet's healthz port 10248.
	cfg.HealthzPort = 0
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
	obs := &CtrdObserver{}
	a, err := agent.New(t.Context(), cfg, agent.Options{
		NoLogind:        true, // the machine's logind is no test's
		ReadOnlyAnyPort: true,
		Logger:          slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Observer:        obs,
		SyncBackOff:     500 * time.Millisecond,

		RestartBackoff: e.RestartBackoff, MaxRestartBackoff: e.RestartBackoff,
	})
	if err != nil {
		t.Fatalf("agent.New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ca := &CtrdAgent{Agent: a, t: t, Node: cfg.NodeName, manifests: manifestDir, Logs: logs, Obs: obs, cancel: cancel, done: make(chan struct{})}
	go func() {
		ca.runErr = a.Run(ctx)
		close(ca.done)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-ca.done:
		case <-time.After(CtrdTimeout):
			t.Errorf("agent %s: Run did not return within %v of its context's end", ca.Node, CtrdTimeout)
		}
		if r := obs.rejections(); len(r) > 0 {
			t.Errorf("agent %s: the lifecycle table rejected events (a bug of the engine): %s", ca.Node, strings.Join(r, "; "))
		}
		if t.Failed() {
			t.Logf("logs of agent %s:\n%s", ca.Node, logs.String())
		}
	})
	return ca
}

// Stop ends Run as SIGINT does (pods keep running) and returns its error.
func (a *CtrdAgent) Stop() error {
	a.t.Helper()
	a.cancel()
	return a.Wait()
}

// Wait waits for Run to return and returns its error.
func (a *CtrdAgent) Wait() error {
	a.t.Helper()
	select {
	case <-a.done:
		return a.runErr
	case <-time.After(CtrdTimeout):
		a.t.Fatalf("agent %s: Run did not return within %v", a.Node, CtrdTimeout)
		return nil
	}
}

// WritePod writes the pod's manifest atomically: a scan never reads half a
// file (dotfiles are skipped).
func (a *CtrdAgent) WritePod(p CtrdPod) {
	a.t.Helper()
	a.mu.Lock()
	if a.written == nil {
		a.written = map[string]CtrdPod{}
	}
	a.written[p.UID] = p
	a.mu.Unlock()
	tmp := filepath.Join(a.manifests, "."+p.file()+".tmp")
	if err := os.WriteFile(tmp, []byte(p.yaml()), 0o644); err != nil {
		a.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(a.manifests, p.file())); err != nil {
		a.t.Fatal(err)
	}
}

// RemovePod removes the pod's manifest and returns when it did.
func (a *CtrdAgent) RemovePod(p CtrdPod) time.Time {
	a.t.Helper()
	at := time.Now()
	if err := os.Remove(filepath.Join(a.manifests, p.file())); err != nil {
		a.t.Fatal(err)
	}
	return at
}

// Pod is the agent's view of uid.
func (a *CtrdAgent) Pod(uid string) (api.PodInfo, bool) {
	for _, p := range a.Pods() {
		if p.UID == types.UID(uid) {
			return p, true
		}
	}
	return api.PodInfo{}, false
}

// PodStatus is the latest status of the manifest's pod uid as the agent's
// GET /pods lists it (PodList; Pending while it has none), false when the
// list has no such pod.
func (a *CtrdAgent) PodStatus(uid types.UID) (v1.PodStatus, bool) {
	for _, p := range a.PodList().Items {
		if p.UID == uid {
			return p.Status, true
		}
	}
	return v1.PodStatus{}, false
}

// WaitPod waits until the agent's view of uid satisfies cond.
func (a *CtrdAgent) WaitPod(uid, what string, cond func(api.PodInfo) bool) api.PodInfo {
	a.t.Helper()
	var p api.PodInfo
	CtrdEventually(a.t, what, func() (bool, string) {
		var ok bool
		p, ok = a.Pod(uid)
		if !ok {
			return false, "the agent does not know the pod"
		}
		return cond(p), CtrdDescribe(p)
	})
	return p
}

// WaitRunning waits until the agent reports uid running with every one of
// its containers and, for a pod WritePod wrote, until its containers handle
// their signals (WaitSignalsSet).
func (a *CtrdAgent) WaitRunning(uid string, containers int) api.PodInfo {
	a.t.Helper()
	p := a.WaitPod(uid, "pod "+uid+" runs", func(p api.PodInfo) bool {
		return len(p.Containers) == containers && IsRunning(p)
	})
	a.mu.Lock()
	pod, ok := a.written[uid]
	a.mu.Unlock()
	if ok {
		a.WaitSignalsSet(pod)
	}
	return p
}

// WaitSignalsSet waits until the current instance of each of the pod's
// containers that prints signalsSet did: a kill from then on meets the
// signal handling the container means to have.
func (a *CtrdAgent) WaitSignalsSet(pod CtrdPod) {
	a.t.Helper()
	for _, c := range pod.Containers {
		if !c.SignalsSet {
			continue
		}
		CtrdEventually(a.t, "container "+c.Name+" of pod "+pod.Name+" handles its signals", func() (bool, string) {
			var out bytes.Buffer
			err := client.ContainerLogs(a.t.Context(), a.ControlSocket(), CtrdNamespace, pod.Name+"-"+a.Node, c.Name, nil, &out)
			return strings.Contains(out.String(), signalsSet), fmt.Sprintf("log %q, %v", out.String(), err)
		})
	}
}

// WaitGone waits until the agent no longer knows uid.
func (a *CtrdAgent) WaitGone(uid string) {
	a.t.Helper()
	CtrdEventually(a.t, "the agent forgot pod "+uid, func() (bool, string) {
		p, ok := a.Pod(uid)
		return !ok, CtrdDescribe(p)
	})
}

// Counter sums the samples of a metric family of the agent.
func (a *CtrdAgent) Counter(name string) float64 {
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

// CtrdDescribe is p in JSON, for failure messages.
func CtrdDescribe(p api.PodInfo) string {
	b, _ := json.Marshal(p)
	return string(b)
}

// CtrdTerminated reports whether the agent shows every container of p
// terminated.
func CtrdTerminated(p api.PodInfo) bool {
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

// CtrdExitCodes maps container names to their exit codes in p.
func CtrdExitCodes(p api.PodInfo) map[string]int32 {
	out := map[string]int32{}
	for _, c := range p.Containers {
		if c.ExitCode != nil {
			out[c.Name] = *c.ExitCode
		}
	}
	return out
}

// CtrdObserver records an agent's engine transitions and pokes watchers
// when a pod's terminating sync succeeded: its final status is written and
// its containers are stopped but not yet removed, the moment to read both.
// It runs with the engine's lock held, so it never blocks.
type CtrdObserver struct {
	mu          sync.Mutex
	transitions []fsm.Transition
	rejected    []string
	pokes       []chan struct{}
}

func (o *CtrdObserver) Transition(tr fsm.Transition) {
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

func (o *CtrdObserver) Rejected(uid types.UID, s fsm.State, ev fsm.Event, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.rejected = append(o.rejected, fmt.Sprintf("%s: %s in %s: %v", uid, ev, s, err))
}

func (o *CtrdObserver) rejections() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.rejected...)
}

// Poke returns a channel that receives (without blocking the engine) when
// a terminating sync succeeds.
func (o *CtrdObserver) Poke() chan struct{} {
	ch := make(chan struct{}, 1)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.pokes = append(o.pokes, ch)
	return ch
}

// Events lists the events of uid's transitions, in order.
func (o *CtrdObserver) Events(uid string) []fsm.Event {
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

// batch is the number of the latest SyncKnownPods call seen.
func (o *CtrdObserver) batch() uint64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	var n uint64
	for _, t := range o.transitions {
		n = max(n, t.Batch)
	}
	return n
}

// WaitHousekeepings waits until housekeeping ran n more times to its end,
// as Harness.WaitHousekeepings counts them (the engine must hold a record).
func (a *CtrdAgent) WaitHousekeepings(n uint64) {
	a.t.Helper()
	from := a.Obs.batch()
	CtrdEventually(a.t, fmt.Sprintf("%d more housekeepings", n), func() (bool, string) {
		now := a.Obs.batch()
		return now >= from+n+1, fmt.Sprintf("batch %d, from %d", now, from)
	})
}

// CtrdWatch follows containers through ContainerStatus, every 5 ms and at
// every poke, keeping the last status of each: the agent removes a pod's
// containers soon after they stopped, and the exit code and FinishedAt
// must be read before.
type CtrdWatch struct {
	t   testing.TB
	rt  internalapi.RuntimeService
	ids map[string]string // name -> container ID

	mu   sync.Mutex
	last map[string]*runtimeapi.ContainerStatus // by name
	gone map[string]bool                        // removed (NotFound)

	poller ctrdPoller
}

// Watch follows the running containers of uid, which must be want.
func (e *CtrdEnv) Watch(uid string, poke <-chan struct{}, want ...string) *CtrdWatch {
	e.T.Helper()
	ids := e.RunningContainers(uid)
	if len(ids) != len(want) {
		e.T.Fatalf("running containers of pod %s: %v, want %v", uid, ids, want)
	}
	for _, name := range want {
		if ids[name] == "" {
			e.T.Fatalf("running containers of pod %s: %v, want %v", uid, ids, want)
		}
	}
	w := &CtrdWatch{
		t: e.T, rt: e.RT, ids: ids,
		last: map[string]*runtimeapi.ContainerStatus{}, gone: map[string]bool{},
	}
	w.poll()
	w.poller.start(poke, w.poll)
	e.T.Cleanup(w.poller.close)
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
func (w *CtrdWatch) poll() {
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

// Get returns the last status seen of the named container and whether it
// was removed since.
func (w *CtrdWatch) Get(name string) (*runtimeapi.ContainerStatus, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last[name], w.gone[name]
}

// Exited waits until the named container exited and returns its status;
// it fails the test if the container was removed before its exit was seen.
func (w *CtrdWatch) Exited(name string) *runtimeapi.ContainerStatus {
	w.t.Helper()
	var st *runtimeapi.ContainerStatus
	CtrdEventually(w.t, "container "+name+" exited", func() (bool, string) {
		var gone bool
		st, gone = w.Get(name)
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

// ExitedWithin waits up to d for the named container to exit and returns
// its status, or false.
func (w *CtrdWatch) ExitedWithin(name string, d time.Duration) (*runtimeapi.ContainerStatus, bool) {
	deadline := time.Now().Add(d)
	for {
		st, _ := w.Get(name)
		if st.GetState() == runtimeapi.ContainerState_CONTAINER_EXITED {
			return st, true
		}
		if time.Now().After(deadline) {
			return nil, false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ExitedOrGone waits until the named container exited or was removed (a
// running container cannot be removed); st is nil when its exit was not
// seen.
func (w *CtrdWatch) ExitedOrGone(name string) (st *runtimeapi.ContainerStatus) {
	w.t.Helper()
	CtrdEventually(w.t, "container "+name+" exited", func() (bool, string) {
		var gone bool
		st, gone = w.Get(name)
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

// CtrdFinal keeps the agent's view of a pod at the moment its terminating
// sync succeeded (its final status, with exit codes), before housekeeping
// forgets a pod whose manifest is gone. It also polls, in case a poke is
// missed.
type CtrdFinal struct {
	mu   sync.Mutex
	info *api.PodInfo

	poller ctrdPoller
}

// RecordFinal starts recording pod uid's final view (CtrdFinal).
func (a *CtrdAgent) RecordFinal(uid string) *CtrdFinal {
	f := &CtrdFinal{}
	f.poller.start(a.Obs.Poke(), func() {
		if p, ok := a.Pod(uid); ok && CtrdTerminated(p) {
			f.mu.Lock()
			f.info = &p
			f.mu.Unlock()
		}
	})
	a.t.Cleanup(f.poller.close)
	return f
}

// Get stops recording and returns the last view with every container
// terminated, or nil.
func (f *CtrdFinal) Get() *api.PodInfo {
	f.poller.close()
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.info
}

// CtrdSince is how long after t the runtime timestamp ns is.
func CtrdSince(t time.Time, ns int64) time.Duration { return time.Unix(0, ns).Sub(t) }

// unmountOnCleanup unmounts, once the agents stopped, whatever is still
// mounted under dir (a pod the test left: a stopped agent leaves its
// pods' mounts, as a kubelet does), before the test's directory is
// removed: the removal would otherwise delete what the mounts show, a
// hostPath's files (or, with a subPath escape, /etc).
func unmountOnCleanup(t testing.TB, dir string) {
	t.Cleanup(func() {
		data, err := os.ReadFile("/proc/self/mountinfo")
		if err != nil {
			t.Fatal(err)
		}
		var points []string
		for line := range strings.Lines(string(data)) {
			if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
				points = append(points, f[4])
			}
		}
		slices.SortFunc(points, func(a, b string) int { return len(b) - len(a) })
		for _, p := range points {
			if err := unix.Unmount(p, unix.MNT_DETACH); err != nil {
				t.Errorf("unmount %s left by the test: %v", p, err)
			}
		}
	})
}

// Reached reports whether a transition of uid entered state s.
func (o *CtrdObserver) Reached(uid string, s fsm.State) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.ContainsFunc(o.transitions, func(tr fsm.Transition) bool { return string(tr.Pod) == uid && To(s)(tr) })
}

// SawGrace reports whether the engine was given a deletion of uid with
// grace period g.
func (o *CtrdObserver) SawGrace(uid string, g int64) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.ContainsFunc(o.transitions, func(tr fsm.Transition) bool {
		return string(tr.Pod) == uid && tr.Params.Deleting && tr.Params.GraceOverride == g
	})
}
