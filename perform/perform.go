// Package perform is wilco's one executor: it takes the effects the
// runtime committed, in order, performs each with the performer of its
// kind — the dispatcher (agents' messages, turns and sessions, verify
// steps, dry-run diffs, the commits of verified changes), the operation
// runner, the notifier — and reports
// each outcome back through the runtime's one door, Report. One context,
// one pool of goroutines and one Close cover them all.
package perform

import (
	"context"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"sync"
	"syscall"

	"wilco/core"
	"wilco/dispatch"
	"wilco/notify"
	"wilco/runtime"
)

// EnvKillBefore names an environment variable for tests of recovery:
// when it names an effect ("StopSession", "RunVerify", "LandTask", …),
// wilco kills itself with SIGKILL just before performing the first such
// effect; "report:" and an outcome ("report:VerifyResult",
// "report:Landed") kill it just before that outcome is reported; a step
// of a landing ("land:update-ref": the checkout of the target was updated,
// the target not yet moved; "land:after-update-ref": the target just
// moved) kills it there. Never set it outside tests.
const EnvKillBefore = "WILCO_TEST_KILL_BEFORE"

// Options configure an executor.
type Options struct {
	// Runtime hands out the committed effects and takes the outcomes.
	Runtime  *runtime.Runtime
	Dispatch *dispatch.Dispatcher
	Notifier *notify.Notifier
	// Issues writes the notifications of the issue hook (core.IssueHook)
	// in the threads of the tasks' issues; nil when no forge is
	// configured (they fail for good, as those of a hook not configured).
	Issues Maker
	Logger *slog.Logger
}

// Maker makes an attempt of a notification and returns its result; ok is
// false when ctx ended first.
type Maker interface {
	Make(ctx context.Context, e core.Notify) (_ core.NotificationResult, ok bool)
}

// Executor performs the committed effects.
type Executor struct {
	rt       *runtime.Runtime
	disp     *dispatch.Dispatcher
	notifier *notify.Notifier
	issues   Maker
	log      *slog.Logger
	kill     string
	warned   sync.Map

	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup // the effects in flight
	loop   sync.WaitGroup // the loop taking the effects
}

// New makes an executor; Start runs it.
func New(o Options) *Executor {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	x := &Executor{rt: o.Runtime, disp: o.Dispatch, notifier: o.Notifier, issues: o.Issues, log: log, kill: os.Getenv(EnvKillBefore)}
	x.ctx, x.cancel = context.WithCancel(context.Background())
	if strings.HasPrefix(x.kill, "land:") {
		o.Dispatch.OnLandStep(x.killBefore)
	}
	return x
}

// Start takes the committed effects, in order, until Close.
func (x *Executor) Start() {
	x.loop.Go(func() {
		for {
			effects, err := x.rt.Effects(x.ctx)
			if err != nil {
				return
			}
			for _, e := range effects {
				x.perform(e)
			}
		}
	})
}

// perform performs one effect: those that must keep their order (messages,
// and the turns they stop) in line, the others on goroutines of their own.
// Each is told to the runtime once performed (runtime.Performed).
func (x *Executor) perform(e core.Effect) {
	x.killBefore(effectName(e))
	switch e := e.(type) {
	case core.Deliver:
		if x.disp.Has(e.Agent) {
			x.disp.Deliver(e.Agent, e.Message)
		} else if _, seen := x.warned.LoadOrStore(e.Agent, true); !seen {
			x.log.Warn("no adapter delivers to this agent yet: its messages wait for their retry policy", "agent", e.Agent, "message", e.Message.ID)
		}
		x.rt.Performed(1)
	case core.StopTurn:
		x.disp.StopTurn(e)
		x.rt.Performed(1)
	default:
		x.performPooled(e)
	}
}

// performPooled performs an effect on a goroutine of the pool (spawn),
// a task's baseline in line first.
func (x *Executor) performPooled(e core.Effect) {
	switch e := e.(type) {
	case core.RecordBaseline:
		// In line: the task's first send, next, must find it noted.
		r := x.disp.RecordBaseline(x.ctx, e)
		x.spawn("record baseline "+e.TaskID, func(context.Context) (core.Outcome, bool) { return r, true })
	case core.StopSession:
		x.spawn("end session "+e.Agent, func(ctx context.Context) (core.Outcome, bool) {
			return x.disp.StopSession(ctx, e), true
		})
	case core.RunVerify:
		x.spawnThen("verify "+e.RunID, func(ctx context.Context) (core.Outcome, func(any), bool) { return x.disp.RunVerify(ctx, e) })
	case core.MakeProposal:
		x.spawn("diff "+e.TaskID, func(ctx context.Context) (core.Outcome, bool) { return x.disp.MakeProposal(ctx, e) })
	case core.LandTask:
		x.spawn("land "+e.TaskID, func(ctx context.Context) (core.Outcome, bool) { return x.disp.LandTask(ctx, e) })
	case core.MergePR:
		x.spawn("merge "+e.TaskID, func(ctx context.Context) (core.Outcome, bool) { return x.disp.MergePR(ctx, e) })
	case core.ApplyProposal:
		x.spawn("apply "+e.TaskID, func(ctx context.Context) (core.Outcome, bool) { return x.disp.ApplyProposal(ctx, e) })
	case core.DiscardProposal:
		x.spawn("discard "+e.TaskID, func(ctx context.Context) (core.Outcome, bool) {
			x.disp.DiscardProposal(ctx, e)
			return nil, false
		})
	case core.PrepareWorktree:
		x.spawn("worktree "+e.TaskID, func(ctx context.Context) (core.Outcome, bool) { return x.disp.PrepareWorktree(ctx, e) })
	case core.RemoveWorktree:
		x.spawn("remove worktree "+e.TaskID, func(ctx context.Context) (core.Outcome, bool) {
			x.disp.RemoveWorktree(ctx, e)
			return nil, false
		})
	case core.RunOperation:
		x.spawn("operation "+e.ID, func(ctx context.Context) (core.Outcome, bool) { return x.runOperation(ctx, e), true })
	case core.Notify:
		var m Maker = x.notifier
		if e.Notification.Hook == core.IssueHook && x.issues != nil {
			m = x.issues
		}
		x.spawn("notification "+e.Notification.ID, func(ctx context.Context) (core.Outcome, bool) { return m.Make(ctx, e) })
	default:
		x.log.Error("an effect of no known kind was not performed", "effect", effectName(e))
		x.rt.Performed(1)
	}
}

// spawn runs fn on a goroutine of the pool, tracked for Close, and
// reports its outcome (when it has one).
func (x *Executor) spawn(name string, fn func(ctx context.Context) (core.Outcome, bool)) {
	x.spawnThen(name, func(ctx context.Context) (core.Outcome, func(any), bool) {
		o, ok := fn(ctx)
		return o, nil, ok
	})
}

// spawnThen is spawn for an effect that does something with the core's
// answer to its outcome (then, called once the outcome is recorded). The
// effect is Performed once its outcome is recorded (or it has none).
func (x *Executor) spawnThen(name string, fn func(ctx context.Context) (core.Outcome, func(any), bool)) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		x.log.Warn("not started: wilco is stopping", "effect", name)
		x.rt.Performed(1)
		return
	}
	x.wg.Go(func() {
		defer x.rt.Performed(1)
		o, then, ok := fn(x.ctx)
		if !ok || o == nil {
			return
		}
		if v, recorded := x.report(name, o); recorded && then != nil {
			then(v)
		}
	})
}

// report records an outcome in the core and returns the core's answer;
// recorded is false when it was not recorded.
func (x *Executor) report(what string, o core.Outcome) (_ any, recorded bool) {
	x.killBefore("report:" + effectName(o))
	v, err := x.rt.Report(context.WithoutCancel(x.ctx), o)
	if err != nil {
		switch {
		case core.CodeOf(err) == core.Conflict:
			// No longer the one awaited (performed again after a
			// restart): nothing to record.
		case core.CodeOf(err) != "":
			x.log.Warn("the core refused an outcome", "what", what, "err", err)
		default:
			x.log.Error("recording an outcome failed", "what", what, "err", err)
		}
		return nil, false
	}
	return v, true
}

// killBefore kills wilco with SIGKILL when EnvKillBefore names what is
// about to happen (tests of recovery only).
func (x *Executor) killBefore(what string) {
	if x.kill == "" || x.kill != what {
		return
	}
	x.log.Warn("killed before "+what+" ("+EnvKillBefore+")", "pid", os.Getpid())
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal ends the process
}

// effectName is the name of an effect's or outcome's type, without its
// package.
func effectName(v any) string { return reflect.TypeOf(v).Name() }

// Close stops taking effects, stops the agents' processes, cancels the
// effects in flight (those cut short are not reported: the core asks for
// them again at the next start) and waits for them.
func (x *Executor) Close() error {
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return nil
	}
	x.closed = true
	x.mu.Unlock()
	err := x.disp.Close()
	x.cancel()
	x.loop.Wait()
	x.wg.Wait()
	return err
}
