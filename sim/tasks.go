package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"wilco/core"
)

// taskWorld is the part of a run that works tasks in parallel (parallel >
// 1): exec agents with several instances, a simulated repository
// (gitModel) where the runtime's effects on worktrees and landings are
// performed, and the user who submits tasks, cancels them, answers
// escalations and commits on the target underneath. Its choices come from
// a random stream of its own: a seed without it runs as it always did.
type taskWorld struct {
	on       bool
	rng      *rand.Rand
	parallel int
	how      string
	order    string
	agents   []*taskAgent
	byName   map[string]*taskAgent
	guests   map[string]*taskAgent
	n        int
	git      *gitModel
	// turns are the agents' turns under way, by task; ops the runtime's
	// effects under way (prepare, verify, land), by task. Both die with
	// wilco (an exec agent's turn is a process of wilco's).
	turns map[string]*turn
	ops   map[string]map[string]int
	// files each task changes; landed counts the target's moves by task.
	files map[string][]string
	edits int
}

// taskAgent is an exec agent with instances: it acknowledges a task in
// its turn's output and ends the turn with its files changed.
type taskAgent struct {
	name      string
	instances int
	silent    float64 // never acknowledges
	fail      float64 // its turn fails
}

// guest is the task agent an agent of the rest of the run is when the
// core gives it a task worked in parallel (an exec agent has one
// instance unless it says otherwise).
func (tw *taskWorld) guest(name string) *taskAgent {
	if a := tw.guests[name]; a != nil {
		return a
	}
	a := &taskAgent{name: name, instances: 1, silent: 0.1, fail: 0.2}
	tw.guests[name] = a
	return a
}

// turn is an agent's turn on a task's attempt.
type turn struct {
	task, delivery, agent, worktree string
	attempt                         int
}

var taskFiles = []string{"api.go", "auth.go", "cache.go", "db.go", "log.go", "main.go"}

// taskAgentNames are the task agents' names: no other agent has them.
var taskAgentNames = []string{"worker-a", "worker-b", "worker-c"}

func newTaskWorld(cfg Config) *taskWorld {
	tw := &taskWorld{
		rng:    rand.New(rand.NewPCG(cfg.Seed^0x7061726c, cfg.Seed^0x6c616e64)),
		byName: map[string]*taskAgent{}, guests: map[string]*taskAgent{}, turns: map[string]*turn{}, ops: map[string]map[string]int{},
		files: map[string][]string{},
	}
	switch cfg.Parallel {
	case 0:
		tw.on = tw.rng.IntN(5) == 0
	case 1:
		tw.on = true
	}
	return tw
}

func (tw *taskWorld) chance(p float64) bool { return tw.rng.Float64() < p }

func (tw *taskWorld) between(lo, hi time.Duration) time.Duration {
	ms := int64((hi - lo) / time.Millisecond)
	return lo + time.Duration(tw.rng.Int64N(ms+1))*time.Millisecond
}

func pickOf[T any](tw *taskWorld, xs []T) T { return xs[tw.rng.IntN(len(xs))] }

// overlay sets the parallel policies of the run on p.
func (tw *taskWorld) overlay(p *core.Policies) {
	if !tw.on {
		return
	}
	p.Parallel = tw.parallel
	p.Land = core.LandPolicy{To: "main", How: tw.how, Order: tw.order}
}

// setupTasks draws the run's parallel policies and registers the exec
// agents that work tasks in parallel.
func (w *world) setupTasks() {
	tw := w.tw
	if !tw.on {
		return
	}
	tw.git = newGitModel()
	tw.parallel = 2 + tw.rng.IntN(3)
	tw.how = pickOf(tw, []string{core.LandMerge, core.LandRebase, core.LandSquash})
	tw.order = pickOf(tw, core.LandOrders)
	w.configure(w.live.Policies())
	for i := range 1 + tw.rng.IntN(len(taskAgentNames)) {
		a := &taskAgent{name: taskAgentNames[i], instances: 1 + tw.rng.IntN(3), silent: pickOf(tw, []float64{0, 0, 0.05, 0.3}), fail: pickOf(tw, []float64{0.05, 0.15, 0.3})}
		tw.agents = append(tw.agents, a)
		tw.byName[a.name] = a
		w.tracef("register task agent %s (%d instances)", a.name, a.instances)
		r := w.do("register "+a.name, func(c *core.State, now time.Time) (any, error) {
			return nil, c.RegisterAgent(now, core.AgentSpec{Name: a.name, Adapter: "exec", Capabilities: []string{"go"}, Instances: a.instances})
		})
		if r.answered && r.err != nil {
			w.failf("register %s: %v", a.name, r.err)
		}
	}
	w.hit(fmt.Sprintf("tasks.parallel.%s.%s", tw.how, tw.order))
	w.userCommitsNow()
}

// userCommitsNow is the user committing on the target now and then, as
// time passes: landings and their verifications in flight find it moved.
func (w *world) userCommitsNow() {
	w.schedule(action{at: w.clock.Now().Add(w.tw.between(10*time.Second, 2*time.Minute)), kind: actTask, fn: func() {
		w.userCommit()
		w.userCommitsNow()
	}})
}

// taskStep is one step of the user of tasks worked in parallel: submit,
// cancel, answer an escalation, commit on the target.
func (w *world) taskStep() {
	tw := w.tw
	switch pickWeighted(tw, 6, 1, 4, 2) {
	case 0:
		w.submitTask()
	case 1:
		w.cancelTask()
	case 2:
		w.answerEscalation()
	case 3:
		w.userCommit()
	}
}

func pickWeighted(tw *taskWorld, weights ...int) int {
	total := 0
	for _, x := range weights {
		total += x
	}
	n := tw.rng.IntN(total)
	for i, x := range weights {
		if n < x {
			return i
		}
		n -= x
	}
	return len(weights) - 1
}

func (w *world) submitTask() {
	tw := w.tw
	if n := len(w.live.Tasks(func(t *core.Task) bool { return !t.State.Terminal() })); n >= 3*tw.parallel {
		return
	}
	tw.n++
	if tw.chance(0.15) {
		w.submitPlan()
		return
	}
	spec := core.TaskSpec{ID: fmt.Sprintf("P-%d", tw.n), Description: fmt.Sprintf("Rework part %d of the service", tw.n)}
	if tw.chance(0.2) {
		spec.Agent = pickOf(tw, tw.agents).name
	}
	if tw.chance(0.15) {
		spec.Land = pickOf(tw, []string{core.LandMerge, core.LandRebase, core.LandSquash})
	}
	var files []string
	for _, i := range tw.rng.Perm(len(taskFiles))[:1+tw.rng.IntN(2)] {
		files = append(files, taskFiles[i])
	}
	tw.files[spec.ID] = files
	w.tracef("submit %s (agent %q, land %q, files %v)", spec.ID, spec.Agent, spec.Land, files)
	r := w.do("submit "+spec.ID, func(c *core.State, now time.Time) (any, error) { return c.SubmitTask(now, spec) })
	if r.answered && r.err == nil {
		w.hit("tasks.submitted")
	}
}

// submitPlan submits a plan of two or three tasks, each but the first
// depending on the one before it or on none.
func (w *world) submitPlan() {
	tw := w.tw
	id := fmt.Sprintf("P-plan%d", tw.n)
	var specs []core.PlanTaskSpec
	for i := range 2 + tw.rng.IntN(2) {
		ts := core.PlanTaskSpec{TaskSpec: core.TaskSpec{Description: fmt.Sprintf("Step %d of plan %d", i+1, tw.n)}}
		if i > 0 && tw.chance(0.7) {
			ts.DependsOn = []int{i}
		}
		specs = append(specs, ts)
	}
	w.tracef("submit plan %s of %d tasks", id, len(specs))
	r := w.do("submit plan "+id, func(c *core.State, now time.Time) (any, error) { return c.SubmitPlan(now, id, specs) })
	if r.answered && r.err == nil {
		w.hit("tasks.plan_submitted")
	}
}

// filesOf are the files a task changes: one or two, drawn by its id.
func (tw *taskWorld) filesOf(task string) []string {
	if fs, ok := tw.files[task]; ok {
		return fs
	}
	h := treeHash(map[string]string{"task": task})
	fs := []string{taskFiles[h%uint64(len(taskFiles))]}
	if h&0x100 != 0 {
		if f := taskFiles[(h>>16)%uint64(len(taskFiles))]; f != fs[0] {
			fs = append(fs, f)
		}
	}
	tw.files[task] = fs
	return fs
}

// liveTask picks a task keep accepts, "" for none.
func (w *world) liveTask(keep func(*core.Task) bool) string {
	ts := w.live.Tasks(func(t *core.Task) bool { return strings.HasPrefix(t.ID, "P-") && keep(t) })
	if len(ts) == 0 {
		return ""
	}
	return pickOf(w.tw, ts).ID
}

func (w *world) cancelTask() {
	id := w.liveTask(func(t *core.Task) bool { return !t.State.Terminal() })
	if id == "" {
		return
	}
	t, _ := w.live.Task(id)
	w.tracef("cancel task %s (%s/%s)", id, t.State, t.Phase)
	r := w.do("cancel task "+id, func(c *core.State, now time.Time) (any, error) {
		_, _, err := c.CancelTask(now, id)
		return nil, err
	})
	if r.answered && r.err == nil {
		w.hit("tasks.cancelled." + string(t.Phase))
	}
}

func (w *world) answerEscalation() {
	id := w.liveTask(func(t *core.Task) bool { return t.State == core.Escalated || t.State == core.Blocked })
	if id == "" {
		return
	}
	action := pickOf(w.tw, []string{core.RespondRetry, core.RespondRetry, core.RespondRetry, core.RespondSkip, core.RespondAbort})
	w.tracef("answer %s to %s", action, id)
	r := w.do("respond to "+id, func(c *core.State, now time.Time) (any, error) { return c.Respond(now, id, action, "") })
	if r.answered && r.err == nil {
		w.hit("tasks.respond." + action)
	}
}

// userCommit is the user committing on the target: landings in flight
// find it moved.
func (w *world) userCommit() {
	g := w.tw.git
	w.tw.edits++
	tree := copyTree(g.tree(g.target))
	f := pickOf(w.tw, taskFiles)
	tree[f] = fmt.Sprintf("user.%d", w.tw.edits)
	c := g.commit(tree, g.target)
	g.move(c, "")
	w.tracef("the user commits %s on main (%s)", c[:7], f)
	w.hit("tasks.user_commit")
}

func copyTree(t map[string]string) map[string]string {
	out := make(map[string]string, len(t))
	for k, v := range t {
		out[k] = v
	}
	return out
}

// --- effects ---------------------------------------------------------------

func (tw *taskWorld) opStarted(task, kind string) {
	if tw.ops[task] == nil {
		tw.ops[task] = map[string]int{}
	}
	tw.ops[task][kind]++
}

func (tw *taskWorld) opEnded(task, kind string) {
	if m := tw.ops[task]; m != nil {
		if m[kind]--; m[kind] <= 0 {
			delete(m, kind)
		}
	}
}

func (tw *taskWorld) underWay(task, kind string) bool { return tw.ops[task][kind] > 0 }

// later schedules something wilco's own processes do: it dies with
// wilco.
func (w *world) later(d time.Duration, fn func()) {
	w.schedule(action{at: w.clock.Now().Add(d), kind: actTask, fn: fn, proc: true})
}

// taskEffect performs an effect of tasks worked in parallel, as the
// executor would: after a while, then its outcome reported after another.
func (w *world) taskEffect(x core.Effect) {
	tw := w.tw
	if w.st.dead() {
		w.hit("effect.lost_in_crash")
		return
	}
	if !tw.on {
		w.failf("effect %T in a run that works no task in parallel", x)
	}
	if w.st.last != w.live.Seq() {
		w.failf("effect %T performed with seq %d durable, the core is at %d", x, w.st.last, w.live.Seq())
	}
	switch e := x.(type) {
	case core.PrepareWorktree:
		tw.opStarted(e.TaskID, "prepare")
		w.later(tw.between(0, 3*time.Second), func() { w.prepareWorktree(e) })
	case core.RemoveWorktree:
		w.removeWorktree(e)
	case core.RunVerify:
		tw.opStarted(e.TaskID, "verify")
		w.later(tw.between(time.Second, 20*time.Second), func() { w.runVerify(e) })
	case core.LandTask:
		tw.opStarted(e.TaskID, "land")
		w.later(tw.between(0, 3*time.Second), func() { w.landTask(e) })
	case core.StopTurn:
		if tr := tw.turns[e.TaskID]; tr != nil {
			w.tracef("%s's turn on %s is stopped (%s)", tr.agent, e.TaskID, e.Reason)
			delete(tw.turns, e.TaskID)
			w.hit("tasks.turn_stopped")
		}
	}
}

// report reports an outcome after d: the report dies with wilco.
func (w *world) reportOutcome(d time.Duration, task, kind string, o core.Outcome) {
	w.later(d, func() {
		w.tw.opEnded(task, kind)
		if kind == "land" && w.cfg.breakWorld == "lose_landing" {
			return
		}
		w.tracef("report %T of %s", o, task)
		r := w.do(fmt.Sprintf("report %T of %s", o, task), func(c *core.State, now time.Time) (any, error) { return c.Report(now, o) })
		if r.answered && r.err != nil {
			w.hit("tasks.report_refused")
		}
	})
}

func (w *world) prepareWorktree(e core.PrepareWorktree) {
	tw, g := w.tw, w.tw.git
	out := core.WorktreePrepared{TaskID: e.TaskID, Branch: e.Branch}
	switch wt := g.worktrees[e.Dir]; {
	case wt != nil && wt.branch == e.Branch:
		out.Base = wt.base
		w.hit("tasks.worktree_found")
	case wt != nil || g.branches[e.Branch] != "":
		out.Error = "fatal: '" + e.Branch + "' is already checked out or exists"
		w.hit("tasks.worktree_error")
	case tw.chance(0.03):
		out.Error = "fatal: could not lock the repository"
		w.hit("tasks.worktree_error")
	default:
		if e.From != "main" {
			w.failf("worktree of %s made from %q, the target is main", e.TaskID, e.From)
		}
		g.branches[e.Branch] = g.target
		g.worktrees[e.Dir] = &worktree{dir: e.Dir, branch: e.Branch, task: e.TaskID, base: g.target, files: copyTree(g.tree(g.target))}
		out.Base = g.target
		w.hit("tasks.worktree_made")
	}
	w.reportOutcome(tw.between(0, time.Second), e.TaskID, "prepare", out)
}

func (w *world) removeWorktree(e core.RemoveWorktree) {
	g := w.tw.git
	t, ok := w.live.Task(e.TaskID)
	if !ok || !t.State.Terminal() {
		w.failf("the worktree of %s is removed while it is %s", e.TaskID, t.State)
	}
	if wt := g.worktrees[e.Dir]; wt != nil && wt.task != e.TaskID {
		w.failf("the worktree %s of %s is removed for %s", e.Dir, wt.task, e.TaskID)
	}
	delete(g.worktrees, e.Dir)
	delete(g.combined, e.Branch)
	if e.DeleteBranch {
		delete(g.branches, e.Branch)
	}
	w.hit("tasks.worktree_removed")
}

// verdict is the checks' verdict on a tree: drawn once, the same ever
// after.
func (w *world) verdict(tree map[string]string) bool {
	g := w.tw.git
	h := treeHash(tree)
	v, ok := g.verdicts[h]
	if !ok {
		v = w.tw.chance(0.8)
		g.verdicts[h] = v
	}
	return v
}

func (w *world) runVerify(e core.RunVerify) {
	tw, g := w.tw, w.tw.git
	r := core.VerifyResult{TaskID: e.TaskID, RunID: e.RunID, Duration: time.Second}
	wt := g.worktrees[e.Worktree]
	if wt == nil {
		r.Steps = []core.StepRun{{Name: "test", Command: "go test ./...", ExitCode: 1, Output: "no such directory: " + e.Worktree}}
		w.hit("tasks.verify_without_worktree")
	} else {
		pass := w.verdict(wt.files)
		step := core.StepRun{Name: "test", Command: "go test ./...", Duration: time.Second}
		if !pass {
			step.ExitCode, step.Output = 1, "--- FAIL: TestService\nFAIL"
		} else {
			g.verified[treeHash(wt.files)] = true
		}
		r.Steps = []core.StepRun{step}
		r.Files = changed(g.tree(wt.base), wt.files)
		kind := "task"
		if strings.Contains(e.RunID, "-land") {
			kind = "combination"
		}
		w.hit(fmt.Sprintf("tasks.verify.%s.%v", kind, pass))
	}
	w.reportOutcome(tw.between(0, time.Second), e.TaskID, "verify", r)
}

// landTask lands a verified task as dispatch does: its change committed
// on its branch; the target moved as a fast-forward when it did not move
// past the branch's base, else the combination made and reported, to be
// verified first; a conflict reported with its files.
func (w *world) landTask(e core.LandTask) {
	out := core.Landed{TaskID: e.TaskID, RunID: e.RunID, Branch: e.Branch}
	if e.Branch != "main" {
		w.failf("%s lands on %q, the target is main", e.TaskID, e.Branch)
	}
	if e.Advance != "" {
		w.hit("tasks.land.advance")
		w.advanceTarget(e, e.Onto, e.Advance, out)
		return
	}
	wt, head, ok := w.commitLanding(e, out)
	switch {
	case !ok:
	case e.On != "":
		w.combineOn(e, wt, head, out)
	case w.landedBefore(e, wt, head, out):
	default:
		w.landOnTarget(e, wt, head, out)
	}
}

// commitLanding commits a landing task's change on its branch in its
// worktree, as dispatch does before it lands it, and returns the
// worktree and the branch's head; false when the landing ends there (no
// worktree, a commit hook refused, nothing to land), reported.
func (w *world) commitLanding(e core.LandTask, out core.Landed) (*worktree, string, bool) {
	tw, g := w.tw, w.tw.git
	wt := g.worktrees[e.Worktree]
	if wt == nil || wt.task != e.TaskID {
		out.Error = "no worktree " + e.Worktree
		w.hit("tasks.land.no_worktree")
		w.reportOutcome(0, e.TaskID, "land", out)
		return nil, "", false
	}
	if tw.chance(0.02) && len(changed(g.tree(g.branches[wt.branch]), wt.files)) > 0 {
		out.Refused, out.ExitCode, out.Output = true, 1, "pre-commit: trailing whitespace in "+strings.Join(changed(g.tree(g.branches[wt.branch]), wt.files), ", ")
		w.hit("tasks.land.hook_refused")
		w.reportOutcome(0, e.TaskID, "land", out)
		return nil, "", false
	}
	if wt.detached {
		wt.files, wt.detached = copyTree(g.tree(g.branches[wt.branch])), false
	}
	head := g.commitAll(wt)
	w.tracef("land %s (%s): its branch at %s, main at %s, on %q", e.TaskID, e.How, head[:7], g.target[:7], e.On)
	if head == e.Base {
		w.hit("tasks.land.nothing")
		w.reportOutcome(0, e.TaskID, "land", out)
		return nil, "", false
	}
	return wt, head, true
}

// landedBefore reports again what a landing asked before wilco stopped
// came to, and says whether it did: the commit the target holds it as,
// or the combination made then, to be verified.
func (w *world) landedBefore(e core.LandTask, wt *worktree, head string, out core.Landed) bool {
	tw, g := w.tw, w.tw.git
	onto := g.target
	if landed := g.landedAs(head, onto, e.Base, e.How); landed != "" {
		// The branch landed before wilco stopped: the target holds it.
		out.Commit = landed
		w.hit("tasks.land.landed_before")
		w.reportOutcome(tw.between(0, time.Second), e.TaskID, "land", out)
		return true
	}
	if head == g.combined[wt.branch] && g.commits[head].parents[0] == onto {
		// The combination made when this landing was asked before wilco
		// stopped: reported again, to be verified.
		out.Combined, out.Onto = head, onto
		w.hit("tasks.land.combined_again")
		w.reportOutcome(tw.between(0, time.Second), e.TaskID, "land", out)
		return true
	}
	return false
}

// landOnTarget lands a task's branch (at head) on the target's head: a
// fast-forward (or one commit, squashed) when the target did not move
// past it, else its combination, held by its worktree's branch and
// reported to be verified, or its conflict.
func (w *world) landOnTarget(e core.LandTask, wt *worktree, head string, out core.Landed) {
	tw, g := w.tw, w.tw.git
	onto := g.target
	if g.isAncestor(onto, head) {
		c := head
		if e.How == core.LandSquash && !slices.Contains(g.commits[head].parents, onto) {
			c = g.commit(g.tree(head), onto)
		}
		w.hit("tasks.land.fast_forward")
		w.advanceTarget(e, onto, c, out)
		return
	}
	c, tree, conflict := g.combine(onto, head, e.How)
	if len(conflict) > 0 {
		out.Conflict, out.Between = conflict, g.between(e.Base, onto)
		w.hit("tasks.land.conflict")
		w.reportOutcome(0, e.TaskID, "land", out)
		return
	}
	g.branches[wt.branch] = c
	g.combined[wt.branch] = c
	wt.files = copyTree(tree)
	if w.cfg.breakWorld == "land_unverified" {
		w.advanceTarget(e, onto, c, out)
		return
	}
	out.Combined, out.Onto = c, onto
	w.hit("tasks.land.combined")
	w.reportOutcome(tw.between(0, time.Second), e.TaskID, "land", out)
}

// combineOn combines a task's branch on the combination of the task
// landing ahead of it (LandTask.On), not landed yet, as workspace's
// CombineOn does: always a combination, held by the worktree detached
// (its branch stays at the task's own change).
func (w *world) combineOn(e core.LandTask, wt *worktree, head string, out core.Landed) {
	tw, g := w.tw, w.tw.git
	if g.commits[e.On] == nil {
		w.failf("%s is combined on %s, which is no commit", e.TaskID, e.On)
	}
	c, tree, conflict := g.combine(e.On, head, e.How)
	if len(conflict) > 0 {
		out.Conflict, out.Between = conflict, g.between(e.Base, e.On)
		w.hit("tasks.land.behind_conflict")
		w.reportOutcome(tw.between(0, time.Second), e.TaskID, "land", out)
		return
	}
	wt.files, wt.detached = copyTree(tree), true
	out.Combined, out.Onto = c, e.On
	w.hit("tasks.land.combined_behind")
	w.reportOutcome(tw.between(0, time.Second), e.TaskID, "land", out)
}

// advanceTarget moves the target from onto to c, only while it is at
// onto, sometimes after waiting for the user's uncommitted changes.
func (w *world) advanceTarget(e core.LandTask, onto, c string, out core.Landed) {
	tw, g := w.tw, w.tw.git
	switch {
	case g.target == c:
		w.hit("tasks.land.already_there")
	case g.target != onto:
		out.Moved = true
		w.hit("tasks.land.target_moved")
		w.reportOutcome(tw.between(0, time.Second), e.TaskID, "land", out)
		return
	default:
		if tw.chance(0.03) {
			// The move itself fails (git's lock on the branch): nothing
			// moved.
			out.Error = "fatal: cannot lock ref 'refs/heads/main'"
			w.hit("tasks.land.error")
			w.reportOutcome(0, e.TaskID, "land", out)
			return
		}
		if tw.chance(0.1) {
			// The user has uncommitted changes in a file it changes: the
			// landing waits, and goes on once they are committed.
			w.hit("tasks.land.waiting")
			w.later(tw.between(0, 2*time.Second), func() {
				r := w.do("landing of "+e.TaskID+" waits", func(c *core.State, now time.Time) (any, error) {
					return c.Report(now, core.LandWaiting{TaskID: e.TaskID, RunID: e.RunID, Branch: e.Branch, Files: []string{"main.go"}})
				})
				_ = r
				w.later(tw.between(time.Second, 10*time.Second), func() { w.advanceTarget(e, onto, c, out) })
			})
			return
		}
		g.move(c, e.TaskID)
		w.tracef("main moves to %s for %s", c[:7], e.TaskID)
		w.hit("tasks.land.moved")
	}
	out.Commit = c
	out.Files = changed(g.tree(onto), g.tree(c))
	w.reportOutcome(tw.between(0, 2*time.Second), e.TaskID, "land", out)
}

// --- agents ------------------------------------------------------------------

// taskMessage is a task agent receiving a message: the first send of a
// task's attempt starts a turn (an exec agent's turn starts with its
// message); a message of no task worked here is acknowledged.
func (w *world) taskMessage(a *taskAgent, m core.InboxMessage) {
	tw := w.tw
	t, ok := w.live.Task(m.TaskID)
	if !ok || !strings.HasPrefix(m.TaskID, "P-") {
		if category(m.Type) == catTask || category(m.Type) == catConversation || category(m.Type) == catInstruction {
			id := m.ID
			w.later(tw.between(0, 5*time.Second), func() {
				r := w.do("agent ack from "+a.name, func(c *core.State, now time.Time) (any, error) { return nil, c.AgentAck(now, a.name, id) })
				w.checkAcks(r, []string{id})
				w.noteLate(r)
			})
		}
		return
	}
	if tr := tw.turns[m.TaskID]; tr != nil && tr.agent == a.name {
		return // its turn is under way
	}
	attempt := m.TaskAttempt
	if attempt == 0 {
		attempt = t.Attempt
	}
	tr := &turn{task: m.TaskID, delivery: m.ID, agent: a.name, attempt: attempt, worktree: m.Worktree}
	if m.Worktree == "" || m.Worktree != t.Worktree {
		w.failf("%s's turn on %s starts in %q, its worktree is %q", a.name, m.TaskID, m.Worktree, t.Worktree)
	}
	tw.turns[m.TaskID] = tr
	w.checkAgentTurns(a)
	w.hit("tasks.turn_started")
	ackAt := tw.between(0, 8*time.Second)
	if !tw.chance(a.silent) {
		w.later(ackAt, func() {
			if tw.turns[tr.task] != tr {
				return
			}
			text := fmt.Sprintf("[ACK] %s - RECEIVED\nUnderstanding: %s", tr.task, t.Description)
			r := w.do("reply from "+a.name, func(c *core.State, now time.Time) (any, error) {
				return c.Reply(now, core.ReplyInput{Agent: a.name, Text: text, InReplyTo: tr.delivery})
			})
			w.afterReply(r)
		})
	} else {
		w.hit("tasks.agent_silent")
	}
	w.later(ackAt+tw.between(5*time.Second, 90*time.Second), func() { w.endTaskTurn(a, tr) })
}

// checkAgentTurns: an agent instance works one task at a time. The
// agent's turns under way on tasks the core gives it are no more than
// its instances.
func (w *world) checkAgentTurns(a *taskAgent) {
	n := 0
	for _, tr := range w.tw.turns {
		if tr.agent != a.name {
			continue
		}
		if t, ok := w.live.Task(tr.task); ok && t.Agent == a.name && t.State.Holds() && t.Delivery == tr.delivery {
			n++
		}
	}
	if n > a.instances {
		w.failf("an agent instance works one task at a time: %s works %d tasks at once with %d instances", a.name, n, a.instances)
	}
}

// endTaskTurn ends an agent's turn: it changes its files in the
// worktree (after a merge conflict it first merges the target in) and
// reports the turn's end.
func (w *world) endTaskTurn(a *taskAgent, tr *turn) {
	tw, g := w.tw, w.tw.git
	if tw.turns[tr.task] != tr {
		return
	}
	delete(tw.turns, tr.task)
	t, _ := w.live.Task(tr.task)
	res := core.TurnResult{TaskID: tr.task, Attempt: tr.attempt, Delivery: tr.delivery, Duration: time.Minute}
	if tw.chance(a.fail) {
		res.ExitCode, res.Error = 1, fmt.Sprintf("panic in attempt %d", tr.attempt)
		w.hit("tasks.turn_failed")
	} else if wt := g.worktrees[tr.worktree]; wt != nil && wt.task == tr.task {
		if n := len(t.Failures); n > 0 && t.Failures[n-1].FailureType == core.MergeConflict {
			// It merges the target in its worktree, keeping both intents,
			// and commits.
			head := g.branches[wt.branch]
			base := g.mergeBase(head, g.target)
			merged, conflict := mergeTrees(g.tree(base), wt.files, g.tree(g.target))
			for _, f := range conflict {
				merged[f] = wt.files[f]
			}
			wt.files = merged
			g.branches[wt.branch] = g.commit(merged, head, g.target)
			w.hit("tasks.agent_merged_target")
		}
		tw.edits++
		for _, f := range tw.filesOf(tr.task) {
			wt.files[f] = fmt.Sprintf("%s.a%d.%d", tr.task, tr.attempt, tw.edits)
		}
		res.Files = changed(g.tree(wt.base), wt.files)
		res.Summary = "reworked " + strings.Join(tw.filesOf(tr.task), ", ")
		w.hit("tasks.turn_done")
	}
	w.tracef("%s ends its turn on %s (attempt %d, exit %d)", a.name, tr.task, tr.attempt, res.ExitCode)
	r := w.do("turn of "+tr.task, func(c *core.State, now time.Time) (any, error) { return c.EndTurn(now, res) })
	if r.answered && r.err != nil {
		w.hit("tasks.turn_refused")
	}
}

// restartTasks is wilco starting again: the turns and the effects under
// way died with it; the tasks are recovered (their effects asked again).
func (w *world) restartTasks() {
	tw := w.tw
	if !tw.on {
		return
	}
	w.agenda = slices.DeleteFunc(w.agenda, func(a action) bool { return a.proc })
	clear(tw.turns)
	clear(tw.ops)
	w.do("recover", func(c *core.State, now time.Time) (any, error) {
		c.RecoverTasks(now)
		c.RecoverSessions(now)
		return nil, nil
	})
}
