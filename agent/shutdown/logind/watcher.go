package logind

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Handler is what a node shutdown announced by logind runs.
type Handler interface {
	// NodeShutdown stops the pods for a node shutdown and returns when
	// they are stopped (or its time is up): the inhibitor lock is released
	// then, and the shutdown goes on.
	NodeShutdown(ctx context.Context)
	// ShutdownCancelled returns the node to service after logind cancelled
	// a shutdown: pods are admitted again and the Node is Ready.
	ShutdownCancelled(ctx context.Context)
}

// Config configures Start.
type Config struct {
	// Address is the bus logind is on; "": the system bus
	// (DBUS_SYSTEM_BUS_ADDRESS, else /run/dbus/system_bus_socket).
	Address string
	// GracePeriod is the whole time a graceful node shutdown takes
	// (shutdownGracePeriod): logind's InhibitDelayMaxSec should be as long.
	GracePeriod time.Duration
	// Who names the lock's holder in `systemd-inhibit --list`.
	Who     string
	Handler Handler
	Logger  *slog.Logger // nil: no logs
}

// reconnectPeriod is how long a lost connection waits before it is opened
// again: the kubelet's dbusReconnectPeriod.
const reconnectPeriod = time.Second

// Watcher holds logind's inhibitor lock and runs the Handler when logind
// announces a shutdown, until the context given to Start ends.
type Watcher struct {
	cfg  Config
	log  *slog.Logger
	done chan struct{}
}

// Start connects to the bus, takes the inhibitor lock and subscribes to
// PrepareForShutdown, then watches in a goroutine of its own until ctx
// ends; the lock is released then. An error means no graceful node
// shutdown through logind (no system bus, no logind): the caller logs it
// and runs on, as the kubelet does.
func Start(ctx context.Context, cfg Config) (*Watcher, error) {
	if cfg.Handler == nil {
		return nil, errors.New("logind: a Handler is required")
	}
	w := &Watcher{cfg: cfg, log: cfg.Logger, done: make(chan struct{})}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	if w.cfg.Who == "" {
		w.cfg.Who = "podlife"
	}
	s, events, err := w.open(ctx)
	if err != nil {
		return nil, err
	}
	go w.run(ctx, s, events)
	return w, nil
}

// Done is closed once the Watcher stopped and released its lock.
func (w *Watcher) Done() <-chan struct{} { return w.done }

// why is the lock's reason, as `systemd-inhibit --list` shows it.
const why = "podlife stops the node's pods for a graceful node shutdown"

// open connects, checks InhibitDelayMaxSec, takes the lock and subscribes.
func (w *Watcher) open(ctx context.Context) (*session, <-chan bool, error) {
	s, err := dial(ctx, w.cfg.Address, w.log)
	if err != nil {
		return nil, nil, err
	}
	events, err := w.prepare(ctx, s)
	if err != nil {
		s.close()
		return nil, nil, err
	}
	return s, events, nil
}

func (w *Watcher) prepare(ctx context.Context, s *session) (<-chan bool, error) {
	// Subscribed first: a shutdown announced right after the lock was
	// taken is not missed.
	events, err := s.subscribe(ctx)
	if err != nil {
		return nil, err
	}
	maxDelay, err := s.inhibitDelayMax(ctx)
	if err != nil {
		return nil, err
	}
	if maxDelay < w.cfg.GracePeriod {
		w.log.Warn(fmt.Sprintf("logind's InhibitDelayMaxSec (%s) is shorter than the shutdown grace period (%s): a node shutdown will not wait for the pods to stop; raise it, e.g. in /etc/systemd/logind.conf.d/99-podlife.conf: [Login] InhibitDelayMaxSec=%.0f, then restart systemd-logind",
			maxDelay, w.cfg.GracePeriod, w.cfg.GracePeriod.Seconds()),
			"inhibitDelayMax", maxDelay, "shutdownGracePeriod", w.cfg.GracePeriod)
	}
	if err := s.inhibit(ctx, w.cfg.Who, why); err != nil {
		return nil, err
	}
	w.log.Info("Took logind's delay inhibitor lock for a graceful node shutdown", "inhibitDelayMax", maxDelay, "shutdownGracePeriod", w.cfg.GracePeriod)
	return events, nil
}

// run serves the session, and opens a new one each time it is lost,
// until ctx ends.
func (w *Watcher) run(ctx context.Context, s *session, events <-chan bool) {
	defer close(w.done)
	for {
		w.serve(ctx, s, events)
		s.close()
		if ctx.Err() != nil {
			return
		}
		w.log.Warn("Lost the connection to logind; opening it again", "after", reconnectPeriod)
		for s = nil; s == nil; {
			select {
			case <-ctx.Done():
				return
			case <-time.After(reconnectPeriod):
			}
			var err error
			if s, events, err = w.open(ctx); err != nil {
				w.log.Error("Unable to watch the node for shutdown events", "err", err)
			}
		}
	}
}

// serve runs the Handler on each PrepareForShutdown until the session is
// lost or ctx ends.
func (w *Watcher) serve(ctx context.Context, s *session, events <-chan bool) {
	for {
		select {
		case <-ctx.Done():
			return
		case active, ok := <-events:
			if !ok {
				return
			}
			if active {
				w.log.Info("logind announced a node shutdown (PrepareForShutdown): stopping pods")
				w.cfg.Handler.NodeShutdown(ctx)
				if s.release() {
					w.log.Info("Released logind's inhibitor lock: the node shutdown goes on")
				}
				continue
			}
			w.log.Info("logind cancelled the node shutdown: the node returns to service")
			w.cfg.Handler.ShutdownCancelled(ctx)
			if err := s.inhibit(ctx, w.cfg.Who, why); err != nil {
				w.log.Error("Unable to take logind's inhibitor lock again after a cancelled shutdown", "err", err)
			}
		}
	}
}
