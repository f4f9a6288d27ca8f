package kuberuntime

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
)

// The kubelet API's exec, attach, port-forward and run (agent/kubeletserver)
// reach a pod's containers through these, as the kubelet's
// kuberuntime GetExec, GetAttach, GetPortForward and RunInContainer do:
// the runtime's streaming server answers the session itself, at the URL
// the call returns.

// runTimeout bounds a /run command, which has no stream to stop it.
const runTimeout = 5 * time.Minute

// notRunningError is a container or pod with nothing running to stream
// to: a 404 for the kubelet API (its NotFound method says so).
type notRunningError struct{ msg string }

func (e *notRunningError) Error() string  { return e.msg }
func (e *notRunningError) NotFound() bool { return true }

// runningContainer is the ID of the running instance of the named
// container of pod (a container, init container or ephemeral container of
// its spec).
func (s *Syncer) runningContainer(ctx context.Context, pod *v1.Pod, name string) (string, error) {
	podName := pod.Namespace + "/" + pod.Name
	if !inSpec(pod, name) {
		return "", &notRunningError{fmt.Sprintf("container %q is not in pod %s", name, podName)}
	}
	p, err := readPod(ctx, s.rt, pod.UID)
	if err != nil {
		return "", err
	}
	current, _ := p.Latest("", name)
	if current == nil || current.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return "", &notRunningError{fmt.Sprintf("container %q of pod %s is not running", name, podName)}
	}
	return current.Id, nil
}

// inSpec reports whether pod's spec has a container of that name.
func inSpec(pod *v1.Pod, name string) bool {
	for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
		if c.Name == name {
			return true
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		if c.Name == name {
			return true
		}
	}
	return false
}

// Exec asks the runtime for an exec session of req (its ContainerId is
// set here) in the running instance of container, and returns its URL.
func (s *Syncer) Exec(ctx context.Context, pod *v1.Pod, container string, req *runtimeapi.ExecRequest) (string, error) {
	id, err := s.runningContainer(ctx, pod, container)
	if err != nil {
		return "", err
	}
	req.ContainerId = id
	resp, err := s.rt.Exec(ctx, req)
	if err != nil {
		return "", err
	}
	return resp.GetUrl(), nil
}

// Attach is Exec's attach: the session attaches to the container's own
// streams.
func (s *Syncer) Attach(ctx context.Context, pod *v1.Pod, container string, req *runtimeapi.AttachRequest) (string, error) {
	id, err := s.runningContainer(ctx, pod, container)
	if err != nil {
		return "", err
	}
	req.ContainerId = id
	resp, err := s.rt.Attach(ctx, req)
	if err != nil {
		return "", err
	}
	return resp.GetUrl(), nil
}

// PortForward asks the runtime for a port-forward session into the pod's
// ready sandbox (ports may be empty: the client names them per stream).
func (s *Syncer) PortForward(ctx context.Context, pod *v1.Pod, ports []int32) (string, error) {
	p, err := readPod(ctx, s.rt, pod.UID)
	if err != nil {
		return "", err
	}
	sb := p.ReadySandbox()
	if sb == nil {
		return "", &notRunningError{fmt.Sprintf("pod %s/%s has no ready sandbox", pod.Namespace, pod.Name)}
	}
	resp, err := s.rt.PortForward(ctx, &runtimeapi.PortForwardRequest{PodSandboxId: sb.Id, Port: ports})
	if err != nil {
		return "", err
	}
	return resp.GetUrl(), nil
}

// RunInContainer runs cmd in the running instance of container and
// returns its stdout followed by its stderr, as the kubelet's does; a
// non-zero exit is an error (cri.Runtime's ExecSync).
func (s *Syncer) RunInContainer(ctx context.Context, pod *v1.Pod, container string, cmd []string) ([]byte, error) {
	id, err := s.runningContainer(ctx, pod, container)
	if err != nil {
		return nil, err
	}
	stdout, stderr, err := s.rt.ExecSync(cri.ForPod(ctx, pod.UID), id, cmd, runTimeout)
	return append(stdout, stderr...), err
}
