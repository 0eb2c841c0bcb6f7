package dispatch

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"wilco/adapter"
	execadapter "wilco/adapter/exec"
	"wilco/adapter/mailbox"
	tmuxadapter "wilco/adapter/tmux"
	"wilco/core"
)

// Adapter is what an agent's adapter does for the dispatcher: hand its
// agents their messages, stop a task's turn, perform operations on them.
// It reports what its agents did through the adapter.Reporter it was made
// with (the dispatcher). exec, tmux and the mailbox side implement it;
// adapter/adaptertest is the suite each passes.
type Adapter interface {
	// Has reports whether the adapter runs agent.
	Has(agent string) bool
	// Deliver hands one of its agents a message: a task's delegation, a
	// reminder, a retry, a correction, a cancel, a conversation, an
	// operation's request. It never blocks: the work is done in the
	// background and reported.
	Deliver(agent string, msg core.InboxMessage)
	// StopTurn stops the turn of a task, whichever of its agents runs it
	// (core.StopTurn): the core has ended it, so nothing more is reported
	// of it.
	StopTurn(taskID, reason string)
	// Operate performs an agent operation (core.OpHibernate, OpWake,
	// OpRestart) on one of its agents and says what it did; one it cannot
	// perform is refused with an error wrapping adapter.ErrNotSupported
	// that says why.
	Operate(ctx context.Context, agent string, op adapter.Operation) (adapter.Performed, error)
	// Close stops the adapter's work: it starts nothing more.
	Close() error
}

var (
	_ Adapter          = (*execadapter.Adapter)(nil)
	_ Adapter          = (*tmuxadapter.Adapter)(nil)
	_ Adapter          = (*mailbox.Adapter)(nil)
	_ adapter.Reporter = (*Dispatcher)(nil)
)

// adapterOf is the adapter of agent: the one that runs its program, else
// the mailbox side.
func (d *Dispatcher) adapterOf(agent string) Adapter {
	for _, a := range d.adapters {
		if a.Has(agent) {
			return a
		}
	}
	return d.mailbox
}

// Reply is an adapter's report of an agent's answer.
func (d *Dispatcher) Reply(ctx context.Context, in core.ReplyInput) (core.Interpretation, error) {
	v, err := d.report(ctx, "reply", in)
	if err != nil {
		return core.Interpretation{}, err
	}
	return v.(core.Interpretation), nil
}

// Report is an adapter's report of what one of its agents did that asks
// for no answer; each kind is the core's outcome of it.
func (d *Dispatcher) Report(ctx context.Context, r adapter.Report) error {
	var o core.Outcome
	switch r := r.(type) {
	case adapter.TurnEnded:
		o = r.Result
	case adapter.Activity:
		o = core.ActivityNoted{TaskID: r.TaskID, Attempt: r.Attempt, Text: r.Text}
	case adapter.PermissionAsked:
		o = core.PermissionAsked{Agent: r.Agent, TaskID: r.TaskID, Attempt: r.Attempt, Tool: r.Tool, Text: r.Text, Answer: r.Answer}
	case adapter.MessageFailed:
		o = core.MessageUnanswered{Agent: r.Agent, MessageID: r.MessageID, Reason: r.Reason}
	case adapter.Spent:
		o = core.SpendNoted{TaskID: r.TaskID, Attempt: r.Attempt, Spent: r.Usage}
	default:
		return fmt.Errorf("dispatch: a report of an unknown kind %T", r)
	}
	_, err := d.report(ctx, fmt.Sprintf("%T", r), o)
	return err
}

// every is every adapter of the dispatcher, the mailbox side last.
func (d *Dispatcher) every() []Adapter { return append(slices.Clip(d.adapters), d.mailbox) }

// closeAdapters closes every adapter.
func (d *Dispatcher) closeAdapters() error {
	var errs []error
	for _, a := range d.every() {
		errs = append(errs, a.Close())
	}
	return errors.Join(errs...)
}
