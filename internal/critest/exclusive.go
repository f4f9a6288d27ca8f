package critest

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Exclusive gives the test the runtime to itself until it ends, across test
// processes: `go test ./...` runs packages in parallel, and an agent kills
// every pod it does not know as an orphan, a smoke test's included. It
// holds an exclusive flock on a file beside the runtime's socket. Call it
// before anything whose cleanup must run while the lock is held: the lock
// is released by the test's last cleanup.
func Exclusive(t testing.TB) {
	t.Helper()
	ep := Endpoint(t)
	sock := strings.TrimPrefix(ep, "unix://")
	if sock == ep {
		t.Fatalf("%s=%s: only unix:// endpoints can be shared by test processes", EndpointEnv, ep)
	}
	path := filepath.Join(filepath.Dir(sock), "podlife-tests.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatalf("test lock: %v", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("test lock %s: %v", path, err)
	}
	t.Cleanup(func() { f.Close() }) // closing releases the lock
}
