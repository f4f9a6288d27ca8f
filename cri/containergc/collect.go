package containergc

import (
	"cmp"
	"context"
	"log/slog"
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/logs"
	"github.com/podlife/podlife/cri/podfiles"
)

// Collector removes what the policy does not keep from a runtime.
type Collector struct {
	rt cri.Runtime
	// logRoot and podsRoot are where the runtime writes the logs and
	// where the termination message files are; "" is none.
	logRoot, podsRoot string
	clock             clock.PassiveClock
	log               *slog.Logger
}

// New returns a collector of rt's containers, whose logs are under
// logRoot and termination message files under podsRoot (kuberuntime's
// Options of the same names).
func New(rt cri.Runtime, logRoot, podsRoot string, clk clock.PassiveClock, log *slog.Logger) *Collector {
	return &Collector{rt: rt, logRoot: logRoot, podsRoot: podsRoot, clock: clk, log: log}
}

// Collect is one garbage collection under policy; the containers and
// sandboxes of a pod skip names are left alone (a removal of the whole pod
// is in flight). What a failed call leaves the next collection retries.
func (g *Collector) Collect(ctx context.Context, policy Policy, skip func(types.UID) bool) {
	listed, err := g.rt.ListContainers(ctx, &runtimeapi.ContainerFilter{})
	if err != nil {
		g.log.Warn("container garbage collection: listing the containers failed; the next one tries again", "err", err)
		return
	}
	gone := map[string]bool{}
	for _, c := range selectDead(listed, policy, g.clock.Now(), skip) {
		if g.removeInstance(ctx, c) {
			gone[c.Id] = true
		}
	}
	g.collectSandboxes(ctx, listed, gone, skip)
	if g.logRoot != "" {
		if err := logs.RemoveDanglingLinks(ctx, g.logRoot, g.containerState); err != nil {
			g.log.Warn("container garbage collection: removing dangling log links failed", "err", err)
		}
	}
}

// containerState is the runtime's state of container id, found false
// when it does not know it.
func (g *Collector) containerState(ctx context.Context, id string) (runtimeapi.ContainerState, bool, error) {
	resp, err := g.rt.ContainerStatus(ctx, id, false)
	if status.Code(err) == codes.NotFound {
		return 0, false, nil
	}
	if err != nil || resp.GetStatus() == nil {
		return 0, false, err
	}
	return resp.GetStatus().GetState(), true, nil
}

// removeInstance removes dead instance c with its log files and its
// termination message file. It reads c's status first: the log path is
// in it, and an instance that runs after all (started since the list) is
// left alone.
func (g *Collector) removeInstance(ctx context.Context, c *runtimeapi.Container) bool {
	resp, err := g.rt.ContainerStatus(ctx, c.Id, false)
	if err != nil {
		g.log.Warn("container garbage collection: status failed; the container is kept", "container", c.Id, "err", err)
		return false
	}
	st := resp.GetStatus()
	if st == nil {
		return true // removed since the list
	}
	if st.State != runtimeapi.ContainerState_CONTAINER_EXITED && st.State != runtimeapi.ContainerState_CONTAINER_CREATED {
		return false
	}
	// The files go first, as the kubelet removes the log before the
	// container: a container whose removal failed is found again, a file
	// whose container is gone would not be.
	if path := st.GetLogPath(); path != "" && g.logRoot != "" {
		if err := logs.RemoveContainerLog(g.logRoot, path); err != nil {
			g.log.Warn("container garbage collection: removing the log failed; the container is kept", "container", c.Id, "err", err)
			return false
		}
	}
	if g.logRoot != "" {
		if err := logs.Unlink(g.logRoot, c.Id, c.GetMetadata().GetName(), c.GetLabels()); err != nil {
			g.log.Warn("container garbage collection: removing the log link failed; the container is kept", "container", c.Id, "err", err)
			return false
		}
	}
	uid := types.UID(c.GetLabels()[cri.PodUIDLabel])
	if err := podfiles.RemoveMessageFile(g.podsRoot, uid, c.GetMetadata().GetName(), c.GetMetadata().GetAttempt()); err != nil {
		g.log.Warn("container garbage collection: removing the termination message file failed; the container is kept", "container", c.Id, "err", err)
		return false
	}
	if err := g.rt.RemoveContainer(ctx, c.Id); err != nil {
		g.log.Warn("container garbage collection: removing the container failed", "container", c.Id, "err", err)
		return false
	}
	g.log.Debug("container garbage collection: removed a dead instance", "container", c.Id,
		"pod", c.GetLabels()[cri.PodNamespaceLabel]+"/"+c.GetLabels()[cri.PodNameLabel], "name", c.GetMetadata().GetName(), "attempt", c.GetMetadata().GetAttempt())
	return true
}

// collectSandboxes removes the sandboxes of a pod that are neither its
// newest nor ready nor used by a container still held (those of listed
// not gone), as the kubelet's evictSandboxes does for a pod that exists:
// stopped first, in case.
func (g *Collector) collectSandboxes(ctx context.Context, listed []*runtimeapi.Container, gone map[string]bool, skip func(types.UID) bool) {
	sandboxes, err := g.rt.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{})
	if err != nil {
		g.log.Warn("container garbage collection: listing the sandboxes failed; the next one tries again", "err", err)
		return
	}
	used := map[string]bool{}
	for _, c := range listed {
		if !gone[c.Id] {
			used[c.PodSandboxId] = true
		}
	}
	byPod := map[types.UID][]*runtimeapi.PodSandbox{}
	for _, sb := range sandboxes {
		uid, ok := sb.GetLabels()[cri.PodUIDLabel]
		if ok && !skip(types.UID(uid)) {
			byPod[types.UID(uid)] = append(byPod[types.UID(uid)], sb)
		}
	}
	for _, sbs := range byPod {
		slices.SortFunc(sbs, func(a, b *runtimeapi.PodSandbox) int { return cmp.Compare(b.CreatedAt, a.CreatedAt) })
		for _, sb := range sbs[1:] {
			if sb.State == runtimeapi.PodSandboxState_SANDBOX_READY || used[sb.Id] {
				continue
			}
			if err := g.rt.StopPodSandbox(ctx, sb.Id); err != nil {
				g.log.Warn("container garbage collection: stopping an old sandbox failed", "sandbox", sb.Id, "err", err)
				continue
			}
			if err := g.rt.RemovePodSandbox(ctx, sb.Id); err != nil {
				g.log.Warn("container garbage collection: removing an old sandbox failed", "sandbox", sb.Id, "err", err)
			}
		}
	}
}
