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

// NewCore returns a Core without a shell: for model checkers and other
// drivers that decide themselves when worker steps and timers happen, and
// carry out its effects (TakeEffects). Options.Clock, StatusCache,
// ResyncInterval, BackOffPeriod, Observer, Registerer and Logger apply as
// for New.
func NewCore(opts Options) *Core {
	opts = opts.withDefaults()
	m := newMetrics(opts.Registerer)
	newMachine := fsm.New
	if opts.CheckedFSM {
		newMachine = fsm.NewChecked
	}
	return &Core{
		machine: newMachine(observers(m, opts.Observer)), metrics: m,
		pods: map[types.UID]*podData{}, unendedLoops: map[types.UID]int{}, clock: opts.Clock, cache: opts.StatusCache,
		resync: opts.ResyncInterval, backoff: opts.BackOffPeriod, log: opts.Logger,
	}
}

// withDefaults fills in the zero fields of Options (see Options).
func (o Options) withDefaults() Options {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.ResyncInterval <= 0 {
		o.ResyncInterval = time.Minute
	}
	if o.BackOffPeriod <= 0 {
		o.BackOffPeriod = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Clone returns an independent copy of the core, for model checkers that
// branch on every input; effects not yet taken are copied too. It shares
// the original's machine observer, metrics and looplab FSM (see
// fsm.Machine.Clone): use a core and its clones from one goroutine.
func (c *Core) Clone() *Core {
	cp := *c
	cp.effects = slices.Clone(c.effects)
	cp.machine = c.machine.Clone()
	cp.unendedLoops = maps.Clone(c.unendedLoops)
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
