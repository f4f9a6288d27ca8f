package kuberuntime

import (
	"context"
	"os"
	"path/filepath"
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/logs"
	"github.com/podlife/podlife/cri/volume"
)

// RemoveDeadPod removes, in the background, what the runtime holds of a
// deleted pod (nobody knows it any more) in which nothing runs: its
// containers, its sandboxes and its log directory, as the kubelet's garbage
// collector does once a pod is deleted. The background read comes first, and
// a pod of which anything runs is left alone. The caller never waits: the
// removal of thousands of pods deleted at once queues on the runtime
// without holding up housekeeping, and a pod whose removal is in flight is
// not removed twice at once.
func (s *Syncer) RemoveDeadPod(uid types.UID) {
	s.hooks.forgetPod(uid)
	s.inBackground(uid, func(ctx context.Context) {
		p, err := readPod(ctx, s.rt, uid)
		if err != nil {
			s.opts.Logger.Warn("removing a deleted pod: the runtime read failed; housekeeping tries again", "uid", uid, "err", err)
			return
		}
		ready := slices.ContainsFunc(p.Sandboxes, func(sb *runtimeapi.PodSandbox) bool {
			return sb.State == runtimeapi.PodSandboxState_SANDBOX_READY
		})
		if ready || len(p.RunningIDs()) > 0 {
			s.opts.Logger.Info("a deleted pod is not removed: something of it runs", "uid", uid)
			return
		}
		s.remove(ctx, p)
	})
}

// removeInBackground removes a pod just stopped, as read then.
func (s *Syncer) removeInBackground(p *cri.PodRuntime) {
	if len(p.Containers) == 0 && len(p.Sandboxes) == 0 {
		return
	}
	s.inBackground(p.UID, func(ctx context.Context) { s.remove(ctx, p) })
}

// inBackground runs remove for the pod in a goroutine Close waits for,
// within RemovalTimeout, unless a removal of the pod is in flight: removal
// is garbage collection, and a slow or failing runtime must not keep a
// deleted pod from being forgotten.
func (s *Syncer) inBackground(uid types.UID, remove func(ctx context.Context)) {
	s.removingMu.Lock()
	defer s.removingMu.Unlock()
	if s.removing[uid] {
		return
	}
	s.removing[uid] = true
	s.removals.Go(func() {
		defer func() {
			s.removingMu.Lock()
			delete(s.removing, uid)
			s.removingMu.Unlock()
		}()
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.RemovalTimeout)
		defer cancel()
		remove(ctx)
	})
}

// remove removes the pod's containers and sandboxes, then, once the
// runtime holds nothing of the pod, its log directory and its pod
// directory (hosts file, termination messages, volumes, unmounted first):
// what failed is left for a later removal, and a new incarnation of the
// UID (its manifest came back meanwhile) keeps the directories it writes
// to.
func (s *Syncer) remove(ctx context.Context, p *cri.PodRuntime) {
	removed := true
	for _, c := range p.Containers {
		if s.opts.LogRoot != "" {
			if err := logs.Unlink(s.opts.LogRoot, c.Id, c.GetMetadata().GetName(), c.GetLabels()); err != nil {
				s.opts.Logger.Warn("removing the container's log link failed", "container", c.Id, "err", err)
			}
		}
		if err := s.rt.RemoveContainer(ctx, c.Id); err != nil {
			removed = false
			s.opts.Logger.Warn("removing container failed; it is left to the runtime", "container", c.Id, "err", err)
		}
	}
	for _, sb := range p.Sandboxes {
		if err := s.rt.RemovePodSandbox(ctx, sb.Id); err != nil {
			removed = false
			s.opts.Logger.Warn("removing sandbox failed; it is left to the runtime", "sandbox", sb.Id, "err", err)
		}
	}
	if !removed {
		return
	}
	if rest, err := readPod(ctx, s.rt, p.UID); err == nil && len(rest.Sandboxes)+len(rest.Containers) == 0 {
		s.removeLogDir(p)
		s.dirRemoved(p.UID, volume.RemovePodDir(s.opts.PodsRoot, p.UID))
	}
}

// removeLogDir removes the pod's log directory: the one its runtime
// labels name, or, when the runtime holds nothing of the pod (its sandbox
// never came up), those its UID ends.
func (s *Syncer) removeLogDir(p *cri.PodRuntime) {
	if s.opts.LogRoot == "" {
		return
	}
	name, namespace := p.Names()
	dirs := []string{}
	if name == "" {
		found, err := logs.PodLogDirs(s.opts.LogRoot)
		if err != nil {
			s.opts.Logger.Warn("removing the pod log directory failed", "uid", p.UID, "err", err)
		}
		dirs = found[p.UID]
	} else {
		// The names come from the runtime's labels: logs.PodDir refuses
		// any that would lead out of the log root.
		dir, err := logs.PodDir(s.opts.LogRoot, &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: p.UID}})
		if err != nil {
			s.opts.Logger.Warn("not removing a pod log directory outside the log root", "uid", p.UID, "err", err)
			return
		}
		dirs = append(dirs, dir)
	}
	for _, dir := range dirs {
		// Nothing but a directory of the log root itself is removed.
		if filepath.Dir(dir) != filepath.Clean(s.opts.LogRoot) {
			s.opts.Logger.Warn("not removing a pod log directory outside the log root", "dir", dir, "uid", p.UID)
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			s.opts.Logger.Warn("removing the pod log directory failed", "dir", dir, "uid", p.UID, "err", err)
		}
	}
}

// PodsOnDisk lists the UIDs that have a pod directory or a log directory.
// The agent hands those of pods gone to RemoveDeadPod: a pod whose sandbox
// never came up left nothing in the runtime, but its directory, its
// volumes (a memory emptyDir's tmpfs) and maybe its log directory.
func (s *Syncer) PodsOnDisk() ([]types.UID, error) {
	uids, err := volume.PodDirUIDs(s.opts.PodsRoot)
	if err != nil || s.opts.LogRoot == "" {
		return uids, err
	}
	dirs, err := logs.PodLogDirs(s.opts.LogRoot)
	for _, uid := range uids {
		delete(dirs, uid)
	}
	for uid := range dirs {
		uids = append(uids, uid)
	}
	slices.Sort(uids)
	return uids, err
}

// dirRemoved logs the failure err to remove the directory of pod uid once
// per pod and error, not at every housekeeping that retries it; nil (the
// directory gone) forgets the pod.
func (s *Syncer) dirRemoved(uid types.UID, err error) {
	s.removingMu.Lock()
	defer s.removingMu.Unlock()
	if err == nil {
		delete(s.dirFailed, uid)
		return
	}
	if s.dirFailed[uid] == err.Error() {
		s.opts.Logger.Debug("removing the pod directory failed again", "uid", uid, "err", err)
		return
	}
	s.dirFailed[uid] = err.Error()
	s.opts.Logger.Warn("removing the pod directory failed; housekeeping retries it", "uid", uid, "err", err)
}
