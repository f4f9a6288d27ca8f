package volume

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/podlife/podlife/cri/mount"
	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// errBidirectional is the API server's refusal of Bidirectional
// propagation in a container that is not privileged (its
// validateMountPropagation): a static pod is checked here the same.
const errBidirectional = "Bidirectional mount propagation is available only to privileged containers"

// checkPropagation refuses a propagation mode the API does not know, and
// Bidirectional in a container that is not privileged, with the API
// server's words.
func checkPropagation(c *v1.Container, mode *v1.MountPropagationMode) error {
	if mode == nil {
		return nil
	}
	switch *mode {
	case v1.MountPropagationNone, v1.MountPropagationHostToContainer:
		return nil
	case v1.MountPropagationBidirectional:
		if sc := c.SecurityContext; sc == nil || sc.Privileged == nil || !*sc.Privileged {
			return fmt.Errorf("mountPropagation: Forbidden: %s", errBidirectional)
		}
		return nil
	}
	return fmt.Errorf("mountPropagation: Unsupported value: %q: supported values: %q, %q, %q", *mode,
		v1.MountPropagationBidirectional, v1.MountPropagationHostToContainer, v1.MountPropagationNone)
}

// propagation is the runtime's mode for mode (the kubelet's
// translateMountPropagation): None and unset are private (rprivate),
// HostToContainer rslave, Bidirectional rshared.
func propagation(mode *v1.MountPropagationMode) runtimeapi.MountPropagation {
	switch {
	case mode == nil:
		return runtimeapi.MountPropagation_PROPAGATION_PRIVATE
	case *mode == v1.MountPropagationHostToContainer:
		return runtimeapi.MountPropagation_PROPAGATION_HOST_TO_CONTAINER
	case *mode == v1.MountPropagationBidirectional:
		return runtimeapi.MountPropagation_PROPAGATION_BIDIRECTIONAL
	}
	return runtimeapi.MountPropagation_PROPAGATION_PRIVATE
}

// NeedsSharedRoot reports whether a container of pod mounts a volume with
// HostToContainer or Bidirectional propagation: the runtime then wants
// the volume's host directory on a shared mount (containerd refuses
// Bidirectional from a mount that is not shared, HostToContainer from one
// neither shared nor a slave).
func NeedsSharedRoot(pod *v1.Pod) bool {
	for _, c := range allContainers(pod) {
		for _, m := range c.VolumeMounts {
			if propagation(m.MountPropagation) != runtimeapi.MountPropagation_PROPAGATION_PRIVATE {
				return true
			}
		}
	}
	return false
}

// MakeRShared puts dir on a mount with shared propagation, as the kubelet
// does with its root directory at start (hostutil's DoMakeRShared): when
// the mount dir is on is not shared, dir is bind-mounted on itself and
// made rshared. The volumes under dir (emptyDirs) can then propagate
// mounts between the host and the containers. The bind mount stays, as the
// kubelet's does.
//
// podlife makes it when the first pod needs it, when other pods' volumes
// may be mounted under dir already: the bind takes copies of them (MS_REC)
// and the originals, which it hides (their paths now lead into the bind),
// are detached through a handle on dir taken before it. Left in place,
// they could be neither unmounted nor removed through their paths.
func MakeRShared(dir string) error {
	shared, err := onSharedMount(dir, "/proc/self/mountinfo")
	if err != nil || shared {
		return err
	}
	points, err := mount.Points()
	if err != nil {
		return err
	}
	beneath, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, err)
	}
	defer unix.Close(beneath)
	if err := unix.Mount(dir, dir, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind-mount %s on itself: %w", dir, err)
	}
	if err := unix.Mount("", dir, "", unix.MS_SHARED|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("make %s rshared: %w", dir, err)
	}
	var failed []string
	for _, p := range points {
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." || !within(p, dir) {
			continue
		}
		hidden := fmt.Sprintf("/proc/self/fd/%d/%s", beneath, rel)
		if err := unix.Unmount(hidden, unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW); err != nil && err != unix.EINVAL && err != unix.ENOENT {
			failed = append(failed, fmt.Sprintf("%s: %v", p, err))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("detach the mounts the bind of %s hides: %s", dir, strings.Join(failed, "; "))
	}
	return nil
}

// onSharedMount reports whether dir is on a mount whose optional fields in
// mountinfo say shared: the mount point that is dir's longest prefix.
func onSharedMount(dir, mountinfo string) (bool, error) {
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return false, err
	}
	f, err := os.Open(mountinfo)
	if err != nil {
		return false, err
	}
	defer f.Close()
	best, shared := "", false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// id parent major:minor root mountpoint options optional... - fstype source super
		fields := strings.Fields(sc.Text())
		if len(fields) < 7 {
			continue
		}
		point := mount.UnescapePath(fields[4])
		if !within(dir, point) || len(point) < len(best) {
			continue
		}
		best, shared = point, false
		for _, opt := range fields[6:] {
			if opt == "-" {
				break
			}
			if strings.HasPrefix(opt, "shared:") {
				shared = true
			}
		}
	}
	if err := sc.Err(); err != nil {
		return false, err
	}
	if best == "" {
		return false, fmt.Errorf("no mount of %s in %s", dir, mountinfo)
	}
	return shared, nil
}

// within reports whether path is point or beneath it.
func within(path, point string) bool {
	if point == "/" {
		return true
	}
	return path == point || strings.HasPrefix(path, point+"/")
}
