package dispatch

import (
	"context"
	"fmt"
	"strings"

	"wilco/adapter"
	tmuxadapter "wilco/adapter/tmux"
	"wilco/core"
)

// RunCommand runs an operation's command and returns its exit status and
// the tail of its output (the daemon's runner).
type RunCommand func(ctx context.Context, id string, command []string) (int, string)

// PerformOperation performs an operation on agents once its "ok" round
// let it proceed, and says what it did to each agent, with the exit status
// and output of its command (maintenance):
//
//   - hibernate: a tmux agent's program is stopped, its conversation id
//     kept (its status becomes hibernating); an exec agent, which runs
//     nothing between turns, and a mailbox agent are only marked so;
//   - wake: a tmux agent's program starts again resuming that
//     conversation, and is ready for input; the others are marked
//     available;
//   - restart: a tmux agent's program is stopped and started again; the
//     turn it worked on goes on; an exec agent's next turn is a new
//     process anyway;
//   - install-skill, install-plugin: the skill or plugin is copied into
//     the directory the agent's program loads it from (its preset says
//     where, under its HOME); a tmux agent is hibernated first and woken
//     after, so that its program loads it;
//   - maintenance: the tmux agents are hibernated, the command runs, and
//     they are woken again.
func (d *Dispatcher) PerformOperation(ctx context.Context, op core.RunOperation, run RunCommand) ([]core.OperationResult, int, string) {
	results := make([]core.OperationResult, len(op.Agents))
	for i, name := range op.Agents {
		results[i] = core.OperationResult{Agent: name}
	}
	each := func(f func(r *core.OperationResult)) {
		for i := range results {
			if results[i].Error == "" {
				f(&results[i])
			}
		}
	}
	var code int
	var out string
	switch op.Name {
	case core.OpHibernate:
		each(func(r *core.OperationResult) { d.hibernateAgent(ctx, r) })
	case core.OpWake:
		each(func(r *core.OperationResult) { d.wakeAgent(ctx, r, op.Conversations[r.Agent]) })
	case core.OpRestart:
		each(func(r *core.OperationResult) { d.restartAgent(ctx, r) })
	case core.OpInstallSkill, core.OpInstallPlugin:
		each(func(r *core.OperationResult) {
			if !d.tmux.Has(r.Agent) {
				r.Action, r.Error = d.install(r.Agent, op.Name, op.Target)
				r.Status = core.Available
				return
			}
			d.hibernateAgent(ctx, r)
			if r.Error != "" {
				return
			}
			hib, conv := r.Action, r.Conversation
			installed, err := d.install(r.Agent, op.Name, op.Target)
			d.wakeAgent(ctx, r, conv)
			r.Action, r.Error = join(hib, installed, r.Action), join(err, r.Error)
		})
	case core.OpMaintenance:
		convs := map[string]string{}
		each(func(r *core.OperationResult) {
			d.hibernateAgent(ctx, r)
			convs[r.Agent] = r.Conversation
		})
		code, out = run(ctx, op.ID, op.Command)
		each(func(r *core.OperationResult) {
			before := r.Action
			d.wakeAgent(ctx, r, convs[r.Agent])
			r.Action = join(before, fmt.Sprintf("maintenance command exited %d", code), r.Action)
		})
	}
	for i := range results {
		r := &results[i]
		r.Done = r.Error == ""
		if !r.Done {
			r.Status = "" // left as it was
		}
		d.log.Info("operation performed on an agent", "operation", op.ID, "name", op.Name, "agent", r.Agent, "done", r.Done, "action", r.Action, "err", r.Error)
	}
	return results, code, out
}

func join(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "; ")
}

func (d *Dispatcher) hibernateAgent(ctx context.Context, r *core.OperationResult) {
	r.Status = core.Hibernating
	p, err := d.adapterOf(r.Agent).Operate(ctx, r.Agent, adapter.Operation{Name: core.OpHibernate})
	if err != nil {
		r.Error = "hibernate: " + err.Error()
		return
	}
	r.Action, r.Conversation = p.Action, p.Conversation
}

func (d *Dispatcher) wakeAgent(ctx context.Context, r *core.OperationResult, conv string) {
	r.Status, r.Conversation = core.Available, ""
	p, err := d.adapterOf(r.Agent).Operate(ctx, r.Agent, adapter.Operation{Name: core.OpWake, Conversation: conv})
	if err != nil {
		r.Error = join(r.Error, "wake: "+err.Error())
		return
	}
	r.Action = p.Action
}

func (d *Dispatcher) restartAgent(ctx context.Context, r *core.OperationResult) {
	r.Status = core.Available
	p, err := d.adapterOf(r.Agent).Operate(ctx, r.Agent, adapter.Operation{Name: core.OpRestart})
	if err != nil {
		r.Error = "restart: " + err.Error()
		return
	}
	r.Action = p.Action
}

// install copies what an install operation installs for one agent, where
// the agent's preset loads it from; it says what it did, or why it could
// not.
func (d *Dispatcher) install(agent, kind, target string) (action, problem string) {
	preset, env, ok := d.agentPreset(agent)
	if !ok {
		return "", "install: not a local agent (exec or tmux): wilco cannot reach its files"
	}
	dest, err := tmuxadapter.Install(preset, env, kind, target)
	if err != nil {
		return "", "install: " + err.Error()
	}
	return "installed " + strings.TrimPrefix(kind, "install-") + " into " + dest, ""
}

// agentPreset is a local agent's preset and environment.
func (d *Dispatcher) agentPreset(agent string) (string, map[string]string, bool) {
	if c, ok := d.tmux.Config(agent); ok {
		return c.Preset, c.Env, true
	}
	if c, ok := d.exec.Config(agent); ok {
		return c.Preset, c.Env, true
	}
	return "", nil, false
}
