// Package mount lists, makes and removes the mounts of the agent's mount
// namespace that pods' volumes need (kubelet: k8s.io/mount-utils): a Memory
// emptyDir's tmpfs, a subPath's bind mount, and their removal. Every mount
// the syncer makes in a pod's directory is gone before the directory is
// removed, or the removal would reach into what it mounts (a hostPath's
// files). RuntimeSeesMounts checks that the runtime sees these mounts
// (propagation.go; the kubelet only documents that its root directory
// must be shared).
package mount

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Tmpfs mounts a tmpfs of size bytes (0: the kernel's default, half
// the memory) on dir, unless dir is a mount point already (a previous
// sync mounted it). Its root has the kernel's mode, 1777, as the
// kubelet's tmpfs volumes have: a subPath made beneath it inherits the
// sticky bit from there.
func Tmpfs(dir string, size int64) error {
	mounted, err := isMountPoint(dir)
	if err != nil || mounted {
		return err
	}
	var opts string
	if size > 0 {
		opts = "size=" + strconv.FormatInt(size, 10)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("mount a tmpfs on %s: %w", dir, err)
	}
	return nil
}

// isMountPoint reports whether path is the mount point of a mount of the
// agent's mount namespace.
func isMountPoint(path string) (bool, error) {
	points, err := Points()
	if err != nil {
		return false, err
	}
	return slices.Contains(points, filepath.Clean(path)), nil
}

// Points are the mount points of the agent's mount namespace
// (/proc/self/mountinfo's fifth field, octal escapes decoded).
func Points() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		points = append(points, UnescapePath(fields[4]))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read /proc/self/mountinfo: %w", err)
	}
	return points, nil
}

// UnescapePath decodes mountinfo's \ooo escapes (of space, tab, newline
// and backslash) in a mount point.
func UnescapePath(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// UnmountAllUnder unmounts every mount beneath dir, the deepest first, and
// fails naming those that stay.
func UnmountAllUnder(dir string) error {
	points, err := Points()
	if err != nil {
		return err
	}
	prefix := filepath.Clean(dir) + string(filepath.Separator)
	var under []string
	for _, p := range points {
		if strings.HasPrefix(p, prefix) {
			under = append(under, p)
		}
	}
	// Deepest first; a path mounted twice is unmounted twice.
	slices.SortFunc(under, func(a, b string) int { return len(b) - len(a) })
	var failed []string
	for _, p := range under {
		if err := unix.Unmount(p, unix.UMOUNT_NOFOLLOW); err != nil && err != unix.EINVAL {
			failed = append(failed, fmt.Sprintf("%s: %v", p, err))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("unmount %s", strings.Join(failed, "; "))
	}
	return nil
}

// UnmountAllAt unmounts every mount on path (a subPath's earlier bind
// mounts).
func UnmountAllAt(path string) error {
	for {
		mounted, err := isMountPoint(path)
		if err != nil || !mounted {
			return err
		}
		if err := unix.Unmount(path, unix.UMOUNT_NOFOLLOW); err != nil {
			return fmt.Errorf("unmount %s: %w", path, err)
		}
	}
}
