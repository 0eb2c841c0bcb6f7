package perform

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"time"

	"wilco/core"
	"wilco/proc"
)

// maxOutput is how much of an operation's output is kept (its tail).
const maxOutput = 64 << 10

// outputDrain bounds how long the output of an operation's command is
// still read after it ended, while a process it left running holds it.
const outputDrain = 5 * time.Second

// runOperation performs a proceeding operation — on its agents through
// the dispatcher (hibernate, wake, restart, installs, maintenance), else
// its command — and returns its end.
func (x *Executor) runOperation(ctx context.Context, op core.RunOperation) core.OperationEnded {
	end := core.OperationEnded{ID: op.ID}
	if core.AgentOperation(op.Name) {
		end.Results, end.ExitCode, end.Output = x.disp.PerformOperation(ctx, op, run)
	} else {
		end.ExitCode, end.Output = run(ctx, op.ID, op.Command)
	}
	x.log.Info("operation ended", "operation", op.ID, "name", op.Name, "exit_code", end.ExitCode)
	return end
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
