// Package adapter is what every agent adapter (exec, tmux, the mailbox)
// shares with the dispatcher that drives it: the Reporter through which it
// tells wilco what its agents did, and the reports it makes. The
// dispatcher's side — what an adapter must do — is dispatch.Adapter; the
// suite every adapter passes is adapter/adaptertest.
package adapter

import (
	"context"
	"errors"

	"wilco/core"
)

// ErrNotSupported is the answer of an adapter asked for an operation it
// cannot perform on its agents (restarting a program wilco does not run,
// say); the error wrapping it says why.
var ErrNotSupported = errors.New("not supported by the agent's adapter")

// Reporter is the one way an adapter reports what its agents did; the
// dispatcher gives it one, whose calls go to the core. Its calls may block
// until the core has decided; an adapter never makes them while holding a
// lock, and their context ends when the adapter closes.
type Reporter interface {
	// Reply hands the core an agent's answer: the ACK of a task turn, a
	// checkpoint, or the output of a message. It returns the core's
	// interpretation (core.State.Reply's): an inline or session turn goes
	// on only when Acknowledged lists the delivery.
	Reply(ctx context.Context, in core.ReplyInput) (core.Interpretation, error)
	// Report hands the core a fact that asks for no answer: a turn's end
	// (TurnEnded), what an agent is doing (Activity), a permission
	// question (PermissionAsked), a message it could not answer
	// (MessageFailed), what a turn has spent so far (Spent).
	Report(ctx context.Context, r Report) error
}

// Report is one fact an adapter reports: TurnEnded, Activity,
// PermissionAsked, MessageFailed or Spent.
type Report interface{ report() }

// TurnEnded is the end of a task's turn (core.State.EndTurn).
type TurnEnded struct{ Result core.TurnResult }

// Activity is what an agent is doing, read from a tool call of its
// output: the task's milestone (core.State.NoteActivity).
type Activity struct {
	TaskID  string
	Attempt int
	Text    string
}

// PermissionAsked is one permission question of an agent
// (core.State.NotePermission).
type PermissionAsked struct {
	Agent   string
	TaskID  string
	Attempt int
	Tool    string
	Text    string
	// Answer is "allowed" or "denied" by the agent's allow list, or ""
	// when the question waits for the user (wilco attach).
	Answer string
}

// MessageFailed says that an agent could not answer a message: its turn
// failed, or a scout changed files (core.State.MessageFailed).
type MessageFailed struct {
	Agent     string
	MessageID string
	Reason    string
}

// Spent is what a task's running turn has spent so far, as its CLI's
// output reported it, so that a budget is enforced before the turn ends
// (core.State.NoteSpend).
type Spent struct {
	TaskID  string
	Attempt int
	Usage   core.Usage
}

func (TurnEnded) report()       {}
func (Activity) report()        {}
func (PermissionAsked) report() {}
func (MessageFailed) report()   {}
func (Spent) report()           {}

// Operation is an agent operation an adapter performs on one of its
// agents once the operation's "ok" round let it proceed.
type Operation struct {
	// Name is core.OpHibernate, core.OpWake or core.OpRestart.
	Name string
	// Conversation is, for a wake, the conversation the hibernate kept
	// ("" for the program's most recent one).
	Conversation string
}

// Performed is what an adapter did for an operation.
type Performed struct {
	// Action says what was done, in a few words a user reads.
	Action string
	// Conversation is, for a hibernate, what the agent's wake resumes
	// (its program's conversation id; "" when it has none).
	Conversation string
}
