package mount

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// The mounts the agent makes for pods (a Memory emptyDir's tmpfs, a
// Secret's, a subPath's bind mount) are made in the agent's mount
// namespace, under its root directory, and handed to the runtime by path.
// A runtime in another mount namespace that does not receive them (the
// agent in a container with a private mount of the root directory, the
// runtime on the host, or the reverse) would give pods the empty
// directories beneath: the pods would run, silently without their
// volumes. The kubelet documents the requirement (its root directory
// shared, rshared); podlife checks it when it connects to the runtime.

// Visibility is what the check found.
type Visibility int

const (
	// Visible: the runtime shares the agent's mount namespace, or
	// receives the mounts the agent makes under its root directory.
	Visible Visibility = iota
	// NotVisible: the runtime does not see them; the agent must not run
	// pods.
	NotVisible
	// Unknown: the check could not run (a runtime that is not on a local
	// unix socket, an agent that may not read the runtime's process or
	// make a mount). The agent logs why and goes on, as the kubelet,
	// which never checks.
	Unknown
)

// Propagation is the check's result: Why says what was found (for
// Visible too), PID is the runtime's process (0: unknown).
type Propagation struct {
	Visibility Visibility
	PID        int
	Why        string
}

// Err is the error of a NotVisible result, nil otherwise: what is wrong,
// naming the root directory, the runtime and what to do.
func (p Propagation) Err(endpoint, rootDir string) error {
	if p.Visibility != NotVisible {
		return nil
	}
	return fmt.Errorf("the container runtime at %s (pid %d) does not see the mounts the agent makes under its root directory %s: %s; "+
		"pods would see empty volume directories. Run the agent in the runtime's mount namespace, or make %s a shared mount "+
		"(mount --make-rshared) that the runtime's namespace receives", endpoint, p.PID, rootDir, p.Why, rootDir)
}

// hostOS is what the check asks of the system; the tests replace it.
type hostOS interface {
	// peerPID is the PID of the process listening on the unix socket
	// (SO_PEERCRED), 0 when it is in no PID namespace of the agent's.
	peerPID(socket string) (int, error)
	// mountNS names the mount namespace of pid (0: the agent's own).
	mountNS(pid int) (string, error)
	// probeSeen mounts a tmpfs in a new directory under dir, writes a
	// file in it, and reports whether pid sees that file at the same
	// path; the mount and the directory are removed before it returns.
	probeSeen(dir string, pid int) (bool, error)
}

// RuntimeSeesMounts checks that the runtime at endpoint (a CRI endpoint,
// unix:///run/containerd/containerd.sock) sees the mounts the agent makes
// under rootDir: it finds the runtime's process from its socket's peer
// credentials; a process in the agent's mount namespace sees them; one in
// another must see a probe tmpfs mounted under rootDir at the same path
// (/proc/<pid>/root).
func RuntimeSeesMounts(endpoint, rootDir string) Propagation {
	return checkPropagation(realOS{}, endpoint, rootDir)
}

// checkPropagation is RuntimeSeesMounts on sys: the decision.
func checkPropagation(sys hostOS, endpoint, rootDir string) Propagation {
	socket, err := unixSocketPath(endpoint)
	if err != nil {
		return Propagation{Visibility: Unknown, Why: err.Error()}
	}
	pid, err := sys.peerPID(socket)
	if err != nil {
		return Propagation{Visibility: Unknown, Why: fmt.Sprintf("cannot tell the runtime's process from its socket %s: %v", socket, err)}
	}
	if pid == 0 {
		return Propagation{Visibility: Unknown, Why: fmt.Sprintf("the process listening on %s is in another PID namespace", socket)}
	}
	self, err := sys.mountNS(0)
	if err != nil {
		return Propagation{Visibility: Unknown, PID: pid, Why: fmt.Sprintf("cannot read the agent's mount namespace: %v", err)}
	}
	theirs, err := sys.mountNS(pid)
	if err != nil {
		return Propagation{Visibility: Unknown, PID: pid, Why: fmt.Sprintf("cannot read the mount namespace of the runtime's process %d: %v", pid, err)}
	}
	if self == theirs {
		return Propagation{Visibility: Visible, PID: pid, Why: "the runtime shares the agent's mount namespace " + self}
	}
	seen, err := sys.probeSeen(rootDir, pid)
	switch {
	case err != nil:
		return Propagation{Visibility: Unknown, PID: pid, Why: fmt.Sprintf("the runtime is in mount namespace %s, the agent in %s, and a probe mount under %s failed: %v", theirs, self, rootDir, err)}
	case !seen:
		return Propagation{Visibility: NotVisible, PID: pid, Why: fmt.Sprintf("it runs in mount namespace %s, the agent in %s, and a probe mount under the root directory is not visible to it", theirs, self)}
	}
	return Propagation{Visibility: Visible, PID: pid, Why: fmt.Sprintf("the runtime is in mount namespace %s, the agent in %s, and it sees a probe mount under %s", theirs, self, rootDir)}
}

// unixSocketPath is the socket of a CRI endpoint: unix:///path or a
// plain absolute path; anything else is not a local unix socket.
func unixSocketPath(endpoint string) (string, error) {
	if filepath.IsAbs(endpoint) {
		return endpoint, nil
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme != "unix" {
		return "", fmt.Errorf("the runtime endpoint %q is not a local unix socket: its mounts cannot be checked", endpoint)
	}
	if p := u.Host + u.Path; filepath.IsAbs(p) {
		return p, nil
	}
	return "", fmt.Errorf("the runtime endpoint %q names no absolute socket path", endpoint)
}

// realOS is hostOS on Linux.
type realOS struct{}

func (realOS) peerPID(socket string) (int, error) {
	c, err := net.DialTimeout("unix", socket, 5*time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	raw, err := c.(*net.UnixConn).SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) { cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) }); err != nil {
		return 0, err
	}
	if credErr != nil {
		return 0, credErr
	}
	return int(cred.Pid), nil
}

func (realOS) mountNS(pid int) (string, error) {
	proc := "self"
	if pid != 0 {
		proc = strconv.Itoa(pid)
	}
	return os.Readlink(filepath.Join("/proc", proc, "ns", "mnt"))
}

func (realOS) probeSeen(dir string, pid int) (seen bool, err error) {
	probe, err := os.MkdirTemp(dir, ".mount-probe-")
	if err != nil {
		return false, err
	}
	defer func() {
		if rerr := os.Remove(probe); rerr != nil && err == nil {
			err = rerr
		}
	}()
	if err := unix.Mount("tmpfs", probe, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0700"); err != nil {
		return false, fmt.Errorf("mount a tmpfs on %s: %w", probe, err)
	}
	defer func() {
		if uerr := unix.Unmount(probe, unix.UMOUNT_NOFOLLOW); uerr != nil && err == nil {
			err = fmt.Errorf("unmount the probe %s: %w", probe, uerr)
		}
	}()
	marker := filepath.Join(probe, "seen-by-the-runtime")
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		return false, err
	}
	// The runtime's view of the same path: through its root, in its
	// mount namespace.
	_, err = os.Lstat(filepath.Join("/proc", strconv.Itoa(pid), "root", marker))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, err
}

// String names v for logs.
func (v Visibility) String() string {
	return [...]string{"visible", "not visible", "unknown"}[v]
}
