package server

import (
	"net/http"
	"slices"
	"strings"

	"wilco/core"
	"wilco/wire"
)

// Notification listings.
const (
	defaultNotificationPage = 100
	maxNotificationPage     = 10000
)

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
	out := wire.NotificationList{Notifications: []wire.Notification{}}
	if err := s.read(func(c *core.State) {
		maxAttempts := c.Policies().Notify.MaxAttempts
		for _, n := range c.Notifications(func(n *core.Notification) bool {
			return (state == "" || string(n.State) == state) && (hook == "" || n.Hook == hook) &&
				(task == "" || n.TaskID == task) && (event == "" || n.Event == event)
		}) {
			if len(out.Notifications) == int(limit) {
				break
			}
			out.Notifications = append(out.Notifications, notificationView(n, maxAttempts))
		}
	}); err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) getNotification(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r); err != nil {
		return err
	}
	id := r.PathValue("id")
	var v *wire.Notification
	if err := s.read(func(c *core.State) {
		if n, ok := c.Notification(id); ok {
			view := notificationView(n, c.Policies().Notify.MaxAttempts)
			v = &view
		}
	}); err != nil {
		return err
	}
	if v == nil {
		return Errorf(wire.CodeNotFound, "no notification %q", id)
	}
	WriteJSON(w, http.StatusOK, v)
	return nil
}
