package server

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"wilco/core"
)

// Notification listings.
const (
	defaultNotificationPage = 100
	maxNotificationPage     = 10000
)

// NotificationView is a notification and how its delivery went.
type NotificationView struct {
	ID   string `json:"id"`
	Hook string `json:"hook"`
	// Event is what happened: escalated, clarification, blocked, stuck,
	// unresponsive, operation, permission, success or failed.
	Event       core.NotifyEvent `json:"event"`
	TaskID      string           `json:"task_id"`
	Agent       string           `json:"agent,omitempty"`
	OperationID string           `json:"operation_id,omitempty"`
	// Subject is the task's first line (the operation's name).
	Subject string `json:"subject,omitempty"`
	// TaskState is the state the event left the task in (the agent's
	// status, the operation's state); Reason says why.
	TaskState string `json:"task_state"`
	Reason    string `json:"reason"`
	// State is the notification's: pending, delivered or failed.
	State       core.NotificationState `json:"state"`
	Attempts    int                    `json:"attempts"`
	MaxAttempts int                    `json:"max_attempts"`
	// LastError is why the last attempt failed ("" when none did);
	// LastStatus its HTTP status (null when there was no answer).
	LastError     string     `json:"last_error"`
	LastStatus    *int       `json:"last_status"`
	CreatedAt     time.Time  `json:"created_at"`
	LastAttemptAt *time.Time `json:"last_attempt_at"`
	NextAttemptAt *time.Time `json:"next_attempt_at"`
	DeliveredAt   *time.Time `json:"delivered_at"`
	FailedAt      *time.Time `json:"failed_at"`
}

func notificationView(n core.Notification, maxAttempts int) NotificationView {
	v := NotificationView{
		ID: n.ID, Hook: n.Hook, Event: n.Event, TaskID: n.TaskID, Agent: n.Agent, OperationID: n.OperationID,
		Subject: n.Subject, TaskState: n.Status, Reason: n.Reason, State: n.State, Attempts: n.Attempts,
		MaxAttempts: maxAttempts, LastError: n.LastError, CreatedAt: n.CreatedAt, LastAttemptAt: timePtr(n.LastAttemptAt),
		NextAttemptAt: timePtr(n.TimerAt), DeliveredAt: timePtr(n.DeliveredAt), FailedAt: timePtr(n.FailedAt),
	}
	if n.LastStatus != 0 {
		st := n.LastStatus
		v.LastStatus = &st
	}
	return v
}

var notificationStates = []string{string(core.NotePending), string(core.NoteDelivered), string(core.NoteFailed)}

// listNotifications lists notifications, newest first.
func (s *Server) listNotifications(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r, "state", "limit", "hook", "task", "event"); err != nil {
		return err
	}
	q := r.URL.Query()
	state := q.Get("state")
	if state != "" && !slices.Contains(notificationStates, state) {
		return invalidf("state: one of %s, got %q", strings.Join(notificationStates, ", "), state)
	}
	event := core.NotifyEvent(q.Get("event"))
	if event != "" && !event.Valid() {
		var names []string
		for _, e := range core.NotifyEvents() {
			names = append(names, string(e))
		}
		return invalidf("event: one of %s, got %q", strings.Join(names, ", "), event)
	}
	limit, err := uintParam(r, "limit", defaultNotificationPage)
	if err != nil {
		return err
	}
	if limit == 0 || limit > maxNotificationPage {
		return invalidf("limit: from 1 to %d, got %d", maxNotificationPage, limit)
	}
	hook, task := q.Get("hook"), q.Get("task")
	out := []NotificationView{}
	if err := s.read(func(c *core.State) {
		maxAttempts := c.Policies().Notify.MaxAttempts
		for _, n := range c.Notifications(func(n *core.Notification) bool {
			return (state == "" || string(n.State) == state) && (hook == "" || n.Hook == hook) &&
				(task == "" || n.TaskID == task) && (event == "" || n.Event == event)
		}) {
			if len(out) == int(limit) {
				break
			}
			out = append(out, notificationView(n, maxAttempts))
		}
	}); err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, map[string]any{"notifications": out})
	return nil
}

func (s *Server) getNotification(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r); err != nil {
		return err
	}
	id := r.PathValue("id")
	var v *NotificationView
	if err := s.read(func(c *core.State) {
		if n, ok := c.Notification(id); ok {
			view := notificationView(n, c.Policies().Notify.MaxAttempts)
			v = &view
		}
	}); err != nil {
		return err
	}
	if v == nil {
		return Errorf(CodeNotFound, "no notification %q", id)
	}
	WriteJSON(w, http.StatusOK, v)
	return nil
}
