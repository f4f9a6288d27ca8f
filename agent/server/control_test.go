package server

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/podlife/podlife/agent/api"
)

// The socket is 0600 from the moment it exists, whatever the umask. Not
// parallel: the umask is the process's, and a serial test runs alone.
func TestListenControlModeIgnoresUmask(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), api.ControlSocketName)
	l, err := listenControl(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Errorf("control socket created with mode %s under umask 0, want a socket with 0600", fi.Mode())
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("the socket is left after Close: %v", err)
	}
}

func TestListenControlReplacesOnlyItsStaleSocket(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		setup    func(t *testing.T, path string)
		wantErr  []string // nil: the socket is replaced
		needRoot bool
	}{
		{name: "nothing there", setup: func(*testing.T, string) {}},
		{name: "stale socket of a dead agent", setup: staleSocket},
		{name: "socket in use", setup: func(t *testing.T, path string) {
			l, err := net.Listen("unix", path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
		}, wantErr: []string{"is in use", "another agent runs with root directory"}},
		{name: "not a socket", setup: func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte("keep me"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, wantErr: []string{"is not a socket"}},
		{name: "a symlink", setup: func(t *testing.T, path string) {
			target := filepath.Join(filepath.Dir(path), "elsewhere.sock")
			staleSocket(t, target)
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
		}, wantErr: []string{"is not a socket"}},
		{name: "stale socket of another user", needRoot: true, setup: func(t *testing.T, path string) {
			staleSocket(t, path)
			if err := os.Lchown(path, nobody, nobody); err != nil {
				t.Fatal(err)
			}
		}, wantErr: []string{"owned by uid 65534"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.needRoot && os.Geteuid() != 0 {
				t.Skip("needs root to give a socket to another user")
			}
			dir, err := os.MkdirTemp("", "plctl")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			path := filepath.Join(dir, api.ControlSocketName)
			tc.setup(t, path)
			before, _ := os.Lstat(path)
			l, err := listenControl(path)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("listenControl: %v", err)
				}
				l.Close()
				return
			}
			if err == nil {
				l.Close()
				t.Fatal("listenControl took the path")
			}
			for _, want := range append([]string{path}, tc.wantErr...) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
			if after, _ := os.Lstat(path); !os.SameFile(before, after) {
				t.Error("listenControl replaced what was there")
			}
		})
	}
}

func TestListenControlPathTooLong(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), strings.Repeat("d", maxSocketPath), api.ControlSocketName)
	if _, err := listenControl(path); err == nil || !strings.Contains(err.Error(), "longer than 107 bytes") {
		t.Fatalf("listenControl: %v, want a path length error", err)
	}
}

// staleSocket leaves a socket file at path that nobody answers on, as an
// agent that died does.
func staleSocket(t *testing.T, path string) {
	t.Helper()
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()
}

// nobody is the uid of an unprivileged user, another than the agent's.
const nobody = 65534

func TestPeerAllowed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		peer     uint32
		agentUID int
		want     bool
	}{
		{"the agent's user", 1000, 1000, true},
		{"root, agent run by a user", 0, 1000, true},
		{"root, agent run by root", 0, 0, true},
		{"another user, agent run by root", nobody, 0, false},
		{"another user, agent run by a user", 1001, 1000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := peerAllowed(tc.peer, tc.agentUID); got != tc.want {
				t.Errorf("peerAllowed(%d, %d) = %v, want %v", tc.peer, tc.agentUID, got, tc.want)
			}
		})
	}
}
