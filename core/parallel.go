package core

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Tasks worked in parallel (parallel > 1): each task works in a worktree
// and on a branch of its own, made from the target's head when it starts,
// and lands on the target from there. With parallel 1 (the default) the
// one task at a time works in the checkout itself, as it always did.

// Preparing is the phase of a task whose worktree is being made.
const (
	Preparing          Phase = "preparing"
	MilestonePreparing       = "Preparing the task's worktree..."
)

// WorktreesDir is where tasks' worktrees are, relative to the checkout's
// root.
const WorktreesDir = ".wilco/worktrees"

// BranchPrefix begins the name of every task's branch.
const BranchPrefix = "wilco/"

// WorktreeName is the directory name of a task's worktree: the task id
// with every byte other than letters, digits, '.', '_' and '-' written as
// %XX (so "03-01:task-3" is "03-01%3Atask-3"), and a leading '.' as %2E.
// Different ids give different names, and no name can leave its folder.
func WorktreeName(taskID string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(taskID); i++ {
		c := taskID[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' && i > 0
		if ok {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// TaskWorktree is the worktree of a task worked in parallel, relative to
// the checkout's root: .wilco/worktrees/<WorktreeName>.
func TaskWorktree(taskID string) string { return WorktreesDir + "/" + WorktreeName(taskID) }

// TaskBranch is the branch of a task worked in parallel: wilco/<id>, its
// id written as WorktreeName writes it with every '.' as %2E too (a
// branch name may not hold "..", nor end with "." or ".lock").
func TaskBranch(taskID string) string {
	return BranchPrefix + strings.ReplaceAll(WorktreeName(taskID), ".", "%2E")
}

// PrepareWorktree asks the runtime to make a task's worktree (Dir,
// relative to the checkout's root) on a new branch (Branch) from the head
// of From (the target branch; "" for the checkout's HEAD), and to report
// with WorktreePrepared. A worktree that is already there on that branch
// (wilco stopped after making it) is reported as it is. It is asked again
// after a restart until its end is recorded.
type PrepareWorktree struct {
	TaskID, Branch, Dir, From string
}

func (PrepareWorktree) isEffect() {}

// WorktreePrepared is the end of a PrepareWorktree: the commit the
// task's branch starts from (Base), or Error.
type WorktreePrepared struct {
	TaskID, Branch string
	Base           string
	Error          string
}

func (WorktreePrepared) isOutcome() {}

// RemoveWorktree asks the runtime, once a task worked in parallel ended,
// to end what its agent ran in its worktree (a tmux agent's session), and
// to remove the worktree — with its branch when DeleteBranch (its work
// landed on the target) — unless Keep (the task asked for them to be
// kept). It has no outcome: the worktrees of ended tasks that are still
// there when wilco starts are removed then, and their sessions ended.
type RemoveWorktree struct {
	TaskID, Dir, Branch string
	DeleteBranch, Keep  bool
}

func (RemoveWorktree) isEffect() {}

// Worktree event types.
const (
	TypeTaskWorktree    = "task.worktree"
	TypeTaskPrepared    = "task.prepared"
	TypeTaskLandStarted = "task.land_started"
)

// TaskLandStarted records that a verified task's landing started: first
// in the landing queue, on the target's head; or, behind tasks landing
// ahead of it, combined on the combination of the one just ahead (On),
// and verified while they land. Recorded again for a task that becomes
// first (On ""): the one ahead landed as that combination, or did not
// land as it (the task is then combined again, on the target's head).
type TaskLandStarted struct {
	On string `json:"on,omitempty"`
}

func (TaskLandStarted) EventType() string { return TypeTaskLandStarted }

// TaskWorktreeAssigned records the worktree and branch a task worked in
// parallel works in, made from the head of From.
type TaskWorktreeAssigned struct {
	Worktree string `json:"worktree"`
	Branch   string `json:"branch"`
	From     string `json:"from,omitempty"`
}

// TaskWorktreePrepared records the commit a task's worktree and branch
// start from.
type TaskWorktreePrepared struct {
	Base string `json:"base"`
}

func (TaskWorktreeAssigned) EventType() string { return TypeTaskWorktree }
func (TaskWorktreePrepared) EventType() string { return TypeTaskPrepared }

func init() {
	register[TaskWorktreeAssigned]()
	register[TaskWorktreePrepared]()
	register[TaskLandStarted]()
}

// TaskWaitingForSlot records that a verified task worked in parallel,
// which let go of its slot, waits for one (and its agent's instance) to
// be worked on again: its attempt of this kind starts then.
type TaskWaitingForSlot struct {
	Kind string `json:"kind"`
}

// Slot event types.
const (
	TypeTaskWaitingForSlot = "task.waiting_for_slot"
)

func (TaskWaitingForSlot) EventType() string { return TypeTaskWaitingForSlot }

func init() { register[TaskWaitingForSlot]() }

// MilestoneWaitingForSlot is the milestone of a verified task that waits
// for a slot to be worked on again.
const MilestoneWaitingForSlot = "Waiting for a free slot to work on it again..."

// slotFor reports whether a task that let go of its slot can take one
// now: fewer than parallel hold one, and an agent has an instance free.
func (s *State) slotFor(t *Task) bool {
	held := 0
	for _, h := range s.tasks {
		if h.HoldsSlot() {
			held++
		}
	}
	return held < s.Slots() && s.pickFreeAgent(t) != ""
}

// waitForSlot makes a task that let go of its slot wait for one to start
// its next attempt (of kind).
func (s *State) waitForSlot(now time.Time, t *Task, kind string) {
	s.emit(now, t.ID, t.Agent, TaskWaitingForSlot{Kind: kind})
	s.emit(now, t.ID, t.Agent, TaskStateChanged{From: t.State, To: Running, Phase: Retrying, Milestone: MilestoneWaitingForSlot})
}

// released hands out the slot a verified task let go of, and says its
// agent is available when it works on nothing else.
func (s *State) released(now time.Time, t *Task) {
	if a := s.agents[t.Agent]; a != nil && a.Status == Busy && s.holdingWith(a.Name, "") == 0 {
		s.setStatus(now, a, Available, "task "+t.ID+" was verified")
	}
	s.schedule(now)
}

// parallel reports whether tasks are worked in parallel, each in a
// worktree of its own.
func (s *State) parallel() bool { return s.policies.Parallel > 1 }

// Slots is how many tasks are worked at once: parallel, at least 1.
func (s *State) Slots() int { return max(s.policies.Parallel, 1) }

// Holding lists the tasks that hold a slot, oldest first.
func (s *State) Holding() []Task {
	return s.Tasks(func(t *Task) bool { return t.HoldsSlot() })
}

// activeOf is the oldest task that holds a slot with the agent, nil for
// none.
func (s *State) activeOf(agent string) *Task {
	var out *Task
	for _, t := range s.tasks {
		if t.HoldsSlot() && t.Agent == agent && (out == nil || t.QueuedSeq < out.QueuedSeq) {
			out = t
		}
	}
	return out
}

// holdingWith counts the tasks that hold a slot with the agent, but skip.
func (s *State) holdingWith(agent, skip string) int {
	n := 0
	for _, t := range s.tasks {
		if t.HoldsSlot() && t.Agent == agent && t.ID != skip {
			n++
		}
	}
	return n
}

// freeInstance reports whether the agent has an instance no other task
// than skip holds.
func (s *State) freeInstance(a *Agent, skip string) bool {
	return s.holdingWith(a.Name, skip) < a.instances()
}

// pickFreeAgent chooses who works on a task worked in parallel: the agent
// it asks for, else the one it had, else the first agent by name that may
// take it — each only with an instance free — preferring the agents that
// are heard from (available, or busy on another task). "" when none has
// an instance free.
func (s *State) pickFreeAgent(t *Task) string {
	usable := func(a *Agent) bool { return a != nil && !a.Removed && s.freeInstance(a, t.ID) }
	if t.RequestedAgent != "" {
		if a := s.agents[t.RequestedAgent]; usable(a) {
			return t.RequestedAgent
		}
		return ""
	}
	if a := s.agents[t.Agent]; t.Agent != "" && usable(a) && a.Status != Offline && a.Status != Unresponsive {
		return t.Agent
	}
	var fallback string
	for _, n := range slices.Sorted(maps.Keys(s.agents)) {
		a := s.agents[n]
		if !s.takesTasks(a) || t.DryRun && !makesDryRuns(a) || len(s.lacksFor(a)) > 0 || !usable(a) {
			continue
		}
		if a.Status == Available || a.Status == Busy {
			return n
		}
		if fallback == "" {
			fallback = n
		}
	}
	return fallback
}

// makesDryRuns reports whether the agent's adapter makes a dry run's
// throw-away worktree and starts its turns there (an exec agent). A task
// worked in parallel goes to any agent: its worktree is made before it
// starts, an exec agent's turns and a tmux agent's session start in it,
// and a mailbox agent is told where it is.
func makesDryRuns(a *Agent) bool { return !a.Pull && a.Adapter != "tmux" }

// agentFor chooses who works on a task's next attempt: with tasks worked
// in parallel, an agent with an instance free (its own, for a task that
// has one).
func (s *State) agentFor(t *Task) string {
	if s.parallel() {
		return s.pickFreeAgent(t)
	}
	return s.pickTaskAgent(t)
}

// dependenciesEnded reports whether every task a task depends on has
// ended: a task worked in parallel starts from a head that holds what it
// depends on.
func (s *State) dependenciesEnded(t *Task) bool {
	for _, dep := range t.DependsOn {
		if d := s.tasks[dep]; d != nil && !d.State.Terminal() {
			return false
		}
	}
	return true
}

// inCheckout reports whether a task that holds a slot works in the
// checkout itself (no worktree of its own, and not a dry run still in
// its throw-away one: an applied dry run's diff is in the checkout): it
// holds them all.
func inCheckout(t *Task) bool { return t.Worktree == "" && (!t.DryRun || t.Proposal != nil) }

// scheduleParallel hands queued tasks out, oldest first, while fewer than
// parallel hold a slot: a task whose dependencies have not ended waits
// (the others go past it), as does one whose agent has no instance free;
// a task that works in the checkout (a dry run's diff being applied)
// starts only when nothing else holds a slot, and holds them all.
func (s *State) scheduleParallel(now time.Time) {
	held := 0
	for _, t := range s.tasks {
		if t.HoldsSlot() {
			if inCheckout(t) {
				return
			}
			held++
		}
	}
	// A verified task that must be worked on again goes first.
	for _, r := range s.Tasks(func(t *Task) bool { return t.Released && t.Resume != "" && t.State == Running }) {
		if held >= s.Slots() {
			return
		}
		if s.pickFreeAgent(s.tasks[r.ID]) == "" {
			continue
		}
		held++
		s.startAttempt(now, s.tasks[r.ID], r.Resume)
	}
	for _, q := range s.Queue() {
		if held >= s.Slots() {
			return
		}
		t := s.tasks[q.ID]
		if !s.dependenciesEnded(t) {
			continue
		}
		if t.Applying {
			if held > 0 {
				return
			}
			s.warnDependencies(now, t)
			s.emit(now, t.ID, t.Agent, TaskStateChanged{From: t.State, To: Running, Phase: Verifying, Milestone: MilestoneApplying})
			s.effect(ApplyProposal{TaskID: t.ID, RunID: t.Proposal.RunID})
			return
		}
		agent := s.pickFreeAgent(t)
		if agent == "" && s.pickTaskAgent(t) != "" {
			continue // an agent will take it once an instance is free
		}
		s.warnDependencies(now, t)
		held++
		if t.DryRun {
			// A dry run works in a throw-away worktree of the working
			// tree, made by its agent's adapter.
			s.startAttempt(now, t, "first")
			continue
		}
		s.prepare(now, t, agent)
	}
}

// warnDependencies warns a task that starts of what it depends on that
// did not succeed.
func (s *State) warnDependencies(now time.Time, t *Task) {
	for _, dep := range t.DependsOn {
		if d := s.tasks[dep]; d != nil && d.State != Success {
			s.emit(now, t.ID, "", TaskWarning{Text: fmt.Sprintf("depends on %s, which ended %s", dep, d.State)})
		}
	}
}

// prepare starts a task worked in parallel: its worktree and branch are
// made (PrepareWorktree) for the agent that will work in it, which holds
// an instance from now on.
func (s *State) prepare(now time.Time, t *Task, agent string) {
	if t.Worktree == "" {
		s.emit(now, t.ID, agent, TaskWorktreeAssigned{Worktree: TaskWorktree(t.ID), Branch: TaskBranch(t.ID), From: s.policies.Land.To})
	}
	s.emit(now, t.ID, agent, TaskStateChanged{From: t.State, To: Running, Phase: Preparing, Milestone: MilestonePreparing, Agent: agent})
	s.effect(prepareWorktree(t))
}

func prepareWorktree(t *Task) PrepareWorktree {
	return PrepareWorktree{TaskID: t.ID, Branch: t.Branch, Dir: t.Worktree, From: t.From}
}

// worktreePrepared records the end of a PrepareWorktree: the task's first
// attempt (or the next, when it was prepared again) goes to its agent; a
// worktree that could not be made escalates (retry makes it again).
func (s *State) worktreePrepared(now time.Time, o WorktreePrepared) error {
	now = norm(now)
	t, ok := s.tasks[o.TaskID]
	if !ok {
		return notFoundf("no task %q", o.TaskID)
	}
	if t.State != Running || t.Phase != Preparing || t.Worktree == "" || o.Branch != t.Branch {
		return conflictf("task %s is not preparing the worktree of branch %s", t.ID, o.Branch)
	}
	if o.Error != "" {
		s.escalateTask(now, t, "the task's worktree "+t.Worktree+" (branch "+t.Branch+") could not be made: "+o.Error+
			". Answer retry once that is fixed (wilco makes it again), or skip")
		return nil
	}
	s.emit(now, t.ID, t.Agent, TaskWorktreePrepared{Base: o.Base})
	kind := "first"
	if t.Attempt > 0 {
		kind = "retry"
	}
	s.startAttempt(now, t, kind)
	s.schedule(now) // another agent than the one it was made for may have taken it
	return nil
}

// removeWorktree asks for an ended task's worktree to go, with its branch
// when its work landed on the target — unless the task asked for them to
// be kept — and for what its agent ran there to end either way.
func (s *State) removeWorktree(t *Task) {
	if t.Worktree == "" {
		return
	}
	s.effect(RemoveWorktree{TaskID: t.ID, Dir: t.Worktree, Branch: t.Branch, Keep: t.KeepWorktree,
		DeleteBranch: t.LandedCommit != "" && t.Land != LandNone && !t.KeepWorktree})
}

// MilestoneLandQueued is the milestone of a verified task waiting for its
// turn to land.
const MilestoneLandQueued = "Verified: waiting for its turn to land..."

// landTrain lists the tasks whose landing is under way, in the order
// they land: the first combined on the target's head, each other on the
// combination of the one ahead of it (LandOn), verified meanwhile.
func (s *State) landTrain() []*Task {
	var out []*Task
	for _, q := range s.LandQueue() {
		if !q.LandStarted {
			break
		}
		out = append(out, s.tasks[q.ID])
	}
	return out
}

// LandQueue lists the verified tasks worked in parallel that wait to
// land, in the order they will: position 1 first (the one landing, when
// one is).
func (s *State) LandQueue() []Task {
	q := s.Tasks(func(t *Task) bool { return t.State == Running && t.Phase == Landing && t.Worktree != "" })
	if s.policies.Land.Order != "submission" {
		slices.SortStableFunc(q, func(a, b Task) int { return cmpSeq(a.LandSeq, b.LandSeq) })
	} else {
		slices.SortStableFunc(q, func(a, b Task) int { return boolRank(submittedBefore(&b, &a)) - boolRank(submittedBefore(&a, &b)) })
	}
	slices.SortStableFunc(q, func(a, b Task) int {
		// The one landing is first.
		return boolRank(b.LandStarted) - boolRank(a.LandStarted)
	})
	return q
}

// LandPosition is a task's place in the landing queue (1 first), 0 when
// it is not in it.
func (s *State) LandPosition(id string) int {
	for i, t := range s.LandQueue() {
		if t.ID == id {
			return i + 1
		}
	}
	return 0
}

// submittedBefore reports whether task a was submitted before task b:
// by the time, and at one time by the order of the events that queued
// them (a task worked in parallel is queued once) — not by their ids,
// which a plan names otherwise.
func submittedBefore(a, b *Task) bool {
	return a.CreatedAt.Before(b.CreatedAt) || a.CreatedAt.Equal(b.CreatedAt) && a.QueuedSeq < b.QueuedSeq
}

func cmpSeq(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// MilestoneLandingBehind is the milestone of a verified task combined
// behind the tasks landing ahead of it.
const MilestoneLandingBehind = "Combined behind the tasks landing ahead of it, to be verified while they land..."

// landNext starts landings: the first task of the landing queue, on the
// target's head; then each next one, while the one ahead of it has its
// combination made, on that combination — verified while the tasks ahead
// land, so that landings do not wait for each other's verification. The
// target still moves one task at a time, in land.order — verified (the
// order tasks were verified in) or submission (the order they were
// submitted in: a verified task waits for every task submitted before it
// that is still worked on), and only to combinations that passed. A first
// task combined on a combination that did not land is combined again.
func (s *State) landNext(now time.Time) {
	train := s.landTrain()
	if len(train) > 0 && train[0].LandOn != "" {
		s.restack(now, train[0])
	}
	q := s.LandQueue()
	for _, qt := range q[len(train):] {
		next := s.tasks[qt.ID]
		on := ""
		if len(train) > 0 && next.Land == LandPR {
			return // pushed as it is, never combined behind another
		}
		if len(train) > 0 {
			i := train[len(train)-1].Integration
			if i == nil || i.Combined == "" || i.Void {
				return // the combination ahead is not made
			}
			on = i.Combined
		}
		if s.policies.Land.Order == "submission" {
			for _, h := range s.Holding() {
				if h.Worktree != "" && h.ID != next.ID && submittedBefore(&h, next) {
					return // an earlier task lands first
				}
			}
		}
		milestone := MilestoneLanding
		if on != "" {
			milestone = MilestoneLandingBehind
		}
		s.emit(now, next.ID, next.Agent, TaskLandStarted{On: on})
		s.emit(now, next.ID, next.Agent, TaskMilestone{Text: milestone})
		s.effect(landTask(next))
		train = append(train, next)
	}
}

// first reports whether a task is the first of the landing queue's
// landings under way.
func (s *State) first(t *Task) bool {
	train := s.landTrain()
	return len(train) > 0 && train[0].ID == t.ID
}

// restack combines again, on the target's head, the first task of the
// landings that was combined on a combination that did not land — once
// nothing of its landing is under way (else when its outcome comes).
func (s *State) restack(now time.Time, t *Task) {
	if i := t.Integration; i == nil || !i.Passed && !i.Void {
		return
	}
	s.recombine(now, t)
}

// recombine asks for a task's landing again as the first: on the
// target's head.
func (s *State) recombine(now time.Time, t *Task) {
	s.emit(now, t.ID, t.Agent, TaskLandStarted{})
	s.emit(now, t.ID, t.Agent, TaskIntegrating{})
	s.emit(now, t.ID, t.Agent, TaskMilestone{Text: "The task ahead did not land as it was combined with: combining again..."})
	s.effect(landTask(t))
}

// promote makes the task just behind a task that landed as commit the
// first: when it was combined on that commit, its combination is on the
// target's head — it moves the target once it passed; a combination of
// it that conflicted or failed is made again.
func (s *State) promote(now time.Time, landed *Task, commit string) {
	train := s.landTrain()
	if len(train) < 2 || train[0].ID != landed.ID || train[1].LandOn == "" || train[1].LandOn != commit {
		return
	}
	n := train[1]
	s.emit(now, n.ID, n.Agent, TaskLandStarted{})
	switch i := n.Integration; {
	case i == nil || !i.Passed && !i.Void:
		// Its combination or its verification is under way: it goes on
		// as the first's.
	case i.Void:
		s.recombine(now, n)
	default:
		s.emit(now, n.ID, n.Agent, TaskMilestone{Text: MilestoneLanding})
		s.effect(landTask(n))
	}
}

// behind records the outcome of a landing combined behind the tasks
// ahead of it (LandOn): its combination is verified; in conflict, or
// failing, it is void until the task is first (the conflict may be with
// a task that will not land). A task that became first meanwhile, its
// combination made on what did not land, is combined again.
func (s *State) behind(now time.Time, t *Task, combined *Landed, failed bool) {
	switch {
	case s.first(t):
		s.recombine(now, t)
	case combined != nil && !failed:
		s.integrate(now, t, *combined)
	default:
		var i Integration
		if t.Integration != nil {
			i = *t.Integration
		}
		i.Onto, i.Void, i.Passed = t.LandOn, true, false
		s.emit(now, t.ID, t.Agent, TaskIntegrating{Integration: &i})
		s.emit(now, t.ID, t.Agent, TaskMilestone{Text: "Waits to be first to land: its combination with the tasks ahead of it does not pass"})
	}
}

// mergeConflict is the failure record of a landing in conflict: its
// message and details name the files in conflict and the commits that
// landed on the target since the task's branch started (hash, subject and
// the task each is of).
func mergeConflict(now time.Time, t *Task, o Landed) FailureRecord {
	target := firstOf(o.Branch, t.From, "the target")
	files := strings.Join(o.Conflict, ", ")
	details := "Files in conflict:\n  " + strings.Join(o.Conflict, "\n  ")
	msg := fmt.Sprintf("your verified change conflicts in %s with what landed on %s since your branch %s started", files, target, t.Branch)
	if len(o.Between) > 0 {
		all := make([]string, len(o.Between))
		short := make([]string, len(o.Between))
		for i, c := range o.Between {
			all[i], short[i] = c.String(), c.Hash
			if c.Task != "" {
				short[i] += " (task " + c.Task + ")"
			}
		}
		details += "\n\nCommits that landed on " + target + " since this task's branch started (newest first):\n  " + strings.Join(all, "\n  ")
		msg += ": the commits " + strings.Join(short, ", ")
	}
	guess := "other tasks changed the same lines of " + files + " and landed first"
	return FailureRecord{Attempt: t.Attempt, Timestamp: now, FailureType: MergeConflict, RunID: o.RunID,
		ExecutorOutput: ExecutorOutput{Status: "failure", FilesModified: nonNil(o.Conflict), Error: msg},
		Details:        details,
		RootCauseGuess: guess,
		SuggestedFix:   "in your worktree, merge " + target + " (git merge " + target + "), resolve the conflicts keeping both intents, and commit"}
}

// Integration is the combination of a verified task's branch with what
// landed on the target since it started, verified before it lands.
type Integration struct {
	// Combined is the combination's commit, made on Onto (the target's
	// head); RunID its verification.
	Combined string `json:"combined"`
	Onto     string `json:"onto"`
	RunID    string `json:"run_id"`
	// Passed: its verification passed: the target moves to Combined.
	Passed bool `json:"passed,omitempty"`
	// Void: a combination behind tasks landing ahead of it (on Onto, not
	// yet landed) that conflicted or failed its checks: the task is
	// combined again, on the target's head, once it is first to land.
	Void bool `json:"void,omitempty"`
}

// TaskIntegrating records a verified task's combination with the target
// being verified (none: combined again, the target moved).
type TaskIntegrating struct {
	Integration *Integration `json:"integration,omitempty"`
}

// TaskIntegrated records that a task's combination passed its checks.
type TaskIntegrated struct {
	RunID string `json:"run_id"`
}

// Integration event types.
const (
	TypeTaskIntegrating = "task.integrating"
	TypeTaskIntegrated  = "task.integrated"
)

func (TaskIntegrating) EventType() string { return TypeTaskIntegrating }
func (TaskIntegrated) EventType() string  { return TypeTaskIntegrated }

func init() {
	register[TaskIntegrating]()
	register[TaskIntegrated]()
}

// integrationRunID is the run id of the n-th verification of a task's
// combination with the target in its attempt.
func integrationRunID(t *Task, n int) string {
	return fmt.Sprintf("%s-land%d", runID(t.ID, t.Attempt), n)
}

// integrate verifies a verified task's combination with what landed on
// the target since it started, in its worktree, before the target moves.
func (s *State) integrate(now time.Time, t *Task, o Landed) {
	n := 1
	for _, id := range t.RunIDs {
		if strings.HasPrefix(id, runID(t.ID, t.Attempt)+"-land") {
			n++
		}
	}
	i := Integration{Combined: o.Combined, Onto: o.Onto, RunID: integrationRunID(t, n)}
	s.emit(now, t.ID, t.Agent, TaskIntegrating{Integration: &i})
	s.emit(now, t.ID, t.Agent, TaskMilestone{Text: "Verifying the change combined with what landed on " + firstOf(t.Verified.Branch, "the target") + " since it started..."})
	s.effect(s.integrationVerify(t))
}

// integrationVerify is the RunVerify of a task's combination.
func (s *State) integrationVerify(t *Task) RunVerify {
	return RunVerify{TaskID: t.ID, Attempt: t.Attempt, RunID: t.Integration.RunID, Boundaries: slices.Clone(t.Boundaries), Package: t.Package, Worktree: t.Worktree}
}

// endIntegration judges the verification of a task's combination: passed,
// the target moves to it (LandTask with Advance); failed, it is an
// integration_failed failure of the attempt, with the failing check: the
// agent fixes the combination in its worktree.
func (s *State) endIntegration(now time.Time, t *Task, r VerifyResult) Verdict {
	v := Judge(Scope{Package: t.Package}, r)
	if t.LandOn != "" {
		// Combined behind the tasks ahead of it: it waits for them.
		if v.Passed && !s.first(t) {
			s.emit(now, t.ID, t.Agent, TaskIntegrated{RunID: r.RunID})
			s.emit(now, t.ID, t.Agent, TaskMilestone{Text: "Verified combined with the tasks landing ahead of it: waits for them to land..."})
		} else {
			s.behind(now, t, nil, true)
		}
		s.landNext(now)
		return v
	}
	if !v.Passed {
		f := *v.Failure
		f.Attempt, f.Timestamp, f.RunID, f.FailureType = t.Attempt, now, r.RunID, IntegrationFailed
		f.DurationMS = r.Duration.Milliseconds()
		f.ExecutorOutput.Error = "your verified change, combined with what landed on " + firstOf(t.Verified.Branch, "the target") +
			" since your branch started, fails " + firstOf(v.Command, "a check") + ": " + firstOf(f.ExecutorOutput.Error, "see the output")
		f.RootCauseGuess = firstOf(f.RootCauseGuess, "another task that landed first changed what this change relies on (each passed alone)")
		f.SuggestedFix = "your worktree now holds the combination: make it pass, keeping what landed"
		v.Failure = &f
		s.failure(now, t, f)
		// Its turn to land is over: the next verified task's comes.
		s.landNext(now)
		return v
	}
	s.emit(now, t.ID, t.Agent, TaskIntegrated{RunID: r.RunID})
	s.emit(now, t.ID, t.Agent, TaskMilestone{Text: MilestoneLanding})
	s.effect(landTask(t))
	return v
}

// LandWaiting is a landing that waits while the user has uncommitted
// changes in files it touches, in the checkout where the target is
// checked out: the checkout is never overwritten. The landing goes on by
// itself once they are committed or stashed.
type LandWaiting struct {
	TaskID, RunID string
	Branch        string
	Files         []string
}

func (LandWaiting) isOutcome() {}

// landWaiting makes a landing that waits for the user's uncommitted
// changes the task's milestone.
func (s *State) landWaiting(now time.Time, o LandWaiting) error {
	now = norm(now)
	t, ok := s.tasks[o.TaskID]
	if !ok {
		return notFoundf("no task %q", o.TaskID)
	}
	if t.State != Running || t.Phase != Landing || !t.LandStarted || t.Verified == nil || t.Verified.RunID != o.RunID {
		return conflictf("task %s is not landing run %s", t.ID, o.RunID)
	}
	text := "Waiting to land on " + firstOf(o.Branch, t.Verified.Branch) + ": you have uncommitted changes in " + strings.Join(o.Files, ", ") +
		", which the landing changes; commit or stash them"
	if t.Milestone != text {
		s.emit(now, t.ID, t.Agent, TaskMilestone{Text: text})
	}
	return nil
}
