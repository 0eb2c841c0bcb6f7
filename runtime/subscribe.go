package runtime

import (
	"context"
	"sync"
	"time"

	"wilco/core"
	"wilco/store"
)

// Subscription receives every committed event after From, in order, until
// it is dropped (it fell behind) or the runtime closes.
type Subscription struct {
	// C carries the events; it is closed when the subscription ends.
	C <-chan store.Event
	// From is the seq of the last event committed before the subscription
	// began; C carries events after it.
	From uint64

	r      *Runtime
	ch     chan store.Event
	filter func(store.Event) bool
	once   sync.Once
	mu     sync.Mutex
	err    error
}

// Err says why the subscription ended: ErrSlow, ErrClosed, ErrStopped, or
// nil while it runs or after Cancel.
func (s *Subscription) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *Subscription) end(err error) {
	s.once.Do(func() {
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
		close(s.ch)
	})
}

// Cancel ends the subscription.
func (s *Subscription) Cancel() {
	s.r.subsMu.Lock()
	delete(s.r.subs, s)
	s.r.subsMu.Unlock()
	s.end(nil)
}

// Subscribe registers a subscriber to committed events that filter (nil:
// all) accepts. The registration is made on the loop, so From is exact:
// every event up to From is in the store, every later one comes on C.
func (r *Runtime) Subscribe(ctx context.Context, filter func(store.Event) bool, buffer int) (*Subscription, error) {
	if buffer <= 0 {
		buffer = r.cfg.SubscriberBuffer
	}
	ch := make(chan store.Event, buffer)
	s := &Subscription{C: ch, r: r, ch: ch, filter: filter}
	if sb := r.standby; sb != nil {
		// Registered under the core's read lock: CatchUp applies and
		// publishes under its write lock, so From is exact here too.
		sb.mu.RLock()
		defer sb.mu.RUnlock()
		r.mu.Lock()
		closed := r.closed
		r.mu.Unlock()
		if closed {
			return nil, ErrClosed
		}
		s.From = r.core.Seq()
		r.subsMu.Lock()
		r.subs[s] = struct{}{}
		r.subsMu.Unlock()
		return s, nil
	}
	_, err := r.Do(ctx, func(c *core.State, _ time.Time) (any, error) {
		s.From = c.Seq()
		r.subsMu.Lock()
		r.subs[s] = struct{}{}
		r.subsMu.Unlock()
		return nil, nil
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// publish hands committed events to every subscriber without waiting: a
// subscriber whose buffer is full is dropped.
func (r *Runtime) publish(events []store.Event) {
	r.subsMu.Lock()
	defer r.subsMu.Unlock()
	for s := range r.subs {
	events:
		for _, ev := range events {
			if ev.Seq <= s.From || s.filter != nil && !s.filter(ev) {
				continue
			}
			select {
			case s.ch <- ev:
			default:
				delete(r.subs, s)
				s.end(ErrSlow)
				break events
			}
		}
	}
}

// StreamFilter selects the events Follow yields.
type StreamFilter struct {
	After  uint64
	TaskID string
	Agent  string
}

func (f StreamFilter) match(ev store.Event) bool {
	return (f.TaskID == "" || ev.TaskID == f.TaskID) && (f.Agent == "" || ev.Agent == f.Agent)
}

// Follow yields every event after f.After that matches f — first from the
// stored log, then live — with no gap and no duplicate, until yield returns
// false, ctx ends, or the subscription is dropped (ErrSlow: resume with
// After set to the last seq seen).
func (r *Runtime) Follow(ctx context.Context, f StreamFilter, buffer int, yield func(store.Event) bool) error {
	sub, err := r.Subscribe(ctx, f.match, buffer)
	if err != nil {
		return err
	}
	defer sub.Cancel()
	last := f.After
	for last < sub.From {
		page, err := r.cfg.Store.Events(ctx, store.Filter{After: last, TaskID: f.TaskID, Agent: f.Agent, Limit: 1000})
		if err != nil {
			return err
		}
		if len(page) == 0 {
			break
		}
		for _, ev := range page {
			if ev.Seq > sub.From {
				break
			}
			if !yield(ev) {
				return nil
			}
			last = ev.Seq
		}
		if page[len(page)-1].Seq >= sub.From {
			break
		}
		last = max(last, page[len(page)-1].Seq)
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-sub.C:
			if !ok {
				return sub.Err()
			}
			if ev.Seq <= last {
				continue
			}
			if !yield(ev) {
				return nil
			}
			last = ev.Seq
		}
	}
}
