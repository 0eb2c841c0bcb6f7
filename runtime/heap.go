package runtime

import (
	"container/heap"
	"time"
)

// timers is a min-heap of armed timers, one per key.
type timers struct {
	items []timerItem
	index map[string]int
}

type timerItem struct {
	key string
	at  time.Time
}

func newTimers() *timers { return &timers{index: map[string]int{}} }

func (t *timers) Len() int { return len(t.items) }
func (t *timers) Less(i, j int) bool {
	if !t.items[i].at.Equal(t.items[j].at) {
		return t.items[i].at.Before(t.items[j].at)
	}
	return t.items[i].key < t.items[j].key
}
func (t *timers) Swap(i, j int) {
	t.items[i], t.items[j] = t.items[j], t.items[i]
	t.index[t.items[i].key] = i
	t.index[t.items[j].key] = j
}
func (t *timers) Push(x any) {
	it := x.(timerItem)
	t.index[it.key] = len(t.items)
	t.items = append(t.items, it)
}
func (t *timers) Pop() any {
	n := len(t.items) - 1
	it := t.items[n]
	t.items = t.items[:n]
	delete(t.index, it.key)
	return it
}

// set arms key at at, replacing its timer; a zero at disarms it.
func (t *timers) set(key string, at time.Time) {
	i, ok := t.index[key]
	switch {
	case at.IsZero() && ok:
		heap.Remove(t, i)
	case at.IsZero():
	case ok:
		t.items[i].at = at
		heap.Fix(t, i)
	default:
		heap.Push(t, timerItem{key: key, at: at})
	}
}

// peek returns the earliest timer.
func (t *timers) peek() (timerItem, bool) {
	if len(t.items) == 0 {
		return timerItem{}, false
	}
	return t.items[0], true
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
