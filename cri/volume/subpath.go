package volume

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/podlife/podlife/cri/mount"
)

// A subPath mount is the kubelet's: the runtime, as root, would follow
// every symbolic link of "<volume>/<subPath>", and the container that
// writes to the volume (or, for a hostPath, any user who can) could turn
// an element of the path into a link to /etc between a check and the
// mount. So the syncer opens the subPath beneath the volume without ever
// leaving it (openat2 RESOLVE_BENEATH: no "..", absolute link or link out
// of the volume), makes its missing directories the same way, and
// bind-mounts what it opened, by its file descriptor, to a path of its
// own under the pod's directory, which is what the runtime mounts.

// subPathMount bind-mounts subPath of the volume at volumePath to target
// (<pod dir>/volume-subpaths/<volume>/<container>/<index>) and returns
// target. A missing subPath is made a directory with the volume's mode.
// A bind mount left on target by an earlier instance of the container is
// replaced: the subPath is resolved anew.
func subPathMount(volumePath, subPath, target string) (string, error) {
	fd, err := openBeneath(volumePath, subPath)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "", err
	}
	if err := mount.UnmountAllAt(target); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o750); err != nil {
		return "", err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		err = os.Mkdir(target, 0o750)
	} else {
		var f *os.File
		if f, err = os.OpenFile(target, os.O_CREATE|os.O_RDONLY, 0o640); err == nil {
			err = f.Close()
		}
	}
	if err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	source := "/proc/self/fd/" + strconv.Itoa(fd)
	if err := unix.Mount(source, target, "", unix.MS_BIND, ""); err != nil {
		return "", fmt.Errorf("bind-mount subPath %q of %s to %s: %w", subPath, volumePath, target, err)
	}
	return target, nil
}

// openBeneath opens subPath beneath the volume at volumePath (O_PATH),
// making its missing elements directories with the volume's mode, as the
// kubelet does. No element is resolved outside the volume: "..", an
// absolute symbolic link or a link leading out of the volume is refused.
func openBeneath(volumePath, subPath string) (int, error) {
	root, err := unix.Open(volumePath, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open volume %s: %w", volumePath, err)
	}
	defer unix.Close(root)
	var st unix.Stat_t
	if err := unix.Fstat(root, &st); err != nil {
		return -1, err
	}
	how := &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	fd, err := unix.Openat2(root, subPath, how)
	if err == nil {
		return fd, nil
	}
	if !errors.Is(err, unix.ENOENT) {
		return -1, subPathError(subPath, volumePath, err)
	}
	// Make the missing directories one element at a time, each beneath
	// the one before.
	dir, err := unix.Dup(root)
	if err != nil {
		return -1, err
	}
	for _, elem := range splitPath(subPath) {
		next, err := unix.Openat2(dir, elem, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: how.Resolve})
		if errors.Is(err, unix.ENOENT) {
			if err = unix.Mkdirat(dir, elem, st.Mode&0o7777); err == nil || errors.Is(err, unix.EEXIST) {
				next, err = unix.Openat2(dir, elem, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC | unix.O_DIRECTORY, Resolve: how.Resolve})
			}
			if err == nil {
				// Mkdirat's mode is cut by the umask; the directory is
				// changed through what was opened beneath the volume,
				// not by its name, which could be a link by now. It
				// gets the volume root's mode whole, setgid (fsGroup)
				// and sticky (a tmpfs) included, as the kubelet's
				// SafeMakeDir gives it.
				if err = unix.Chmod("/proc/self/fd/"+strconv.Itoa(next), st.Mode&0o7777); err != nil {
					unix.Close(next)
				}
			}
		}
		unix.Close(dir)
		if err != nil {
			return -1, subPathError(subPath, volumePath, err)
		}
		dir = next
	}
	return dir, nil
}

// splitPath are the elements of a relative path, without empty ones and
// ".".
func splitPath(p string) []string {
	var elems []string
	for _, e := range strings.Split(p, "/") {
		if e != "" && e != "." {
			elems = append(elems, e)
		}
	}
	return elems
}

// subPathError says why subPath could not be opened beneath the volume.
func subPathError(subPath, volumePath string, err error) error {
	if errors.Is(err, unix.EXDEV) || errors.Is(err, unix.ELOOP) {
		return fmt.Errorf("subPath %q of volume %s leads out of the volume (through a symbolic link or \"..\"): %w", subPath, volumePath, err)
	}
	return fmt.Errorf("subPath %q of volume %s: %w", subPath, volumePath, err)
}
