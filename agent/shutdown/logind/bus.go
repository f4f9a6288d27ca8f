package logind

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/godbus/dbus/v5"
)

// logind's bus name, object and interface (org.freedesktop.login1(5)).
const (
	Service   = "org.freedesktop.login1"
	Object    = dbus.ObjectPath("/org/freedesktop/login1")
	Interface = "org.freedesktop.login1.Manager"
)

// callTimeout bounds each call to the bus or to logind: D-Bus's default
// method call timeout. A bus or a logind that hangs must not hang the
// agent's shutdown handling with it.
const callTimeout = 25 * time.Second

// call calls method on obj, waiting at most callTimeout.
func call(ctx context.Context, obj dbus.BusObject, method string, args ...any) *dbus.Call {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	return obj.CallWithContext(ctx, method, 0, args...)
}

// session is one connection to the bus, with the inhibitor lock it holds
// and the PrepareForShutdown signals it receives.
type session struct {
	conn *dbus.Conn
	// owner is the unique name that owns Service: the only sender whose
	// PrepareForShutdown is believed.
	owner string
	// lock is the inhibitor lock's file descriptor; nil: none held.
	lock *os.File
	log  *slog.Logger
}

// dial connects to the bus at address; "" is the system bus
// (DBUS_SYSTEM_BUS_ADDRESS, else /run/dbus/system_bus_socket). The
// connection closes when ctx ends.
func dial(ctx context.Context, address string, log *slog.Logger) (*session, error) {
	var (
		conn *dbus.Conn
		err  error
	)
	if address == "" {
		conn, err = dbus.ConnectSystemBus(dbus.WithContext(ctx))
	} else {
		conn, err = dbus.Connect(address, dbus.WithContext(ctx))
	}
	if err != nil {
		return nil, fmt.Errorf("connect to the system bus: %w", err)
	}
	return &session{conn: conn, log: log}, nil
}

// close releases the lock and closes the connection.
func (s *session) close() {
	s.release()
	_ = s.conn.Close()
}

func (s *session) logind() dbus.BusObject { return s.conn.Object(Service, Object) }

// inhibitDelayMax is logind's InhibitDelayMaxSec: how long it waits for a
// delay lock's holder.
func (s *session) inhibitDelayMax(ctx context.Context) (time.Duration, error) {
	var v dbus.Variant
	err := call(ctx, s.logind(), "org.freedesktop.DBus.Properties.Get", Interface, "InhibitDelayMaxUSec").Store(&v)
	if err != nil {
		return 0, fmt.Errorf("read logind's InhibitDelayMaxUSec: %w", err)
	}
	usec, ok := v.Value().(uint64)
	if !ok {
		return 0, fmt.Errorf("logind's InhibitDelayMaxUSec is %s, not a uint64", v.Signature())
	}
	return time.Duration(usec) * time.Microsecond, nil
}

// inhibit takes a delay lock on shutdown, releasing the one held before
// (as the kubelet's acquireInhibitLock does).
func (s *session) inhibit(ctx context.Context, who, why string) error {
	var fd dbus.UnixFD
	err := call(ctx, s.logind(), Interface+".Inhibit", "shutdown", who, why, "delay").Store(&fd)
	if err != nil {
		return fmt.Errorf("take logind's delay inhibitor lock: %w", err)
	}
	// The lock is held while any copy of fd is open: none may leak into
	// a child process.
	syscall.CloseOnExec(int(fd))
	s.release()
	s.lock = os.NewFile(uintptr(fd), "logind-inhibitor")
	return nil
}

// release closes the lock's file descriptor: logind then goes on with the
// shutdown it delayed.
func (s *session) release() bool {
	if s.lock == nil {
		return false
	}
	_ = s.lock.Close()
	s.lock = nil
	return true
}

// subscribe delivers logind's PrepareForShutdown signals: true when a
// shutdown starts, false when it was cancelled. The channel is closed when
// the connection is lost.
func (s *session) subscribe(ctx context.Context) (<-chan bool, error) {
	if err := call(ctx, s.conn.BusObject(), "org.freedesktop.DBus.GetNameOwner", Service).Store(&s.owner); err != nil {
		return nil, fmt.Errorf("find logind on the bus: %w", err)
	}
	matchCtx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	err := s.conn.AddMatchSignalContext(matchCtx, dbus.WithMatchSender(Service), dbus.WithMatchObjectPath(Object),
		dbus.WithMatchInterface(Interface), dbus.WithMatchMember("PrepareForShutdown"))
	if err != nil {
		return nil, fmt.Errorf("subscribe to logind's PrepareForShutdown: %w", err)
	}
	signals := make(chan *dbus.Signal, 8)
	s.conn.Signal(signals)
	events := make(chan bool, 1)
	go func() {
		defer close(events)
		for sig := range signals {
			active, err := s.prepareForShutdown(ctx, sig)
			if errors.Is(err, errNotPrepareForShutdown) {
				continue
			}
			if err != nil {
				s.log.Warn("Ignored a PrepareForShutdown signal", "err", err)
				continue
			}
			select {
			case events <- active:
			case <-ctx.Done():
				return
			}
		}
	}()
	return events, nil
}

// errNotPrepareForShutdown marks a signal that is not logind's
// PrepareForShutdown.
var errNotPrepareForShutdown = errors.New("not logind's PrepareForShutdown")

// prepareForShutdown reads logind's PrepareForShutdown(active) from sig.
// A signal sent by anyone but logind is refused: a client of the bus may
// send a signal to any other, whatever its match rules.
func (s *session) prepareForShutdown(ctx context.Context, sig *dbus.Signal) (bool, error) {
	if sig.Name != Interface+".PrepareForShutdown" || sig.Path != Object || len(sig.Body) != 1 {
		return false, errNotPrepareForShutdown
	}
	active, ok := sig.Body[0].(bool)
	if !ok {
		return false, errNotPrepareForShutdown
	}
	if sig.Sender != s.owner {
		// logind may have restarted since: ask who owns its name now.
		var owner string
		if err := call(ctx, s.conn.BusObject(), "org.freedesktop.DBus.GetNameOwner", Service).Store(&owner); err != nil || owner != sig.Sender {
			return false, fmt.Errorf("PrepareForShutdown from %s, not from logind (%s)", sig.Sender, owner)
		}
		s.owner = owner
	}
	return active, nil
}
