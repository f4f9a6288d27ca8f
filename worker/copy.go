package worker

import (
	"slices"

	"k8s.io/apimachinery/pkg/types"
)

// CopyInto makes dst a copy of c, as Clone would, but reuses dst's maps
// and per-pod data instead of allocating new ones (the waiter arrays are
// shared clipped, as Clone shares them; the untaken effects are copied
// into dst's own array, as Clone copies them): a model checker
// that resets a scratch core to a state for every input it tries then
// allocates nothing. dst may be nil (then it is Clone). dst shares c's
// machine observer, metrics and looplab FSM afterwards (see Clone): use
// both from one goroutine. TestCopyIntoCopiesEveryField fails when Core or
// podData gains a field this does not handle.
func (c *Core) CopyInto(dst *Core) *Core {
	if dst == nil {
		return c.Clone()
	}
	machine, pods, loops, effects := dst.machine, dst.pods, dst.unendedLoops, dst.effects
	*dst = *c
	dst.machine = c.machine.CopyInto(machine)
	if loops == nil {
		loops = make(map[types.UID]int, len(c.unendedLoops))
	}
	clear(loops)
	for uid, n := range c.unendedLoops {
		loops[uid] = n
	}
	dst.unendedLoops = loops
	// Every core owns its effects array (Clone and CopyInto copy), so dst's
	// may be reused: a shared one would let TakeEffects and a later emit on
	// one side overwrite the other's untaken effects.
	dst.effects = append(effects[:0], c.effects...)
	if pods == nil {
		pods = make(map[types.UID]*podData, len(c.pods))
	}
	for uid := range pods {
		if _, ok := c.pods[uid]; !ok {
			delete(pods, uid)
		}
	}
	for uid, pd := range c.pods {
		x := pods[uid]
		if x == nil {
			x = new(podData)
			pods[uid] = x
		}
		*x = *pd
		x.waiters = slices.Clip(pd.waiters)
	}
	dst.pods = pods
	return dst
}
