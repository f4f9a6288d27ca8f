package worker

import (
	"log/slog"
	"maps"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/podlife/podlife/fsm"
)

// NewCore returns a Core driven by d instead of by PodWorkers' goroutines:
// for model checkers and other drivers that decide themselves when worker
// steps and timers happen. Options.Clock, StatusCache, ResyncInterval,
// BackOffPeriod, Observer, Registerer and Logger apply as for New.
func NewCore(d Driver, opts Options) *Core {
	var clk clock.PassiveClock = clock.RealClock{}
	if opts.Clock != nil {
		clk = opts.Clock
	}
	if opts.ResyncInterval <= 0 {
		opts.ResyncInterval = time.Minute
	}
	if opts.BackOffPeriod <= 0 {
		opts.BackOffPeriod = 10 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return newCore(coreConfig{
		driver: d, clock: clk, cache: opts.StatusCache, resync: opts.ResyncInterval, backoff: opts.BackOffPeriod,
		metrics: newMetrics(opts.Registerer), observer: opts.Observer, log: opts.Logger,
	})
}

// Clone returns an independent copy of the core driven by d, for model
// checkers that branch on every input. It shares the original's machine
// observer, metrics and looplab FSM (see fsm.Machine.Clone): use a core and
// its clones from one goroutine.
func (c *Core) Clone(d Driver) *Core {
	cp := *c
	cp.driver = d
	cp.machine = c.machine.Clone()
	cp.loops = maps.Clone(c.loops)
	cp.pods = make(map[types.UID]*podData, len(c.pods))
	for uid, pd := range c.pods {
		x := *pd
		x.waiters = slices.Clone(pd.waiters)
		cp.pods[uid] = &x
	}
	return &cp
}

// Record returns a copy of the pod's lifecycle record (ok is false when the
// UID has none).
func (c *Core) Record(uid types.UID) (fsm.Record, bool) { return c.machine.Get(uid) }

// Synced reports whether SyncKnownPods has run.
func (c *Core) Synced() bool { return c.machine.Synced() }

// Waiting returns the static pods waiting for the full name, in order.
func (c *Core) Waiting(fullName string) []types.UID { return c.machine.Waiting(fullName) }
