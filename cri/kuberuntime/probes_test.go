package kuberuntime

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	utilexec "k8s.io/utils/exec"

	"github.com/podlife/podlife/cri/prober"
	"github.com/podlife/podlife/internal/crifake"
)

// probeHarness is the harness with a prober on its fake clock, whose exec
// probes succeed while healthy is set; it records the prober's updates.
type probeHarness struct {
	*harness
	m       *prober.Manager
	healthy atomic.Bool
	execs   atomic.Int32
	mu      sync.Mutex
	updates []prober.Update
}

func newProbeHarness(t *testing.T) *probeHarness {
	h := &probeHarness{harness: newHarness(t, Options{}, "img")}
	h.healthy.Store(true)
	h.rt.OnExec = func(_ context.Context, _ string, cmd []string) error {
		h.execs.Add(1)
		if h.healthy.Load() {
			return nil
		}
		return utilexec.CodeExitError{Err: errors.New("exit status 1"), Code: 1}
	}
	h.m = prober.NewManager(prober.Config{Runner: NewProbeRunner(h.rt), Clock: h.clock, Events: h.events, OnChange: func(u prober.Update) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.updates = append(h.updates, u)
	}})
	t.Cleanup(h.m.Stop)
	h.s.opts.Probes = h.m
	return h
}

// probe steps the fake clock by d and waits until the exec probes ran n
// times in all and the probes' timers are set again (timers of them).
func (h *probeHarness) probe(d time.Duration, n int32, timers int) {
	h.t.Helper()
	h.clock.Step(d)
	deadline := time.Now().Add(10 * time.Second)
	for h.execs.Load() != n || h.clock.Waiters() != timers {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %d probe runs (%d) and %d timers (%d)", n, h.execs.Load(), timers, h.clock.Waiters())
		}
		time.Sleep(time.Millisecond)
	}
}

func (h *probeHarness) result(k prober.Kind, id string) prober.Result {
	r, _ := h.m.Results().Get(k, id)
	return r
}

func execCheck(failureThreshold int32) *v1.Probe {
	return &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"check"}}},
		PeriodSeconds: 1, FailureThreshold: failureThreshold}
}

// A failed liveness probe kills the container in the next SyncPod, which
// restarts it as the restart policy says, with its restart count.
func TestLivenessFailureRestarts(t *testing.T) {
	for _, tc := range []struct {
		policy      v1.RestartPolicy
		probeGrace  *int64
		wantRestart bool
		wantStop    int64
	}{
		{v1.RestartPolicyAlways, nil, true, 30},
		{v1.RestartPolicyOnFailure, new(int64(7)), true, 7},
		{v1.RestartPolicyNever, nil, false, 30},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			h := newProbeHarness(t)
			pod := crifake.MakePod("web", tc.policy, crifake.Ctr{Name: "app"})
			pod.Spec.Containers[0].LivenessProbe = execCheck(2)
			pod.Spec.Containers[0].LivenessProbe.TerminationGracePeriodSeconds = tc.probeGrace
			h.mustSync(pod)
			first := crifake.ContainerID(pod, 0, "app", 0)
			h.probe(0, 1, 1)
			h.healthy.Store(false)
			h.probe(time.Second, 2, 1)
			h.mustSync(pod) // one failure of two: nothing happens
			if st := h.containerState(first); st != runtimeapi.ContainerState_CONTAINER_RUNNING {
				t.Fatalf("container %v after one failure of two", st)
			}
			h.probe(time.Second, 3, 0)
			if r := h.result(prober.Liveness, first); r != prober.Failure {
				t.Fatalf("liveness result %v, want Failure", r)
			}

			// Termination requested (ctx cancelled): nothing is killed.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, _ = h.s.SyncPod(ctx, 0, pod, nil, nil)
			if st := h.containerState(first); st != runtimeapi.ContainerState_CONTAINER_RUNNING {
				t.Fatalf("a cancelled SyncPod killed the unhealthy container (%v)", st)
			}

			h.mustSync(pod)
			if st := h.containerState(first); st != runtimeapi.ContainerState_CONTAINER_EXITED {
				t.Fatalf("unhealthy container %v after SyncPod, want exited", st)
			}
			if stops := h.rt.StopCalls(); len(stops) != 1 || stops[0].ID != first || stops[0].Timeout != tc.wantStop {
				t.Errorf("stops %+v, want %s stopped with grace %d", stops, first, tc.wantStop)
			}
			wantKill := "Container app failed liveness probe"
			if tc.wantRestart {
				wantKill += ", will be restarted"
			}
			if got := h.events.messages(pod.UID, "Killing"); !slices.Equal(got, []string{wantKill}) {
				t.Errorf("Killing events %q, want %q", got, wantKill)
			}
			if got := h.events.messages(pod.UID, "Unhealthy"); len(got) != 2 || !strings.HasPrefix(got[0], "Liveness probe failed: ") {
				t.Errorf("Unhealthy events %q, want 2 liveness failures", got)
			}
			cs := h.statuses.last(t, pod.UID).ContainerStatuses[0]
			if !tc.wantRestart {
				if cs.State.Terminated == nil || h.calls("CreateContainer") != 1 {
					t.Fatalf("Never: status %+v after %d creations; want terminated, not created again", cs.State, h.calls("CreateContainer"))
				}
				return
			}
			if cs.RestartCount != 1 || cs.State.Running == nil || cs.ContainerID != "cri://"+crifake.ContainerID(pod, 0, "app", 1) {
				t.Fatalf("status after the restart: restartCount %d, state %+v, id %s", cs.RestartCount, cs.State, cs.ContainerID)
			}
			if _, ok := h.m.Results().Get(prober.Liveness, first); ok {
				t.Error("the killed container's result is still held")
			}
			h.healthy.Store(true)
			h.probe(0, 4, 1) // the new instance is probed
		})
	}
}

// The readiness result decides the container's ready and the pod's Ready
// and ContainersReady conditions in the generated status.
func TestReadinessInStatus(t *testing.T) {
	h := newProbeHarness(t)
	pod := crifake.MakePod("web", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"}, crifake.Ctr{Name: "plain"})
	pod.Spec.Containers[0].ReadinessProbe = execCheck(1)
	h.mustSync(pod)
	ready := func(want bool) {
		t.Helper()
		h.mustSync(pod)
		st := h.statuses.last(t, pod.UID)
		if got := st.ContainerStatuses[0].Ready; got != want {
			t.Errorf("container ready = %v, want %v", got, want)
		}
		if !st.ContainerStatuses[1].Ready {
			t.Error("the container without a readiness probe is not ready")
		}
		for _, c := range st.Conditions {
			if (c.Type == v1.PodReady || c.Type == v1.ContainersReady) && c.Status != conditionStatus(want) {
				t.Errorf("condition %s = %s, want ready %v", c.Type, c.Status, want)
			}
		}
	}
	ready(false) // not probed yet
	h.probe(0, 1, 1)
	ready(true)
	h.healthy.Store(false)
	h.probe(time.Second, 2, 1)
	ready(false)
}

// The runner's verdicts: exec by exit code, httpGet by status class (to
// the pod's IP or the probe's host, with named ports and headers),
// tcpSocket by connect, grpc by the health service's answer.
func TestProbeRunner(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	pod := crifake.MakePod("web", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"})
	h.mustSync(pod)
	sbID := crifake.SandboxID(pod, 0)
	h.fake.Lock()
	h.fake.Sandboxes[sbID].Network = &runtimeapi.PodSandboxNetworkStatus{Ip: "127.0.0.1"}
	h.fake.Unlock()

	var gotHeader atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotHeader.Store(r.Header.Get("X-Probe") + "|" + r.UserAgent() + "|" + r.Host)
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, "http://192.0.2.1/elsewhere", http.StatusFound)
			return
		case "/slow":
			time.Sleep(3 * time.Second)
		}
		code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
		if code == 0 {
			code = 200
		}
		w.WriteHeader(code)
	}))
	defer srv.Close()
	_, portStr, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	port, _ := strconv.Atoi(portStr)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := closed.Addr().(*net.TCPAddr).Port
	closed.Close()

	gsrv := grpc.NewServer()
	hs := health.NewServer()
	hs.SetServingStatus("db", healthpb.HealthCheckResponse_NOT_SERVING)
	healthpb.RegisterHealthServer(gsrv, hs)
	glis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = gsrv.Serve(glis) }()
	defer gsrv.Stop()
	gport := int32(glis.Addr().(*net.TCPAddr).Port)

	h.rt.OnExec = func(_ context.Context, _ string, cmd []string) error {
		switch cmd[0] {
		case "fail":
			return utilexec.CodeExitError{Err: errors.New("exit status 3"), Code: 3}
		case "broken":
			return errors.New("runtime is down")
		}
		return nil
	}
	httpProbe := func(path, host string, port intstr.IntOrString) v1.ProbeHandler {
		return v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: path, Host: host, Port: port,
			HTTPHeaders: []v1.HTTPHeader{{Name: "X-Probe", Value: "yes"}, {Name: "Host", Value: "example.test"}}}}
	}
	named := intstr.FromString("web")
	for _, tc := range []struct {
		name    string
		handler v1.ProbeHandler
		timeout int32
		want    prober.Result
		wantOut string
		wantErr bool
	}{
		{name: "exec exit 0", handler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"ok"}}}, want: prober.Success},
		{name: "exec exit 3", handler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"fail"}}}, want: prober.Failure},
		{name: "exec not run", handler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"broken"}}}, wantErr: true},
		{name: "http 200 to the pod IP", handler: httpProbe("/200", "", intstr.FromInt32(int32(port))), want: prober.Success},
		{name: "http 204 on a named port", handler: httpProbe("/204", "127.0.0.1", named), want: prober.Success},
		{name: "http 302 to another host", handler: httpProbe("/redirect", "127.0.0.1", named), want: prober.Success},
		{name: "http 399", handler: httpProbe("/399", "127.0.0.1", named), want: prober.Success},
		{name: "http 404", handler: httpProbe("/404", "127.0.0.1", named), want: prober.Failure, wantOut: "HTTP probe failed with statuscode: 404"},
		{name: "http 500", handler: httpProbe("/500", "127.0.0.1", named), want: prober.Failure, wantOut: "HTTP probe failed with statuscode: 500"},
		{name: "http 400", handler: httpProbe("/400", "127.0.0.1", named), want: prober.Failure},
		{name: "http timeout", handler: httpProbe("/slow", "127.0.0.1", named), timeout: 1, want: prober.Failure},
		{name: "http refused", handler: httpProbe("/", "127.0.0.1", intstr.FromInt32(int32(closedPort))), want: prober.Failure},
		{name: "http unknown port name", handler: httpProbe("/", "127.0.0.1", intstr.FromString("nope")), wantErr: true},
		{name: "tcp open", handler: v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: named}}, want: prober.Success},
		{name: "tcp closed", handler: v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Host: "127.0.0.1", Port: intstr.FromInt32(int32(closedPort))}}, want: prober.Failure},
		{name: "grpc serving", handler: v1.ProbeHandler{GRPC: &v1.GRPCAction{Port: gport}}, want: prober.Success},
		{name: "grpc service not serving", handler: v1.ProbeHandler{GRPC: &v1.GRPCAction{Port: gport, Service: new("db")}}, want: prober.Failure,
			wantOut: `service unhealthy (responded with "NOT_SERVING")`},
		{name: "grpc unknown service", handler: v1.ProbeHandler{GRPC: &v1.GRPCAction{Port: gport, Service: new("other")}}, want: prober.Failure},
		{name: "grpc closed", handler: v1.ProbeHandler{GRPC: &v1.GRPCAction{Port: int32(closedPort)}}, want: prober.Failure},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &v1.Container{Name: "app", Ports: []v1.ContainerPort{{Name: "web", ContainerPort: int32(port)}}}
			target := prober.Target{Pod: pod, Container: c, ContainerID: crifake.ContainerID(pod, 0, "app", 0), SandboxID: sbID}
			got, out, err := NewProbeRunner(h.rt).Probe(context.Background(), target, &v1.Probe{ProbeHandler: tc.handler, TimeoutSeconds: tc.timeout})
			if (err != nil) != tc.wantErr {
				t.Fatalf("Probe error %v, want error %v", err, tc.wantErr)
			}
			if got != tc.want || (tc.wantOut != "" && out != tc.wantOut) {
				t.Errorf("Probe = %v, %q; want %v, %q", got, out, tc.want, tc.wantOut)
			}
		})
	}
	if got := gotHeader.Load(); got != "yes|kube-probe/1.36|example.test" {
		t.Errorf("the last HTTP probe's header, user agent and host: %q", got)
	}
}

// A container's probes go with it: an exit seen by a sync drops them; a
// terminating pod's liveness failure kills nothing of its own, the
// termination stops the container, and the pod's probes are dropped.
func TestProbesFollowTheSyncs(t *testing.T) {
	h := newProbeHarness(t)
	pod := crifake.MakePod("web", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"})
	pod.Spec.Containers[0].LivenessProbe = execCheck(1)
	pod.Spec.Containers[0].ReadinessProbe = execCheck(1)
	h.mustSync(pod)
	h.probe(0, 2, 2)
	h.exit(crifake.ContainerID(pod, 0, "app", 0), 1)
	_, _ = h.syncPod(pod) // restarts it, probes the new instance
	h.probe(0, 4, 2)
	if n := h.calls("CreateContainer"); n != 2 {
		t.Fatalf("%d creations, want 2", n)
	}

	h.healthy.Store(false)
	if err := h.s.SyncTerminatingPod(context.Background(), pod, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if n := h.clock.Waiters(); n != 0 {
		t.Errorf("%d probe timers after the pod terminated, want none", n)
	}
	h.clock.Step(time.Hour)
	if got := h.events.messages(pod.UID, "Killing"); len(got) != 1 || strings.Contains(got[0], "probe") {
		t.Errorf("Killing events %q: want the termination's only", got)
	}
}

// A sidecar whose liveness probe failed is killed and restarted, whatever
// the pod's restart policy.
func TestSidecarLivenessFailureRestarts(t *testing.T) {
	h := newProbeHarness(t)
	pod := crifake.MakePod("web", v1.RestartPolicyNever, crifake.Ctr{Name: "app"})
	always := v1.ContainerRestartPolicyAlways
	pod.Spec.InitContainers = []v1.Container{{Name: "side", Image: "img", RestartPolicy: &always, LivenessProbe: execCheck(1)}}
	h.mustSync(pod)
	h.mustSync(pod) // the sidecar runs: the app starts
	first := crifake.ContainerID(pod, 0, "side", 0)
	h.probe(0, 1, 1)
	h.healthy.Store(false)
	h.probe(time.Second, 2, 0)
	h.mustSync(pod)
	if st := h.containerState(first); st != runtimeapi.ContainerState_CONTAINER_EXITED {
		t.Fatalf("unhealthy sidecar %v after SyncPod, want exited", st)
	}
	if st := h.containerState(crifake.ContainerID(pod, 0, "side", 1)); st != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("the sidecar's next instance %v, want running", st)
	}
	if got := h.events.messages(pod.UID, "Killing"); !slices.Equal(got, []string{"Container side failed liveness probe, will be restarted"}) {
		t.Errorf("Killing events %q", got)
	}
	if st := h.containerState(crifake.ContainerID(pod, 0, "app", 0)); st != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Errorf("the app %v, want still running", st)
	}
}
