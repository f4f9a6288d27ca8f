package worker

import (
	"container/heap"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// timerQueue holds at most one due time per pod, earliest first. One
// goroutine waits for the earliest (PodWorkers.schedule), so an idle pod
// costs a heap entry, not a goroutine.
type timerQueue struct {
	items []*timerItem
	byUID map[types.UID]*timerItem
	// free keeps up to maxFreeTimers items of removed timers for reuse: a
	// pod's resync timer is armed after every SyncPod and dropped when it
	// finishes, and an item allocated per pod was one of the lifecycle's
	// few allocations.
	free []*timerItem
}

const maxFreeTimers = 1024

type timerItem struct {
	uid   types.UID
	due   time.Time
	index int
}

func newTimerQueue() *timerQueue { return &timerQueue{byUID: map[types.UID]*timerItem{}} }

// set schedules uid at due, replacing its earlier time. It reports whether
// the earliest due time changed.
func (q *timerQueue) set(uid types.UID, due time.Time) bool {
	before, _ := q.earliest()
	if it, ok := q.byUID[uid]; ok {
		it.due = due
		heap.Fix((*timerHeap)(q), it.index)
	} else {
		var it *timerItem
		if n := len(q.free); n > 0 {
			it, q.free = q.free[n-1], q.free[:n-1]
			*it = timerItem{uid: uid, due: due}
		} else {
			it = &timerItem{uid: uid, due: due}
		}
		q.byUID[uid] = it
		heap.Push((*timerHeap)(q), it)
	}
	after, _ := q.earliest()
	return !after.Equal(before)
}

func (q *timerQueue) remove(uid types.UID) {
	if it, ok := q.byUID[uid]; ok {
		heap.Remove((*timerHeap)(q), it.index)
		delete(q.byUID, uid)
		q.recycle(it)
	}
}

func (q *timerQueue) earliest() (time.Time, bool) {
	if len(q.items) == 0 {
		return time.Time{}, false
	}
	return q.items[0].due, true
}

// popDue removes and returns a pod whose time is not after now.
func (q *timerQueue) popDue(now time.Time) (types.UID, bool) {
	if len(q.items) == 0 || q.items[0].due.After(now) {
		return "", false
	}
	it := heap.Pop((*timerHeap)(q)).(*timerItem)
	delete(q.byUID, it.uid)
	uid := it.uid
	q.recycle(it)
	return uid, true
}

// recycle keeps a removed item for reuse, up to maxFreeTimers.
func (q *timerQueue) recycle(it *timerItem) {
	if len(q.free) < maxFreeTimers {
		*it = timerItem{}
		q.free = append(q.free, it)
	}
}

// timerHeap implements heap.Interface for timerQueue.
type timerHeap timerQueue

func (h *timerHeap) Len() int           { return len(h.items) }
func (h *timerHeap) Less(i, j int) bool { return h.items[i].due.Before(h.items[j].due) }
func (h *timerHeap) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.items[i].index, h.items[j].index = i, j
}
func (h *timerHeap) Push(x any) {
	it := x.(*timerItem)
	it.index = len(h.items)
	h.items = append(h.items, it)
}
func (h *timerHeap) Pop() any {
	it := h.items[len(h.items)-1]
	h.items[len(h.items)-1] = nil
	h.items = h.items[:len(h.items)-1]
	return it
}
