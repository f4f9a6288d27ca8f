package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	v1 "k8s.io/api/core/v1"
	criclient "k8s.io/cri-client/pkg"
	utilexec "k8s.io/utils/exec"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/prober"
)

// Probes run as the kubelet's prober runs them: exec through the runtime's
// ExecSync (exit 0 is success), httpGet from the node to the pod's IP (or
// the probe's host; a 2xx answer is success, and a 3xx one, a redirect
// to another host that is not followed, success with a warning), tcpSocket (a connect
// is success), grpc (the standard grpc.health.v1 Check answering SERVING).
// A probe that gets no answer in timeoutSeconds failed. The network ones
// share the lifecycle hooks' helpers (lifecycle.go).

// probeUserAgent is the User-Agent of httpGet probes, the kubelet's.
const probeUserAgent = "kube-probe/1.36"

// probeRunner is the prober.Runner over a CRI runtime.
type probeRunner struct{ rt cri.Runtime }

// NewProbeRunner returns the runner of the probes of rt's containers.
func NewProbeRunner(rt cri.Runtime) prober.Runner { return probeRunner{rt: rt} }

// Probe runs p once against t's container.
func (r probeRunner) Probe(ctx context.Context, t prober.Target, p *v1.Probe) (prober.Result, string, error) {
	timeout := prober.Timeout(p)
	switch {
	case p.Exec != nil:
		return r.exec(ctx, t, p.Exec.Command, timeout)
	case p.HTTPGet != nil:
		host, err := actionHost(ctx, r.rt, p.HTTPGet.Host, t.SandboxID)
		if err != nil {
			return prober.Unknown, "", err
		}
		if _, err := resolvePort(p.HTTPGet.Port, t.Container); err != nil {
			return prober.Unknown, "", err // the probe cannot run; it did not fail
		}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		code, body, err := httpGet(ctx, t.Container, host, p.HTTPGet, probeUserAgent)
		return httpResult(code, body, err)
	case p.TCPSocket != nil:
		host, err := actionHost(ctx, r.rt, p.TCPSocket.Host, t.SandboxID)
		if err != nil {
			return prober.Unknown, "", err
		}
		port, err := resolvePort(p.TCPSocket.Port, t.Container)
		if err != nil {
			return prober.Unknown, "", err
		}
		d := net.Dialer{Timeout: timeout}
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			return prober.Failure, err.Error(), nil
		}
		_ = conn.Close()
		return prober.Success, "", nil
	case p.GRPC != nil:
		host, err := actionHost(ctx, r.rt, "", t.SandboxID)
		if err != nil {
			return prober.Unknown, "", err
		}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return grpcCheck(ctx, net.JoinHostPort(host, strconv.Itoa(int(p.GRPC.Port))), p.GRPC.Service)
	}
	return prober.Unknown, "", fmt.Errorf("probe of container %q in pod %s/%s has no action (exec, httpGet, tcpSocket or grpc)",
		t.Container.Name, t.Pod.Namespace, t.Pod.Name)
}

// exec runs the command in the container: exit 0 is success, another exit
// code or the timeout failure; the output is stdout and stderr.
func (r probeRunner) exec(ctx context.Context, t prober.Target, cmd []string, timeout time.Duration) (prober.Result, string, error) {
	// The probe, its wait for a slot of its pod's share of the exec lane
	// included, ends within its timeout and a margin, as the kubelet's
	// whole probe does. Waiting costs it nothing of another pod's making:
	// a pod under its fair share of the lane never waits for another
	// pod's hung execs (cri.Limit), only for its own pod's.
	ctx, cancel := context.WithTimeout(cri.ForPod(ctx, t.Pod.UID), timeout+cri.ExecTimeoutMargin)
	defer cancel()
	out, err := execSync(ctx, r.rt, t.ContainerID, cmd, timeout)
	var exit utilexec.ExitError
	switch {
	case err == nil:
		return prober.Success, out, nil
	case errors.As(err, &exit):
		return prober.Failure, out, nil
	case errors.Is(err, criclient.ErrCommandTimedOut):
		return prober.Failure, fmt.Sprintf("command %q timed out", strings.Join(cmd, " ")), nil
	}
	return prober.Unknown, "", fmt.Errorf("exec probe (%s) of container %q in pod %s/%s: %w",
		strings.Join(cmd, " "), t.Container.Name, t.Pod.Namespace, t.Pod.Name, err)
}

// httpResult judges an httpGet probe's answer as the kubelet's http prober
// does: a 2xx status code is success with the body as output; a 3xx one
// (the client follows redirects on the same host only, so this is one to
// another host, or the 10th) success with a warning, which the prober
// reports in a ProbeWarning event with the kubelet's message; any other
// code, or no answer, failure.
func httpResult(code int, body string, err error) (prober.Result, string, error) {
	switch {
	case err != nil:
		return prober.Failure, err.Error(), nil
	case code >= 200 && code < 300:
		return prober.Success, body, nil
	case code >= 300 && code < 400:
		return prober.Warning, "Probe terminated redirects, Response body: " + body, nil
	}
	return prober.Failure, fmt.Sprintf("HTTP probe failed with statuscode: %d", code), nil
}

// grpcCheck asks addr's grpc.health.v1 service about service (the empty
// name, the server as a whole, when nil): SERVING is success; another
// status, or no answer, failure.
func grpcCheck(ctx context.Context, addr string, service *string) (prober.Result, string, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithUserAgent(probeUserAgent))
	if err != nil {
		return prober.Failure, fmt.Sprintf("failed to connect service %q: %v", addr, err), nil
	}
	defer func() { _ = conn.Close() }()
	req := &healthpb.HealthCheckRequest{}
	if service != nil {
		req.Service = *service
	}
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, req)
	if err != nil {
		return prober.Failure, fmt.Sprintf("health check of %q failed: %v", addr, err), nil
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return prober.Failure, fmt.Sprintf("service unhealthy (responded with %q)", resp.GetStatus()), nil
	}
	return prober.Success, "", nil
}
