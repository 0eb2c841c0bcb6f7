package exec

import (
	"context"
	"fmt"

	"wilco/adapter"
	"wilco/core"
)

// Operate performs an agent operation on an exec agent. It runs nothing
// between turns, so a hibernate and a wake only mark it (the dispatcher
// sets its status), and a restart has nothing to do: its next turn is a
// new process. Any other operation is refused (adapter.ErrNotSupported).
func (a *Adapter) Operate(_ context.Context, agent string, op adapter.Operation) (adapter.Performed, error) {
	if !a.Has(agent) {
		return adapter.Performed{}, fmt.Errorf("exec: no agent %q", agent)
	}
	switch op.Name {
	case core.OpHibernate:
		return adapter.Performed{Action: "marked hibernating (it runs nothing between turns)"}, nil
	case core.OpWake:
		return adapter.Performed{Action: "marked available"}, nil
	case core.OpRestart:
		return adapter.Performed{Action: "nothing to restart: its next turn starts a new process"}, nil
	}
	return adapter.Performed{}, fmt.Errorf("%s of an exec agent: %w", op.Name, adapter.ErrNotSupported)
}
