package core

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Notifications tell people that wilco needs them (a task escalated, a
// question, a blocked or stuck task, an unresponsive agent, an operation
// waiting for "ok", a permission question nobody answers for them) or
// that a task ended. The core decides: when an event
// that a hook listens for is emitted, a NotificationQueued for each such
// hook is emitted with it, in the same commit, and its first attempt is a
// Notify effect performed once that commit is durable. The shell reports
// how the attempt went with EndNotification; the core decides whether it
// was delivered, when to try again (the backoff policy below, with a timer)
// and when to give up. Nothing here waits on a notification: a hook that
// never answers costs a few records and timers, never a task's progress.

// NotifyEvent names what a hook listens for.
type NotifyEvent string

// Notify events.
const (
	NotifyEscalated     NotifyEvent = "escalated"     // a task went to escalated
	NotifyClarification NotifyEvent = "clarification" // an agent asked questions about a task
	NotifyBlocked       NotifyEvent = "blocked"       // a task went to blocked
	NotifyStuck         NotifyEvent = "stuck"         // a task hit the hard stop
	NotifyUnresponsive  NotifyEvent = "unresponsive"  // an agent never acknowledged
	NotifyOperation     NotifyEvent = "operation"     // an operation waits for its agents' "ok"
	NotifyPermission    NotifyEvent = "permission"    // a tmux agent asks for a permission and waits for you
	NotifySuccess       NotifyEvent = "success"       // a task was verified and ended
	NotifyFailed        NotifyEvent = "failed"        // a task failed (malformed, not retried)
	NotifyAcknowledged  NotifyEvent = "acknowledged"  // an agent acknowledged a task, with its understanding
	NotifyPullRequest   NotifyEvent = "pull_request"  // a task's verified change was pushed to a new pull request
	NotifyEnded         NotifyEvent = "ended"         // a task ended otherwise: cancelled, skipped, aborted or unverified
)

// NotifyEvents are every notify event, in the order the documentation
// lists them.
func NotifyEvents() []NotifyEvent {
	return []NotifyEvent{NotifyEscalated, NotifyClarification, NotifyBlocked, NotifyStuck, NotifyUnresponsive, NotifyOperation, NotifyPermission, NotifySuccess, NotifyFailed, NotifyAcknowledged, NotifyPullRequest, NotifyEnded}
}

// DefaultNotifyEvents are what a hook listens for when it names none:
// whatever needs a person (not success, acknowledged, pull_request,
// ended).
func DefaultNotifyEvents() []NotifyEvent {
	return slices.DeleteFunc(NotifyEvents(), func(e NotifyEvent) bool {
		return e == NotifySuccess || e == NotifyAcknowledged || e == NotifyPullRequest || e == NotifyEnded
	})
}

// IssueHook is the name of the hook that writes a comment in the thread of
// the issue a task was made from (intake): what the agent understood,
// what it needs of a person, its pull request, its end. It is every such
// task's, without configuration.
const IssueHook = "issue"

// issueHook listens for what the thread of a task's issue tells.
var issueHook = NotifyHook{Name: IssueHook, Events: []NotifyEvent{NotifyAcknowledged, NotifyClarification, NotifyEscalated,
	NotifyBlocked, NotifyStuck, NotifyPullRequest, NotifySuccess, NotifyFailed, NotifyEnded}}

// DesktopHook is the name of the hook that shows notifications on the
// desktop of wilco's machine.
const DesktopHook = "desktop"

// Valid reports whether e is one of the notify events.
func (e NotifyEvent) Valid() bool { return slices.Contains(NotifyEvents(), e) }

// Defaults of the notification retry policy.
const (
	// DefaultNotifyMaxAttempts bounds the attempts of one notification:
	// after the 10th failure it is failed.
	DefaultNotifyMaxAttempts = 10
	// DefaultNotifyBackoffBase and DefaultNotifyBackoffMax bound the wait
	// after failed attempt n: min(base·2^(n-1), max). With 10 attempts a
	// hook has about 8.5 minutes to come back.
	DefaultNotifyBackoffBase = time.Second
	DefaultNotifyBackoffMax  = 5 * time.Minute
)

// NotifyHook is one place notifications go, as the core knows it: a name
// and the events it listens for. Where it is (a URL, the desktop) and its
// secret are the shell's: they never enter the event log.
type NotifyHook struct {
	Name   string        `json:"name"`
	Events []NotifyEvent `json:"events"`
}

// Wants reports whether the hook listens for e.
func (h NotifyHook) Wants(e NotifyEvent) bool { return slices.Contains(h.Events, e) }

// NotifyPolicy is who is notified of what, and how hard wilco tries.
type NotifyPolicy struct {
	Hooks       []NotifyHook  `json:"hooks,omitempty"`
	MaxAttempts int           `json:"max_attempts"`
	BackoffBase time.Duration `json:"backoff_base"`
	BackoffMax  time.Duration `json:"backoff_max"`
}

// DefaultNotifyPolicy has no hook and the default retry policy.
func DefaultNotifyPolicy() NotifyPolicy {
	return NotifyPolicy{MaxAttempts: DefaultNotifyMaxAttempts, BackoffBase: DefaultNotifyBackoffBase, BackoffMax: DefaultNotifyBackoffMax}
}

// Wait is how long a notification waits after its failed attempt n
// (1-based) before attempt n+1: min(base·2^(n-1), max).
func (p NotifyPolicy) Wait(n int) time.Duration {
	w := p.BackoffBase
	for i := 1; i < n && w < p.BackoffMax; i++ {
		w *= 2
	}
	return min(w, p.BackoffMax)
}

// Validate reports the first bad value, naming its key.
func (p NotifyPolicy) Validate() error {
	if p.MaxAttempts < 1 {
		return policyError("notify.retry.max_attempts", "must be at least 1, got %d", p.MaxAttempts)
	}
	if p.BackoffBase <= 0 {
		return policyError("notify.retry.backoff.base", "must be positive, got %s", p.BackoffBase)
	}
	if p.BackoffMax < p.BackoffBase {
		return policyError("notify.retry.backoff.max", "must not be below base (%s < %s)", p.BackoffMax, p.BackoffBase)
	}
	names := map[string]bool{}
	for i, h := range p.Hooks {
		key := fmt.Sprintf("notify.hooks[%d]", i)
		if !validName(h.Name) {
			return policyError(key+".name", "%q: use 1 to 64 of A-Z a-z 0-9 . _ : -", h.Name)
		}
		if names[h.Name] {
			return policyError(key+".name", "%q names two hooks", h.Name)
		}
		if h.Name == IssueHook {
			return policyError(key+".name", "%q is the name wilco gives the threads of the issues tasks are made from: choose another", h.Name)
		}
		names[h.Name] = true
		for j, e := range h.Events {
			if !e.Valid() {
				return policyError(fmt.Sprintf("%s.events[%d]", key, j), "%q: must be one of %s", e, notifyEventList())
			}
		}
	}
	return nil
}

func notifyEventList() string {
	var names []string
	for _, e := range NotifyEvents() {
		names = append(names, string(e))
	}
	return strings.Join(names, ", ")
}

// NotificationState is where a notification stands.
type NotificationState string

// Notification states.
const (
	// NotePending: an attempt is under way, or the next one waits
	// for its timer.
	NotePending   NotificationState = "pending"
	NoteDelivered NotificationState = "delivered"
	// NoteFailed: every attempt failed (or the hook is gone); it is kept
	// for inspection.
	NoteFailed NotificationState = "failed"
)

// Notification is one notice to one hook, and how its delivery went.
type Notification struct {
	// Version is the seq of the last event that changed it.
	Version uint64 `json:"version"`
	ID      string `json:"id"`
	Hook    string `json:"hook"`
	// Event is what happened; Subject what it happened to: the task's
	// first line, or the operation's name.
	Event       NotifyEvent `json:"event"`
	TaskID      string      `json:"task_id,omitempty"`
	Agent       string      `json:"agent,omitempty"`
	OperationID string      `json:"operation_id,omitempty"`
	Subject     string      `json:"subject,omitempty"`
	// Status is the state of the task (the agent's status, the
	// operation's state) the event left it in; Reason says why.
	Status string            `json:"status"`
	Reason string            `json:"reason,omitempty"`
	State  NotificationState `json:"state"`
	// Attempts counts the attempts that ended; LastStatus and LastError
	// are the last one's HTTP status (0: none, such as a desktop
	// notification or an error before any answer) and error.
	Attempts   int    `json:"attempts"`
	LastStatus int    `json:"last_status,omitempty"`
	LastError  string `json:"last_error,omitempty"`
	// TimerAt is when the next attempt starts; zero while one is under
	// way, and once the notification ended.
	TimerAt       time.Time `json:"timer_at,omitzero"`
	CreatedAt     time.Time `json:"created_at"`
	LastAttemptAt time.Time `json:"last_attempt_at,omitzero"`
	DeliveredAt   time.Time `json:"delivered_at,omitzero"`
	FailedAt      time.Time `json:"failed_at,omitzero"`
	// Cause is the seq of the event the notification tells of.
	Cause uint64 `json:"cause"`
}

// InFlight reports whether an attempt is under way: pending, and no timer.
func (n Notification) InFlight() bool {
	return n.State == NotePending && n.TimerAt.IsZero()
}

// --- events -------------------------------------------------------------------

// Notification event types.
const (
	TypeNotificationQueued    = "notification.queued"
	TypeNotificationRetried   = "notification.retried"
	TypeNotificationAttempt   = "notification.attempt"
	TypeNotificationDelivered = "notification.delivered"
	TypeNotificationFailed    = "notification.failed"
	TypeNotificationsPruned   = "notification.pruned"
)

// NotificationQueued records a new notification; its first attempt
// starts.
type NotificationQueued struct {
	Notification Notification `json:"notification"`
}

// NotificationRetried records the start of a later attempt, once the
// backoff elapsed.
type NotificationRetried struct {
	ID      string `json:"id"`
	Attempt int    `json:"attempt"`
}

// NotificationAttempt records an attempt that failed; the next one starts
// at RetryAt.
type NotificationAttempt struct {
	ID      string    `json:"id"`
	Attempt int       `json:"attempt"`
	Status  int       `json:"status,omitempty"`
	Error   string    `json:"error"`
	RetryAt time.Time `json:"retry_at"`
}

// NotificationDelivered records the attempt that succeeded.
type NotificationDelivered struct {
	ID      string `json:"id"`
	Attempt int    `json:"attempt"`
	Status  int    `json:"status,omitempty"`
}

// NotificationsPruned records the notifications dropped because they
// ended before EndedBefore (NotificationRetention).
type NotificationsPruned struct {
	IDs         []string  `json:"ids"`
	EndedBefore time.Time `json:"ended_before"`
}

// NotificationFailed records the last attempt failing: there is no other.
type NotificationFailed struct {
	ID       string `json:"id"`
	Attempts int    `json:"attempts"`
	Status   int    `json:"status,omitempty"`
	Error    string `json:"error"`
}

func (NotificationQueued) EventType() string    { return TypeNotificationQueued }
func (NotificationRetried) EventType() string   { return TypeNotificationRetried }
func (NotificationAttempt) EventType() string   { return TypeNotificationAttempt }
func (NotificationDelivered) EventType() string { return TypeNotificationDelivered }
func (NotificationFailed) EventType() string    { return TypeNotificationFailed }
func (NotificationsPruned) EventType() string   { return TypeNotificationsPruned }

func init() {
	register[NotificationQueued]()
	register[NotificationRetried]()
	register[NotificationAttempt]()
	register[NotificationDelivered]()
	register[NotificationFailed]()
	register[NotificationsPruned]()
}

// Notify asks the shell to make attempt Attempt of a notification and to
// report how it went with EndNotification.
type Notify struct {
	Notification Notification
	Attempt      int
}

func (Notify) isEffect() {}

// --- deciding -----------------------------------------------------------------

// notifyOn queues the notifications the event ev calls for: one per hook
// that listens for what it tells. emit calls it after each event.
func (s *State) notifyOn(ev Event) {
	hooks := s.policies.Notify.Hooks
	if t := s.tasks[ev.TaskID]; t != nil && t.Issue > 0 {
		hooks = append(slices.Clip(hooks), issueHook)
	}
	if len(hooks) == 0 {
		return
	}
	n, ok := s.noticeOf(ev)
	if !ok {
		return
	}
	pruned := false
	for _, h := range hooks {
		if !h.Wants(n.Event) {
			continue
		}
		if !pruned {
			s.pruneNotifications(ev.Time)
			pruned = true
		}
		c := n
		c.ID, c.Hook = s.nextID("N"), h.Name
		s.emit(ev.Time, ev.TaskID, ev.Agent, NotificationQueued{Notification: c})
	}
}

// NotificationRetention is how long a notification is kept after it ended
// (delivered, or failed for good); then it is pruned when a new one is
// queued. The event log keeps its whole history.
const NotificationRetention = 30 * 24 * time.Hour

// maxPruned bounds the notifications one NotificationsPruned names.
const maxPruned = 1000

// pruneNotifications drops the notifications that ended more than
// NotificationRetention before now.
func (s *State) pruneNotifications(now time.Time) {
	before := norm(now).Add(-NotificationRetention)
	var ids []string
	for id, n := range s.notifications {
		end := n.DeliveredAt
		if n.State == NoteFailed {
			end = n.FailedAt
		}
		if n.State != NotePending && !end.IsZero() && end.Before(before) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return
	}
	sort.Slice(ids, func(i, j int) bool { return idLess(ids[i], ids[j]) })
	if len(ids) > maxPruned {
		ids = ids[:maxPruned]
	}
	s.emit(now, "", "", NotificationsPruned{IDs: ids, EndedBefore: before})
}

// noticeOf is what ev tells a person, if anything.
func (s *State) noticeOf(ev Event) (Notification, bool) {
	n := Notification{TaskID: ev.TaskID, Agent: ev.Agent, Cause: ev.Seq}
	switch e := ev.Data.(type) {
	case TaskStateChanged:
		return s.taskNotice(n, e)
	case DeliveryAcknowledged:
		t := s.tasks[ev.TaskID]
		if t == nil || e.Understanding == "" || e.ID != t.Delivery {
			return n, false
		}
		n.Event, n.Status, n.Subject, n.Reason = NotifyAcknowledged, string(t.State), firstLine(t.Description), e.Understanding
	case TaskPROpened:
		t := s.tasks[ev.TaskID]
		if t == nil || e.Again {
			return n, false // pushed again to the same pull request
		}
		n.Event, n.Status, n.Subject = NotifyPullRequest, string(t.State), firstLine(t.Description)
		n.Reason = fmt.Sprintf("pull request #%d: %s", e.Number, e.URL)
	case AgentStatusChanged:
		if e.To != Unresponsive {
			return n, false
		}
		n.Event, n.Status, n.Reason = NotifyUnresponsive, string(e.To), e.Reason
		// The task whose delegation went unanswered, when one holds the
		// queue with this agent.
		if t := s.activeOf(ev.Agent); t != nil {
			n.TaskID, n.Subject = t.ID, firstLine(t.Description)
		}
	case AgentPermission:
		if e.Answer != "" {
			return n, false // the agent's allow list answered it
		}
		n.Event, n.Status = NotifyPermission, "waiting"
		what := firstOf(e.Tool, "a tool")
		n.Reason = fmt.Sprintf("%s asks for permission to use %s: %s (answer in its pane: %s)", ev.Agent, what, firstLine(e.Text), attachCommand(ev.Agent, s.tasks[e.TaskID]))
		if t := s.tasks[e.TaskID]; t != nil {
			n.Subject = firstLine(t.Description)
		}
	case OperationStarted:
		o := e.Operation
		n.Event, n.Status, n.OperationID, n.Subject = NotifyOperation, string(o.State), o.ID, o.Name
		n.Reason = fmt.Sprintf("waiting for the \"ok\" of %s (timeout %s)", strings.Join(o.Agents, ", "), o.Policy.Timeout)
		if o.Message != "" {
			n.Reason += ": " + firstLine(o.Message)
		}
	default:
		return n, false
	}
	return n, true
}

// taskNotice is the notice of a task's change of state: one a hook may
// hear of, false for the others.
func (s *State) taskNotice(n Notification, e TaskStateChanged) (Notification, bool) {
	switch e.To {
	case Escalated:
		n.Event = NotifyEscalated
	case TaskClarifying:
		n.Event = NotifyClarification
	case Blocked:
		n.Event = NotifyBlocked
	case Stuck:
		n.Event = NotifyStuck
	case Success:
		n.Event = NotifySuccess
	case TaskFailed:
		n.Event = NotifyFailed
	case TaskCancelled, Skipped, Aborted, Unverified:
		n.Event = NotifyEnded
	default:
		return n, false
	}
	n.Status, n.Reason = string(e.To), e.Reason
	t := s.tasks[n.TaskID]
	if t == nil {
		return n, false
	}
	n.Subject = firstLine(t.Description)
	if n.Agent == "" {
		n.Agent = t.Agent
	}
	switch e.To {
	case TaskClarifying:
		if d := s.find(t.Delivery); d != nil && d.Reply != nil && len(d.Reply.Questions) > 0 {
			n.Reason = "the agent asks: " + strings.Join(d.Reply.Questions, " ")
		}
	case Success:
		if t.Summary != nil && len(t.Summary.Files) > 0 {
			files := t.Summary.Files
			if len(files) > 5 {
				files = append(slices.Clip(files[:5]), fmt.Sprintf("and %d more", len(files)-5))
			}
			n.Reason += "; changed " + strings.Join(files, ", ")
		}
	case Stuck:
		if t.StuckReport != nil && t.StuckReport.Path != "" {
			n.Reason += "; report in " + t.StuckReport.Path
		}
	}
	return n, true
}

// NotificationResult is how one attempt of a notification went, as the
// shell saw it.
type NotificationResult struct {
	ID      string
	Attempt int
	// Status is the HTTP status of the answer (0 when there was none, or
	// for a desktop notification).
	Status int
	// Error is why the attempt failed before any answer (a refused
	// connection, a timeout, notify-send's failure); "" when it got one.
	Error string
	// Body is the start of the answer's body, for the record of a refusal.
	Body string
	// Permanent says no later attempt can succeed (the hook is no longer
	// configured).
	Permanent bool
}

// EndNotification records how an attempt went: an answer of 2xx (or a
// desktop notification shown) delivers the notification; an error, a
// timeout or another status fails the attempt, and the next one waits
// min(base·2^(n-1), max); after max_attempts (or a permanent error) the
// notification is failed. A result of an attempt that is not the one
// under way (a duplicate, after a restart sent it again) changes nothing
// and is refused with a conflict.
func (s *State) EndNotification(now time.Time, r NotificationResult) (Notification, error) {
	now = norm(now)
	n, ok := s.notifications[r.ID]
	if !ok {
		return Notification{}, notFoundf("no notification %q", r.ID)
	}
	if n.State != NotePending {
		return Notification{}, conflictf("notification %s is %s already", n.ID, n.State)
	}
	if !n.InFlight() || r.Attempt != n.Attempts+1 {
		return Notification{}, conflictf("notification %s: attempt %d is not the one under way", n.ID, r.Attempt)
	}
	errText := r.Error
	if errText == "" && r.Status != 0 && (r.Status < 200 || r.Status > 299) {
		errText = fmt.Sprintf("HTTP %d", r.Status)
		if b := strings.TrimSpace(firstLine(r.Body)); b != "" {
			errText += ": " + clip(b, 200)
		}
	}
	switch {
	case errText == "":
		s.emit(now, n.TaskID, n.Agent, NotificationDelivered{ID: n.ID, Attempt: r.Attempt, Status: r.Status})
	case r.Permanent || r.Attempt >= s.policies.Notify.MaxAttempts:
		s.emit(now, n.TaskID, n.Agent, NotificationFailed{ID: n.ID, Attempts: r.Attempt, Status: r.Status, Error: errText})
	default:
		s.emit(now, n.TaskID, n.Agent, NotificationAttempt{ID: n.ID, Attempt: r.Attempt, Status: r.Status, Error: errText,
			RetryAt: now.Add(s.policies.Notify.Wait(r.Attempt))})
	}
	return *s.notifications[r.ID], nil
}

// fireNotification starts the next attempt of a notification whose
// backoff elapsed.
func (s *State) fireNotification(now time.Time, n *Notification) {
	if n.State != NotePending || n.TimerAt.IsZero() || now.Before(n.TimerAt) {
		return
	}
	s.emit(now, n.TaskID, n.Agent, NotificationRetried{ID: n.ID, Attempt: n.Attempts + 1})
}

// NotificationResends are the attempts to make again after a restart: the
// notifications an attempt was under way for when wilco stopped (it may
// or may not have reached its hook: at least once). Those waiting for
// their timer get it back with the other timers. It changes nothing.
func (s *State) NotificationResends() []Notify {
	var out []Notify
	for _, n := range s.notifications {
		if n.InFlight() {
			out = append(out, Notify{Notification: *n, Attempt: n.Attempts + 1})
		}
	}
	sort.Slice(out, func(i, j int) bool { return idLess(out[i].Notification.ID, out[j].Notification.ID) })
	return out
}

// --- applying -----------------------------------------------------------------

// applyNotification applies the events of notifications.
func (s *State) applyNotification(ev Event) {
	now, seq := ev.Time, ev.Seq
	switch e := ev.Data.(type) {
	case NotificationQueued:
		s.noteID(e.Notification.ID)
		if n, ok := s.notifications[e.Notification.ID]; ok && n.Version >= seq {
			return
		}
		n := e.Notification
		n.Version, n.CreatedAt, n.State, n.Attempts, n.TimerAt = seq, now, NotePending, 0, time.Time{}
		n.LastAttemptAt = now
		s.notifications[n.ID] = &n
		s.touch(KindNotification, n.ID)
		s.effect(Notify{Notification: n, Attempt: 1})

	case NotificationRetried:
		if n := s.notificationAt(e.ID, seq); n != nil {
			n.TimerAt, n.LastAttemptAt = time.Time{}, now
			s.effect(Notify{Notification: *n, Attempt: e.Attempt})
		}

	case NotificationAttempt:
		if n := s.notificationAt(e.ID, seq); n != nil {
			n.Attempts, n.LastStatus, n.LastError = e.Attempt, e.Status, e.Error
			n.TimerAt = e.RetryAt
			s.effect(ArmTimer{Key: n.ID, At: e.RetryAt})
		}

	case NotificationDelivered:
		if n := s.notificationAt(e.ID, seq); n != nil {
			n.State, n.Attempts, n.LastStatus, n.LastError = NoteDelivered, e.Attempt, e.Status, ""
			n.TimerAt, n.DeliveredAt = time.Time{}, now
		}

	case NotificationFailed:
		if n := s.notificationAt(e.ID, seq); n != nil {
			n.State, n.Attempts, n.LastStatus, n.LastError = NoteFailed, e.Attempts, e.Status, e.Error
			n.TimerAt, n.FailedAt = time.Time{}, now
		}

	case NotificationsPruned:
		for _, id := range e.IDs {
			if n := s.notifications[id]; n != nil && n.Version < seq {
				delete(s.notifications, id)
				s.touch(KindNotification, id) // its record is deleted
			}
		}
	}
}

// notificationAt is agentAt for notifications.
func (s *State) notificationAt(id string, seq uint64) *Notification {
	n := s.notifications[id]
	if n == nil || n.Version >= seq {
		return nil
	}
	n.Version = seq
	s.touch(KindNotification, id)
	return n
}

// --- reading ------------------------------------------------------------------

// Notification returns a copy of the notification.
func (s *State) Notification(id string) (Notification, bool) {
	n, ok := s.notifications[id]
	if !ok {
		return Notification{}, false
	}
	return *n, true
}

// Notifications returns copies of the notifications keep accepts (nil:
// all), newest first.
func (s *State) Notifications(keep func(*Notification) bool) []Notification {
	var out []Notification
	for _, n := range s.notifications {
		if keep == nil || keep(n) {
			out = append(out, *n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return idLess(out[j].ID, out[i].ID) })
	return out
}

// clip shortens s to at most n bytes, on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && i < len(s) && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}
