package kuberuntime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/mount"
)

// The files the syncer makes for a pod live in one directory per pod under
// Options.PodsRoot, as the kubelet's do under /var/lib/kubelet/pods:
//
//	<PodsRoot>/<uid>/etc-hosts                      the pod's /etc/hosts
//	<PodsRoot>/<uid>/containers/<name>/<attempt>    a container instance's termination message
//	<PodsRoot>/<uid>/volumes/..., volume-subpaths/...  the pod's volumes (volumes.go)
//
// The directory goes with the pod: removed with its sandboxes and
// containers (remove), never while any of them exists.

// podDir is the pod's directory under podsRoot. It refuses a UID that would
// lead the path elsewhere.
func podDir(podsRoot string, pod *v1.Pod) (string, error) {
	if err := cri.PathElement(pod, "metadata.uid", string(pod.UID)); err != nil {
		return "", err
	}
	return filepath.Join(podsRoot, string(pod.UID)), nil
}

// terminationMessageFile is where the attempt-th instance of container name
// of pod finds its termination message on the host.
func terminationMessageFile(podsRoot string, pod *v1.Pod, name string, attempt uint32) (string, error) {
	dir, err := podDir(podsRoot, pod)
	if err != nil {
		return "", err
	}
	if err := cri.PathElement(pod, "container name", name); err != nil {
		return "", err
	}
	return filepath.Join(dir, "containers", name, strconv.FormatUint(uint64(attempt), 10)), nil
}

// removePodDir removes the pod's directory under podsRoot, if any, once
// nothing is mounted in it any more (the syncer unmounts what it mounted
// there: tmpfs, subPath bind mounts). The
// UID comes from the runtime's labels: podDir refuses one that would lead
// out of podsRoot, and nothing but a directory of podsRoot itself is
// removed.
func removePodDir(podsRoot string, uid types.UID) error {
	if podsRoot == "" {
		return nil
	}
	dir, err := podDir(podsRoot, &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}})
	if err != nil {
		return err
	}
	if filepath.Dir(dir) != filepath.Clean(podsRoot) {
		return fmt.Errorf("pod %s: not removing %s, which is not a directory of %s", uid, dir, podsRoot)
	}
	// Its volumes' mounts go first: removing through one would remove
	// what it mounts (a hostPath's files under a subPath).
	if err := mount.UnmountAllUnder(dir); err != nil {
		return fmt.Errorf("pod %s: not removing %s: %w", uid, dir, err)
	}
	return os.RemoveAll(dir)
}

// podFileMounts are the mounts of the pod's files into the attempt-th
// instance of container c: c's volumeMounts, the pod's /etc/hosts (unless
// a volume is mounted there) and c's termination message file, made now
// (the kubelet's makeMounts). None without PodsRoot.
func (s *Syncer) podFileMounts(ctx context.Context, ps *podSync, c *v1.Container, attempt uint32) ([]*runtimeapi.Mount, error) {
	if s.opts.PodsRoot == "" {
		return nil, nil
	}
	mounts, err := volumeMounts(s.opts.PodsRoot, ps.pod, c, ps.vols)
	if err != nil {
		return nil, err
	}
	if !mountsAt(c, etcHostsPath) {
		hosts, err := s.hostsMount(ctx, ps)
		if err != nil {
			return nil, err
		}
		if hosts != nil {
			mounts = append(mounts, hosts)
		}
	}
	msg, err := terminationMessageMount(s.opts.PodsRoot, ps.pod, c, attempt)
	if err != nil {
		return nil, err
	}
	if msg != nil {
		mounts = append(mounts, msg)
	}
	return mounts, nil
}

// messages reads the termination messages of the files podFileMounts made
// and, as a fallback, of the container logs.
func (s *Syncer) messages() messageReader {
	return messageReader{podsRoot: s.opts.PodsRoot, logRoot: s.opts.LogRoot}
}
