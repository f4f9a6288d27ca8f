package manifests

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/kubetypes"
)

// candidate is a pod a file provides this scan (its last good decode).
type candidate struct {
	path string
	pod  *v1.Pod
}

// resolve picks the pods of this scan, one per file that has a good version,
// first come, first served: a file whose pod has the UID or the full name of
// a pod another file holds is refused, whatever the files are called, until
// that file no longer has it (it is removed, or its pod renamed). Files are
// served in the order of claimants. A refused file keeps its reported pod,
// if it has one that can still be taken, as a file that fails to decode does.
func (s *Source) resolve(paths []string) (map[types.UID]candidate, map[string]error) {
	byPath := map[string]*reported{} // the reported pod of each file
	for _, r := range s.reported {
		byPath[r.path] = r
	}
	accepted := map[types.UID]candidate{}
	byName := map[string]string{} // full name → path
	// taker is the file that took pod's UID or full name, if another did.
	taker := func(c candidate) (path, what string) {
		if other, ok := accepted[c.pod.UID]; ok && other.path != c.path {
			return other.path, "UID " + string(c.pod.UID)
		}
		if other, ok := byName[fullName(c.pod)]; ok && other != c.path {
			return other, "full name"
		}
		return "", ""
	}
	take := func(c candidate) {
		accepted[c.pod.UID] = c
		byName[fullName(c.pod)] = c.path
	}
	conflicts := map[string]error{}
	for _, c := range s.claimants(paths, byPath) {
		other, what := taker(c)
		if other == "" {
			take(c)
			continue
		}
		conflicts[c.path] = fileErr(c.path, fmt.Errorf("pod %s: its %s is already taken by the pod of %s; waiting until that file no longer defines it",
			fullName(c.pod), what, other))
		if r := byPath[c.path]; r != nil {
			kept := candidate{c.path, r.decoded}
			if o, _ := taker(kept); o == "" {
				take(kept)
			}
		}
	}
	return accepted, conflicts
}

// Ranks of the files that claim pods, in the order they are served.
const (
	holding = iota // the file's pod is reported under the UID and full name it has now
	edited         // the file's pod was reported, but its UID or full name changed
	newFile        // no pod of the file is reported
)

// claimants lists the pods the files provide, in the order they are served:
// files still holding their reported pod, then those whose pod changed
// identity, then new files; within each, the file modified longest ago
// first (a copy is usually the newer file), then by path. So of several
// files newly claiming one name, as at the first scan after a start, the
// oldest wins.
func (s *Source) claimants(paths []string, byPath map[string]*reported) []candidate {
	type claimant struct {
		candidate
		rank    int
		modTime time.Time
	}
	var all []claimant
	for _, p := range paths {
		f := s.files[p]
		if f == nil || f.pod == nil {
			continue
		}
		rank := newFile
		if r := byPath[p]; r != nil {
			rank = edited
			if r.decoded.UID == f.pod.UID && fullName(r.decoded) == fullName(f.pod) {
				rank = holding
			}
		}
		all = append(all, claimant{candidate{p, f.pod}, rank, f.modTime})
	}
	slices.SortFunc(all, func(a, b claimant) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), a.modTime.Compare(b.modTime), cmp.Compare(a.path, b.path))
	})
	out := make([]candidate, len(all))
	for i, c := range all {
		out[i] = c.candidate
	}
	return out
}

func fullName(pod *v1.Pod) string { return kubetypes.FullName(pod.Name, pod.Namespace) }

// diff reports how accepted differs from the pods reported so far, and
// makes accepted the reported pods. Pods are matched by UID, their identity
// as in the kubelet's config merge: a file whose UID changed is a Remove and
// an Add; a pod whose UID stays is an Update when its decoded form (which
// has no config.seen) or its path changed, even if its name changed too
// (possible only with a UID written in the manifest). A pod whose file the
// watch saw removed (removed, by path) is a Remove, and an Add if a file
// at that path gives it again.
func (s *Source) diff(accepted map[types.UID]candidate, removed map[string]bool) []kubetypes.Change {
	var changes []kubetypes.Change
	for uid, old := range s.reported {
		if _, ok := accepted[uid]; !ok || removed[old.path] {
			changes = append(changes, kubetypes.Change{Op: kubetypes.Remove, Pod: old.pod, Path: old.path})
			delete(s.reported, uid)
		}
	}
	now := s.clock.Now().Format(time.RFC3339Nano)
	for uid, c := range accepted {
		old, ok := s.reported[uid]
		switch {
		case !ok:
			r := &reported{path: c.path, decoded: c.pod, pod: withSeen(c.pod, now)}
			s.reported[uid] = r
			changes = append(changes, kubetypes.Change{Op: kubetypes.Add, Pod: r.pod, Path: r.path})
		case old.decoded == c.pod && old.path == c.path:
			// the usual case: the file was not decoded again
		case old.path == c.path && equality.Semantic.DeepEqual(old.decoded, c.pod):
			old.decoded = c.pod // e.g. only comments changed
		default:
			// config.seen is when the pod was first seen, as in the kubelet.
			r := &reported{path: c.path, decoded: c.pod, pod: withSeen(c.pod, old.pod.Annotations[kubetypes.ConfigSeenAnnotation])}
			s.reported[uid] = r
			changes = append(changes, kubetypes.Change{Op: kubetypes.Update, Pod: r.pod, Path: r.path})
		}
	}
	sortChanges(changes)
	return changes
}

func withSeen(pod *v1.Pod, seen string) *v1.Pod {
	pod = pod.DeepCopy()
	pod.Annotations[kubetypes.ConfigSeenAnnotation] = seen
	return pod
}

// sortChanges orders Removes, then Updates, then Adds, each by path. A
// static pod replaced under the same full name (an edited or renamed
// manifest) is then killed before its successor is created, and the pod
// workers queue the successor until the old pod has terminated.
func sortChanges(changes []kubetypes.Change) {
	rank := map[kubetypes.Op]int{kubetypes.Remove: 0, kubetypes.Update: 1, kubetypes.Add: 2}
	slices.SortFunc(changes, func(a, b kubetypes.Change) int {
		return cmp.Or(cmp.Compare(rank[a.Op], rank[b.Op]), cmp.Compare(a.Path, b.Path))
	})
}
