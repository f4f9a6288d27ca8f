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
}

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
		it := &timerItem{uid: uid, due: due}
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
	return it.uid, true
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
