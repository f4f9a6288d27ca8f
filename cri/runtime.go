package cri

import (
	"context"
	"fmt"
	"sort"
	"time"

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
}

// Images is the part of the CRI image service the syncer uses.
type Images interface {
	ImageStatus(ctx context.Context, image *runtimeapi.ImageSpec, verbose bool) (*runtimeapi.ImageStatusResponse, error)
	PullImage(ctx context.Context, image *runtimeapi.ImageSpec, auth *runtimeapi.AuthConfig, podSandboxConfig *runtimeapi.PodSandboxConfig) (string, error)
}

// podRuntime is what the runtime holds for one pod UID, read fresh.
type podRuntime struct {
	uid types.UID
	// sandboxes, newest first.
	sandboxes []*runtimeapi.PodSandbox
	// containers, each with its full status, newest first.
	containers []*runtimeapi.ContainerStatus
	// sandboxOf maps a container ID to its sandbox ID.
	sandboxOf map[string]string
}

// readPod lists the sandboxes and containers labelled with uid.
func readPod(ctx context.Context, rt Runtime, uid types.UID) (*podRuntime, error) {
	selector := map[string]string{PodUIDLabel: string(uid)}
	sandboxes, err := rt.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("list sandboxes of pod %s: %w", uid, err)
	}
	listed, err := rt.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("list containers of pod %s: %w", uid, err)
	}
	p := &podRuntime{uid: uid, sandboxes: sandboxes, sandboxOf: make(map[string]string, len(listed))}
	for _, c := range listed {
		resp, err := rt.ContainerStatus(ctx, c.Id, false)
		if err != nil {
			return nil, fmt.Errorf("status of container %s of pod %s: %w", c.Id, uid, err)
		}
		if resp.GetStatus() == nil {
			continue // removed between the list and the status call
		}
		p.containers = append(p.containers, resp.Status)
		p.sandboxOf[c.Id] = c.PodSandboxId
	}
	sort.SliceStable(p.sandboxes, func(i, j int) bool {
		return p.sandboxes[i].CreatedAt > p.sandboxes[j].CreatedAt
	})
	sort.SliceStable(p.containers, func(i, j int) bool {
		return p.containers[i].CreatedAt > p.containers[j].CreatedAt
	})
	return p, nil
}

// names are the pod's name and namespace as the runtime holds them: its
// newest sandbox's metadata, else its newest container's labels.
func (p *podRuntime) names() (name, namespace string) {
	if len(p.sandboxes) > 0 {
		m := p.sandboxes[0].GetMetadata()
		return m.GetName(), m.GetNamespace()
	}
	if len(p.containers) > 0 {
		l := p.containers[0].GetLabels()
		return l[PodNameLabel], l[PodNamespaceLabel]
	}
	return "", ""
}

// readySandbox is the newest sandbox if it is ready.
func (p *podRuntime) readySandbox() *runtimeapi.PodSandbox {
	if len(p.sandboxes) > 0 && p.sandboxes[0].State == runtimeapi.PodSandboxState_SANDBOX_READY {
		return p.sandboxes[0]
	}
	return nil
}

// latest is the newest instance of the named container in sandbox (any
// sandbox when sandboxID is ""), and the one before it.
func (p *podRuntime) latest(sandboxID, name string) (current, previous *runtimeapi.ContainerStatus) {
	for _, c := range p.containers {
		if (sandboxID != "" && p.sandboxOf[c.Id] != sandboxID) || c.GetMetadata().GetName() != name {
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

// notExited lists the containers a stop must reach: running ones, and
// created ones, which could still be started.
func (p *podRuntime) notExited() []*runtimeapi.ContainerStatus {
	var out []*runtimeapi.ContainerStatus
	for _, c := range p.containers {
		if c.State != runtimeapi.ContainerState_CONTAINER_EXITED {
			out = append(out, c)
		}
	}
	return out
}

// runningIDs lists the containers that run.
func (p *podRuntime) runningIDs() []string {
	var out []string
	for _, c := range p.containers {
		if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			out = append(out, c.Id)
		}
	}
	return out
}

// nextAttempt numbers the next instance of the named container: one more
// than any instance the runtime still holds, so names never collide.
func (p *podRuntime) nextAttempt(name string) uint32 {
	var n uint32
	for _, c := range p.containers {
		if c.GetMetadata().GetName() == name {
			n = max(n, c.GetMetadata().GetAttempt()+1)
		}
	}
	return n
}

// nextSandboxAttempt numbers the pod's next sandbox the same way.
func (p *podRuntime) nextSandboxAttempt() uint32 {
	var n uint32
	for _, sb := range p.sandboxes {
		n = max(n, sb.GetMetadata().GetAttempt()+1)
	}
	return n
}
