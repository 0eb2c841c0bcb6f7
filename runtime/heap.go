package runtime

import (
	"container/heap"
	"time"
)

// timers is a min-heap of armed timers. Re-arming a key pushes a new entry
// and leaves the old one in place: the core ignores a timer that is no
// longer armed, and a stale entry leaves the heap when its time comes. No
// index is kept, which keeps a million armed timers small.
type timers []timerItem

type timerItem struct {
	at  time.Time
	key string
}

func (t timers) Len() int { return len(t) }
func (t timers) Less(i, j int) bool {
	if !t[i].at.Equal(t[j].at) {
		return t[i].at.Before(t[j].at)
	}
	return t[i].key < t[j].key
}
func (t timers) Swap(i, j int) { t[i], t[j] = t[j], t[i] }
func (t *timers) Push(x any)   { *t = append(*t, x.(timerItem)) }
func (t *timers) Pop() any {
	old := *t
	n := len(old) - 1
	it := old[n]
	*t = old[:n]
	return it
}

// arm adds a timer; a zero time arms nothing.
func (t *timers) arm(key string, at time.Time) {
	if !at.IsZero() {
		heap.Push(t, timerItem{at: at, key: key})
	}
}

// peek returns the earliest timer.
func (t timers) peek() (timerItem, bool) {
	if len(t) == 0 {
		return timerItem{}, false
	}
	return t[0], true
}

// popDue removes and returns the earliest timer if it is due at now.
func (t *timers) popDue(now time.Time) (timerItem, bool) {
	it, ok := t.peek()
	if !ok || it.at.After(now) {
		return timerItem{}, false
	}
	heap.Pop(t)
	return it, true
}
