package clock

import (
	"testing"
	"time"
)

func TestFakeFiresWaitersAtTheirTimeInOrder(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := NewFake(start)
	late, early := f.After(2*time.Second), f.After(time.Second)
	f.Advance(500 * time.Millisecond)
	select {
	case <-early:
		t.Fatal("fired early")
	default:
	}
	f.Advance(600 * time.Millisecond)
	if got := <-early; !got.Equal(start.Add(1100 * time.Millisecond)) {
		t.Fatalf("fired with %v", got)
	}
	if f.Waiters() != 1 {
		t.Fatalf("%d waiters", f.Waiters())
	}
	f.Set(start) // never backwards
	if !f.Now().Equal(start.Add(1100 * time.Millisecond)) {
		t.Fatal("the clock went back")
	}
	f.Advance(time.Second)
	<-late
	if ch := f.After(0); len(ch) != 1 {
		t.Fatal("After(0) did not fire at once")
	}
}
