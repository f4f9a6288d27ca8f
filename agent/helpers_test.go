package agent_test

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
	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/embedded"
	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/internal/podtable"
	"github.com/podlife/podlife/internal/testlog"
	"github.com/podlife/podlife/trace"
)

// nodeName is the test agents' node: static pod "web" is "web-node1".
const nodeName = "node1"

// waitTimeout bounds every wait for an outcome: generous, since the
// outcomes come within a few intervals (50-100 ms) even under -race.
const waitTimeout = 20 * time.Second

// image is any name: the embedded runtime "pulls" every image at once.
const image = "registry.k8s.io/pause:3.10"

// podSpec is a static pod manifest.
type podSpec struct {
	name, uid     string
	restartPolicy string // "" is Always
	priority      int32
	grace         int    // terminationGracePeriodSeconds; 0 is 5
	cpu, memory   string // requests of the first container; "" none
	containers    []string
	inits         []string // init containers, run before containers
	labels        map[string]string
}

func (p podSpec) yaml() string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: test\n", p.name)
	if p.uid != "" {
		fmt.Fprintf(&b, "  uid: %s\n", p.uid)
	}
	b.WriteString("  labels:\n    app: " + p.name + "\n")
	keys := make([]string, 0, len(p.labels))
	for k := range p.labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "    %s: %q\n", k, p.labels[k])
	}
	policy, grace := p.restartPolicy, p.grace
	if policy == "" {
		policy = "Always"
	}
	if grace == 0 {
		grace = 5
	}
	fmt.Fprintf(&b, "spec:\n  restartPolicy: %s\n  terminationGracePeriodSeconds: %d\n", policy, grace)
	if p.priority != 0 {
		fmt.Fprintf(&b, "  priority: %d\n", p.priority)
	}
	if len(p.inits) > 0 {
		b.WriteString("  initContainers:\n")
		for _, c := range p.inits {
			fmt.Fprintf(&b, "  - name: %s\n    image: %s\n    imagePullPolicy: IfNotPresent\n", c, image)
		}
	}
	containers := p.containers
	if len(containers) == 0 {
		containers = []string{"app"}
	}
	b.WriteString("  containers:\n")
	for i, c := range containers {
		fmt.Fprintf(&b, "  - name: %s\n    image: %s\n    imagePullPolicy: IfNotPresent\n", c, image)
		if i == 0 && (p.cpu != "" || p.memory != "") {
			b.WriteString("    resources:\n      requests:\n")
			if p.cpu != "" {
				fmt.Fprintf(&b, "        cpu: %q\n", p.cpu)
			}
			if p.memory != "" {
				fmt.Fprintf(&b, "        memory: %q\n", p.memory)
			}
		}
	}
	return b.String()
}

// file is the manifest's file name.
func (p podSpec) file() string { return p.name + ".yaml" }

// with returns p with one more label: an edit that keeps the UID.
func (p podSpec) with(key, value string) podSpec {
	labels := map[string]string{key: value}
	for k, v := range p.labels {
		labels[k] = v
	}
	p.labels = labels
	return p
}

// settings configure one test agent.
type settings struct {
	config    []func(*agent.Config)
	backOff   time.Duration
	beforeRun func(h *harness)
}

type option func(*settings)

// withConfig edits the agent's configuration before New, after the edits
// of the options before it.
func withConfig(f func(*agent.Config)) option {
	return func(s *settings) { s.config = append(s.config, f) }
}

// withSyncBackOff sets the engine's retry delay after a failed sync.
func withSyncBackOff(d time.Duration) option { return func(s *settings) { s.backOff = d } }

// beforeRun runs f once the agent and the test's CRI client exist, before
// Run: to plant runtime state the first housekeeping will find.
func beforeRun(f func(h *harness)) option { return func(s *settings) { s.beforeRun = f } }

// harness is a running agent on its embedded runtime, in a directory of its
// own, with a CRI client of that runtime, its logs and its engine trace.
type harness struct {
	t         testing.TB
	agent     *agent.Agent
	root      string
	manifests string
	rt        internalapi.RuntimeService
	logs      *testlog.Buffer
	rec       *recorder

	cancel  context.CancelFunc
	ran     chan error // Run's result
	runOnce sync.Once
	runErr  error
}

// start runs an agent; at cleanup it is stopped (if Run has not returned),
// its trace is checked against the lifecycle table, and its directory is
// removed. The directory is short (a unix socket path has at most 107
// bytes), so it is not t.TempDir().
func start(t testing.TB, opts ...option) *harness {
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
	h := &harness{t: t, root: root, manifests: filepath.Join(root, "manifests"), logs: &testlog.Buffer{}, rec: newRecorder(), ran: make(chan error, 1)}
	if err := os.Mkdir(h.manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := agent.DefaultConfig()
	cfg.NodeName = nodeName
	cfg.StaticPodPath = h.manifests
	cfg.RootDir = root
	cfg.Address = "127.0.0.1:0"
	cfg.FileCheckFrequency.Duration = 50 * time.Millisecond
	cfg.HousekeepingInterval.Duration = 100 * time.Millisecond
	cfg.RuntimePollInterval.Duration = 50 * time.Millisecond
	cfg.Allocatable = resources("cpu=8,memory=16Gi")
	for _, edit := range s.config {
		edit(&cfg)
	}
	log := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a, err := agent.New(context.Background(), cfg, agent.Options{Logger: log, Observer: h.rec, SyncBackOff: s.backOff})
	if err != nil {
		t.Fatal(err)
	}
	h.agent = a
	rt, err := remote.NewRemoteRuntimeServiceBuilder().WithEndpoint(a.RuntimeEndpoint()).WithConnectionTimeout(5 * time.Second).Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	h.rt = rt
	t.Cleanup(func() { rt.Close(context.Background()) })
	if s.beforeRun != nil {
		s.beforeRun(h)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.ran <- a.Run(ctx) }()
	t.Cleanup(h.finish)
	return h
}

// finish stops the agent if it still runs, and checks what every test
// must leave true: Run returned nil, the engine rejected no event, and its
// trace follows the lifecycle table.
func (h *harness) finish() {
	t := h.t
	h.cancel()
	if err := h.wait(); err != nil {
		t.Errorf("Run: %v", err)
	}
	if rej := h.rec.rejections(); len(rej) > 0 {
		t.Errorf("the engine rejected events (a bug):\n%s", strings.Join(rej, "\n"))
	}
	if err := h.rec.check(); err != nil {
		t.Errorf("engine trace: %v", err)
	}
	if t.Failed() {
		var table bytes.Buffer
		_ = podtable.WriteTable(&table, h.agent.Pods())
		t.Logf("pods at the end:\n%s", table.String())
		t.Logf("agent log (last lines):\n%s", h.logs.Tail(150))
	}
}

// wait waits until Run returned, and returns its result.
func (h *harness) wait() error {
	h.runOnce.Do(func() {
		select {
		case h.runErr = <-h.ran:
		case <-time.After(waitTimeout):
			h.runErr = errors.New("Run did not return")
		}
	})
	return h.runErr
}

// write puts a manifest in place atomically, so a scan never reads half a
// file.
func (h *harness) write(file, content string) {
	h.t.Helper()
	tmp := filepath.Join(h.manifests, "."+file+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(h.manifests, file)); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) writePod(p podSpec) { h.t.Helper(); h.write(p.file(), p.yaml()) }

func (h *harness) remove(file string) {
	h.t.Helper()
	if err := os.Remove(filepath.Join(h.manifests, file)); err != nil {
		h.t.Fatal(err)
	}
}

// path is a manifest's path as the agent reports it.
func (h *harness) path(file string) string { return filepath.Join(h.manifests, file) }

// pods are the agent's pods by UID.
func (h *harness) pods() map[types.UID]api.PodInfo {
	out := map[types.UID]api.PodInfo{}
	for _, p := range h.agent.Pods() {
		out[p.UID] = p
	}
	return out
}

// pod is the agent's report of uid, which must exist.
func (h *harness) pod(uid string) api.PodInfo {
	h.t.Helper()
	p, ok := h.pods()[types.UID(uid)]
	if !ok {
		h.t.Fatalf("pod %s: the agent does not know it", uid)
	}
	return p
}

// eventually polls cond until it holds, and fails the test after
// waitTimeout, with the agent's pods.
func (h *harness) eventually(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			var table bytes.Buffer
			_ = podtable.WriteTable(&table, h.agent.Pods())
			h.t.Fatalf("timed out after %s waiting until %s; pods:\n%s", waitTimeout, what, table.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitPods polls the agent's pods until cond holds.
func (h *harness) waitPods(what string, cond func(pods map[types.UID]api.PodInfo) bool) {
	h.t.Helper()
	h.eventually(what, func() bool { return cond(h.pods()) })
}

// waitRunning waits until each pod runs: engine state Running, phase
// Running and every container running.
func (h *harness) waitRunning(uids ...string) {
	h.t.Helper()
	h.waitPods(fmt.Sprintf("pods %v run", uids), func(pods map[types.UID]api.PodInfo) bool {
		for _, uid := range uids {
			if !isRunning(pods[types.UID(uid)]) {
				return false
			}
		}
		return true
	})
}

func isRunning(p api.PodInfo) bool {
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

// settle brings the agent's view of the runtime up to date and waits
// until the engine has done the syncs that caused: a test that needs a
// sync retry to wait for its back-off calls it first. Afterwards no poll
// takes a catch-up with the runtime for a change and resyncs an unchanged
// pod at once, and no sync still in flight sees a change the test makes
// next (the poll that sees the change would resync the pod again).
func (h *harness) settle(uids ...string) {
	h.t.Helper()
	if err := h.agent.Resync(context.Background()); err != nil {
		h.t.Fatal(err)
	}
	last := map[string]int{}
	h.eventually(fmt.Sprintf("pods %v have no sync in flight", uids), func() bool {
		settled := true
		for _, uid := range uids {
			ts := h.rec.of(uid)
			var work []fsm.Transition // what housekeeping does not cause
			for _, t := range ts {
				if t.Event != fsm.SyncKnownPods {
					work = append(work, t)
				}
			}
			// Done and the next Dequeue are one step of the engine: a
			// count unchanged since the previous poll is past it.
			if len(work) == 0 || work[len(work)-1].Event != fsm.SyncPodDone || last[uid] != len(work) {
				settled = false
			}
			last[uid] = len(work)
		}
		return settled
	})
}

// waitGone waits until the agent no longer knows uid.
func (h *harness) waitGone(uid string) {
	h.t.Helper()
	h.waitPods("pod "+uid+" is gone", func(pods map[types.UID]api.PodInfo) bool {
		_, ok := pods[types.UID(uid)]
		return !ok
	})
}

// waitHousekeepings waits until housekeeping ran n more times to its end,
// as counted by its SyncKnownPods calls (which only show while the engine
// holds a record). A housekeeping's SyncKnownPods comes before its runtime
// read, orphan kills and gauges; the next one's comes after them all, so
// n complete runs are seen at the n+1-th call.
func (h *harness) waitHousekeepings(n uint64) {
	h.t.Helper()
	from := h.rec.batch()
	h.eventually(fmt.Sprintf("%d more housekeepings", n), func() bool { return h.rec.batch() >= from+n+1 })
}

// sandboxes lists the runtime's sandboxes of pod uid.
func (h *harness) sandboxes(uid string) []*runtimeapi.PodSandbox {
	h.t.Helper()
	return podSandboxes(h.t, h.rt, uid)
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

// readySandboxes lists the ready sandboxes of pod uid.
func (h *harness) readySandboxes(uid string) []*runtimeapi.PodSandbox {
	h.t.Helper()
	var out []*runtimeapi.PodSandbox
	for _, sb := range h.sandboxes(uid) {
		if sb.State == runtimeapi.PodSandboxState_SANDBOX_READY {
			out = append(out, sb)
		}
	}
	return out
}

// containers lists the runtime's containers of pod uid.
func (h *harness) containers(uid string) []*runtimeapi.Container {
	h.t.Helper()
	return podContainers(h.t, h.rt, uid)
}

// runningContainers maps the names of pod uid's running containers to
// their IDs.
func (h *harness) runningContainers(uid string) map[string]string {
	h.t.Helper()
	return runningByName(h.containers(uid))
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

// nothingRuns reports whether pod uid has no ready sandbox and no running
// container in the runtime.
func (h *harness) nothingRuns(uid string) bool {
	h.t.Helper()
	return len(h.readySandboxes(uid)) == 0 && len(h.runningContainers(uid)) == 0
}

// metric sums the samples of a family whose labels include want.
func (h *harness) metric(name string, want map[string]string) float64 {
	h.t.Helper()
	families, err := h.agent.Registry().Gather()
	if err != nil {
		h.t.Fatal(err)
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

// url is the agent's HTTP endpoint for path.
func (h *harness) url(path string) string { return "http://" + h.agent.Addr() + path }

// httpClient keeps no idle connection: none may outlive a test.
var httpClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// get fetches path and returns the status code, content type and body.
func (h *harness) get(path string) (int, string, string) {
	h.t.Helper()
	resp, err := httpClient.Get(h.url(path))
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(body)
}

// logLines returns the agent's log lines that contain every one of parts.
func (h *harness) logLines(parts ...string) []string {
	var out []string
	for line := range strings.Lines(h.logs.String()) {
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

// resources parses "cpu=2,memory=1Gi".
func resources(s string) v1.ResourceList {
	list := v1.ResourceList{}
	for part := range strings.SplitSeq(s, ",") {
		name, value, _ := strings.Cut(part, "=")
		list[v1.ResourceName(name)] = resource.MustParse(value)
	}
	return list
}

// uid makes a distinct, readable pod UID for test n.
func uid(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }

// recorder is the engine's observer: it keeps every transition in order,
// every rejected event, and the NDJSON trace for trace.Check.
type recorder struct {
	mu       sync.Mutex
	ts       []fsm.Transition
	rejected []string
	trace    bytes.Buffer
	tw       *trace.Writer
}

func newRecorder() *recorder {
	r := &recorder{}
	r.tw = trace.NewWriter(&r.trace)
	return r
}

func (r *recorder) Transition(t fsm.Transition) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ts = append(r.ts, t)
	r.tw.Transition(t)
}

func (r *recorder) Rejected(uid types.UID, s fsm.State, ev fsm.Event, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rejected = append(r.rejected, fmt.Sprintf("%s: %s in %s: %v", uid, ev, s, err))
}

// all is every transition so far, in order.
func (r *recorder) all() []fsm.Transition {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ts)
}

// of is pod uid's transitions so far, in order.
func (r *recorder) of(uid string) []fsm.Transition {
	var out []fsm.Transition
	for _, t := range r.all() {
		if t.Pod == types.UID(uid) {
			out = append(out, t)
		}
	}
	return out
}

// first is the index in all() of the first transition of uid matching
// match, or -1.
func (r *recorder) first(uid string, match func(fsm.Transition) bool) int {
	for i, t := range r.all() {
		if t.Pod == types.UID(uid) && match(t) {
			return i
		}
	}
	return -1
}

// saw reports whether pod uid made a transition matching match.
func (r *recorder) saw(uid string, match func(fsm.Transition) bool) bool {
	return r.first(uid, match) >= 0
}

// batch is the number of the latest SyncKnownPods call seen.
func (r *recorder) batch() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var n uint64
	for _, t := range r.ts {
		n = max(n, t.Batch)
	}
	return n
}

func (r *recorder) rejections() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.rejected)
}

// check validates the trace against the lifecycle table.
func (r *recorder) check() error {
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

// to matches a transition into state s from another state; to(fsm.Absent)
// is the removal of a record.
func to(s fsm.State) func(fsm.Transition) bool {
	return func(t fsm.Transition) bool { return t.To == s && t.From != s }
}

// event matches a transition fired by ev.
func event(ev fsm.Event) func(fsm.Transition) bool {
	return func(t fsm.Transition) bool { return t.Event == ev }
}

// describe lists transitions for failure messages.
func describe(ts []fsm.Transition) string {
	var b strings.Builder
	for _, t := range ts {
		fmt.Fprintf(&b, "  %s %s: %s -> %s (%s)\n", t.Pod, t.Row, t.From, t.To, t.Event)
	}
	return b.String()
}

// outlivingRuntime is an embedded runtime of the test's own, in a short
// directory (unix socket paths are short), which outlives the agents the
// test runs on it: what an agent restarted on a real runtime finds.
func outlivingRuntime(t testing.TB) *embedded.Runtime {
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
