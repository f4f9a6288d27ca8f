package manifests

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/worker"
)

// candidate is a pod a file provides this scan (its last good decode).
type candidate struct {
	path string
	pod  *v1.Pod
}

// resolve picks the pods of this scan: one per file that has a good
// version, except that a file whose pod has the UID or the full name of a
// pod of a file sorting earlier is rejected (as the kubelet rejects the
// later of two pods with one full name). The choice depends only on the
// files, not on which pod runs already, so it is the same after a restart.
func (s *Source) resolve(paths []string) (map[types.UID]candidate, map[string]error) {
	accepted := map[types.UID]candidate{}
	byName := map[string]string{} // full name → path
	conflicts := map[string]error{}
	for _, p := range paths {
		f := s.files[p]
		if f == nil || f.pod == nil {
			continue
		}
		uid, full := f.pod.UID, worker.FullName(f.pod.Name, f.pod.Namespace)
		if other, ok := accepted[uid]; ok {
			conflicts[p] = fileErr(p, fmt.Errorf("pod %s has UID %s, already used by %s (pod %s); ignoring %s",
				full, uid, other.path, worker.FullName(other.pod.Name, other.pod.Namespace), p))
			continue
		}
		if other, ok := byName[full]; ok {
			conflicts[p] = fileErr(p, fmt.Errorf("pod %s is already defined by %s; ignoring %s", full, other, p))
			continue
		}
		accepted[uid] = candidate{path: p, pod: f.pod}
		byName[full] = p
	}
	return accepted, conflicts
}

// diff reports how accepted differs from the pods reported so far, and
// makes accepted the reported pods. Pods are matched by UID, their identity
// as in the kubelet's config merge: a file whose UID changed is a Remove and
// an Add; a pod whose UID stays is an Update when its decoded form (which
// has no config.seen) or its path changed, even if its name changed too
// (possible only with a UID written in the manifest).
func (s *Source) diff(accepted map[types.UID]candidate) []Change {
	var changes []Change
	for uid, old := range s.reported {
		if _, ok := accepted[uid]; !ok {
			changes = append(changes, Change{Op: Remove, Pod: old.pod, Path: old.path})
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
			changes = append(changes, Change{Op: Add, Pod: r.pod, Path: r.path})
		case old.decoded == c.pod && old.path == c.path:
			// the usual case: the file was not decoded again
		case old.path == c.path && equality.Semantic.DeepEqual(old.decoded, c.pod):
			old.decoded = c.pod // e.g. only comments changed
		default:
			// config.seen is when the pod was first seen, as in the kubelet.
			r := &reported{path: c.path, decoded: c.pod, pod: withSeen(c.pod, old.pod.Annotations[ConfigSeenAnnotation])}
			s.reported[uid] = r
			changes = append(changes, Change{Op: Update, Pod: r.pod, Path: r.path})
		}
	}
	sortChanges(changes)
	return changes
}

func withSeen(pod *v1.Pod, seen string) *v1.Pod {
	pod = pod.DeepCopy()
	pod.Annotations[ConfigSeenAnnotation] = seen
	return pod
}

// sortChanges orders Removes, then Updates, then Adds, each by path. A
// static pod replaced under the same full name (an edited or renamed
// manifest) is then killed before its successor is created, and the pod
// workers queue the successor until the old pod has terminated.
func sortChanges(changes []Change) {
	rank := map[Op]int{Remove: 0, Update: 1, Add: 2}
	slices.SortFunc(changes, func(a, b Change) int {
		return cmp.Or(cmp.Compare(rank[a.Op], rank[b.Op]), cmp.Compare(a.Path, b.Path))
	})
}
