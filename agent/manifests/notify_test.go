package manifests

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podlife/podlife/kubetypes"
	"go.uber.org/goleak"
)

// runNotified runs e's Source with Notify's wake and a ticker that never
// fires (the fake clock is never stepped): every change it reports after
// the first scan came through the watch. It returns the handled changes
// and the reported errors.
func runNotified(t *testing.T, e *env, retry time.Duration) (<-chan string, <-chan error) {
	t.Helper()
	return runWoken(t, e, func(ctx context.Context) <-chan struct{} { return Notify(ctx, e.dir, retry, nil) })
}

// runWoken is runNotified with the wake wake returns.
func runWoken(t *testing.T, e *env, wake func(context.Context) <-chan struct{}) (<-chan string, <-chan error) {
	t.Helper()
	changes := make(chan string, 100)
	errs := make(chan error, 100)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.src.Run(ctx, time.Hour, wake(ctx), func(c kubetypes.Change) { changes <- show(c) }, func(err error) { errs <- err })
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return changes, errs
}

func expectChange(t *testing.T, changes <-chan string, want string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case got := <-changes:
			if strings.HasPrefix(got, want) {
				return
			}
		case <-deadline:
			t.Fatalf("no change %q within 10 s without a tick", want)
		}
	}
}

func TestNotifyScansAtOnce(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after runNotified's cleanup
	e := newEnv(t)
	e.write("a.yaml", podYAML("a", "i"))
	changes, _ := runNotified(t, e, time.Hour)
	expectChange(t, changes, "Add a.yaml")
	e.write("b.yaml", podYAML("b", "i"))
	expectChange(t, changes, "Add b.yaml")
	e.remove("a.yaml")
	expectChange(t, changes, "Remove a.yaml")
}

// A manifest directory made after the agent started, or removed and made
// again, is watched once it is there.
func TestNotifyWatchesADirectoryMadeLater(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after runNotified's cleanup
	e := newEnvAt(t, filepath.Join(t.TempDir(), "later"))
	changes, errs := runNotified(t, e, 20*time.Millisecond)
	// The first scan reports the missing directory; whatever Run finds
	// after it, it found through the watch.
	select {
	case err := <-errs:
		if !strings.Contains(err.Error(), "does not exist") {
			t.Fatalf("first scan's error = %v, want the missing directory", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the first scan reported no missing directory")
	}
	for range 2 {
		if err := os.Mkdir(e.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		e.write("a.yaml", podYAML("a", "i"))
		expectChange(t, changes, "Add a.yaml")
		if err := os.RemoveAll(e.dir); err != nil {
			t.Fatal(err)
		}
		expectChange(t, changes, "Remove a.yaml")
	}
}

// A manifest removed and written again at once, as the node e2e suite's
// "should successfully recreate when file is removed and recreated" does,
// is a removal and an addition of its pod, even when the scan the watch
// wakes sees only the file as it was.
func TestWatchSeesARemovalUndone(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after runWoken's cleanup
	e := newEnv(t)
	e.write("a.yaml", podYAML("a", "i"))
	changes, _ := runWoken(t, e, func(ctx context.Context) <-chan struct{} { return e.src.Watch(ctx, time.Hour, nil) })
	expectChange(t, changes, "Add a.yaml")
	e.remove("a.yaml")
	e.write("a.yaml", podYAML("a", "i"))
	expectChange(t, changes, "Remove a.yaml")
	expectChange(t, changes, "Add a.yaml")
}
