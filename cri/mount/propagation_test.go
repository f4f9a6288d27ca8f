package mount

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fakeOS answers the check's questions as a table row says.
type fakeOS struct {
	pid     int
	pidErr  error
	ns      map[int]string // by pid, 0 the agent's
	nsErr   error
	seen    bool
	seenErr error
	probed  bool
}

func (f *fakeOS) peerPID(string) (int, error) { return f.pid, f.pidErr }
func (f *fakeOS) mountNS(pid int) (string, error) {
	if f.nsErr != nil && pid != 0 {
		return "", f.nsErr
	}
	return f.ns[pid], nil
}
func (f *fakeOS) probeSeen(string, int) (bool, error) { f.probed = true; return f.seen, f.seenErr }

// The decision: visible, not visible (the agent refuses to start) or
// unknown (the agent logs and goes on), with why.
func TestCheckPropagationDecision(t *testing.T) {
	const endpoint = "unix:///run/containerd/containerd.sock"
	same := map[int]string{0: "mnt:[1]", 42: "mnt:[1]"}
	other := map[int]string{0: "mnt:[1]", 42: "mnt:[2]"}
	for _, tc := range []struct {
		name      string
		endpoint  string
		os        fakeOS
		want      Visibility
		why       string
		wantProbe bool
	}{
		{name: "same namespace", os: fakeOS{pid: 42, ns: same}, want: Visible, why: "shares the agent's mount namespace mnt:[1]"},
		{name: "plain path endpoint", endpoint: "/run/containerd/containerd.sock", os: fakeOS{pid: 42, ns: same}, want: Visible},
		{name: "other namespace, probe seen", os: fakeOS{pid: 42, ns: other, seen: true}, want: Visible, why: "sees a probe mount", wantProbe: true},
		{name: "other namespace, probe not seen", os: fakeOS{pid: 42, ns: other}, want: NotVisible,
			why: "runs in mount namespace mnt:[2], the agent in mnt:[1], and a probe mount under the root directory is not visible to it", wantProbe: true},
		{name: "other namespace, probe fails (not root)", os: fakeOS{pid: 42, ns: other, seenErr: unix.EPERM}, want: Unknown, why: "operation not permitted", wantProbe: true},
		{name: "tcp endpoint", endpoint: "tcp://10.0.0.1:1234", want: Unknown, why: "is not a local unix socket"},
		{name: "npipe endpoint", endpoint: "npipe:////./pipe/containerd", want: Unknown, why: "is not a local unix socket"},
		{name: "relative unix endpoint", endpoint: "unix://containerd.sock", want: Unknown, why: "names no absolute socket path"},
		{name: "socket not there", os: fakeOS{pidErr: unix.ENOENT}, want: Unknown, why: "cannot tell the runtime's process"},
		{name: "runtime in another PID namespace", os: fakeOS{pid: 0}, want: Unknown, why: "in another PID namespace"},
		{name: "runtime's namespace unreadable (not root)", os: fakeOS{pid: 42, ns: other, nsErr: unix.EACCES}, want: Unknown, why: "cannot read the mount namespace of the runtime's process 42"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ep := tc.endpoint
			if ep == "" {
				ep = endpoint
			}
			got := checkPropagation(&tc.os, ep, "/var/lib/podlife")
			if got.Visibility != tc.want || !strings.Contains(got.Why, tc.why) || tc.os.probed != tc.wantProbe {
				t.Errorf("got %s (%q), probed %v; want %s with %q, probed %v", got.Visibility, got.Why, tc.os.probed, tc.want, tc.why, tc.wantProbe)
			}
			err := got.Err(ep, "/var/lib/podlife")
			if (err != nil) != (tc.want == NotVisible) {
				t.Fatalf("Err: %v", err)
			}
			if err != nil {
				for _, w := range []string{ep, "pid 42", "/var/lib/podlife", "empty volume directories", "mount --make-rshared"} {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
			}
		})
	}
}

// listenerEnv makes TestListenerHelper a runtime stand-in listening on
// the socket it names.
const listenerEnv = "PODLIFE_TEST_MOUNT_LISTENER"

// TestListenerHelper is a process that listens on a unix socket until it
// is killed: a runtime, as far as the check can tell.
func TestListenerHelper(t *testing.T) {
	path := os.Getenv(listenerEnv)
	if path == "" {
		t.Skip("the runtime stand-in of TestRuntimeSeesMounts")
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	<-stop
}

// On the real system: a runtime stand-in in the agent's mount namespace
// sees its mounts; one in a private mount namespace does not; one in
// another namespace whose copy of the root directory is a shared mount
// does.
func TestRuntimeSeesMounts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED: needs root to make mount namespaces and the probe mount")
	}
	for _, tc := range []struct {
		name   string
		attr   *syscall.SysProcAttr // nil: the stand-in is this process
		shared bool                 // the root directory in a shared tmpfs
		want   Visibility
	}{
		{name: "same namespace", want: Visible},
		{name: "private namespace", attr: &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}, want: NotVisible},
		{name: "namespace receiving a shared root dir", attr: &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}, shared: true, want: Visible},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, err := os.MkdirTemp("", "plmnt")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			if tc.shared {
				if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
				if err := unix.Mount("", dir, "", unix.MS_SHARED, ""); err != nil {
					t.Fatal(err)
				}
			}
			socket := filepath.Join(dir, "runtime.sock")
			if tc.attr == nil {
				l, err := net.Listen("unix", socket)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { l.Close() })
			} else {
				startListener(t, socket, tc.attr)
			}
			root := filepath.Join(dir, "root")
			if err := os.Mkdir(root, 0o700); err != nil {
				t.Fatal(err)
			}
			got := RuntimeSeesMounts("unix://"+socket, root)
			if got.Visibility != tc.want {
				t.Errorf("got %s (%s), want %s", got.Visibility, got.Why, tc.want)
			}
			if entries, err := os.ReadDir(root); err != nil || len(entries) != 0 {
				t.Errorf("the probe left %v in the root directory (%v)", entries, err)
			}
			if points, _ := Points(); strings.Contains(strings.Join(points, "\n"), root+"/") {
				t.Errorf("the probe left a mount under %s", root)
			}
		})
	}
}

// startListener runs TestListenerHelper on socket with attr, until the
// test ends.
func startListener(t *testing.T, socket string, attr *syscall.SysProcAttr) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^TestListenerHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), listenerEnv+"="+socket)
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("unix", socket); err == nil {
			c.Close()
			return
		} else if time.Now().After(deadline) {
			t.Fatalf("the runtime stand-in does not listen on %s: %v", socket, errors.Unwrap(err))
		}
	}
}

// The check passes on the containerd of tools/containerd-up.sh
// (PODLIFE_CRI_ENDPOINT).
func TestContainerdSeesMounts(t *testing.T) {
	endpoint := os.Getenv("PODLIFE_CRI_ENDPOINT")
	if endpoint == "" || os.Geteuid() != 0 {
		t.Skip("SKIPPED: needs root and PODLIFE_CRI_ENDPOINT (tools/containerd-up.sh)")
	}
	root, err := os.MkdirTemp("", "plmnt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	got := RuntimeSeesMounts(endpoint, root)
	if got.Visibility != Visible || got.PID == 0 {
		t.Fatalf("containerd at %s: %s, pid %d (%s)", endpoint, got.Visibility, got.PID, got.Why)
	}
	t.Logf("containerd (pid %d): %s", got.PID, got.Why)
}
