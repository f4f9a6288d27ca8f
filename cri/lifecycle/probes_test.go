package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	fakecri "k8s.io/cri-api/pkg/apis/testing"
	criclient "k8s.io/cri-client/pkg"
	utilexec "k8s.io/utils/exec"

	"github.com/podlife/podlife/cri/prober"
	"github.com/podlife/podlife/internal/crifake"
)

// The runner's verdicts: exec by exit code, httpGet by status class (to
// the pod's IP or the probe's host, with named ports and headers),
// tcpSocket by connect, grpc by the health service's answer.
func TestProbeRunner(t *testing.T) {
	fake := fakecri.NewFakeRuntimeService()
	rt := &crifake.HookRuntime{FakeRuntimeService: fake}
	pod := crifake.MakePod("web", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"})
	sbID, err := fake.RunPodSandbox(context.Background(), &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: pod.Name, Namespace: pod.Namespace, Uid: string(pod.UID)},
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	fake.Lock()
	fake.Sandboxes[sbID].Network = &runtimeapi.PodSandboxNetworkStatus{Ip: "127.0.0.1"}
	fake.Unlock()

	var gotHeader atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotHeader.Store(r.Header.Get("X-Probe") + "|" + r.UserAgent() + "|" + r.Host)
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, "http://192.0.2.1/elsewhere", http.StatusFound)
			return
		case "/local":
			http.Redirect(w, r, "/201", http.StatusFound)
			return
		case "/bigheaders":
			w.Header().Set("X-Big", strings.Repeat("x", 64<<10))
		case "/body":
			_, _ = w.Write([]byte("all good"))
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

	rt.OnExec = func(ctx context.Context, _ string, cmd []string) error {
		switch cmd[0] {
		case "hang":
			// A command that never ends: the runner's deadline (the
			// probe's timeout and a margin) ends the call, as the CRI
			// client reports it.
			<-ctx.Done()
			return fmt.Errorf("%w: %q timed out", criclient.ErrCommandTimedOut, cmd[0])
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
		{name: "exec that hangs ends at its timeout", handler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"hang"}}}, timeout: 1,
			want: prober.Failure, wantOut: `command "hang" timed out`},
		{name: "exec not run", handler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"broken"}}}, wantErr: true},
		{name: "http 200 to the pod IP", handler: httpProbe("/200", "", intstr.FromInt32(int32(port))), want: prober.Success},
		{name: "http 204 on a named port", handler: httpProbe("/204", "127.0.0.1", named), want: prober.Success},
		{name: "http 200 with a body", handler: httpProbe("/body", "127.0.0.1", named), want: prober.Success, wantOut: "all good"},
		{name: "http 302 to another host: a warning", handler: httpProbe("/redirect", "127.0.0.1", named), want: prober.Warning,
			wantOut: "Probe terminated redirects, Response body: <a href=\"http://192.0.2.1/elsewhere\">Found</a>.\n\n"},
		{name: "http 302 on the same host is followed", handler: httpProbe("/local", "127.0.0.1", named), want: prober.Success},
		{name: "http 399", handler: httpProbe("/399", "127.0.0.1", named), want: prober.Warning, wantOut: "Probe terminated redirects, Response body: "},
		{name: "http 404", handler: httpProbe("/404", "127.0.0.1", named), want: prober.Failure, wantOut: "HTTP probe failed with statuscode: 404"},
		{name: "http 500", handler: httpProbe("/500", "127.0.0.1", named), want: prober.Failure, wantOut: "HTTP probe failed with statuscode: 500"},
		{name: "http 400", handler: httpProbe("/400", "127.0.0.1", named), want: prober.Failure},
		{name: "http headers past the limit", handler: httpProbe("/bigheaders", "127.0.0.1", named), want: prober.Failure,
			wantOut: "Get \"http://127.0.0.1:" + portStr + "/bigheaders\": net/http: HTTP/1.x transport connection broken: net/http: server response headers exceeded 16384 bytes; aborted"},
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
			got, out, err := NewProbeRunner(rt).Probe(context.Background(), target, &v1.Probe{ProbeHandler: tc.handler, TimeoutSeconds: tc.timeout})
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
