package runtime

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestTimersComeOutInTimeThenKeyOrderAndOnlyWhenDue(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	type want struct {
		at  time.Time
		key string
	}
	for _, bulk := range []bool{false, true} {
		var h timers
		var all []want
		for i := range 2000 {
			at := epoch.Add(time.Duration(r.IntN(500)) * time.Millisecond) // many equal times
			key := fmt.Sprintf("M-%d", r.IntN(3000))
			if bulk {
				h.add(key, at)
			} else {
				h.arm(key, at)
			}
			all = append(all, want{at, key})
			if i%7 == 0 {
				h.arm("never", time.Time{}) // a zero time arms nothing
			}
		}
		if bulk {
			h.init()
		}
		slices.SortFunc(all, func(a, b want) int {
			if c := a.at.Compare(b.at); c != 0 {
				return c
			}
			return strings.Compare(a.key, b.key)
		})
		if h.Len() != len(all) {
			t.Fatalf("bulk %v: %d entries, want %d", bulk, h.Len(), len(all))
		}
		now := epoch.Add(250 * time.Millisecond)
		var got []want
		for {
			next, ok := h.peek()
			key, due := h.popDue(now)
			if !due {
				if ok && !next.After(now) {
					t.Fatalf("bulk %v: %v is due at %v but was not popped", bulk, next, now)
				}
				if now.After(epoch.Add(time.Second)) {
					break
				}
				now = now.Add(300 * time.Millisecond)
				continue
			}
			if next.After(now) {
				t.Fatalf("bulk %v: popped a timer of %v at %v", bulk, next, now)
			}
			got = append(got, want{next, key})
		}
		if !slices.Equal(got, all) {
			t.Fatalf("bulk %v: timers came out in another order", bulk)
		}
		if at, ok := h.peek(); ok {
			t.Fatalf("bulk %v: %v left in an emptied heap", bulk, at)
		}
	}
}

func TestTimersBeyondTheRangeOfNanosecondsKeepTheirOrder(t *testing.T) {
	t.Parallel()
	var h timers
	far := time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
	past := time.Date(1200, 1, 1, 0, 0, 0, 0, time.UTC)
	h.arm("far", far)
	h.arm("soon", epoch.Add(time.Minute))
	h.arm("past", past)
	if key, ok := h.popDue(epoch); !ok || key != "past" {
		t.Fatalf("popDue(now) = %q, %v; want the timer of the year 1200, long due", key, ok)
	}
	if key, ok := h.popDue(epoch); ok {
		t.Fatalf("popDue(now) = %q; nothing else is due", key)
	}
	if key, ok := h.popDue(epoch.Add(time.Hour)); !ok || key != "soon" {
		t.Fatalf("popDue(+1h) = %q, %v; want soon", key, ok)
	}
	if key, ok := h.popDue(time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC)); ok {
		t.Fatalf("a timer of the year 9999 came out in 2262 as %q", key)
	}
	if at, ok := h.peek(); !ok || at.Year() != 2262 {
		t.Fatalf("the far timer is kept as %v, %v; want the last time nanoseconds reach", at, ok)
	}
}
