package sim

import (
	"fmt"
	"time"

	"wilco/core"
)

// notifyPolicy is a policy of two hooks that hear of what happens in the
// simulation (agents going unresponsive, operations), with a short retry
// policy, from the webhook's own random stream.
func (w *world) notifyPolicy() core.NotifyPolicy {
	base := time.Duration(1+w.nrng.IntN(5)) * time.Second
	return core.NotifyPolicy{
		Hooks: []core.NotifyHook{
			{Name: "pager", Events: []core.NotifyEvent{core.NotifyUnresponsive, core.NotifyOperation}},
			{Name: "chat", Events: []core.NotifyEvent{core.NotifyOperation}},
		},
		MaxAttempts: 1 + w.nrng.IntN(5),
		BackoffBase: base,
		BackoffMax:  base * time.Duration(1+w.nrng.IntN(4)),
	}
}

func attemptKey(id string, attempt int) string { return fmt.Sprintf("%s#%d", id, attempt) }

// notified is the webhook receiving an attempt: it answers later, with a
// 2xx, a 5xx or an error.
func (w *world) notified(e core.Notify) {
	if w.st.dead() {
		w.hit("effect.lost_in_crash")
		return
	}
	id := e.Notification.ID
	if w.st.last != w.live.Seq() {
		w.failf("notification %s attempted with seq %d durable, the core is at %d", id, w.st.last, w.live.Seq())
	}
	if n, ok := w.live.Notification(id); !ok || !n.InFlight() || n.Attempts+1 != e.Attempt {
		w.failf("attempt %d of notification %s made, which is not under way: %+v", e.Attempt, id, n)
	}
	w.hit("notify.attempt")
	w.inflight[attemptKey(id, e.Attempt)]++
	r := core.NotificationResult{ID: id, Attempt: e.Attempt}
	switch w.nrng.IntN(4) {
	case 0, 1:
		r.Status = 200 + w.nrng.IntN(5)
	case 2:
		r.Status = 500 + w.nrng.IntN(4)
	default:
		r.Error = "connection refused"
	}
	delay := time.Duration(w.nrng.Int64N(int64(5*time.Second/time.Millisecond)+1)) * time.Millisecond
	w.schedule(action{at: w.clock.Now().Add(delay), kind: actNotified, id: id, note: r})
}

// endNotification reports an attempt's result; after a restart made the
// attempt again, one of the two reports is refused as stale.
func (w *world) endNotification(a action) {
	key := attemptKey(a.note.ID, a.note.Attempt)
	if w.inflight[key]--; w.inflight[key] <= 0 {
		delete(w.inflight, key)
	}
	w.tracef("notification %s attempt %d: status %d %q", a.note.ID, a.note.Attempt, a.note.Status, a.note.Error)
	r := w.do("end notification "+a.note.ID, func(c *core.State, now time.Time) (any, error) {
		return c.EndNotification(now, a.note)
	})
	switch {
	case !r.answered || w.st.crashed != noFault:
		// The report died with wilco: the attempt is still under way in
		// what is durable, and is made again after the restart.
		w.hit("notify.report_lost_in_crash")
	case r.err == nil:
		n := r.v.(core.Notification)
		w.hit("notify." + string(n.State))
	case core.CodeOf(r.err) == core.Conflict:
		w.hit("notify.stale")
	default:
		w.failf("ending notification %s: %v", a.note.ID, r.err)
	}
}

// checkNotifications: no notification is lost. Each pending one has its
// attempt under way at the webhook, or its timer armed (checkTimers sees
// that it fires).
func (w *world) checkNotifications() {
	if w.st.crashed != noFault || !w.cfg.Notify {
		return
	}
	for _, n := range w.live.Notifications(func(n *core.Notification) bool { return n.State == core.NotePending }) {
		if n.InFlight() && w.inflight[attemptKey(n.ID, n.Attempts+1)] == 0 {
			w.failf("notification %s is pending, its attempt %d under way nowhere and no timer armed: it is lost", n.ID, n.Attempts+1)
		}
		if !n.InFlight() && n.Attempts == 0 {
			w.failf("notification %s waits for a retry without an attempt made", n.ID)
		}
	}
}
