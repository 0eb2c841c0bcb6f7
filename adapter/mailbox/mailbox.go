// Package mailbox is the adapter of the agents that fetch their own
// messages: over HTTP (wilco inbox, GET /v1/inbox), or pushed to them by
// the NATS bridge (package natsbox). wilco runs no program for them: the
// core keeps each one's inbox, and their answers reach it through the
// server's mailbox routes. So this adapter hands nothing over and stops
// nothing; of the operations, a hibernate and a wake are the agent's
// status only, and a restart has nothing to do.
package mailbox

import (
	"context"
	"fmt"
	"log/slog"

	"wilco/adapter"
	"wilco/core"
)

// Adapter is the mailbox side. Its zero value is ready to use.
type Adapter struct {
	// Logger (default: none).
	Logger *slog.Logger
}

func (a *Adapter) log() *slog.Logger {
	if a.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return a.Logger
}

// Has reports true for every agent: any agent may fetch its messages
// from its inbox. A dispatcher asks it last, for the agents no adapter
// that runs a program holds.
func (a *Adapter) Has(string) bool { return true }

// Deliver hands nothing over: the core keeps a mailbox agent's messages in
// its inbox, where the agent fetches them (or the NATS bridge pushes them
// to it). It is only logged.
func (a *Adapter) Deliver(agent string, msg core.InboxMessage) {
	a.log().Debug("a mailbox agent's message waits in its inbox", "agent", agent, "message", msg.ID, "type", msg.Type, "task", msg.TaskID)
}

// StopTurn stops nothing: wilco runs no program for a mailbox agent. The
// core has ended the turn; a cancel reaches the agent in its inbox.
func (a *Adapter) StopTurn(taskID, reason string) {}

// Operate marks a mailbox agent hibernating or available (the dispatcher
// sets its status); a restart has nothing to do: wilco runs no program for
// it. Any other operation is refused (adapter.ErrNotSupported).
func (a *Adapter) Operate(_ context.Context, agent string, op adapter.Operation) (adapter.Performed, error) {
	switch op.Name {
	case core.OpHibernate:
		return adapter.Performed{Action: "marked hibernating"}, nil
	case core.OpWake:
		return adapter.Performed{Action: "marked available"}, nil
	case core.OpRestart:
		return adapter.Performed{Action: "nothing to restart: wilco runs no program for it (it fetches its own messages)"}, nil
	}
	return adapter.Performed{}, fmt.Errorf("%s of a mailbox agent: %w", op.Name, adapter.ErrNotSupported)
}

// Close does nothing: the adapter holds nothing.
func (a *Adapter) Close() error { return nil }
