package worker

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// timerQueue holds at most one due time per pod, earliest first. One
// goroutine waits for the earliest (PodWorkers.schedule), so an idle pod
// costs a heap entry, not a goroutine.
//
// A removed timer is only marked dead and left in the heap until it comes
// due or the dead outnumber the live (then the heap is rebuilt without
// them): every pod's resync timer is removed when the pod finishes, and a
// heap removal walks the heap's depth of cold entries (the largest share
// of settle's time in BenchmarkCmpLifecycle's profile), where marking
// costs the map delete alone. A dead entry due first only wakes the timer
// goroutine early; popDue skips it.
type timerQueue struct {
	items []*timerItem
	byUID map[types.UID]*timerItem
	dead  int // entries of items marked dead
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
	dead  bool
}

func newTimerQueue() *timerQueue { return &timerQueue{byUID: map[types.UID]*timerItem{}} }

// set schedules uid at due, replacing its earlier time. It reports whether
// the earliest due time changed.
func (q *timerQueue) set(uid types.UID, due time.Time) bool {
	before, _ := q.earliest()
	if it, ok := q.byUID[uid]; ok {
		it.due = due
		q.fix(it.index)
	} else {
		var it *timerItem
		if n := len(q.free); n > 0 {
			it, q.free = q.free[n-1], q.free[:n-1]
			*it = timerItem{uid: uid, due: due}
		} else {
			it = &timerItem{uid: uid, due: due}
		}
		q.byUID[uid] = it
		it.index = len(q.items)
		q.items = append(q.items, it)
		q.up(it.index)
	}
	after, _ := q.earliest()
	return !after.Equal(before)
}

// remove drops uid's timer (marks it dead; see timerQueue).
func (q *timerQueue) remove(uid types.UID) {
	it, ok := q.byUID[uid]
	if !ok {
		return
	}
	delete(q.byUID, uid)
	it.dead = true
	q.dead++
	if q.dead > len(q.items)/2+64 {
		q.compact()
	}
}

// compact rebuilds the heap without its dead entries.
func (q *timerQueue) compact() {
	live := q.items[:0]
	for _, it := range q.items {
		if it.dead {
			q.recycle(it)
			continue
		}
		it.index = len(live)
		live = append(live, it)
	}
	clear(q.items[len(live):])
	q.items, q.dead = live, 0
	for i := len(q.items)/2 - 1; i >= 0; i-- {
		q.down(i)
	}
}

func (q *timerQueue) earliest() (time.Time, bool) {
	if len(q.items) == 0 {
		return time.Time{}, false
	}
	return q.items[0].due, true
}

// popDue removes and returns a pod whose time is not after now, and that
// time.
func (q *timerQueue) popDue(now time.Time) (types.UID, time.Time, bool) {
	for len(q.items) > 0 && !q.items[0].due.After(now) {
		it := q.pop()
		if it.dead {
			q.dead--
			q.recycle(it)
			continue
		}
		delete(q.byUID, it.uid)
		uid, due := it.uid, it.due
		q.recycle(it)
		return uid, due, true
	}
	return "", time.Time{}, false
}

// recycle keeps a removed item for reuse, up to maxFreeTimers.
func (q *timerQueue) recycle(it *timerItem) {
	if len(q.free) < maxFreeTimers {
		*it = timerItem{}
		q.free = append(q.free, it)
	}
}

// The heap: container/heap's algorithms on items, without its interface
// calls.

func (q *timerQueue) less(i, j int) bool { return q.items[i].due.Before(q.items[j].due) }

func (q *timerQueue) swap(i, j int) {
	q.items[i], q.items[j] = q.items[j], q.items[i]
	q.items[i].index, q.items[j].index = i, j
}

func (q *timerQueue) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !q.less(j, i) {
			break
		}
		q.swap(i, j)
		j = i
	}
}

func (q *timerQueue) down(i int) bool {
	i0, n := i, len(q.items)
	for {
		j := 2*i + 1
		if j >= n {
			break
		}
		if j2 := j + 1; j2 < n && q.less(j2, j) {
			j = j2
		}
		if !q.less(j, i) {
			break
		}
		q.swap(i, j)
		i = j
	}
	return i > i0
}

func (q *timerQueue) fix(i int) {
	if !q.down(i) {
		q.up(i)
	}
}

// pop removes and returns the earliest entry.
func (q *timerQueue) pop() *timerItem {
	n := len(q.items) - 1
	q.swap(0, n)
	it := q.items[n]
	q.items[n] = nil
	q.items = q.items[:n]
	q.down(0)
	return it
}

// TimerQueue is PodWorkers' timer queue for a model checker that carries
// out the Core's ArmTimer and StopTimer effects with the engine's own
// queue, so that a timer the queue hands out after its entry ended (or
// from an earlier incarnation of a UID) is seen (explore's NoStaleTimer).
type TimerQueue struct{ q *timerQueue }

// NewTimerQueue returns an empty queue.
func NewTimerQueue() *TimerQueue { return &TimerQueue{newTimerQueue()} }

// Set schedules uid at due, replacing its earlier time (ArmTimer).
func (t *TimerQueue) Set(uid types.UID, due time.Time) { t.q.set(uid, due) }

// Remove drops uid's timer (StopTimer).
func (t *TimerQueue) Remove(uid types.UID) { t.q.remove(uid) }

// PopDue removes and returns a pod whose time is not after now, and that
// time, as PodWorkers' timer goroutine takes the next timer to fire.
func (t *TimerQueue) PopDue(now time.Time) (types.UID, time.Time, bool) { return t.q.popDue(now) }

// CopyInto makes dst a copy of t (dead entries included), reusing dst's
// entries; dst nil is a new queue.
func (t *TimerQueue) CopyInto(dst *TimerQueue) *TimerQueue {
	if dst == nil {
		dst = NewTimerQueue()
	}
	d, s := dst.q, t.q
	old := d.items
	d.items = d.items[:0]
	clear(d.byUID)
	for i, it := range s.items {
		var x *timerItem
		if i < len(old) && old[i] != nil {
			x = old[i]
		} else {
			x = new(timerItem)
		}
		*x = *it
		d.items = append(d.items, x)
		if !x.dead {
			d.byUID[x.uid] = x
		}
	}
	d.dead = s.dead
	return dst
}
