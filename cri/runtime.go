package cri

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Runtime is the part of the CRI runtime service the syncer uses; both
// k8s.io/cri-client's remote runtime and cri-api's fake satisfy it.
type Runtime interface {
	RunPodSandbox(ctx context.Context, config *runtimeapi.PodSandboxConfig, runtimeHandler string) (string, error)
	StopPodSandbox(ctx context.Context, podSandboxID string) error
	RemovePodSandbox(ctx context.Context, podSandboxID string) error
	PodSandboxStatus(ctx context.Context, podSandboxID string, verbose bool) (*runtimeapi.PodSandboxStatusResponse, error)
	ListPodSandbox(ctx context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error)
	CreateContainer(ctx context.Context, podSandboxID string, config *runtimeapi.ContainerConfig, sandboxConfig *runtimeapi.PodSandboxConfig) (string, error)
	StartContainer(ctx context.Context, containerID string) error
	StopContainer(ctx context.Context, containerID string, timeout int64) error
	RemoveContainer(ctx context.Context, containerID string) error
	ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error)
	ContainerStatus(ctx context.Context, containerID string, verbose bool) (*runtimeapi.ContainerStatusResponse, error)
	// ExecSync runs cmd in the container (lifecycle hooks); a non-zero
	// exit code is an error. A timeout of 0 is none.
	ExecSync(ctx context.Context, containerID string, cmd []string, timeout time.Duration) (stdout, stderr []byte, err error)
	// ListContainerStats and ListPodSandboxStats are the stats provider's
	// (cri/stats): a runtime without them (the embedded one; containerd
	// 1.6 has no sandbox stats) answers codes.Unimplemented.
	ListContainerStats(ctx context.Context, filter *runtimeapi.ContainerStatsFilter) ([]*runtimeapi.ContainerStats, error)
	ListPodSandboxStats(ctx context.Context, filter *runtimeapi.PodSandboxStatsFilter) ([]*runtimeapi.PodSandboxStats, error)
	// Exec, Attach and PortForward ask the runtime's streaming server for
	// the URL of a session, which the kubelet API proxies to (they start
	// nothing themselves). A runtime without a streaming server answers
	// codes.Unimplemented.
	Exec(ctx context.Context, req *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error)
	Attach(ctx context.Context, req *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error)
	PortForward(ctx context.Context, req *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error)
}

// Images is the part of the CRI image service the syncer uses.
type Images interface {
	ImageStatus(ctx context.Context, image *runtimeapi.ImageSpec, verbose bool) (*runtimeapi.ImageStatusResponse, error)
	PullImage(ctx context.Context, image *runtimeapi.ImageSpec, auth *runtimeapi.AuthConfig, podSandboxConfig *runtimeapi.PodSandboxConfig) (string, error)
	// ImageFsInfo names the filesystems that hold the images, for the
	// stats provider's imageFs.
	ImageFsInfo(ctx context.Context) (*runtimeapi.ImageFsInfoResponse, error)
}

// SandboxIP is the sandbox's IP, or "" when the runtime does not say
// within 10 s or before ctx ends.
func SandboxIP(ctx context.Context, rt Runtime, sbID string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := rt.PodSandboxStatus(ctx, sbID, false)
	if err != nil {
		return ""
	}
	return resp.GetStatus().GetNetwork().GetIp()
}

// PodRuntime is what the runtime holds for one pod UID, read fresh.
type PodRuntime struct {
	UID types.UID
	// Sandboxes, newest first.
	Sandboxes []*runtimeapi.PodSandbox
	// Containers, each with its full status, newest first.
	Containers []*runtimeapi.ContainerStatus
	// SandboxOf maps a container ID to its sandbox ID.
	SandboxOf map[string]string
}

// Names are the pod's name and namespace as the runtime holds them: its
// newest sandbox's metadata, else its newest container's labels.
func (p *PodRuntime) Names() (name, namespace string) {
	if len(p.Sandboxes) > 0 {
		m := p.Sandboxes[0].GetMetadata()
		return m.GetName(), m.GetNamespace()
	}
	if len(p.Containers) > 0 {
		l := p.Containers[0].GetLabels()
		return l[PodNameLabel], l[PodNamespaceLabel]
	}
	return "", ""
}

// ReadySandbox is the newest sandbox if it is ready.
func (p *PodRuntime) ReadySandbox() *runtimeapi.PodSandbox {
	if len(p.Sandboxes) > 0 && p.Sandboxes[0].State == runtimeapi.PodSandboxState_SANDBOX_READY {
		return p.Sandboxes[0]
	}
	return nil
}

// Latest is the newest instance of the named container in sandbox (any
// sandbox when sandboxID is ""), and the one before it.
func (p *PodRuntime) Latest(sandboxID, name string) (current, previous *runtimeapi.ContainerStatus) {
	for _, c := range p.Containers {
		if (sandboxID != "" && p.SandboxOf[c.Id] != sandboxID) || c.GetMetadata().GetName() != name {
			continue
		}
		if current == nil {
			current = c
		} else {
			return current, c
		}
	}
	return current, nil
}

// LatestFor is Latest(sandboxID, c.Name) as the restart policy sees it: a
// container whose newest instance in any sandbox exited and is not to run
// again (ContainerShouldRestart: under OnFailure one that exited 0, under
// Never any) completed for good, and does not run again in a new sandbox
// either; when the sandbox has no instance of it, that completed instance
// counts. The kubelet's computePodActions spares only the OnFailure ones
// in a new sandbox (a pod Never does not get one); podlife does not run a
// Never container twice either.
func (p *PodRuntime) LatestFor(spec *v1.PodSpec, sandboxID string, c *v1.Container) (current, previous *runtimeapi.ContainerStatus) {
	current, previous = p.Latest(sandboxID, c.Name)
	if current != nil || sandboxID == "" {
		return current, previous
	}
	if last, prev := p.Latest("", c.Name); last != nil && last.State == runtimeapi.ContainerState_CONTAINER_EXITED &&
		!ContainerShouldRestart(spec, c, last.ExitCode) {
		return last, prev
	}
	return nil, nil
}

// NotExited lists the containers a stop must reach: running ones, and
// created ones, which could still be started.
func (p *PodRuntime) NotExited() []*runtimeapi.ContainerStatus {
	var out []*runtimeapi.ContainerStatus
	for _, c := range p.Containers {
		if c.State != runtimeapi.ContainerState_CONTAINER_EXITED {
			out = append(out, c)
		}
	}
	return out
}

// RunningIDs lists the containers that run.
func (p *PodRuntime) RunningIDs() []string {
	var out []string
	for _, c := range p.Containers {
		if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			out = append(out, c.Id)
		}
	}
	return out
}

// NextAttempt numbers the next instance of the named container: one more
// than any instance the runtime still holds, so names never collide.
func (p *PodRuntime) NextAttempt(name string) uint32 {
	var n uint32
	for _, c := range p.Containers {
		if c.GetMetadata().GetName() == name {
			n = max(n, c.GetMetadata().GetAttempt()+1)
		}
	}
	return n
}

// NextSandboxAttempt numbers the pod's next sandbox the same way.
func (p *PodRuntime) NextSandboxAttempt() uint32 {
	var n uint32
	for _, sb := range p.Sandboxes {
		n = max(n, sb.GetMetadata().GetAttempt()+1)
	}
	return n
}
