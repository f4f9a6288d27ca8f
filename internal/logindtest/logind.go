package logindtest

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// logind's bus name, object and interface.
const (
	service   = "org.freedesktop.login1"
	object    = dbus.ObjectPath("/org/freedesktop/login1")
	iface     = "org.freedesktop.login1.Manager"
	propsFace = "org.freedesktop.DBus.Properties"
)

// Lock is one inhibitor lock the stand-in handed out.
type Lock struct {
	What, Who, Why, Mode string
	// Holder is the bus name of the caller of Inhibit.
	Holder string
	// Held: the holder has the lock's descriptor and has not closed it.
	Held bool
	// Released: every copy of the descriptor was closed (logind's end
	// read EOF).
	Released bool
}

// Logind is a systemd-logind stand-in: it owns org.freedesktop.login1 on a
// bus and implements what a graceful node shutdown uses of logind's
// Manager: Inhibit (a pipe's write end, as logind hands out a FIFO's), the
// InhibitDelayMaxUSec property and the PrepareForShutdown signal.
type Logind struct {
	t          testing.TB
	conn       *dbus.Conn
	delayMax   time.Duration
	holderFDs  func(ino uint64) int // descriptors on the pipe held by others than the stand-in
	mu         sync.Mutex
	locks      []*Lock
	changed    chan struct{} // closed and replaced whenever locks change
	closed     chan struct{}
	closeOnce  sync.Once
	inhibitErr *dbus.Error
}

// StartLogind exports a logind stand-in on the bus at address, whose
// InhibitDelayMaxSec is delayMax. The lock holder runs in the test's own
// process. It is stopped at cleanup.
func StartLogind(t testing.TB, address string, delayMax time.Duration) *Logind {
	t.Helper()
	conn, err := dbus.Connect(address)
	if err != nil {
		t.Fatalf("logind stand-in: connect to %s: %v", address, err)
	}
	l := &Logind{t: t, conn: conn, delayMax: delayMax, changed: make(chan struct{}), closed: make(chan struct{}), holderFDs: ownCopies}
	t.Cleanup(l.Close)
	if err := conn.Export(manager{l}, object, iface); err != nil {
		t.Fatal(err)
	}
	if err := conn.Export(properties{l}, object, propsFace); err != nil {
		t.Fatal(err)
	}
	reply, err := conn.RequestName(service, dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("logind stand-in: own %s: %v (reply %v)", service, err, reply)
	}
	return l
}

// Close leaves the bus; locks still held are forgotten.
func (l *Logind) Close() {
	l.closeOnce.Do(func() {
		close(l.closed)
		_ = l.conn.Close()
	})
}

// FailInhibit makes the next Inhibit calls fail with err (nil: succeed).
func (l *Logind) FailInhibit(err *dbus.Error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inhibitErr = err
}

// PrepareForShutdown emits logind's signal: active when a shutdown starts,
// false when it was cancelled.
func (l *Logind) PrepareForShutdown(active bool) {
	l.t.Helper()
	if err := l.conn.Emit(object, iface+".PrepareForShutdown", active); err != nil {
		l.t.Fatalf("emit PrepareForShutdown(%v): %v", active, err)
	}
}

// Spoof sends PrepareForShutdown(active) to dest from another client of
// the bus than logind (any client may send a signal to any other), and
// returns once the bus dispatched it.
func (l *Logind) Spoof(address, dest string, active bool) {
	l.t.Helper()
	conn, err := dbus.Connect(address)
	if err != nil {
		l.t.Fatal(err)
	}
	defer conn.Close()
	msg := &dbus.Message{Type: dbus.TypeSignal, Headers: map[dbus.HeaderField]dbus.Variant{
		dbus.FieldPath:        dbus.MakeVariant(object),
		dbus.FieldInterface:   dbus.MakeVariant(iface),
		dbus.FieldMember:      dbus.MakeVariant("PrepareForShutdown"),
		dbus.FieldDestination: dbus.MakeVariant(dest),
		dbus.FieldSignature:   dbus.MakeVariant(dbus.SignatureOf(active)),
	}, Body: []any{active}}
	if call := conn.Send(msg, nil); call.Err != nil {
		l.t.Fatalf("spoof PrepareForShutdown: %v", call.Err)
	}
	// The bus handles a client's messages in order: once it answered
	// this call, it dispatched the signal.
	if err := conn.BusObject().Call("org.freedesktop.DBus.GetId", 0).Err; err != nil {
		l.t.Fatal(err)
	}
}

// Locks returns a copy of every lock handed out, in order.
func (l *Logind) Locks() []Lock {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Lock, len(l.locks))
	for i, k := range l.locks {
		out[i] = *k
	}
	return out
}

// WaitLocks waits up to a minute until cond holds of the locks, and fails
// the test otherwise.
func (l *Logind) WaitLocks(what string, cond func([]Lock) bool) []Lock {
	l.t.Helper()
	deadline := time.After(time.Minute)
	for {
		l.mu.Lock()
		changed := l.changed
		l.mu.Unlock()
		locks := l.Locks()
		if cond(locks) {
			return locks
		}
		select {
		case <-changed:
		case <-deadline:
			l.t.Fatalf("logind stand-in: %s: not within a minute; locks %+v", what, locks)
			return nil
		}
	}
}

// Held counts the locks held now.
func Held(locks []Lock) int {
	n := 0
	for _, k := range locks {
		if k.Held && !k.Released {
			n++
		}
	}
	return n
}

func (l *Logind) update(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f()
	close(l.changed)
	l.changed = make(chan struct{})
}

// manager is logind's org.freedesktop.login1.Manager on the bus.
type manager struct{ l *Logind }

// Inhibit hands out the write end of a pipe: the lock is held while any
// copy of it is open, and the stand-in sees it released when its read end
// reads EOF.
func (m manager) Inhibit(sender dbus.Sender, what, who, why, mode string) (dbus.UnixFD, *dbus.Error) {
	l := m.l
	l.mu.Lock()
	failure := l.inhibitErr
	l.mu.Unlock()
	if failure != nil {
		return -1, failure
	}
	if what != "shutdown" || mode != "delay" {
		return -1, dbus.MakeFailedError(fmt.Errorf("stand-in: inhibit %q mode %q: only a shutdown delay lock is served", what, mode))
	}
	r, w, err := os.Pipe()
	if err != nil {
		return -1, dbus.MakeFailedError(err)
	}
	lock := &Lock{What: what, Who: who, Why: why, Mode: mode, Holder: string(sender)}
	l.update(func() { l.locks = append(l.locks, lock) })
	fd := dbus.UnixFD(w.Fd()) // before watch may close w
	go l.watch(lock, r, w)
	return fd, nil
}

// watch closes the stand-in's own copy of the write end once the holder
// has one (the reply carrying it was sent and received: logind closes its
// copy once it sent it), then waits for the holder to close its copy.
func (l *Logind) watch(lock *Lock, r, w *os.File) {
	defer r.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(w.Fd()), &st); err != nil {
		l.t.Errorf("stand-in: fstat the lock's pipe: %v", err)
		w.Close()
		return
	}
	for l.holderFDs(st.Ino) == 0 {
		select {
		case <-l.closed:
			w.Close()
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
	w.Close()
	l.update(func() { lock.Held = true })
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = r.Read(make([]byte, 1)) // EOF once every write end is closed
	}()
	select {
	case <-done:
		l.update(func() { lock.Released = true })
	case <-l.closed:
	}
}

// ownCopies counts this process's descriptors on the pipe ino besides the
// stand-in's two ends: those the holder received.
func ownCopies(ino uint64) int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	want := fmt.Sprintf("pipe:[%d]", ino)
	n := 0
	for _, e := range entries {
		if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && target == want {
			n++
		}
	}
	return max(n-2, 0)
}

// properties is org.freedesktop.DBus.Properties of logind's object.
type properties struct{ l *Logind }

// Get returns InhibitDelayMaxUSec; every other property is unknown.
func (p properties) Get(ifaceName, name string) (dbus.Variant, *dbus.Error) {
	if ifaceName == iface && name == "InhibitDelayMaxUSec" {
		return dbus.MakeVariant(uint64(p.l.delayMax / time.Microsecond)), nil
	}
	return dbus.Variant{}, dbus.MakeFailedError(errors.New("stand-in: unknown property " + ifaceName + "." + name))
}

// String describes the locks, for failure messages.
func (l *Logind) String() string {
	var b strings.Builder
	for _, k := range l.Locks() {
		fmt.Fprintf(&b, "%+v\n", k)
	}
	return b.String()
}

// AccessDenied is polkit's answer to an Inhibit that is not allowed.
var AccessDenied = dbus.NewError("org.freedesktop.DBus.Error.AccessDenied", []any{"Permission denied"})
