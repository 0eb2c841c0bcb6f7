package core

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// notifyBundle is a task bundle whose policies have the given hooks and a
// retry policy of 1s doubling up to 4s, 4 attempts at most.
func notifyBundle(t *testing.T, hooks ...NotifyHook) *testBundle {
	b := taskBundle(t)
	p := DefaultPolicies()
	p.Notify = NotifyPolicy{Hooks: hooks, MaxAttempts: 4, BackoffBase: time.Second, BackoffMax: 4 * time.Second}
	b.ok(b.c.Configure(b.now, p))
	return b
}

func hook(name string, events ...NotifyEvent) NotifyHook {
	if len(events) == 0 {
		events = DefaultNotifyEvents()
	}
	return NotifyHook{Name: name, Events: events}
}

// notifies are the Notify effects produced so far.
func (b *testBundle) notifies() []Notify {
	var out []Notify
	for _, e := range b.effects {
		if n, ok := e.(Notify); ok {
			out = append(out, n)
		}
	}
	return out
}

func (b *testBundle) notification(id string) Notification {
	b.t.Helper()
	n, ok := b.c.Notification(id)
	if !ok {
		b.t.Fatalf("no notification %s", id)
	}
	return n
}

// endNotification reports an attempt's result.
func (b *testBundle) endNotification(r NotificationResult) Notification {
	b.t.Helper()
	n, err := b.c.EndNotification(b.now, r)
	b.ok(err)
	return n
}

// escalateNow submits a task and escalates it after one failed attempt.
func escalateNow(b *testBundle) Task {
	b.t.Helper()
	p := b.c.Policies()
	p.Loop.EscalateAfter = 1
	b.ok(b.c.Configure(b.now, p))
	tk := submit(b, TaskSpec{Description: "Add a flag\nwith its tests"})
	failAttempt(b, tk.ID)
	if got := b.task(tk.ID); got.State != Escalated {
		b.t.Fatalf("task %s", got.State)
	}
	return tk
}

func TestNotificationIsQueuedWithTheEventThatCallsForIt(t *testing.T) {
	t.Parallel()
	b := notifyBundle(t, hook("ops"))
	tk := escalateNow(b)
	var state, queued int
	for i, ev := range b.events {
		if e, ok := ev.Data.(TaskStateChanged); ok && e.To == Escalated {
			state = i
		}
		if ev.Type == TypeNotificationQueued {
			queued = i
		}
	}
	if queued != state+1 {
		t.Fatalf("the notification is event %d, the escalation %d: not recorded with it", queued, state)
	}
	ns := b.notifies()
	if len(ns) != 1 || ns[0].Attempt != 1 {
		t.Fatalf("notify effects %+v", ns)
	}
	n := ns[0].Notification
	if n.Hook != "ops" || n.Event != NotifyEscalated || n.TaskID != tk.ID || n.Status != "escalated" || n.Subject != "Add a flag" ||
		!strings.Contains(n.Reason, "1 failed attempt") && n.Reason == "" || n.State != NotePending || n.Cause != b.events[state].Seq {
		t.Fatalf("notification %+v", n)
	}
	if got := b.notification(n.ID); !got.InFlight() || got.Attempts != 0 {
		t.Fatalf("stored %+v", got)
	}
}

func TestAHookHearsOnlyTheEventsItListensForAndWhatNeedsAPersonByDefault(t *testing.T) {
	t.Parallel()
	b := notifyBundle(t, hook("default"), hook("wins", NotifySuccess), hook("stuck-only", NotifyStuck))
	tk := submit(b, TaskSpec{Description: "x"})
	ackTask(b, tk.ID)
	endTurn(b, tk.ID, 0)
	verify(b, tk.ID, true)
	ns := b.notifies()
	if len(ns) != 1 || ns[0].Notification.Hook != "wins" || ns[0].Notification.Event != NotifySuccess || ns[0].Notification.Status != "success" {
		t.Fatalf("on success: %+v", ns)
	}
	if !strings.Contains(ns[0].Notification.Reason, "verif") {
		t.Fatalf("success reason %q", ns[0].Notification.Reason)
	}
	if slices.Contains(DefaultNotifyEvents(), NotifySuccess) || len(DefaultNotifyEvents()) != len(NotifyEvents())-4 {
		t.Fatalf("default events %v", DefaultNotifyEvents())
	}
}

func TestNoHookNoNotification(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	escalateNow(b)
	if len(b.notifies()) != 0 || len(b.eventsOf(TypeNotificationQueued)) != 0 {
		t.Fatal("notified without a hook")
	}
}

func TestNotificationRetriesWithBackoffOnErrorsNon2xxAndTimeouts(t *testing.T) {
	t.Parallel()
	b := notifyBundle(t, hook("ops"))
	escalateNow(b)
	id := b.notifies()[0].Notification.ID
	start := b.now

	// Attempt 1: 500 → the next in 1s.
	n := b.endNotification(NotificationResult{ID: id, Attempt: 1, Status: 500, Body: "internal error\nstack"})
	if n.State != NotePending || n.Attempts != 1 || n.LastStatus != 500 || n.LastError != "HTTP 500: internal error" || !n.TimerAt.Equal(start.Add(time.Second)) {
		t.Fatalf("after a 500: %+v", n)
	}
	if len(b.notifies()) != 1 {
		t.Fatal("sent again before the backoff")
	}
	b.advance(999 * time.Millisecond)
	if len(b.notifies()) != 1 {
		t.Fatal("sent again before the backoff elapsed")
	}
	b.advance(time.Millisecond)
	if ns := b.notifies(); len(ns) != 2 || ns[1].Attempt != 2 || !b.notification(id).InFlight() {
		t.Fatalf("attempt 2 not started at 1s: %+v", ns)
	}
	// Attempt 2: a timeout → the next in 2s.
	n = b.endNotification(NotificationResult{ID: id, Attempt: 2, Error: "no answer in 10s"})
	if n.Attempts != 2 || n.LastStatus != 0 || n.LastError != "no answer in 10s" || !n.TimerAt.Equal(b.now.Add(2*time.Second)) {
		t.Fatalf("after a timeout: %+v", n)
	}
	b.advance(2 * time.Second)
	// Attempt 3: a redirect is no delivery either → 4s.
	n = b.endNotification(NotificationResult{ID: id, Attempt: 3, Status: 302})
	if n.LastError != "HTTP 302" || !n.TimerAt.Equal(b.now.Add(4*time.Second)) {
		t.Fatalf("after a 302: %+v", n)
	}
	b.advance(4 * time.Second)
	// Attempt 4: 204 delivers.
	n = b.endNotification(NotificationResult{ID: id, Attempt: 4, Status: 204})
	if n.State != NoteDelivered || n.Attempts != 4 || n.LastStatus != 204 || n.LastError != "" || !n.DeliveredAt.Equal(b.now) || !n.TimerAt.IsZero() {
		t.Fatalf("delivered %+v", n)
	}
	if got := len(b.eventsOf(TypeNotificationAttempt)); got != 3 {
		t.Fatalf("%d failed attempts recorded, want 3", got)
	}
	if len(b.c.Timers()) != 0 {
		t.Fatalf("timers left: %v", b.c.Timers())
	}
}

func TestNotifyBackoffDoublesUpToItsMax(t *testing.T) {
	t.Parallel()
	p := DefaultNotifyPolicy()
	var got []time.Duration
	for n := 1; n <= 11; n++ {
		got = append(got, p.Wait(n))
	}
	want := []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second,
		64 * time.Second, 128 * time.Second, 256 * time.Second, 5 * time.Minute, 5 * time.Minute}
	if !slices.Equal(got, want) {
		t.Fatalf("waits %v, want %v", got, want)
	}
}

func TestNotificationFailsAfterMaxAttempts(t *testing.T) {
	t.Parallel()
	b := notifyBundle(t, hook("dead"))
	tk := escalateNow(b)
	id := b.notifies()[0].Notification.ID
	for attempt := 1; attempt <= 4; attempt++ {
		if !b.notification(id).InFlight() {
			t.Fatalf("attempt %d is not under way", attempt)
		}
		n := b.endNotification(NotificationResult{ID: id, Attempt: attempt, Status: 503})
		if attempt < 4 && n.State != NotePending {
			t.Fatalf("failed after %d attempts", attempt)
		}
		b.advance(10 * time.Second)
	}
	n := b.notification(id)
	if n.State != NoteFailed || n.Attempts != 4 || n.LastError != "HTTP 503" || n.FailedAt.IsZero() || !n.TimerAt.IsZero() {
		t.Fatalf("after 4 attempts: %+v", n)
	}
	if len(b.notifies()) != 4 {
		t.Fatalf("%d attempts made", len(b.notifies()))
	}
	// The task was never held back: it still waits for its answer, and the
	// answer goes on.
	_, err := b.c.Respond(b.now, tk.ID, RespondAbort, "")
	b.ok(err)
	if got := b.task(tk.ID); got.State != Aborted {
		t.Fatalf("task %s", got.State)
	}
}

func TestAPermanentErrorFailsTheNotificationAtOnce(t *testing.T) {
	t.Parallel()
	b := notifyBundle(t, hook("gone"))
	escalateNow(b)
	id := b.notifies()[0].Notification.ID
	n := b.endNotification(NotificationResult{ID: id, Attempt: 1, Error: "no hook gone is configured", Permanent: true})
	if n.State != NoteFailed || n.Attempts != 1 {
		t.Fatalf("%+v", n)
	}
}

func TestAResultOfAnAttemptNotUnderWayChangesNothing(t *testing.T) {
	t.Parallel()
	b := notifyBundle(t, hook("ops"))
	escalateNow(b)
	id := b.notifies()[0].Notification.ID
	_, err := b.c.EndNotification(b.now, NotificationResult{ID: id, Attempt: 2, Status: 200})
	b.refused(err, Conflict)
	b.endNotification(NotificationResult{ID: id, Attempt: 1, Status: 500})
	// Waiting for its timer: no attempt is under way.
	_, err = b.c.EndNotification(b.now, NotificationResult{ID: id, Attempt: 1, Status: 200})
	b.refused(err, Conflict)
	_, err = b.c.EndNotification(b.now, NotificationResult{ID: id, Attempt: 2, Status: 200})
	b.refused(err, Conflict)
	b.advance(time.Second)
	b.endNotification(NotificationResult{ID: id, Attempt: 2, Status: 200})
	// A duplicate of the delivered attempt.
	_, err = b.c.EndNotification(b.now, NotificationResult{ID: id, Attempt: 2, Status: 200})
	b.refused(err, Conflict)
	_, err = b.c.EndNotification(b.now, NotificationResult{ID: "N-99", Attempt: 1})
	b.refused(err, NotFound)
}

func TestNotificationsUnderWayAreSentAgainAfterARestart(t *testing.T) {
	t.Parallel()
	b := notifyBundle(t, hook("a"), hook("b"))
	escalateNow(b)
	ns := b.notifies()
	if len(ns) != 2 {
		t.Fatalf("%+v", ns)
	}
	// a's first attempt failed: it waits for its timer; b's is under way.
	b.endNotification(NotificationResult{ID: ns[0].Notification.ID, Attempt: 1, Error: "connection refused"})

	rebuilt := New()
	for _, ev := range b.events {
		if err := rebuilt.Replay(ev); err != nil {
			t.Fatal(err)
		}
	}
	resends := rebuilt.NotificationResends()
	if len(resends) != 1 || resends[0].Notification.ID != ns[1].Notification.ID || resends[0].Attempt != 1 || resends[0].Notification.Hook != "b" {
		t.Fatalf("resends %+v", resends)
	}
	timers := rebuilt.Timers()
	if len(timers) != 1 || timers[0].Key != ns[0].Notification.ID || !timers[0].At.Equal(b.now.Add(time.Second)) {
		t.Fatalf("timers after the restart %+v", timers)
	}
	if rebuilt.HasReady() {
		t.Fatal("a restart produced effects by replaying")
	}
}

func TestEachNotifyEventTellsWhatHappened(t *testing.T) {
	t.Parallel()
	t.Run("clarification", func(t *testing.T) {
		t.Parallel()
		b := notifyBundle(t, hook("h"))
		tk := submit(b, TaskSpec{Description: "x"})
		reply(b, "claude", "", "[ACK] "+tk.ID+" - CLARIFICATION_NEEDED\nUnderstanding: x\nQuestions:\n1. Which file?")
		ns := b.notifies()
		if len(ns) != 1 || ns[0].Notification.Event != NotifyClarification || ns[0].Notification.Status != "clarifying" ||
			!strings.Contains(ns[0].Notification.Reason, "Which file?") || ns[0].Notification.TaskID != tk.ID {
			t.Fatalf("%+v", ns)
		}
	})
	t.Run("blocked", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		p := DefaultPolicies()
		p.Notify.Hooks = []NotifyHook{hook("h")}
		b.ok(b.c.Configure(b.now, p))
		b.agent("m", "mailbox", "go")
		tk := submit(b, TaskSpec{Description: "x"})
		cycle(b, "m")
		reply(b, "m", "", "[ACK] "+tk.ID+" - RECEIVED")
		_, err := jsonReply(b, "m", "task-complete", `{"task_id":"`+tk.ID+`","status":"blocked","summary":"need database credentials"}`)
		b.ok(err)
		ns := b.notifies()
		if len(ns) != 1 || ns[0].Notification.Event != NotifyBlocked || !strings.Contains(ns[0].Notification.Reason, "credentials") || ns[0].Notification.Agent != "m" {
			t.Fatalf("%+v", ns)
		}
	})
	t.Run("stuck", func(t *testing.T) {
		t.Parallel()
		b := notifyBundle(t, hook("h"))
		p := b.c.Policies()
		p.Loop.HardStop = 1
		b.ok(b.c.Configure(b.now, p))
		tk := submit(b, TaskSpec{Description: "x"})
		failAttempt(b, tk.ID)
		ns := b.notifies()
		if len(ns) != 1 || ns[0].Notification.Event != NotifyStuck || !strings.Contains(ns[0].Notification.Reason, "hard stop") ||
			!strings.Contains(ns[0].Notification.Reason, ".wilco/stuck/"+tk.ID+".md") {
			t.Fatalf("%+v", ns)
		}
	})
	t.Run("unresponsive", func(t *testing.T) {
		t.Parallel()
		b := notifyBundle(t, hook("h", NotifyUnresponsive))
		tk := submit(b, TaskSpec{Description: "Fix the login page"})
		b.advance(10 * time.Minute)
		ns := b.notifies()
		if len(ns) != 1 || ns[0].Notification.Event != NotifyUnresponsive || ns[0].Notification.Agent != "claude" ||
			ns[0].Notification.TaskID != tk.ID || ns[0].Notification.Subject != "Fix the login page" || ns[0].Notification.Status != "unresponsive" {
			t.Fatalf("%+v", ns)
		}
	})
	t.Run("operation", func(t *testing.T) {
		t.Parallel()
		b := notifyBundle(t, hook("h", NotifyOperation))
		o, err := b.c.StartOperation(b.now, OperationRequest{Name: "restart", Agents: []string{"claude"}, Message: "restart your session"})
		b.ok(err)
		ns := b.notifies()
		if len(ns) != 1 || ns[0].Notification.Event != NotifyOperation || ns[0].Notification.OperationID != o.ID ||
			ns[0].Notification.Subject != "restart" || ns[0].Notification.Status != "waiting" || !strings.Contains(ns[0].Notification.Reason, "claude") {
			t.Fatalf("%+v", ns)
		}
		// The operation's own deliveries are the ones it named.
		if len(b.delivered("claude")) != 1 || b.delivered("claude")[0].ID != o.Deliveries[0] {
			t.Fatalf("operation deliveries %v, delivered %+v", o.Deliveries, b.delivered("claude"))
		}
	})
	t.Run("failed", func(t *testing.T) {
		t.Parallel()
		b := notifyBundle(t, hook("h", NotifyFailed))
		_, err := b.c.SubmitPlan(b.now, "01-01", []PlanTaskSpec{{TaskSpec: TaskSpec{Description: "ok"}}, {TaskSpec: TaskSpec{Description: " "}}})
		b.ok(err)
		ns := b.notifies()
		if len(ns) != 1 || ns[0].Notification.Event != NotifyFailed || ns[0].Notification.TaskID != "01-01:task-2" || !strings.Contains(ns[0].Notification.Reason, "malformed") {
			t.Fatalf("%+v", ns)
		}
	})
}

func TestNotifyPolicyIsValidated(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		p    func(*NotifyPolicy)
		want string
	}{
		{func(p *NotifyPolicy) { p.MaxAttempts = 0 }, "notify.retry.max_attempts"},
		{func(p *NotifyPolicy) { p.BackoffBase = 0 }, "notify.retry.backoff.base"},
		{func(p *NotifyPolicy) { p.BackoffMax = p.BackoffBase / 2 }, "notify.retry.backoff.max"},
		{func(p *NotifyPolicy) { p.Hooks = []NotifyHook{{Name: "a b"}} }, "notify.hooks[0].name"},
		{func(p *NotifyPolicy) { p.Hooks = []NotifyHook{{Name: "a"}, {Name: "a"}} }, "notify.hooks[1].name"},
		{func(p *NotifyPolicy) {
			p.Hooks = []NotifyHook{{Name: "a", Events: []NotifyEvent{"escalated", "exploded"}}}
		}, "notify.hooks[0].events[1]"},
	} {
		p := DefaultNotifyPolicy()
		c.p(&p)
		err := p.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), c.want+":") || CodeOf(err) != Invalid {
			t.Errorf("want an error on %s, got %v", c.want, err)
		}
	}
	if err := DefaultNotifyPolicy().Validate(); err != nil {
		t.Fatal(err)
	}
}

// A notification that ended more than NotificationRetention ago is pruned
// when the next one is queued; one still under way is kept however old.
func TestNotificationsAreKeptThirtyDaysAfterTheyEnd(t *testing.T) {
	t.Parallel()
	b := notifyBundle(t, hook("ops"))
	// Each task escalates (one notification) and is aborted, so that the
	// next one runs.
	escalate := func() {
		tk := escalateNow(b)
		_, err := b.c.Respond(b.now, tk.ID, RespondAbort, "")
		b.ok(err)
	}
	escalate()
	first := b.notifies()[0].Notification.ID
	b.endNotification(NotificationResult{ID: first, Attempt: 1, Status: 200})
	escalate()
	second := b.notifies()[1].Notification.ID // left under way
	b.advance(NotificationRetention - time.Minute)
	escalate() // within the retention: nothing pruned
	if _, ok := b.c.Notification(first); !ok || len(b.eventsOf(TypeNotificationsPruned)) != 0 {
		t.Fatalf("pruned within the retention: %+v", b.eventsOf(TypeNotificationsPruned))
	}
	b.advance(2 * time.Minute)
	escalate()
	pruned := b.eventsOf(TypeNotificationsPruned)
	if len(pruned) != 1 || !slices.Equal(pruned[0].Data.(NotificationsPruned).IDs, []string{first}) {
		t.Fatalf("pruned %+v, want %s alone", pruned, first)
	}
	if _, ok := b.c.Notification(first); ok {
		t.Fatalf("%s is still listed", first)
	}
	if n, ok := b.c.Notification(second); !ok || n.State != NotePending {
		t.Fatalf("the notification under way: %+v, %v", n, ok)
	}
	if got := len(b.c.Notifications(nil)); got != 3 {
		t.Fatalf("%d notifications listed, want 3 (all but the pruned one)", got)
	}
	b.checkReplay()
}
