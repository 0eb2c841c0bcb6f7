package runtime

import (
	"math"
	"time"
)

// timers is a min-heap of armed timers. Re-arming a key pushes a new entry
// and leaves the old one in place: the core ignores a timer that is no
// longer armed, and a stale entry leaves the heap when its time comes. No
// index is kept, which keeps a million armed timers small.
//
// Every send arms a timer and most are answered long before it is due, so
// the loop pops about as many stale entries as live ones: the heap is
// typed and keeps times as Unix nanoseconds, so that a push or a pop costs
// integer comparisons, not interface calls, boxing and time.Time methods.
type timers []timerItem

type timerItem struct {
	at  int64 // Unix nanoseconds (see nanos)
	key string
}

// Unix nanoseconds reach from 1677 to 2262.
var (
	minNanos = time.Unix(0, math.MinInt64)
	maxNanos = time.Unix(0, math.MaxInt64)
)

// nanos is t in Unix nanoseconds. A time past 2262 (a deadline a user gave
// as the year 9999) is kept as 2262: it still sorts after every other
// timer, and the core ignores a timer that comes before its time. A time
// before 1677 is long due either way.
func nanos(t time.Time) int64 {
	switch {
	case t.After(maxNanos):
		return math.MaxInt64
	case t.Before(minNanos):
		return math.MinInt64
	}
	return t.UnixNano()
}

func (a timerItem) less(b timerItem) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.key < b.key
}

// Len is how many entries the heap holds, stale ones included.
func (t timers) Len() int { return len(t) }

// add appends a timer without restoring the heap order: init must follow.
// A restart adds a million this way rather than sorting them.
func (t *timers) add(key string, at time.Time) {
	if !at.IsZero() {
		*t = append(*t, timerItem{at: nanos(at), key: key})
	}
}

// init establishes the heap order, in linear time.
func (t timers) init() {
	for i := len(t)/2 - 1; i >= 0; i-- {
		t.down(i)
	}
}

// arm adds a timer; a zero time arms nothing.
func (t *timers) arm(key string, at time.Time) {
	if at.IsZero() {
		return
	}
	*t = append(*t, timerItem{at: nanos(at), key: key})
	t.up(len(*t) - 1)
}

// peek returns when the earliest timer is due.
func (t timers) peek() (time.Time, bool) {
	if len(t) == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, t[0].at).UTC(), true
}

// popDue removes the earliest timer and returns its key if it is due at
// now.
func (t *timers) popDue(now time.Time) (string, bool) {
	h := *t
	if len(h) == 0 || h[0].at > nanos(now) {
		return "", false
	}
	key := h[0].key
	n := len(h) - 1
	h[0] = h[n]
	h[n] = timerItem{} // let the key go
	*t = h[:n]
	t.down(0)
	return key, true
}

func (t timers) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !t[i].less(t[p]) {
			return
		}
		t[i], t[p] = t[p], t[i]
		i = p
	}
}

func (t timers) down(i int) {
	n := len(t)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if r := c + 1; r < n && t[r].less(t[c]) {
			c = r
		}
		if !t[c].less(t[i]) {
			return
		}
		t[i], t[c] = t[c], t[i]
		i = c
	}
}
