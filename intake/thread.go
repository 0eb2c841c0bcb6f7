package intake

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"wilco/core"
	"wilco/forge"
	"wilco/runtime"
)

// Runtime is what intake asks of wilco's runtime (*runtime.Runtime).
type Runtime interface {
	Do(ctx context.Context, fn runtime.Func) (any, error)
	Read(fn func(*core.State)) error
}

// Thread writes the notifications of the issue hook as comments in the
// thread of each task's issue.
type Thread struct {
	Forge   forge.Forge
	Runtime Runtime
	Logger  *slog.Logger
}

// Make makes an attempt of a notification of the issue hook: the comment
// on the task's issue. A forge that fails is a failed attempt, which the
// core tries again later; ok is false when ctx ended first (wilco stops:
// the next start makes it again).
func (th *Thread) Make(ctx context.Context, e core.Notify) (_ core.NotificationResult, ok bool) {
	r := core.NotificationResult{ID: e.Notification.ID, Attempt: e.Attempt}
	var t core.Task
	var found bool
	if err := th.Runtime.Read(func(c *core.State) { t, found = c.Task(e.Notification.TaskID) }); err != nil {
		return r, false
	}
	switch {
	case !found:
		r.Error, r.Permanent = fmt.Sprintf("task %s is gone", e.Notification.TaskID), true
		return r, true
	case t.Issue <= 0:
		r.Error, r.Permanent = fmt.Sprintf("task %s was made from no issue", t.ID), true
		return r, true
	}
	c, err := th.Forge.CreateComment(ctx, t.Issue, Comment(e.Notification, t))
	if ctx.Err() != nil {
		return r, false
	}
	log := th.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err != nil {
		r.Error = err.Error()
		var ae *forge.APIError
		if errors.As(err, &ae) {
			r.Status = ae.Status
		}
		log.Warn("the comment on an issue was not written; it is tried again", "issue", t.Issue, "task", t.ID, "event", e.Notification.Event, "attempt", e.Attempt, "err", err)
		return r, true
	}
	r.Status = 201
	log.Info("comment written on an issue", "issue", t.Issue, "task", t.ID, "event", e.Notification.Event, "comment", c.ID)
	return r, true
}
