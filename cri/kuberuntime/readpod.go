package kuberuntime

import (
	"context"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
)

// readPod lists the sandboxes and containers labelled with uid.
func readPod(ctx context.Context, rt cri.Runtime, uid types.UID) (*cri.PodRuntime, error) {
	selector := map[string]string{cri.PodUIDLabel: string(uid)}
	sandboxes, err := rt.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("list sandboxes of pod %s: %w", uid, err)
	}
	listed, err := rt.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("list containers of pod %s: %w", uid, err)
	}
	p := &cri.PodRuntime{UID: uid, Sandboxes: sandboxes, SandboxOf: make(map[string]string, len(listed))}
	for _, c := range listed {
		resp, err := rt.ContainerStatus(ctx, c.Id, false)
		if err != nil {
			return nil, fmt.Errorf("status of container %s of pod %s: %w", c.Id, uid, err)
		}
		if resp.GetStatus() == nil {
			continue // removed between the list and the status call
		}
		p.Containers = append(p.Containers, resp.Status)
		p.SandboxOf[c.Id] = c.PodSandboxId
	}
	sort.SliceStable(p.Sandboxes, func(i, j int) bool {
		return p.Sandboxes[i].CreatedAt > p.Sandboxes[j].CreatedAt
	})
	sort.SliceStable(p.Containers, func(i, j int) bool {
		return p.Containers[i].CreatedAt > p.Containers[j].CreatedAt
	})
	return p, nil
}
