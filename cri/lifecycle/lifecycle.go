// Package lifecycle runs what containers' lifecycle hooks and probes do to
// a running pod (kubelet: pkg/kubelet/lifecycle's handler runner, and the
// exec, httpGet, tcpSocket and grpc probes of pkg/kubelet/prober and
// pkg/probe): exec through the runtime's ExecSync, an HTTP GET to the
// pod's IP or the action's host with named ports and headers, a TCP
// connect, a gRPC health check, and a hook's sleep. The syncer decides
// when a hook runs; the prober, when a probe does.
package lifecycle

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/podlife/podlife/cri"
)

// Lifecycle hooks (postStart, preStop), run as the kubelet's handler runner
// runs them: exec through the runtime's ExecSync, httpGet from the node to
// the pod's IP (or the handler's host), sleep in the agent. A hook ends with
// ctx: the caller bounds it (a preStop hook by the grace period, a
// postStart hook by cri.PostStartTimeout and the pod's termination).

// hookHTTPClient makes the httpGet hooks' and probes' requests. Like the kubelet's
// probes it does not verify a certificate (a pod serves its own, for an IP
// no CA vouches for) and follows no redirect to another host's address.
var hookHTTPClient = &http.Client{
	Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the kubelet's probes do the same
		DisableKeepAlives: true,
		// A pod answers with headers the agent reads into memory: not
		// net/http's 10 MiB of them for each probe run.
		MaxResponseHeaderBytes: maxHeaderLength,
	},
	CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return fmt.Errorf("stopped after %d redirects", len(via))
		}
		if req.URL.Hostname() != via[0].URL.Hostname() {
			return http.ErrUseLastResponse
		}
		return nil
	},
}

// RunHook runs handler h, a hook of container c of pod running on rt as
// containerID in the sandbox sbID. It returns the failure in the words of
// the kubelet's event messages, naming the container and the pod.
func RunHook(ctx context.Context, rt cri.Runtime, pod *v1.Pod, c *v1.Container, containerID, sbID string, h *v1.LifecycleHandler) error {
	switch {
	case h.Exec != nil:
		// It counts against the pod's share of the exec lane (or runs
		// in the kill lane: a preStop hook's ctx is cri.ForKill's).
		out, err := execSync(cri.ForPod(ctx, pod.UID), rt, containerID, h.Exec.Command, 0)
		if err != nil {
			return fmt.Errorf("exec lifecycle hook (%s) for container %q in pod %s/%s failed - error: %w, message: %q",
				strings.Join(h.Exec.Command, " "), c.Name, pod.Namespace, pod.Name, err, out)
		}
		return nil
	case h.HTTPGet != nil:
		if err := runHTTPHook(ctx, rt, c, sbID, h.HTTPGet); err != nil {
			return fmt.Errorf("HTTP lifecycle hook (%s) for container %q in pod %s/%s failed - error: %w",
				h.HTTPGet.Path, c.Name, pod.Namespace, pod.Name, err)
		}
		return nil
	case h.Sleep != nil:
		t := time.NewTimer(time.Duration(max(h.Sleep.Seconds, 0)) * time.Second)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("sleep lifecycle hook (%ds) for container %q in pod %s/%s: container terminated before sleep hook finished",
				h.Sleep.Seconds, c.Name, pod.Namespace, pod.Name)
		}
	}
	return fmt.Errorf("lifecycle hook for container %q in pod %s/%s has no action (exec, httpGet or sleep)", c.Name, pod.Namespace, pod.Name)
}

// runHTTPHook sends the GET: to the handler's host, else the pod's IP. As
// in the kubelet, only a failure to get a response fails the hook, not the
// response's status code.
func runHTTPHook(ctx context.Context, rt cri.Runtime, c *v1.Container, sbID string, g *v1.HTTPGetAction) error {
	host, err := actionHost(ctx, rt, g.Host, sbID)
	if err != nil {
		return err
	}
	_, _, err = httpGet(ctx, c, host, g, "kube-lifecycle/podlife")
	return err
}

// actionHost is the host a hook's or a probe's network action calls: its
// own host field, else the pod's IP.
func actionHost(ctx context.Context, rt cri.Runtime, host, sbID string) (string, error) {
	if host != "" {
		return host, nil
	}
	if host = cri.SandboxIP(ctx, rt, sbID); host == "" {
		return "", fmt.Errorf("the pod has no IP (sandbox %s)", sbID)
	}
	return host, nil
}

// httpGet sends the GET of an httpGet action of container c to host, with
// the action's headers (a Host header sets the request's host), reads at
// most 10 KiB of the answer and returns its status code and that body.
func httpGet(ctx context.Context, c *v1.Container, host string, g *v1.HTTPGetAction, userAgent string) (code int, body string, err error) {
	port, err := resolvePort(g.Port, c)
	if err != nil {
		return 0, "", err
	}
	u, err := hookURL(g, host, port)
	if err != nil {
		return 0, "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "*/*")
	for _, h := range g.HTTPHeaders {
		if strings.EqualFold(h.Name, "Host") {
			req.Host = h.Value
			continue
		}
		req.Header.Add(h.Name, h.Value)
	}
	resp, err := hookHTTPClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	// The kubelet reads at most 10 KiB of the body, which a probe's
	// warning event shows.
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxBodyLength))
	return resp.StatusCode, string(b), resp.Body.Close()
}

// maxBodyLength bounds what an httpGet action reads of an answer's body,
// maxHeaderLength its headers: an answer with more fails the probe or the
// hook, as no answer would.
const (
	maxBodyLength   = 10 << 10
	maxHeaderLength = 16 << 10
)

// hookURL is the URL of an httpGet action: scheme (HTTP when unset), host,
// port and path.
func hookURL(g *v1.HTTPGetAction, host string, port int) (string, error) {
	scheme := strings.ToLower(string(g.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	if scheme != "http" && scheme != "https" {
		return "", fmt.Errorf("scheme %q is neither HTTP nor HTTPS", g.Scheme)
	}
	path := g.Path
	if path != "" && !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	u, err := url.Parse(scheme + "://" + net.JoinHostPort(host, strconv.Itoa(port)) + path)
	if err != nil {
		return "", fmt.Errorf("URL of %s:%d%s: %w", host, port, g.Path, err)
	}
	return u.String(), nil
}

// resolvePort is port as a number: itself, or the containerPort of the
// container's port of that name.
func resolvePort(port intstr.IntOrString, c *v1.Container) (int, error) {
	if p := port.IntValue(); p > 0 && p < 65536 {
		return p, nil
	}
	name := port.String()
	for _, cp := range c.Ports {
		if cp.Name == name && name != "" {
			return int(cp.ContainerPort), nil
		}
	}
	return 0, fmt.Errorf("port %q is neither a port number nor the name of a port of container %q", name, c.Name)
}
