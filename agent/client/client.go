// Package client is what a command calls on a running node agent's control
// socket (api.ControlSocket): Lifecycle, ShutdownNode, WaitAgentExited and
// ContainerLogs, over HTTP on the unix socket. Like agent/api, which it
// builds on, it links no part of the agent. Its kubelet counterpart is
// pkg/kubelet/client, the API server's client of the kubelet.
package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/podlife/podlife/agent/api"
)

// controlClient is an HTTP client of the control socket at path. It keeps
// no idle connection.
func controlClient(path string) *http.Client {
	var d net.Dialer
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", path)
		},
		DisableKeepAlives: true,
	}}
}

// Lifecycle reads GET /lifecycle from the agent whose control socket is
// at path: the decoded answer, and its JSON as it came.
func Lifecycle(ctx context.Context, path string) (api.Lifecycle, []byte, error) {
	var status api.Lifecycle
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://podlife"+api.LifecyclePath, nil)
	if err != nil {
		return status, nil, err
	}
	resp, err := controlClient(path).Do(req)
	if err != nil {
		return status, nil, fmt.Errorf("agent control socket %s: %w", path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return status, nil, fmt.Errorf("agent control socket %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return status, nil, fmt.Errorf("agent control socket %s: %s: %s: %s", path, api.LifecyclePath, resp.Status, strings.TrimSpace(string(raw)))
	}
	if err := json.Unmarshal(raw, &status); err != nil {
		return status, nil, fmt.Errorf("agent control socket %s: %s: %w", path, api.LifecyclePath, err)
	}
	return status, raw, nil
}

// ShutdownNode asks the agent whose control socket is at path for a
// graceful node shutdown, as systemd-logind's PrepareForShutdown does, and
// returns its answer.
func ShutdownNode(ctx context.Context, path string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://podlife"+api.ShutdownPath, nil)
	if err != nil {
		return "", err
	}
	resp, err := controlClient(path).Do(req)
	if err != nil {
		return "", fmt.Errorf("agent control socket %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("agent control socket %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusAccepted {
		return "", fmt.Errorf("agent control socket %s: %s: %s", path, resp.Status, strings.TrimSpace(string(body)))
	}
	return string(body), nil
}

// WaitAgentExited waits until nothing answers on the control socket at
// path (the agent removes it as it exits), or ctx ends.
func WaitAgentExited(ctx context.Context, path string) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var d net.Dialer
	for {
		c, err := d.DialContext(ctx, "unix", path)
		switch {
		case err == nil:
			c.Close()
		case errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED):
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		default:
			return fmt.Errorf("agent control socket %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// ContainerLogs writes to w the log of a container (or the pod's only one,
// container "") of the pod namespace/name of the agent whose control
// socket is at path, as query (the /containerLogs parameters) says. A
// follow lasts until the container exits or ctx ends.
func ContainerLogs(ctx context.Context, path, namespace, name, container string, query url.Values, w io.Writer) error {
	u := "http://podlife" + api.ContainerLogsPath + "/" + url.PathEscape(namespace) + "/" + url.PathEscape(name)
	if container != "" {
		u += "/" + url.PathEscape(container)
	}
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	client := controlClient(path)
	client.Timeout = 0 // a follow lasts as long as its container
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("agent control socket %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64*1024))
		return fmt.Errorf("agent control socket %s: %s: %s", path, resp.Status, strings.TrimSpace(string(body)))
	}
	if _, err := io.Copy(w, resp.Body); err != nil {
		return fmt.Errorf("agent control socket %s: %w", path, err)
	}
	return nil
}
