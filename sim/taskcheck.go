package sim

import (
	"fmt"
	"strings"

	"wilco/core"
)

// The rules of tasks worked in parallel. Each is a function of the core's
// state (and of the simulated repository), so that a test can hand it a
// state that breaks it.

// checkSlots: no more than parallel tasks hold slots.
func checkSlots(c *core.State) error {
	if h := c.Holding(); len(h) > c.Slots() {
		ids := make([]string, len(h))
		for i, t := range h {
			ids[i] = t.ID + "(" + string(t.State) + ")"
		}
		return fmt.Errorf("no more than parallel tasks hold slots: %d hold one with parallel %d: %s", len(h), c.Slots(), strings.Join(ids, " "))
	}
	return nil
}

// holding counts the tasks that hold a slot with each agent.
func holding(c *core.State) map[string][]string {
	out := map[string][]string{}
	for _, t := range c.Holding() {
		if t.Agent != "" {
			out[t.Agent] = append(out[t.Agent], t.ID)
		}
	}
	return out
}

// checkInstances: an agent instance works one task at a time: the tasks
// that hold a slot with an agent are no more than its instances.
func checkInstances(c *core.State) error {
	for name, ids := range holding(c) {
		a, ok := c.Agent(name)
		if !ok {
			return fmt.Errorf("an agent instance works one task at a time: %v hold a slot with %s, which does not exist", ids, name)
		}
		if len(ids) > max(a.Instances, 1) {
			return fmt.Errorf("an agent instance works one task at a time: %s works %v with %d instances", name, ids, max(a.Instances, 1))
		}
	}
	return nil
}

// blockedInQueue says why a queued task may not start now, "" when it
// may: what it depends on has not ended, or the agent it asks for has no
// instance free; a task that asks for no agent waits only while no agent
// that may take it has one.
func blockedInQueue(c *core.State, q core.Task) string {
	for _, dep := range q.DependsOn {
		if d, ok := c.Task(dep); ok && !d.State.Terminal() {
			return "it depends on " + dep
		}
	}
	busy := holding(c)
	free := func(a core.Agent) bool { return !a.Removed && len(busy[a.Name]) < max(a.Instances, 1) }
	if q.RequestedAgent != "" {
		if a, ok := c.Agent(q.RequestedAgent); ok && !a.Removed && !free(a) {
			return "its agent " + q.RequestedAgent + " has no instance free"
		}
		return ""
	}
	for _, a := range c.Agents() {
		if free(a) && a.Role != core.RoleScout && a.Name != c.Policies().Review.Agent {
			return ""
		}
	}
	return "no agent has an instance free"
}

// checkQueueOrder: the queue hands out tasks oldest first. When a queued
// task starts (c is the state before), every task queued before it waits
// for a reason.
func checkQueueOrder(c *core.State, started string) error {
	t, ok := c.Task(started)
	if !ok || t.State != core.Queued {
		return nil
	}
	for _, q := range c.Queue() {
		if q.QueuedSeq >= t.QueuedSeq {
			break
		}
		if blockedInQueue(c, q) == "" {
			return fmt.Errorf("the queue hands out tasks oldest first: %s starts before %s, which was queued first and may start", started, q.ID)
		}
	}
	return nil
}

// checkSlotsUsed: a free slot is not left idle while a queued task may
// start.
func checkSlotsUsed(c *core.State) error {
	if len(c.Holding()) >= c.Slots() {
		return nil
	}
	for _, q := range c.Queue() {
		if blockedInQueue(c, q) == "" {
			return fmt.Errorf("the queue hands out tasks oldest first: %d of %d slots are held (%v), yet %s waits in the queue", len(c.Holding()), c.Slots(), holding(c), q.ID)
		}
	}
	return nil
}

// checkTargetVerified: the target only holds verified commits. Every
// commit wilco moved the target to has a tree whose checks passed in a
// verification (of the task's change, or of its combination with the
// target).
func checkTargetVerified(g *gitModel) error {
	for i := g.checked; i < len(g.reflog); i++ {
		e := g.reflog[i]
		if e.task == "" {
			continue
		}
		if !g.verified[treeHash(g.tree(e.commit))] {
			return fmt.Errorf("the target only holds verified commits: move %d, to %s for %s, holds a tree no verification passed (moves:%s)", i, e.commit[:7], e.task, g.describe())
		}
		if i > 0 && !g.isAncestor(g.reflog[i-1].commit, e.commit) {
			return fmt.Errorf("the target only holds verified commits: move %d, to %s for %s, is no fast-forward of %s", i, e.commit[:7], e.task, g.reflog[i-1].commit[:7])
		}
	}
	g.checked = len(g.reflog) // a move checked once holds for good
	return nil
}

// checkLandsOnce: every verified task lands once or ends otherwise. No
// task moves the target twice; a task that moved it is landing still, or
// succeeded with that commit (or was cancelled while it landed); a task
// that succeeded with a commit moved the target there.
func checkLandsOnce(c *core.State, g *gitModel) error {
	moved := map[string]string{}
	for _, e := range g.reflog {
		if e.task == "" {
			continue
		}
		if prev, ok := moved[e.task]; ok {
			return fmt.Errorf("every verified task lands once: %s moved the target twice, to %s and to %s (moves:%s)", e.task, prev[:7], e.commit[:7], g.describe())
		}
		moved[e.task] = e.commit
	}
	for id, commit := range moved {
		t, ok := c.Task(id)
		switch {
		case !ok:
			return fmt.Errorf("every verified task lands once: %s moved the target and does not exist", id)
		case t.State == core.Running && t.Phase == core.Landing:
		case t.State == core.Success && t.LandedCommit == commit:
		case t.State == core.TaskCancelled && (t.LandedCommit == commit || t.LandedCommit == ""):
		default:
			return fmt.Errorf("every verified task lands once or ends otherwise: %s moved the target to %s, and it is %s/%s with landed commit %q", id, commit[:7], t.State, t.Phase, t.LandedCommit)
		}
	}
	for _, t := range c.Tasks(func(t *core.Task) bool { return t.State == core.Success && t.LandedCommit != "" && t.Worktree != "" }) {
		if t.Land != core.LandNone && moved[t.ID] != t.LandedCommit && !g.isAncestor(t.LandedCommit, g.target) {
			return fmt.Errorf("every verified task lands once: %s succeeded as %s, which the target never held", t.ID, t.LandedCommit[:7])
		}
	}
	return nil
}

// checkNoVerifiedTaskLost: every verified task lands once or ends
// otherwise — none is lost on the way. A task whose worktree is being
// made, whose change is being verified or whose landing is under way has
// its effect under way (asked again after a restart); a verified task
// waiting for its turn to land waits behind a landing under way, or (land.order
// submission) behind a task submitted before it.
func checkNoVerifiedTaskLost(c *core.State, underWay func(task, kind string) bool) error {
	// The landings under way, in the landing queue's order: one behind
	// another waits for it (its combination made on that of the one
	// ahead, it lands after it).
	landing, ahead := "", map[string]bool{}
	for _, t := range c.LandQueue() {
		if t.LandStarted {
			ahead[t.ID] = landing != ""
			landing = t.ID
		}
	}
	for _, t := range c.Tasks(func(t *core.Task) bool { return t.State == core.Running && t.Worktree != "" }) {
		switch {
		case t.Phase == core.Preparing && !underWay(t.ID, "prepare"):
			return fmt.Errorf("every verified task lands once or ends otherwise: %s is preparing its worktree, and nothing makes it", t.ID)
		case t.Phase == core.Verifying && !underWay(t.ID, "verify"):
			return fmt.Errorf("every verified task lands once or ends otherwise: %s is verifying, and no verification runs", t.ID)
		case t.Phase != core.Landing:
		case t.LandStarted && !underWay(t.ID, "land") && !underWay(t.ID, "verify") && !ahead[t.ID]:
			return fmt.Errorf("every verified task lands once or ends otherwise: %s is landing, and no landing nor verification of it is under way", t.ID)
		case !t.LandStarted && landing == "" && !waitsForEarlier(c, t):
			var q []string
			for _, l := range c.LandQueue() {
				q = append(q, l.ID)
			}
			for _, h := range c.Holding() {
				q = append(q, fmt.Sprintf("[%s %s/%s %s wt=%q]", h.ID, h.State, h.Phase, h.CreatedAt.Sub(Epoch), h.Worktree))
			}
			return fmt.Errorf("every verified task lands once or ends otherwise: %s waits for its turn to land, and no task lands (land.order %s, landing queue %v)", t.ID, c.Policies().Land.Order, q)
		}
	}
	return nil
}

// waitsForEarlier reports whether a verified task waits for a task
// submitted before it (land.order submission).
func waitsForEarlier(c *core.State, t core.Task) bool {
	if c.Policies().Land.Order != "submission" {
		return false
	}
	for _, h := range c.Holding() {
		if h.Worktree != "" && h.ID != t.ID && (h.CreatedAt.Before(t.CreatedAt) || h.CreatedAt.Equal(t.CreatedAt) && h.QueuedSeq < t.QueuedSeq) {
			return true
		}
	}
	return false
}

// checkTasks runs the rules of tasks worked in parallel after a step.
func (w *world) checkTasks() {
	if !w.tw.on || w.st.crashed != noFault {
		return
	}
	for _, check := range []func() error{
		func() error { return checkSlots(w.live) },
		func() error { return checkInstances(w.live) },
		func() error { return checkSlotsUsed(w.live) },
		func() error { return checkTargetVerified(w.tw.git) },
		func() error { return checkLandsOnce(w.live, w.tw.git) },
		func() error { return checkNoVerifiedTaskLost(w.live, w.tw.underWay) },
	} {
		if err := check(); err != nil {
			w.failf("%v", err)
		}
	}
}

// checkTaskEvent checks an event of a task against the state before it.
func (w *world) checkTaskEvent(ev core.Event) {
	switch e := ev.Data.(type) {
	case core.TaskStateChanged:
		if e.From == core.Queued && (e.To == core.Running || e.To == core.AwaitingAck) {
			if err := checkQueueOrder(w.shadow, ev.TaskID); err != nil {
				w.failf("event %d: %v", ev.Seq, err)
			}
			w.hit("tasks.started")
		}
	case core.TaskLanded:
		if t, _ := w.shadow.Task(ev.TaskID); t.LandedCommit != "" {
			w.failf("event %d: every verified task lands once: %s landed as %s, then as %s", ev.Seq, ev.TaskID, t.LandedCommit, e.Commit)
		}
		w.hit("tasks.landed")
	case core.TaskFailure:
		w.hit("tasks.failure." + e.Record.FailureType)
	}
}
