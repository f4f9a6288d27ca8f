// Package volume sets up a pod's volumes on the node and makes the
// runtime's mounts of them (kubelet: pkg/kubelet/volumemanager, the
// emptyDir, hostPath, downwardAPI, secret, configmap and projected volume
// plugins, SetVolumeOwnership of pkg/volume, and subpath): it refuses
// what podlife cannot mount, makes an emptyDir (a tmpfs with medium
// Memory), checks a hostPath against its type, writes the files of a
// downwardAPI, secret (on a tmpfs), configMap or projected volume (a
// service account token, Secrets' and ConfigMaps' keys, downward API
// values) atomically, gives them the pod's fsGroup, bind-mounts a subPath
// opened beneath its volume, and removes the pod's directory once nothing
// is mounted in it. What it reads from the API server comes through the
// getters of API, which the agent implements (agent/token,
// agent/objectcache): this package talks to no API server itself.
package volume

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/mount"
)

// The pod's volumes, as the kubelet sets them up before the pod's sandbox:
//
//	<pod dir>/volumes/kubernetes.io~empty-dir/<name>      an emptyDir (a tmpfs with medium Memory)
//	<pod dir>/volumes/kubernetes.io~downward-api/<name>   a downwardAPI volume's files
//	<pod dir>/volumes/kubernetes.io~projected/<name>      a projected volume's files, on a tmpfs (projected.go)
//	<pod dir>/volumes/kubernetes.io~secret/<name>         a secret volume's files, on a tmpfs (objects.go)
//	<pod dir>/volumes/kubernetes.io~configmap/<name>      a configMap volume's files (objects.go)
//	<pod dir>/volume-subpaths/<name>/<container>/<index>  a subPath mount's bind mount (subpath.go)
//
// A hostPath volume is the node's path itself. Every other volume type
// fails the pod's sync: the pod does not start without a volume it asked
// for.

const (
	emptyDirPlugin    = "kubernetes.io~empty-dir"
	downwardAPIPlugin = "kubernetes.io~downward-api"
)

// Volume is a volume set up on the node: where its content is, and
// whether every mount of it is read-only (a downwardAPI or projected
// volume's files are the kubelet's, never the container's to change).
type Volume struct {
	hostPath string
	readOnly bool
}

// EmptyDirs are the directories on the node of the pod's emptyDir volumes
// among vols (SetUp's), by volume name: where a fileKeyRef's env file is
// read (cri/envvars). None without vols (the embedded runtime).
func EmptyDirs(pod *v1.Pod, vols map[string]Volume) map[string]string {
	dirs := map[string]string{}
	for _, v := range pod.Spec.Volumes {
		if pv, ok := vols[v.Name]; ok && v.EmptyDir != nil {
			dirs[v.Name] = pv.hostPath
		}
	}
	return dirs
}

// Check refuses what podlife cannot mount: a volume whose type is
// not supported, a volume name that cannot be part of a path or is used
// twice, and a volumeMount naming no volume, with a subPath that is not a
// relative path beneath the volume, with a subPathExpr, or with a mount
// propagation but None. Manifest validation does not check volumes; the
// kubelet's apiserver would refuse most of these.
func Check(pod *v1.Pod) error {
	names := map[string]bool{}
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if err := cri.PathElement(pod, "volume name", v.Name); err != nil {
			return err
		}
		if names[v.Name] {
			return fmt.Errorf("pod %s/%s: volume name %q is used twice", pod.Namespace, pod.Name, v.Name)
		}
		names[v.Name] = true
		if err := checkVolumeSource(pod, i, v); err != nil {
			return err
		}
	}
	for _, c := range allContainers(pod) {
		for _, m := range c.VolumeMounts {
			if err := checkVolumeMount(pod, c, &m, names); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkVolumeSource refuses a volume of a type podlife does not mount, or
// with no type at all; i is its index in the pod's volumes.
func checkVolumeSource(pod *v1.Pod, i int, v *v1.Volume) error {
	kind := volumeType(&v.VolumeSource)
	switch {
	case kind == "":
		return fmt.Errorf("pod %s/%s: volume %q has no volume type", pod.Namespace, pod.Name, v.Name)
	case v.EmptyDir != nil:
		if m := v.EmptyDir.Medium; m != v1.StorageMediumDefault && m != v1.StorageMediumMemory {
			return fmt.Errorf("pod %s/%s: volume %q: emptyDir medium %q is not supported by podlife", pod.Namespace, pod.Name, v.Name, m)
		}
	case v.HostPath != nil:
		p := v.HostPath.Path
		if !filepath.IsAbs(p) || hasBackstep(p) {
			return fmt.Errorf("pod %s/%s: volume %q: hostPath %q must be an absolute path without \"..\"", pod.Namespace, pod.Name, v.Name, p)
		}
	case v.DownwardAPI != nil:
		if v.DownwardAPI.DefaultUser != nil {
			return fmt.Errorf("pod %s/%s: volume %q: spec.volumes[%d].downwardAPI.defaultUser: %w", pod.Namespace, pod.Name, v.Name, i, errUserFields)
		}
		for k, item := range v.DownwardAPI.Items {
			if err := checkFilePath(item.Path); err != nil {
				return fmt.Errorf("pod %s/%s: volume %q: spec.volumes[%d].downwardAPI.items[%d].path: %w", pod.Namespace, pod.Name, v.Name, i, k, err)
			}
			if item.User != nil {
				return fmt.Errorf("pod %s/%s: volume %q: spec.volumes[%d].downwardAPI.items[%d].user: %w", pod.Namespace, pod.Name, v.Name, i, k, errUserFields)
			}
		}
	case v.Projected != nil:
		if err := checkProjected(i, v.Projected); err != nil {
			return fmt.Errorf("pod %s/%s: volume %q: %w", pod.Namespace, pod.Name, v.Name, err)
		}
	case v.Secret != nil, v.ConfigMap != nil:
		if err := checkObjectVolume(i, v); err != nil {
			return fmt.Errorf("pod %s/%s: volume %q: %w", pod.Namespace, pod.Name, v.Name, err)
		}
	default:
		return fmt.Errorf("pod %s/%s: volume %q: volume type %s is not supported by podlife", pod.Namespace, pod.Name, v.Name, kind)
	}
	return nil
}

// checkVolumeMount refuses a mount podlife cannot make.
func checkVolumeMount(pod *v1.Pod, c *v1.Container, m *v1.VolumeMount, volumes map[string]bool) error {
	where := fmt.Sprintf("pod %s/%s: container %q: volumeMount %q at %q", pod.Namespace, pod.Name, c.Name, m.Name, m.MountPath)
	switch {
	case !volumes[m.Name]:
		return fmt.Errorf("%s: the pod has no volume %q", where, m.Name)
	case !path.IsAbs(m.MountPath):
		return fmt.Errorf("%s: mountPath must be an absolute path", where)
	case m.SubPathExpr != "":
		return fmt.Errorf("%s: subPathExpr is not supported by podlife", where)
	case m.SubPath != "" && !localPath(m.SubPath):
		return fmt.Errorf("%s: subPath %q must be a relative path without \"..\"", where, m.SubPath)
	}
	if err := checkPropagation(c, m.MountPropagation); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if err := checkRecursiveReadOnly(m); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	return nil
}

// volumeType is the API's name of the volume's type ("emptyDir",
// "secret", "persistentVolumeClaim"...): the JSON name of its one source
// that is set, "" for none.
func volumeType(src *v1.VolumeSource) string {
	v := reflect.ValueOf(src).Elem()
	for i := range v.NumField() {
		if !v.Field(i).IsNil() {
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
			return name
		}
	}
	return ""
}

// localPath reports whether p is a relative path with no ".." element
// (the apiserver's validateLocalDescendingPath).
func localPath(p string) bool {
	return p != "" && !path.IsAbs(p) && !hasBackstep(p)
}

// filePath reports whether p may be a path of a file the agent writes
// into a volume: a local path with no element starting with "..", which
// would collide with the atomic writer's "..data" and timestamped
// directories (the kubelet's AtomicWriter refuses those too).
func filePath(p string) bool {
	if !localPath(p) {
		return false
	}
	for _, e := range strings.Split(p, "/") {
		if strings.HasPrefix(e, "..") {
			return false
		}
	}
	return true
}

// hasBackstep reports whether p has a ".." element.
func hasBackstep(p string) bool {
	for _, e := range strings.Split(p, "/") {
		if e == ".." {
			return true
		}
	}
	return false
}

// allContainers are the pod's init containers, then its regular ones.
func allContainers(pod *v1.Pod) []*v1.Container {
	var cs []*v1.Container
	for i := range pod.Spec.InitContainers {
		cs = append(cs, &pod.Spec.InitContainers[i])
	}
	for i := range pod.Spec.Containers {
		cs = append(cs, &pod.Spec.Containers[i])
	}
	return cs
}

// SetUpError is a volume SetUp could not set up: its name and why (the
// kubelet's MountVolume.SetUp failure, which its event names).
type SetUpError struct {
	Volume string
	Err    error
}

func (e *SetUpError) Error() string { return fmt.Sprintf("volume %q: %v", e.Volume, e.Err) }

func (e *SetUpError) Unwrap() error { return e.Err }

// SetUp makes the pod's volumes on the node, in its directory under
// podsRoot, as often as the pod is synced: an emptyDir is made once (and
// mounted, with medium Memory), a hostPath is checked against its type,
// and the files of a downwardAPI, secret, configMap or projected volume
// follow the pod's labels and annotations, its service account token
// (refreshed by api's token getter) and the Secrets and ConfigMaps it
// shows; the pod's fsGroup owns them all but a hostPath (ownership.go).
// allocatable is the node's, for a Memory emptyDir's size and the limits
// a container does not set. It returns the volumes by name. Without
// podsRoot (the embedded runtime, which mounts nothing) no file is
// written, but what the volumes show is still read: a token or an object
// the API server refuses fails the sync there as it does on a real
// runtime.
func SetUp(ctx context.Context, podsRoot string, pod *v1.Pod, allocatable v1.ResourceList, api API) (map[string]Volume, error) {
	if podsRoot == "" {
		for i := range pod.Spec.Volumes {
			if _, _, err := volumeFiles(ctx, pod, i, allocatable, api); err != nil {
				return nil, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, &SetUpError{Volume: pod.Spec.Volumes[i].Name, Err: err})
			}
		}
		return nil, nil
	}
	dir, err := cri.PodDir(podsRoot, pod)
	if err != nil {
		return nil, err
	}
	own := podOwnership(pod)
	vols := map[string]Volume{}
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		var pv Volume
		var err error
		switch {
		case v.EmptyDir != nil:
			pv.hostPath = filepath.Join(dir, "volumes", emptyDirPlugin, v.Name)
			err = setUpEmptyDir(pv.hostPath, v.EmptyDir, allocatable[v1.ResourceMemory], own)
		case v.HostPath != nil:
			pv.hostPath = v.HostPath.Path
			err = checkHostPath(v.HostPath)
		default:
			var plugin string
			var files map[string]volumeFile
			if plugin, files, err = volumeFiles(ctx, pod, i, allocatable, api); err == nil {
				pv.hostPath, pv.readOnly = filepath.Join(dir, "volumes", plugin, v.Name), true
				err = writeVolume(pv.hostPath, plugin, files, own)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, &SetUpError{Volume: v.Name, Err: err})
		}
		vols[v.Name] = pv
	}
	return vols, nil
}

// volumeFiles are the files of the i-th volume, one the agent writes
// (downwardAPI, secret, configMap, projected), and its plugin's directory
// name.
func volumeFiles(ctx context.Context, pod *v1.Pod, i int, allocatable v1.ResourceList, api API) (string, map[string]volumeFile, error) {
	v := &pod.Spec.Volumes[i]
	switch {
	case v.DownwardAPI != nil:
		files, err := downwardAPIFiles(pod, v.DownwardAPI, allocatable)
		return downwardAPIPlugin, files, err
	case v.Projected != nil:
		files, err := projectedFiles(ctx, pod, i, v.Projected, allocatable, api)
		return projectedPlugin, files, err
	case v.Secret != nil:
		files, err := objectVolumeFiles(ctx, pod, v, api)
		return secretPlugin, files, err
	case v.ConfigMap != nil:
		files, err := objectVolumeFiles(ctx, pod, v, api)
		return configMapPlugin, files, err
	}
	return "", nil, nil
}

// writeVolume writes files into dir atomically; a secret or projected
// volume (Secrets, tokens) is a tmpfs, as the kubelet makes it, of the
// kernel's default size: a Secret is at most 1 MiB.
func writeVolume(dir, plugin string, files map[string]volumeFile, own ownership) error {
	if plugin == secretPlugin || plugin == projectedPlugin {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return err
		}
		if err := mount.Tmpfs(dir, 0); err != nil {
			return err
		}
	}
	return writeAtomically(dir, files, own)
}

// setUpEmptyDir makes an emptyDir's directory, mode 0777 as the kubelet
// makes it, and with medium Memory mounts a tmpfs on it once, of
// sizeLimit's size or else the node's allocatable memory (the kubelet's,
// without its pod memory limit). A disk emptyDir's sizeLimit is not
// enforced: the kubelet evicts the pod that exceeds it, and podlife has no
// eviction. The pod's fsGroup gets it when it is made, once.
func setUpEmptyDir(dir string, src *v1.EmptyDirVolumeSource, allocatable resource.Quantity, own ownership) error {
	_, err := os.Lstat(dir)
	made := errors.Is(err, fs.ErrNotExist)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	// The directory is 0777 before a tmpfs is mounted on it, as the
	// kubelet's setupDir and setupTmpfs go: the tmpfs's root keeps its own
	// mode (1777).
	if made {
		if err := os.Chmod(dir, 0o777); err != nil {
			return err
		}
	}
	if src.Medium == v1.StorageMediumMemory {
		size := allocatable
		if l := src.SizeLimit; l != nil && l.Sign() > 0 && (size.IsZero() || l.Cmp(size) < 0) {
			size = *l
		}
		if err := mount.Tmpfs(dir, size.Value()); err != nil {
			return err
		}
	}
	if !made {
		return nil
	}
	if own.fsGroup != nil {
		if err := changeOwnership(dir, *own.fsGroup, false); err != nil {
			return fmt.Errorf("fsGroup %d: %w", *own.fsGroup, err)
		}
	}
	return nil
}

// RemovePodDir removes the pod's directory under podsRoot, if any, once
// nothing is mounted in it any more (it unmounts what the syncer mounted
// there: tmpfs, subPath bind mounts). The UID comes from the runtime's
// labels: cri.PodDir refuses one that would lead out of podsRoot, and
// nothing but a directory of podsRoot itself is removed.
func RemovePodDir(podsRoot string, uid types.UID) error {
	if podsRoot == "" {
		return nil
	}
	dir, err := cri.PodDir(podsRoot, &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}})
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

// TearDown unmounts and removes the volumes of a pod whose containers all
// stopped (its volumes and volume-subpaths directories), as the kubelet's
// volume manager tears down a terminated pod's volumes before the pod may
// be deleted: a memory emptyDir's tmpfs goes with its directory. The pod's
// directory itself (its hosts file, its containers' termination logs)
// stays until the pod is removed (RemovePodDir). A mount that cannot be
// undone keeps everything in place: removing through it would remove what
// it mounts.
func TearDown(podsRoot string, uid types.UID) error {
	if podsRoot == "" {
		return nil
	}
	dir, err := cri.PodDir(podsRoot, &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}})
	if err != nil {
		return err
	}
	for _, sub := range []string{"volume-subpaths", "volumes"} {
		path := filepath.Join(dir, sub)
		if err := mount.UnmountAllUnder(path); err != nil {
			return fmt.Errorf("pod %s: tear down its volumes: %w", uid, err)
		}
		if err := os.RemoveAll(path); err != nil {
			return fmt.Errorf("pod %s: tear down its volumes: %w", uid, err)
		}
	}
	return nil
}

// PodDirUIDs lists the UIDs that have a directory under podsRoot, so that
// the directory of a pod the runtime never held anything of (its sandbox
// never came up) is found once the pod is gone, as the kubelet's
// cleanupOrphanedPodDirs finds it. A name with "_" is a pod's log
// directory (cri/logs shares the root), not a pod directory; a symbolic
// link is no pod directory either.
func PodDirUIDs(podsRoot string) ([]types.UID, error) {
	if podsRoot == "" {
		return nil, nil
	}
	entries, err := os.ReadDir(podsRoot)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pod directories: %w", err)
	}
	var out []types.UID
	for _, e := range entries {
		if e.IsDir() && !strings.Contains(e.Name(), "_") {
			out = append(out, types.UID(e.Name()))
		}
	}
	return out, nil
}
