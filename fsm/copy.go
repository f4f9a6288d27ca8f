package fsm

import "k8s.io/apimachinery/pkg/types"

// CopyInto makes dst a copy of m, as Clone would, but reuses dst's maps
// and slices instead of allocating new ones: a model checker that
// resets a scratch machine to a state thousands of times per second then
// allocates nothing. dst may be nil (then it is Clone). dst shares m's
// looplab FSM afterwards (see Clone): use both from one goroutine.
// TestCopyIntoCopiesEveryField fails when Machine gains a field this does
// not handle.
func (m *Machine) CopyInto(dst *Machine) *Machine {
	if dst == nil {
		return m.Clone()
	}
	recs, index, slots, waiting := dst.recs, dst.index, dst.slots, dst.waiting
	*dst = *m // the lookup cache (hitUID, hitAt) holds: recs keeps m's order
	dst.recs = append(recs[:0], m.recs...)
	dst.index = copyMap(index, m.index)
	dst.slots = copyMap(slots, m.slots)
	if waiting == nil {
		waiting = make(map[string][]types.UID, len(m.waiting))
	}
	for k := range waiting {
		if _, ok := m.waiting[k]; !ok {
			delete(waiting, k)
		}
	}
	for k, v := range m.waiting {
		waiting[k] = append(waiting[k][:0], v...)
	}
	dst.waiting = waiting
	return dst
}

// copyMap makes dst (allocated if nil) equal to src and returns it.
func copyMap[K comparable, V any](dst, src map[K]V) map[K]V {
	if dst == nil {
		dst = make(map[K]V, len(src))
	}
	clear(dst)
	for k, v := range src {
		dst[k] = v
	}
	return dst
}
