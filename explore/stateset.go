package explore

import (
	"math/bits"
	"sync"
)

// setShards is the number of independently locked parts of the visited
// set: with one lane per core, two lanes rarely wait for the same one.
const (
	setShardBits = 6
	setShards    = 1 << setShardBits
)

// stateSet is the visited set: every distinct state's key and its node,
// in open-addressed tables (linear probing) without pointers, so that the
// garbage collector never scans them, split into setShards parts by the
// key's hash, each behind its own lock, so that the lanes of a level
// insert concurrently. A slot takes 24 bytes.
//
// A state first found in the level being expanded is fresh: its slot
// holds ^i, where i indexes the shard's fresh list, until the level ends
// and settle gives it its final node number.
type stateSet struct {
	shards [setShards]setShard
}

type setShard struct {
	mu    sync.Mutex
	slots []setSlot
	used  int
	// fresh lists the states first found in this level, with the
	// smallest (parent, input) that reaches them so far.
	fresh []freshState
	_     [64]byte // keeps neighbouring shards' locks off one cache line
}

type setSlot struct {
	k    key
	node int32
	full bool
}

// freshState is a state first found in the current level: the step that
// found it first in the sequential order (the smallest parent, then the
// smallest input), and the simulation of the lane that inserted it.
type freshState struct {
	k      key
	parent int32
	input  int16
	lane   int16
	sim    *sim
}

// freshRef names a fresh state: its shard and index in the shard's fresh
// list, packed into a negative int32 (^(shard<<24 | index)).
func freshRef(shard, i int) int32 { return ^int32(shard<<(31-setShardBits) | i) }

func splitFreshRef(ref int32) (shard, i int) {
	x := int(^ref)
	return x >> (31 - setShardBits), x & (1<<(31-setShardBits) - 1)
}

func hashKey(k key) uint64 {
	h := k[0]*0x9e3779b97f4a7c15 ^ bits.RotateLeft64(k[1]*0xc2b2ae3d27d4eb4f, 31)
	h ^= h >> 29
	h *= 0xbf58476d1ce4e5b9
	return h ^ h>>32
}

// visit returns k's node, inserting k as a fresh state found from parent
// by input (with the lane's simulation sm) when it is new; for a fresh
// state it keeps the smallest (parent, input). isNew reports an insertion.
func (s *stateSet) visit(k key, parent int32, input int16, lane int, sm *sim) (node int32, isNew bool) {
	h := hashKey(k)
	si := int(h >> (64 - setShardBits))
	sh := &s.shards[si]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	i, ok := sh.find(k, h)
	if ok {
		node = sh.slots[i].node
		if node < 0 {
			_, fi := splitFreshRef(node)
			f := &sh.fresh[fi]
			if parent < f.parent || parent == f.parent && input < f.input {
				// The kept simulation came another way: the explorer's own
				// shell variables (sim.hist) follow the path, so the next
				// level rebuilds it by replaying the shortest one.
				f.parent, f.input, f.sim = parent, input, nil
			}
		}
		return node, false
	}
	node = freshRef(si, len(sh.fresh))
	sh.fresh = append(sh.fresh, freshState{k: k, parent: parent, input: input, lane: int16(lane), sim: sm})
	sh.slots[i] = setSlot{k: k, node: node, full: true}
	sh.used++
	if sh.used*4 > len(sh.slots)*3 {
		sh.grow()
	}
	return node, true
}

// insertSettled adds a state with its final node number (the initial
// state).
func (s *stateSet) insertSettled(k key, node int32) {
	h := hashKey(k)
	sh := &s.shards[h>>(64-setShardBits)]
	i, _ := sh.find(k, h)
	sh.slots[i] = setSlot{k: k, node: node, full: true}
	sh.used++
}

// settle gives the fresh state k its node number.
func (s *stateSet) settle(k key, node int32) {
	h := hashKey(k)
	sh := &s.shards[h>>(64-setShardBits)]
	i, _ := sh.find(k, h)
	sh.slots[i].node = node
}

// find returns the slot of k, or the empty slot where it belongs.
func (sh *setShard) find(k key, h uint64) (int, bool) {
	if sh.slots == nil {
		sh.slots = make([]setSlot, 1024)
	}
	mask := len(sh.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		sl := &sh.slots[i]
		if !sl.full {
			return i, false
		}
		if sl.k == k {
			return i, true
		}
	}
}

func (sh *setShard) grow() {
	old := sh.slots
	sh.slots = make([]setSlot, 2*len(old))
	mask := len(sh.slots) - 1
	for _, sl := range old {
		if !sl.full {
			continue
		}
		i := int(hashKey(sl.k)) & mask
		for sh.slots[i].full {
			i = (i + 1) & mask
		}
		sh.slots[i] = sl
	}
}
