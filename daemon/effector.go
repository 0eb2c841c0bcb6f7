package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"

	"wilco/core"
	"wilco/dispatch"
	"wilco/proc"
	"wilco/runtime"
)

// maxOutput is how much of an operation's output is kept (its tail).
const maxOutput = 64 << 10

// outputDrain bounds how long the output of an operation's command is
// still read after it ended, while a process it left running holds it.
const outputDrain = 5 * time.Second

// effector performs the effects that reach outside wilco: it runs
// operation commands and hands messages to push agents.
type effector struct {
	log     *slog.Logger
	rt      *runtime.Runtime
	deliver func(agent string, msg core.InboxMessage)
	// perform performs the operations on agents (the dispatcher's).
	perform func(ctx context.Context, op core.RunOperation, run dispatch.RunCommand) ([]core.OperationResult, int, string)
	warned  sync.Map

	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

func newEffector(log *slog.Logger, deliver func(string, core.InboxMessage)) *effector {
	ctx, cancel := context.WithCancel(context.Background())
	return &effector{log: log, deliver: deliver, ctx: ctx, cancel: cancel}
}

// Deliver hands a message to a push agent through Options.Deliver.
func (e *effector) Deliver(agent string, msg core.InboxMessage) {
	if e.deliver != nil {
		e.deliver(agent, msg)
		return
	}
	if _, seen := e.warned.LoadOrStore(agent, true); !seen {
		e.log.Warn("no adapter delivers to this agent yet: its messages wait for their retry policy", "agent", agent, "message", msg.ID)
	}
}

// RunOperation performs a proceeding operation in the background — on
// its agents through perform (hibernate, wake, restart, installs,
// maintenance), else its command — and reports its end with
// core.FinishAgentOperation.
func (e *effector) RunOperation(op core.RunOperation) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		e.log.Warn("operation not started: wilco is stopping; it is settled at the next start", "operation", op.ID)
		return
	}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		var results []core.OperationResult
		var code int
		var out string
		if core.AgentOperation(op.Name) && e.perform != nil {
			results, code, out = e.perform(e.ctx, op, run)
		} else {
			code, out = run(e.ctx, op.ID, op.Command)
		}
		e.log.Info("operation ended", "operation", op.ID, "name", op.Name, "exit_code", code)
		_, err := e.rt.Do(context.Background(), func(c *core.State, now time.Time) (any, error) {
			return c.FinishAgentOperation(now, op.ID, results, code, out)
		})
		if err != nil {
			e.log.Error("recording the end of an operation failed", "operation", op.ID, "err", err)
		}
	}()
}

// close kills the commands still running, waits for their ends to be
// recorded, and starts no more.
func (e *effector) close() {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.cancel()
	e.wg.Wait()
}

// run runs command in its own process group and returns its exit status
// and the tail of its output. A command that cannot start exits 127; one
// killed because wilco stops exits -1, as does one killed by a signal.
// What it leaves running is not stopped (a command may start a service),
// but its output is read at most outputDrain after the command ends.
func run(ctx context.Context, id string, command []string) (int, string) {
	if len(command) == 0 {
		return 0, ""
	}
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Env = append(os.Environ(), "WILCO_OPERATION_ID="+id)
	out := &tail{max: maxOutput}
	g, err := proc.Start(ctx, cmd, out)
	var exit proc.Exit
	if err == nil {
		exit, err = g.Wait()
		g.Drain(outputDrain)
	}
	switch {
	case err == nil && exit.Code == 0:
		return 0, out.String()
	case ctx.Err() != nil:
		return -1, out.String() + "\nkilled: wilco stopped while the command ran"
	case err != nil:
		return 127, out.String() + fmt.Sprintf("\ncould not run %q: %v", command[0], err)
	case exit.Signal != nil:
		return -1, out.String()
	default:
		return exit.Code, out.String()
	}
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
