package logind

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/podlife/podlife/internal/logindtest"
	"github.com/podlife/podlife/internal/testlog"
)

// handler records the Handler's calls; NodeShutdown blocks until the test
// lets it return.
type handler struct {
	mu        sync.Mutex
	calls     []string
	shutdowns chan chan struct{} // each NodeShutdown sends its release channel
	cancels   chan struct{}
}

func newHandler() *handler {
	return &handler{shutdowns: make(chan chan struct{}, 4), cancels: make(chan struct{}, 4)}
}

func (h *handler) record(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, s)
}

func (h *handler) NodeShutdown(ctx context.Context) {
	h.record("shutdown")
	release := make(chan struct{})
	h.shutdowns <- release
	select {
	case <-release:
	case <-ctx.Done():
	}
}

func (h *handler) ShutdownCancelled(context.Context) {
	h.record("cancelled")
	h.cancels <- struct{}{}
}

func (h *handler) recorded() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.calls...)
}

func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(time.Minute):
		t.Fatalf("%s: not within a minute", what)
		var zero T
		return zero
	}
}

type fixture struct {
	bus     *logindtest.Bus
	address string
	logind  *logindtest.Logind
	h       *handler
	w       *Watcher
	logs    *testlog.Buffer
	cancel  context.CancelFunc
}

func start(t *testing.T, delayMax, grace time.Duration) *fixture {
	t.Helper()
	bus := logindtest.StartBus(t)
	f := &fixture{bus: bus, address: bus.Address, h: newHandler()}
	f.logind = logindtest.StartLogind(t, f.address, delayMax)
	log, logs := testlog.New()
	f.logs = logs
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	w, err := Start(ctx, Config{Address: f.address, GracePeriod: grace, Handler: f.h, Logger: log})
	if err != nil {
		cancel()
		t.Fatalf("Start: %v", err)
	}
	f.w = w
	t.Cleanup(func() {
		cancel()
		receive(t, w.Done(), "the watcher's end")
	})
	return f
}

// The kubelet's sequence: a delay lock on shutdown; PrepareForShutdown(true)
// runs the shutdown and only then releases the lock; PrepareForShutdown(false)
// returns the node to service and takes the lock again.
func TestShutdownReleasesTheLockAfterTheHandler(t *testing.T) {
	f := start(t, 30*time.Second, 10*time.Second)
	locks := f.logind.WaitLocks("the lock taken", func(l []logindtest.Lock) bool { return logindtest.Held(l) == 1 })
	if k := locks[0]; k.What != "shutdown" || k.Mode != "delay" || k.Who != "podlife" || !strings.Contains(k.Why, "graceful node shutdown") {
		t.Errorf("lock %+v, want a delay lock on shutdown by podlife", k)
	}

	f.logind.PrepareForShutdown(true)
	release := receive(t, f.h.shutdowns, "NodeShutdown")
	if locks := f.logind.Locks(); logindtest.Held(locks) != 1 {
		t.Errorf("the lock must be held while the pods stop: %+v", locks)
	}
	close(release)
	f.logind.WaitLocks("the lock released after NodeShutdown", func(l []logindtest.Lock) bool { return l[0].Released })

	f.logind.PrepareForShutdown(false)
	receive(t, f.h.cancels, "ShutdownCancelled")
	f.logind.WaitLocks("a new lock after the cancellation", func(l []logindtest.Lock) bool { return len(l) == 2 && logindtest.Held(l) == 1 })
	if got := f.h.recorded(); strings.Join(got, ",") != "shutdown,cancelled" {
		t.Errorf("handler calls %v", got)
	}

	// Stopping the watcher releases the lock (the agent exits).
	f.cancel()
	receive(t, f.w.Done(), "the watcher's end")
	f.logind.WaitLocks("the lock released when the watcher stops", func(l []logindtest.Lock) bool { return logindtest.Held(l) == 0 })
}

// A PrepareForShutdown sent by another client than logind, straight to the
// watcher, is not believed.
func TestSignalFromAnotherSenderIgnored(t *testing.T) {
	f := start(t, 30*time.Second, 10*time.Second)
	locks := f.logind.WaitLocks("the lock taken", func(l []logindtest.Lock) bool { return logindtest.Held(l) == 1 })
	f.logind.Spoof(f.address, locks[0].Holder, true)
	// logind's own signal comes after the spoofed one: once it is
	// handled, the spoofed one was too.
	f.logind.PrepareForShutdown(false)
	receive(t, f.h.cancels, "ShutdownCancelled")
	if got := f.h.recorded(); strings.Join(got, ",") != "cancelled" {
		t.Errorf("handler calls %v, want only logind's cancellation", got)
	}
	if lines := f.logs.Lines("Ignored a PrepareForShutdown", "not from logind"); len(lines) != 1 {
		t.Errorf("want one warning about the spoofed signal; log:\n%s", f.logs.String())
	}
}

// InhibitDelayMaxSec shorter than the grace period: a warning names both.
func TestShortInhibitDelayWarns(t *testing.T) {
	for _, tc := range []struct {
		name            string
		delayMax, grace time.Duration
		warn            bool
	}{
		{"shorter", 5 * time.Second, 30 * time.Second, true},
		{"equal", 30 * time.Second, 30 * time.Second, false},
		{"longer", time.Minute, 30 * time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := start(t, tc.delayMax, tc.grace)
			f.logind.WaitLocks("the lock taken", func(l []logindtest.Lock) bool { return logindtest.Held(l) == 1 })
			lines := f.logs.Lines("InhibitDelayMaxSec ("+tc.delayMax.String()+") is shorter than the shutdown grace period ("+tc.grace.String()+")", "InhibitDelayMaxSec=30")
			if got := len(lines) == 1; got != tc.warn {
				t.Errorf("warned %v, want %v; log:\n%s", got, tc.warn, f.logs.String())
			}
		})
	}
}

// No bus, or no logind on it: Start fails and takes no lock.
func TestStartFails(t *testing.T) {
	address := logindtest.StartBus(t).Address
	for _, tc := range []struct {
		name    string
		address string
		want    string
	}{
		{"no bus", "unix:path=" + filepath.Join(t.TempDir(), "none"), "connect to the system bus"},
		{"no logind", address, "find logind on the bus"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			_, err := Start(ctx, Config{Address: tc.address, GracePeriod: time.Second, Handler: newHandler()})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Start: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// A logind that refuses the lock: Start fails.
func TestInhibitRefused(t *testing.T) {
	address := logindtest.StartBus(t).Address
	l := logindtest.StartLogind(t, address, time.Minute)
	l.FailInhibit(logindtest.AccessDenied)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := Start(ctx, Config{Address: address, GracePeriod: time.Second, Handler: newHandler()})
	if err == nil || !strings.Contains(err.Error(), "take logind's delay inhibitor lock") || !strings.Contains(err.Error(), "denied") {
		t.Errorf("Start: %v, want the refused lock", err)
	}
}

// logind leaving the bus and coming back (a restart): a signal from the
// new one is believed, and the lock it hands out after a cancellation is
// held.
func TestNewLogindBelieved(t *testing.T) {
	f := start(t, time.Minute, time.Second)
	f.logind.WaitLocks("the lock taken", func(l []logindtest.Lock) bool { return logindtest.Held(l) == 1 })
	f.logind.Close()
	again := logindtest.StartLogind(t, f.address, time.Minute)
	again.PrepareForShutdown(false)
	receive(t, f.h.cancels, "ShutdownCancelled from the new logind")
	again.WaitLocks("a lock from the new logind", func(l []logindtest.Lock) bool { return logindtest.Held(l) == 1 })
}

// The bus going away (dbus-daemon restarted): the watcher connects again
// and takes a lock from logind on the new bus.
func TestReconnectAfterBusRestart(t *testing.T) {
	f := start(t, time.Minute, time.Second)
	f.logind.WaitLocks("the lock taken", func(l []logindtest.Lock) bool { return logindtest.Held(l) == 1 })
	f.logind.Close()
	f.bus.Restart()
	again := logindtest.StartLogind(t, f.address, time.Minute)
	again.WaitLocks("a lock from logind on the new bus", func(l []logindtest.Lock) bool { return logindtest.Held(l) == 1 })
	again.PrepareForShutdown(true)
	close(receive(t, f.h.shutdowns, "NodeShutdown after the reconnection"))
	again.WaitLocks("the lock released", func(l []logindtest.Lock) bool { return l[0].Released })
	if lines := f.logs.Lines("Lost the connection to logind"); len(lines) != 1 {
		t.Errorf("want one log line about the lost connection; log:\n%s", f.logs.String())
	}
}
