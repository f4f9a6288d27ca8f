package containergc

import (
	"cmp"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
)

// Policy is the kubelet's container garbage collection policy
// (pkg/kubelet/container's Policy), set by the same flags:
// --minimum-container-ttl-duration, --maximum-dead-containers-per-container
// and --maximum-dead-containers.
type Policy struct {
	// MinAge is how long after its creation a dead instance is kept in
	// any case; 0 is no minimum.
	MinAge time.Duration
	// MaxPerPodContainer is how many dead instances of each container of
	// a pod are kept (the newest ones); negative is no limit.
	MaxPerPodContainer int
	// MaxContainers is how many dead instances are kept on the node in
	// all; negative is no limit.
	MaxContainers int
}

// DefaultPolicy is the kubelet's default: no minimum age, one dead
// instance per container (what `kubectl logs --previous` reads), no node
// limit.
func DefaultPolicy() Policy {
	return Policy{MinAge: 0, MaxPerPodContainer: 1, MaxContainers: -1}
}

// evictUnit is the kubelet's unit of eviction: one container of one pod.
type evictUnit struct {
	uid  types.UID
	name string
}

// gcCandidate is a dead instance the policy may remove.
type gcCandidate struct {
	c *runtimeapi.Container
	// newest: the unit's newest instance, which is never removed (see
	// selectDead).
	newest bool
}

// selectDead picks, from every container listed, the dead instances the
// policy removes at now, oldest first, as the kubelet's evictContainers
// does: per container of a pod the newest MaxPerPodContainer dead
// instances older than MinAge are kept, then, beyond MaxContainers on the
// node, each unit keeps an equal share (at least one) and the oldest go
// first. Running and unknown-state instances are never candidates, nor
// the containers of a pod skip names (its removal is in flight), nor
// those without podlife's labels.
//
// Unlike the kubelet, the newest instance of each container is never
// removed, whatever the policy says: the pod's status is read from it
// (restart count, exit code, a Never container that completed for good, an
// init container that succeeded), and the next instance's attempt number
// follows it. The kubelet's default keeps it anyway. While the newest is
// only created (its start in progress), the one before it stays too.
func selectDead(listed []*runtimeapi.Container, policy Policy, now time.Time, skip func(types.UID) bool) []*runtimeapi.Container {
	all := map[evictUnit][]*runtimeapi.Container{}
	for _, c := range listed {
		uid, ok := c.GetLabels()[cri.PodUIDLabel]
		if !ok || skip(types.UID(uid)) {
			continue
		}
		key := evictUnit{uid: types.UID(uid), name: c.GetMetadata().GetName()}
		all[key] = append(all[key], c)
	}
	oldest := now.Add(-policy.MinAge).UnixNano()
	units := map[evictUnit][]gcCandidate{}
	for key, cs := range all {
		slices.SortFunc(cs, newestFirst)
		// A newest instance only created is a start in progress: until it
		// runs, the one before it is still what the status and `logs
		// --previous` read, so it stays too.
		starting := cs[0].State == runtimeapi.ContainerState_CONTAINER_CREATED
		for i, c := range cs {
			dead := c.State == runtimeapi.ContainerState_CONTAINER_EXITED || c.State == runtimeapi.ContainerState_CONTAINER_CREATED
			if dead && c.CreatedAt <= oldest {
				units[key] = append(units[key], gcCandidate{c: c, newest: i == 0 || i == 1 && starting})
			}
		}
	}
	var out []*runtimeapi.Container
	keepPerUnit := func(n int) {
		for key, cands := range units {
			var removed []*runtimeapi.Container
			units[key], removed = removeOldest(cands, len(cands)-n)
			out = append(out, removed...)
		}
	}
	if policy.MaxPerPodContainer >= 0 {
		keepPerUnit(policy.MaxPerPodContainer)
	}
	if policy.MaxContainers >= 0 && count(units) > policy.MaxContainers {
		keepPerUnit(max(policy.MaxContainers/max(len(units), 1), 1))
		if n := count(units); n > policy.MaxContainers {
			var flat []gcCandidate
			for _, cands := range units {
				flat = append(flat, cands...)
			}
			slices.SortFunc(flat, func(a, b gcCandidate) int { return newestFirst(a.c, b.c) })
			_, removed := removeOldest(flat, n-policy.MaxContainers)
			out = append(out, removed...)
		}
	}
	slices.SortFunc(out, func(a, b *runtimeapi.Container) int {
		return cmp.Or(cmp.Compare(a.CreatedAt, b.CreatedAt), cmp.Compare(a.GetMetadata().GetAttempt(), b.GetMetadata().GetAttempt()), cmp.Compare(a.Id, b.Id))
	})
	return out
}

// newestFirst orders instances by creation, newest first; the attempt
// number breaks a tie (a coarse runtime clock), then the ID.
func newestFirst(a, b *runtimeapi.Container) int {
	return cmp.Or(
		cmp.Compare(b.CreatedAt, a.CreatedAt),
		cmp.Compare(b.GetMetadata().GetAttempt(), a.GetMetadata().GetAttempt()),
		cmp.Compare(a.Id, b.Id))
}

// removeOldest takes up to n candidates from the end of cands (newest
// first) that are not their unit's newest instance; it returns the rest.
func removeOldest(cands []gcCandidate, n int) (kept []gcCandidate, removed []*runtimeapi.Container) {
	for i := len(cands) - 1; i >= 0; i-- {
		if len(removed) < n && !cands[i].newest {
			removed = append(removed, cands[i].c)
			continue
		}
		kept = append(kept, cands[i])
	}
	slices.Reverse(kept)
	return kept, removed
}

// count is how many candidates the units still hold.
func count(units map[evictUnit][]gcCandidate) int {
	n := 0
	for _, cands := range units {
		n += len(cands)
	}
	return n
}
