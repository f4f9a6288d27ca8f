// Package podcache is the runtime's view of podlife's pods as of its last
// poll (kubelet: pkg/kubelet/container's cache, filled by the PLEG's
// relist): the pod workers' worker.StatusCache, the lists of the pods
// that run and of those that only hold stopped sandboxes and exited
// containers, by which the agent finds the pods only the runtime knows,
// and the pods whose sandboxes or containers changed state (kubelet:
// pkg/kubelet/pleg's relist), which the agent syncs.
package podcache

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/worker"
)

// ErrNotFilled is Get's error until the first poll succeeded: an empty
// cache would tell the workers that no pod has anything running.
var ErrNotFilled = errors.New("podcache: status cache not filled yet")

// Cache is the runtime's view of our pods as of the last successful poll.
// It polls because containerd 1.6 has no GetContainerEvents. It is the pod
// workers' worker.StatusCache, and lists the pods that run (RunningPods) to
// find those only the runtime knows.
//
// Sandboxes and containers without PodUIDLabel are not ours and ignored.
// Statuses come from the lists, which carry no sandbox IP and no container
// StartedAt; an exited container's comes from ContainerStatus instead (exit
// code, reason, times), fetched once since it never changes.
type Cache struct {
	rt  cri.Runtime
	log *slog.Logger

	refreshMu sync.Mutex // one poll at a time; guards exited
	// exited holds the status of exited containers by ID, while listed.
	exited map[string]*runtimeapi.ContainerStatus

	mu   sync.Mutex
	snap *cacheSnapshot // nil until the first successful poll; never mutated

	changedMu sync.Mutex
	// seen are the states of the pods the last Changed asked about.
	seen map[types.UID]string
}

// cacheSnapshot is the result of one poll.
type cacheSnapshot struct {
	pods    map[types.UID]*worker.PodStatus
	states  map[types.UID]string // fingerprint of each pod
	running []*worker.RunningPod // sorted by UID
	dead    []types.UID          // the other pods, sorted
}

var _ worker.StatusCache = (*Cache)(nil)

// New returns an empty cache of rt; log nil discards its messages.
func New(rt cri.Runtime, log *slog.Logger) *Cache {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Cache{rt: rt, log: log, exited: map[string]*runtimeapi.ContainerStatus{}}
}

// Get returns the pod's status as of the last poll: sandboxes and
// containers newest first, or only the ID when the runtime has nothing of
// uid. The result is a copy the caller may change. Before the first
// successful poll it fails with ErrCacheNotFilled.
func (c *Cache) Get(uid types.UID) (*worker.PodStatus, error) {
	snap := c.snapshot()
	if snap == nil {
		return nil, ErrNotFilled
	}
	p, ok := snap.pods[uid]
	if !ok {
		return &worker.PodStatus{ID: uid}, nil
	}
	return &worker.PodStatus{
		ID: p.ID, Name: p.Name, Namespace: p.Namespace,
		SandboxStatuses:   cloneAll(p.SandboxStatuses),
		ContainerStatuses: cloneAll(p.ContainerStatuses),
	}, nil
}

// RunningPods returns, as of the last poll and sorted by UID, the pods with
// a ready sandbox or a running container, with all their sandboxes and
// containers as listed (newest first). The result is a copy.
func (c *Cache) RunningPods() []*worker.RunningPod {
	snap := c.snapshot()
	if snap == nil {
		return nil
	}
	out := make([]*worker.RunningPod, len(snap.running))
	for i, p := range snap.running {
		out[i] = &worker.RunningPod{
			ID: p.ID, Name: p.Name, Namespace: p.Namespace,
			Sandboxes:  cloneAll(p.Sandboxes),
			Containers: cloneAll(p.Containers),
		}
	}
	return out
}

// DeadPods lists, as of the last poll and sorted, the pods the runtime
// still holds with nothing running: no ready sandbox, no running container.
func (c *Cache) DeadPods() []types.UID {
	snap := c.snapshot()
	if snap == nil {
		return nil
	}
	return slices.Clone(snap.dead)
}

func (c *Cache) snapshot() *cacheSnapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.snap
}

// Run polls now and every interval until ctx ends, calling polled (if not
// nil) after each successful poll: the agent resyncs the pods whose
// containers changed, as the kubelet's PLEG does. A failed poll is logged
// and leaves the previous snapshot in place.
func (c *Cache) Run(ctx context.Context, interval time.Duration, clk clock.WithTicker, polled func()) {
	t := clk.NewTicker(interval)
	defer t.Stop()
	failing := false
	for {
		if err := c.Refresh(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			c.log.Error("CRI poll failed; keeping the previous snapshot", "err", err)
			failing = true
		} else {
			if failing {
				c.log.Info("CRI poll succeeded again")
				failing = false
			}
			if polled != nil {
				polled()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

// Refresh polls the runtime once and replaces the snapshot; on error the
// previous snapshot stays.
func (c *Cache) Refresh(ctx context.Context) error {
	c.refreshMu.Lock()
	defer c.refreshMu.Unlock()
	sandboxes, err := c.rt.ListPodSandbox(ctx, nil)
	if err != nil {
		return fmt.Errorf("list sandboxes: %w", err)
	}
	containers, err := c.rt.ListContainers(ctx, nil)
	if err != nil {
		return fmt.Errorf("list containers: %w", err)
	}

	pods := map[types.UID]*cachePod{}
	pod := func(labels map[string]string) *cachePod {
		uid := types.UID(labels[cri.PodUIDLabel])
		if uid == "" {
			return nil
		}
		if pods[uid] == nil {
			pods[uid] = &cachePod{uid: uid}
		}
		return pods[uid]
	}
	for _, s := range sandboxes {
		if p := pod(s.Labels); p != nil {
			p.sandboxes = append(p.sandboxes, s)
		}
	}
	listed := make(map[string]bool, len(containers))
	for _, ctr := range containers {
		listed[ctr.Id] = true
		p := pod(ctr.Labels)
		if p == nil {
			continue
		}
		st, err := c.containerStatus(ctx, ctr)
		if err != nil {
			return err
		}
		if st != nil {
			p.containers = append(p.containers, ctr)
			p.statuses = append(p.statuses, st)
		}
	}
	for id := range c.exited {
		if !listed[id] {
			delete(c.exited, id)
		}
	}

	snap := &cacheSnapshot{pods: make(map[types.UID]*worker.PodStatus, len(pods)), states: make(map[types.UID]string, len(pods))}
	for uid, p := range pods {
		p.sort()
		snap.pods[uid] = p.status()
		snap.states[uid] = fingerprint(snap.pods[uid])
		if p.running() {
			snap.running = append(snap.running, p.runningPod())
		} else {
			snap.dead = append(snap.dead, uid)
		}
	}
	slices.SortFunc(snap.running, func(a, b *worker.RunningPod) int { return cmp.Compare(a.ID, b.ID) })
	slices.Sort(snap.dead)
	c.mu.Lock()
	c.snap = snap
	c.mu.Unlock()
	return nil
}

// containerStatus is the status of a listed container: converted from the
// list unless it exited, then asked for once. It is nil for a container
// removed since the list.
func (c *Cache) containerStatus(ctx context.Context, ctr *runtimeapi.Container) (*runtimeapi.ContainerStatus, error) {
	if ctr.State != runtimeapi.ContainerState_CONTAINER_EXITED {
		return &runtimeapi.ContainerStatus{
			Id: ctr.Id, Metadata: ctr.Metadata, State: ctr.State, CreatedAt: ctr.CreatedAt,
			Image: ctr.Image, ImageRef: ctr.ImageRef, ImageId: ctr.ImageId,
			Labels: ctr.Labels, Annotations: ctr.Annotations,
		}, nil
	}
	if st, ok := c.exited[ctr.Id]; ok {
		return st, nil
	}
	resp, err := c.rt.ContainerStatus(ctx, ctr.Id, false)
	if status.Code(err) == codes.NotFound {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("status of exited container %s: %w", ctr.Id, err)
	}
	st := resp.GetStatus()
	if st == nil {
		return nil, fmt.Errorf("status of exited container %s: none returned", ctr.Id)
	}
	if st.State == runtimeapi.ContainerState_CONTAINER_EXITED {
		c.exited[ctr.Id] = st
	}
	return st, nil
}

// cachePod gathers what one poll found of one pod UID.
type cachePod struct {
	uid        types.UID
	sandboxes  []*runtimeapi.PodSandbox
	containers []*runtimeapi.Container       // as listed
	statuses   []*runtimeapi.ContainerStatus // statuses[i] is containers[i]'s
}

// sort orders sandboxes and containers newest first, as the kubelet does.
func (p *cachePod) sort() {
	slices.SortFunc(p.sandboxes, func(a, b *runtimeapi.PodSandbox) int {
		return cmp.Or(cmp.Compare(b.CreatedAt, a.CreatedAt), cmp.Compare(a.Id, b.Id))
	})
	order := make([]int, len(p.containers))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int {
		a, b := p.containers[i], p.containers[j]
		return cmp.Or(cmp.Compare(b.CreatedAt, a.CreatedAt), cmp.Compare(a.Id, b.Id))
	})
	containers := make([]*runtimeapi.Container, len(order))
	statuses := make([]*runtimeapi.ContainerStatus, len(order))
	for k, i := range order {
		containers[k], statuses[k] = p.containers[i], p.statuses[i]
	}
	p.containers, p.statuses = containers, statuses
}

// names are the pod's name and namespace: from the labels of its newest
// sandbox, else of its newest container.
func (p *cachePod) names() (name, namespace string) {
	if len(p.sandboxes) > 0 {
		s := p.sandboxes[0]
		return cmp.Or(s.Labels[cri.PodNameLabel], s.GetMetadata().GetName()),
			cmp.Or(s.Labels[cri.PodNamespaceLabel], s.GetMetadata().GetNamespace())
	}
	if len(p.containers) > 0 {
		c := p.containers[0]
		return c.Labels[cri.PodNameLabel], c.Labels[cri.PodNamespaceLabel]
	}
	return "", ""
}

func (p *cachePod) status() *worker.PodStatus {
	s := &worker.PodStatus{ID: p.uid, ContainerStatuses: p.statuses}
	s.Name, s.Namespace = p.names()
	for _, sb := range p.sandboxes {
		s.SandboxStatuses = append(s.SandboxStatuses, &runtimeapi.PodSandboxStatus{
			Id: sb.Id, Metadata: sb.Metadata, State: sb.State, CreatedAt: sb.CreatedAt,
			Labels: sb.Labels, Annotations: sb.Annotations, RuntimeHandler: sb.RuntimeHandler,
		})
	}
	return s
}

func (p *cachePod) running() bool {
	for _, s := range p.sandboxes {
		if s.State == runtimeapi.PodSandboxState_SANDBOX_READY {
			return true
		}
	}
	for _, c := range p.containers {
		if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			return true
		}
	}
	return false
}

func (p *cachePod) runningPod() *worker.RunningPod {
	r := &worker.RunningPod{ID: p.uid, Sandboxes: p.sandboxes, Containers: p.containers}
	r.Name, r.Namespace = p.names()
	return r
}

// cloneAll deep-copies messages, so that callers cannot change a snapshot.
func cloneAll[M proto.Message](ms []M) []M {
	if ms == nil {
		return nil
	}
	out := make([]M, len(ms))
	for i, m := range ms {
		out[i] = proto.Clone(m).(M)
	}
	return out
}

// Changed lists, of the pods uids, those whose sandboxes or containers
// changed state since the previous call, and those it did not ask about
// (kubelet: the PLEG's relist, which compares each poll with the one
// before): the agent syncs them, so that a container that exits is
// noticed at the next poll, not at the next periodic resync. It forgets
// the pods not in uids. Before the first poll it lists none, and forgets
// them all.
func (c *Cache) Changed(uids []types.UID) []types.UID {
	snap := c.snapshot()
	c.changedMu.Lock()
	defer c.changedMu.Unlock()
	seen := make(map[types.UID]string, len(uids))
	var out []types.UID
	if snap != nil {
		for _, uid := range uids {
			st := snap.states[uid]
			seen[uid] = st
			if old, ok := c.seen[uid]; !ok || old != st {
				out = append(out, uid)
			}
		}
	}
	c.seen = seen
	return out
}

// fingerprint is the pod's sandboxes and containers with their states.
func fingerprint(st *worker.PodStatus) string {
	var b strings.Builder
	for _, sb := range st.SandboxStatuses {
		b.WriteString(sb.GetId())
		b.WriteString(sb.GetState().String())
	}
	for _, c := range st.ContainerStatuses {
		b.WriteString(c.GetId())
		b.WriteString(c.GetState().String())
	}
	return b.String()
}
