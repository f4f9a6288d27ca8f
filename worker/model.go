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
// carry out its effects (TakeEffects). Options.ResyncInterval,
// BackOffPeriod, Jitter, Observer, Registerer, Logger and CheckedFSM apply
// as for New; Clock only times the latency metric; with a StatusCache the
// Core hands out Work without a status (its shell fetches it).
func NewCore(opts Options) *Core {
	opts = opts.withDefaults()
	m := newMetrics(opts.Registerer)
	newMachine := fsm.New
	if opts.CheckedFSM {
		newMachine = fsm.NewChecked
	}
	return &Core{
		machine: newMachine(observers(m, opts.Observer)), metrics: m,
		pods: map[types.UID]*podData{}, unendedLoops: map[types.UID]int{}, clock: opts.Clock, identityStatus: opts.StatusCache == nil || opts.SyncersReadRuntime,
		jitter: opts.Jitter, resync: opts.ResyncInterval, backoff: opts.BackOffPeriod, log: opts.Logger,
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
	if o.Jitter == nil {
		o.Jitter = jitter
	}
	return o
}

// Clone returns an independent copy of the core, for model checkers that
// branch on every input; effects not yet taken are copied into the clone's
// own array (a shared one would let TakeEffects and a later emit on one
// side overwrite the other's untaken effects). The state
// holds no handle (see Core), so this is a structured copy: the maps of
// values copied wholesale, the per-pod data in one allocation, the waiter
// arrays shared clipped (an append on either side copies). It shares the
// original's machine observer, metrics and looplab FSM (see
// fsm.Machine.Clone): use a core and its clones from one goroutine.
func (c *Core) Clone() *Core {
	cp := *c
	cp.effects = slices.Clone(c.effects)
	cp.machine = c.machine.Clone()
	cp.unendedLoops = maps.Clone(c.unendedLoops)
	cp.pods = make(map[types.UID]*podData, len(c.pods))
	data := make([]podData, 0, len(c.pods))
	for uid, pd := range c.pods {
		data = append(data, *pd)
		x := &data[len(data)-1]
		x.waiters = slices.Clip(pd.waiters)
		cp.pods[uid] = x
	}
	return &cp
}

// Record returns a copy of the pod's lifecycle record (ok is false when the
// UID has none).
func (c *Core) Record(uid types.UID) (fsm.Record, bool) { return c.machine.Get(uid) }

// CheckBookkeeping verifies the lifecycle records' bookkeeping
// (fsm.Machine.CheckBookkeeping), for a model checker after every input.
func (c *Core) CheckBookkeeping() error { return c.machine.CheckBookkeeping() }

// Synced reports whether SyncKnownPods has run.
func (c *Core) Synced() bool { return c.machine.Synced() }

// Waiting returns the static pods waiting for the full name, in order.
func (c *Core) Waiting(fullName string) []types.UID { return c.machine.Waiting(fullName) }
