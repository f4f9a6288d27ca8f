// Package agenttest runs node agents for tests: on the embedded runtime,
// in a directory of their own, with the engine's trace checked against the
// lifecycle table when the test ends (Start, Harness, PodSpec, Recorder);
// or on a real CRI runtime that $PODLIFE_CRI_ENDPOINT names (NewCtrdEnv,
// CtrdAgent, CtrdPod). The agent's own tests and agent/integration's use
// it, as the runtime's tests use internal/critest.
package agenttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	remote "k8s.io/cri-client/pkg"

	"github.com/podlife/podlife/agent"
	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/embedded"
	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/internal/podtable"
	"github.com/podlife/podlife/internal/testlog"
	"github.com/podlife/podlife/trace"
)

// NodeName is the test agents' node: static pod "web" is "web-node1".
const NodeName = "node1"

// WaitTimeout bounds every wait for an outcome: generous, since the
// outcomes come within a few intervals (50-100 ms) even under -race.
const WaitTimeout = 20 * time.Second

// Image is any name: the embedded runtime "pulls" every Image at once.
const Image = "registry.k8s.io/pause:3.10"

// PodSpec is a static pod manifest.
type PodSpec struct {
	Name, UID     string
	RestartPolicy string // "" is Always
	Priority      int32
	Grace         int    // terminationGracePeriodSeconds; 0 is 5
	CPU, Memory   string // requests of the first container; "" none
	Containers    []string
	Inits         []string // init containers, run before containers
	labels        map[string]string
}

// YAML is the manifest.
func (p PodSpec) YAML() string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: test\n", p.Name)
	if p.UID != "" {
		fmt.Fprintf(&b, "  uid: %s\n", p.UID)
	}
	b.WriteString("  labels:\n    app: " + p.Name + "\n")
	keys := make([]string, 0, len(p.labels))
	for k := range p.labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "    %s: %q\n", k, p.labels[k])
	}
	policy, grace := p.RestartPolicy, p.Grace
	if policy == "" {
		policy = "Always"
	}
	if grace == 0 {
		grace = 5
	}
	fmt.Fprintf(&b, "spec:\n  restartPolicy: %s\n  terminationGracePeriodSeconds: %d\n", policy, grace)
	if p.Priority != 0 {
		fmt.Fprintf(&b, "  priority: %d\n", p.Priority)
	}
	if len(p.Inits) > 0 {
		b.WriteString("  initContainers:\n")
		for _, c := range p.Inits {
			fmt.Fprintf(&b, "  - name: %s\n    image: %s\n    imagePullPolicy: IfNotPresent\n", c, Image)
		}
	}
	containers := p.Containers
	if len(containers) == 0 {
		containers = []string{"app"}
	}
	b.WriteString("  containers:\n")
	for i, c := range containers {
		fmt.Fprintf(&b, "  - name: %s\n    image: %s\n    imagePullPolicy: IfNotPresent\n", c, Image)
		if i == 0 && (p.CPU != "" || p.Memory != "") {
			b.WriteString("    resources:\n      requests:\n")
			if p.CPU != "" {
				fmt.Fprintf(&b, "        cpu: %q\n", p.CPU)
			}
			if p.Memory != "" {
				fmt.Fprintf(&b, "        memory: %q\n", p.Memory)
			}
		}
	}
	return b.String()
}

// File is the manifest's file name.
func (p PodSpec) File() string { return p.Name + ".yaml" }

// With returns p with one more label: an edit that keeps the UID.
func (p PodSpec) With(key, value string) PodSpec {
	labels := map[string]string{key: value}
	for k, v := range p.labels {
		labels[k] = v
	}
	p.labels = labels
	return p
}

// settings configure one test agent.
type settings struct {
	config    []func(*config.Config)
	backOff   time.Duration
	beforeRun func(h *Harness)
	systemBus string // "": logind is left alone
}

// Option configures a test agent (Start).
type Option func(*settings)

// WithConfig edits the agent's configuration before New, after the edits
// of the options before it.
func WithConfig(f func(*config.Config)) Option {
	return func(s *settings) { s.config = append(s.config, f) }
}

// WithSyncBackOff sets the engine's retry delay after a failed sync.
func WithSyncBackOff(d time.Duration) Option { return func(s *settings) { s.backOff = d } }

// WithSystemBus has the agent watch systemd-logind on the bus at address
// (a logindtest stand-in); without it the agent leaves logind alone, so
// that no test takes the machine's inhibitor lock.
func WithSystemBus(address string) Option { return func(s *settings) { s.systemBus = address } }

// BeforeRun runs f once the agent and the test's CRI client exist, before
// Run: to plant runtime state the first housekeeping will find.
func BeforeRun(f func(h *Harness)) Option { return func(s *settings) { s.beforeRun = f } }

// Harness is a running agent on its embedded runtime, in a directory of its
// own, with a CRI client of that runtime, its logs and its engine trace.
type Harness struct {
	T         testing.TB
	Agent     *agent.Agent
	Root      string
	Manifests string
	RT        internalapi.RuntimeService
	Logs      *testlog.Buffer
	Rec       *Recorder

	Cancel  context.CancelFunc
	ran     chan error // Run's result
	runOnce sync.Once
	runErr  error
}

// Start runs an agent; at cleanup it is stopped (if Run has not returned),
// its trace is checked against the lifecycle table, and its directory is
// removed. The directory is short (a unix socket path has at most 107
// bytes), so it is not t.TempDir().
func Start(t testing.TB, opts ...Option) *Harness {
	t.Helper()
	s := settings{backOff: 200 * time.Millisecond}
	for _, o := range opts {
		o(&s)
	}
	root, err := os.MkdirTemp("", "pl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	// An agent on a runtime endpoint mounts its pods' volumes under root
	// (a projected volume is a tmpfs): they go before root does.
	unmountOnCleanup(t, root)
	h := &Harness{T: t, Root: root, Manifests: filepath.Join(root, "manifests"), Logs: &testlog.Buffer{}, Rec: newRecorder(), ran: make(chan error, 1)}
	if err := os.Mkdir(h.Manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.NodeName = NodeName
	cfg.StaticPodPath = h.Manifests
	cfg.RootDir = root
	// Logs under the root directory, not the machine's /var/log (a test
	// may set PodLogsDir itself).
	cfg.PodLogsDir = ""
	cfg.Port = 0 // no kubelet API unless a test asks (on a free port)
	// No healthz port: tests in parallel never bind the kubelet's healthz port 10248.
	cfg.HealthzPort = 0
	cfg.FileCheckFrequency.Duration = 50 * time.Millisecond
	cfg.HousekeepingInterval.Duration = 100 * time.Millisecond
	cfg.RuntimePollInterval.Duration = 50 * time.Millisecond
	cfg.Allocatable = Resources("cpu=8,memory=16Gi")
	for _, edit := range s.config {
		edit(&cfg)
	}
	log := slog.New(slog.NewTextHandler(h.Logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a, err := agent.New(context.Background(), cfg, agent.Options{
		Logger: log, Observer: h.Rec, SyncBackOff: s.backOff, ReadOnlyAnyPort: true,
		SystemBusAddress: s.systemBus, NoLogind: s.systemBus == "",
	})
	if err != nil {
		t.Fatal(err)
	}
	h.Agent = a
	rt, err := remote.NewRemoteRuntimeServiceBuilder().WithEndpoint(a.RuntimeEndpoint()).WithConnectionTimeout(5 * time.Second).Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	h.RT = rt
	t.Cleanup(func() { rt.Close(context.Background()) })
	if s.beforeRun != nil {
		s.beforeRun(h)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.Cancel = cancel
	go func() { h.ran <- a.Run(ctx) }()
	t.Cleanup(h.finish)
	return h
}

// finish stops the agent if it still runs, and checks what every test
// must leave true: Run returned nil, the engine rejected no event, and its
// trace follows the lifecycle table.
func (h *Harness) finish() {
	t := h.T
	h.Cancel()
	if err := h.Wait(); err != nil {
		t.Errorf("Run: %v", err)
	}
	if rej := h.Rec.rejections(); len(rej) > 0 {
		t.Errorf("the engine rejected events (a bug):\n%s", strings.Join(rej, "\n"))
	}
	if err := h.Rec.check(); err != nil {
		t.Errorf("engine trace: %v", err)
	}
	if t.Failed() {
		var table bytes.Buffer
		_ = podtable.WriteTable(&table, h.Agent.Pods())
		t.Logf("pods at the end:\n%s", table.String())
		t.Logf("agent log (last lines):\n%s", h.Logs.Tail(150))
	}
}

// Wait waits until Run returned, and returns its result.
func (h *Harness) Wait() error {
	h.runOnce.Do(func() {
		select {
		case h.runErr = <-h.ran:
		case <-time.After(WaitTimeout):
			//lint:ignore ST1005 Run is the agent's method
			h.runErr = errors.New("Run did not return")
		}
	})
	return h.runErr
}

// Write puts a manifest in place atomically, so a scan never reads half a
// file.
func (h *Harness) Write(file, content string) {
	h.T.Helper()
	tmp := filepath.Join(h.Manifests, "."+file+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		h.T.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(h.Manifests, file)); err != nil {
		h.T.Fatal(err)
	}
}

// WritePod puts p's manifest in place.
func (h *Harness) WritePod(p PodSpec) { h.T.Helper(); h.Write(p.File(), p.YAML()) }

// Remove removes a manifest.
func (h *Harness) Remove(file string) {
	h.T.Helper()
	if err := os.Remove(filepath.Join(h.Manifests, file)); err != nil {
		h.T.Fatal(err)
	}
}

// Path is a manifest's path as the agent reports it.
func (h *Harness) Path(file string) string { return filepath.Join(h.Manifests, file) }

// Pods are the agent's pods by UID.
func (h *Harness) Pods() map[types.UID]api.PodInfo {
	out := map[types.UID]api.PodInfo{}
	for _, p := range h.Agent.Pods() {
		out[p.UID] = p
	}
	return out
}

// Pod is the agent's report of uid, which must exist.
func (h *Harness) Pod(uid string) api.PodInfo {
	h.T.Helper()
	p, ok := h.Pods()[types.UID(uid)]
	if !ok {
		h.T.Fatalf("pod %s: the agent does not know it", uid)
	}
	return p
}

// Eventually polls cond until it holds, and fails the test after
// waitTimeout, with the agent's pods.
func (h *Harness) Eventually(what string, cond func() bool) {
	h.T.Helper()
	deadline := time.Now().Add(WaitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			var table bytes.Buffer
			_ = podtable.WriteTable(&table, h.Agent.Pods())
			h.T.Fatalf("timed out after %s waiting until %s; pods:\n%s", WaitTimeout, what, table.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// WaitPods polls the agent's pods until cond holds.
func (h *Harness) WaitPods(what string, cond func(pods map[types.UID]api.PodInfo) bool) {
	h.T.Helper()
	h.Eventually(what, func() bool { return cond(h.Pods()) })
}

// WaitRunning waits until each pod runs: engine state Running, phase
// Running and every container running.
func (h *Harness) WaitRunning(uids ...string) {
	h.T.Helper()
	h.WaitPods(fmt.Sprintf("pods %v run", uids), func(pods map[types.UID]api.PodInfo) bool {
		for _, uid := range uids {
			if !IsRunning(pods[types.UID(uid)]) {
				return false
			}
		}
		return true
	})
}

// IsRunning reports whether p runs: engine state Running, phase Running
// and every container running.
func IsRunning(p api.PodInfo) bool {
	if p.Lifecycle != "Running" || p.Phase != v1.PodRunning || len(p.Containers) == 0 {
		return false
	}
	for _, c := range p.Containers {
		if c.State != "running" {
			return false
		}
	}
	return true
}

// WaitGone waits until the agent no longer knows uid.
func (h *Harness) WaitGone(uid string) {
	h.T.Helper()
	h.WaitPods("pod "+uid+" is gone", func(pods map[types.UID]api.PodInfo) bool {
		_, ok := pods[types.UID(uid)]
		return !ok
	})
}

// WaitHousekeepings waits until housekeeping ran n more times to its end,
// as counted by its SyncKnownPods calls (which only show while the engine
// holds a record). A housekeeping's SyncKnownPods comes before its runtime
// read, orphan kills and gauges; the next one's comes after them all, so
// n complete runs are seen at the n+1-th call.
func (h *Harness) WaitHousekeepings(n uint64) {
	h.T.Helper()
	from := h.Rec.batch()
	h.Eventually(fmt.Sprintf("%d more housekeepings", n), func() bool { return h.Rec.batch() >= from+n+1 })
}

// Sandboxes lists the runtime's sandboxes of pod uid.
func (h *Harness) Sandboxes(uid string) []*runtimeapi.PodSandbox {
	h.T.Helper()
	return podSandboxes(h.T, h.RT, uid)
}

// podSandboxes lists rt's sandboxes of pod uid.
func podSandboxes(t testing.TB, rt internalapi.RuntimeService, uid string) []*runtimeapi.PodSandbox {
	t.Helper()
	sbs, err := rt.ListPodSandbox(context.Background(), &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{cri.PodUIDLabel: uid}})
	if err != nil {
		t.Fatalf("ListPodSandbox(uid %s): %v", uid, err)
	}
	return sbs
}

// ReadySandboxes lists the ready sandboxes of pod uid.
func (h *Harness) ReadySandboxes(uid string) []*runtimeapi.PodSandbox {
	h.T.Helper()
	var out []*runtimeapi.PodSandbox
	for _, sb := range h.Sandboxes(uid) {
		if sb.State == runtimeapi.PodSandboxState_SANDBOX_READY {
			out = append(out, sb)
		}
	}
	return out
}

// Containers lists the runtime's containers of pod uid.
func (h *Harness) Containers(uid string) []*runtimeapi.Container {
	h.T.Helper()
	return podContainers(h.T, h.RT, uid)
}

// RunningContainers maps the names of pod uid's running containers to
// their IDs.
func (h *Harness) RunningContainers(uid string) map[string]string {
	h.T.Helper()
	return runningByName(h.Containers(uid))
}

// podContainers lists rt's containers of pod uid.
func podContainers(t testing.TB, rt internalapi.RuntimeService, uid string) []*runtimeapi.Container {
	t.Helper()
	cs, err := rt.ListContainers(context.Background(), &runtimeapi.ContainerFilter{LabelSelector: map[string]string{cri.PodUIDLabel: uid}})
	if err != nil {
		t.Fatalf("ListContainers(uid %s): %v", uid, err)
	}
	return cs
}

// runningByName maps the names of the running containers in cs to their
// IDs.
func runningByName(cs []*runtimeapi.Container) map[string]string {
	out := map[string]string{}
	for _, c := range cs {
		if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			out[c.GetMetadata().GetName()] = c.Id
		}
	}
	return out
}

// ContainerIDs lists the IDs of cs, sorted.
func ContainerIDs(cs []*runtimeapi.Container) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Id)
	}
	slices.Sort(out)
	return out
}

// NothingRuns reports whether pod uid has no ready sandbox and no running
// container in the runtime.
func (h *Harness) NothingRuns(uid string) bool {
	h.T.Helper()
	return len(h.ReadySandboxes(uid)) == 0 && len(h.RunningContainers(uid)) == 0
}

// Metric sums the samples of a family whose labels include want.
func (h *Harness) Metric(name string, want map[string]string) float64 {
	h.T.Helper()
	families, err := h.Agent.Registry().Gather()
	if err != nil {
		h.T.Fatal(err)
	}
	total := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	samples:
		for _, m := range f.GetMetric() {
			for k, v := range want {
				if labelValue(m, k) != v {
					continue samples
				}
			}
			switch {
			case m.Counter != nil:
				total += m.Counter.GetValue()
			case m.Gauge != nil:
				total += m.Gauge.GetValue()
			case m.Histogram != nil:
				total += float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return total
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// URL is the agent's HTTP endpoint for path.
func (h *Harness) URL(path string) string { return "http://" + h.Agent.Addr() + path }

// HTTPClient keeps no idle connection: none may outlive a test.
var HTTPClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// Get fetches path and returns the status code, content type and body.
func (h *Harness) Get(path string) (int, string, string) {
	h.T.Helper()
	resp, err := HTTPClient.Get(h.URL(path))
	if err != nil {
		h.T.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		h.T.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(body)
}

// LogLines returns the agent's log lines that contain every one of parts.
func (h *Harness) LogLines(parts ...string) []string {
	var out []string
	for line := range strings.Lines(h.Logs.String()) {
		ok := true
		for _, p := range parts {
			if !strings.Contains(line, p) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, strings.TrimRight(line, "\n"))
		}
	}
	return out
}

// Resources parses "cpu=2,memory=1Gi".
func Resources(s string) v1.ResourceList {
	list := v1.ResourceList{}
	for part := range strings.SplitSeq(s, ",") {
		name, value, _ := strings.Cut(part, "=")
		list[v1.ResourceName(name)] = resource.MustParse(value)
	}
	return list
}

// UID makes a distinct, readable pod UID for test n.
func UID(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }

// Recorder is the engine's observer: it keeps every transition in order,
// every rejected event, and the NDJSON trace for trace.Check.
type Recorder struct {
	mu       sync.Mutex
	ts       []fsm.Transition
	rejected []string
	trace    bytes.Buffer
	tw       *trace.Writer
}

func newRecorder() *Recorder {
	r := &Recorder{}
	r.tw = trace.NewWriter(&r.trace)
	return r
}

func (r *Recorder) Transition(t fsm.Transition) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ts = append(r.ts, t)
	r.tw.Transition(t)
}

func (r *Recorder) Rejected(uid types.UID, s fsm.State, ev fsm.Event, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rejected = append(r.rejected, fmt.Sprintf("%s: %s in %s: %v", uid, ev, s, err))
}

// All is every transition so far, in order.
func (r *Recorder) All() []fsm.Transition {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ts)
}

// Of is pod uid's transitions so far, in order.
func (r *Recorder) Of(uid string) []fsm.Transition {
	var out []fsm.Transition
	for _, t := range r.All() {
		if t.Pod == types.UID(uid) {
			out = append(out, t)
		}
	}
	return out
}

// First is the index in all() of the first transition of uid matching
// match, or -1.
func (r *Recorder) First(uid string, match func(fsm.Transition) bool) int {
	for i, t := range r.All() {
		if t.Pod == types.UID(uid) && match(t) {
			return i
		}
	}
	return -1
}

// Saw reports whether pod uid made a transition matching match.
func (r *Recorder) Saw(uid string, match func(fsm.Transition) bool) bool {
	return r.First(uid, match) >= 0
}

// batch is the number of the latest SyncKnownPods call seen.
func (r *Recorder) batch() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var n uint64
	for _, t := range r.ts {
		n = max(n, t.Batch)
	}
	return n
}

func (r *Recorder) rejections() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.rejected)
}

// check validates the trace against the lifecycle table.
func (r *Recorder) check() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.tw.Err(); err != nil {
		return err
	}
	lines, err := trace.Read(bytes.NewReader(r.trace.Bytes()))
	if err != nil {
		return err
	}
	return trace.Check(lines)
}

// To matches a transition into state s from another state; to(fsm.Absent)
// is the removal of a record.
func To(s fsm.State) func(fsm.Transition) bool {
	return func(t fsm.Transition) bool { return t.To == s && t.From != s }
}

// Event matches a transition fired by ev.
func Event(ev fsm.Event) func(fsm.Transition) bool {
	return func(t fsm.Transition) bool { return t.Event == ev }
}

// Describe lists transitions for failure messages.
func Describe(ts []fsm.Transition) string {
	var b strings.Builder
	for _, t := range ts {
		fmt.Fprintf(&b, "  %s %s: %s -> %s (%s)\n", t.Pod, t.Row, t.From, t.To, t.Event)
	}
	return b.String()
}

// OutlivingRuntime is an embedded runtime of the test's own, in a short
// directory (unix socket paths are short), which outlives the agents the
// test runs on it: what an agent restarted on a real runtime finds.
func OutlivingRuntime(t testing.TB) *embedded.Runtime {
	t.Helper()
	dir, err := os.MkdirTemp("", "pl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	rt, err := embedded.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := rt.Stop(); err != nil {
			t.Error(err)
		}
	})
	return rt
}
