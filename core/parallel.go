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

// RemoveWorktree asks the runtime to remove an ended task's worktree,
// and its branch when DeleteBranch (its work landed on the target). It
// has no outcome: the worktrees of ended tasks that are still there when
// wilco starts are removed then.
type RemoveWorktree struct {
	TaskID, Dir, Branch string
	DeleteBranch        bool
}

func (RemoveWorktree) isEffect() {}

// Worktree event types.
const (
	TypeTaskWorktree    = "task.worktree"
	TypeTaskPrepared    = "task.prepared"
	TypeTaskLandStarted = "task.land_started"
)

// TaskLandStarted records that a verified task's turn to land came: its
// landing is under way (one at a time).
type TaskLandStarted struct{}

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

// parallel reports whether tasks are worked in parallel, each in a
// worktree of its own.
func (s *State) parallel() bool { return s.policies.Parallel > 1 }

// Slots is how many tasks are worked at once: parallel, at least 1.
func (s *State) Slots() int { return max(s.policies.Parallel, 1) }

// Holding lists the tasks that hold a slot, oldest first.
func (s *State) Holding() []Task {
	return s.Tasks(func(t *Task) bool { return t.State.Holds() })
}

// activeOf is the oldest task that holds a slot with the agent, nil for
// none.
func (s *State) activeOf(agent string) *Task {
	var out *Task
	for _, t := range s.tasks {
		if t.State.Holds() && t.Agent == agent && (out == nil || t.QueuedSeq < out.QueuedSeq) {
			out = t
		}
	}
	return out
}

// holdingWith counts the tasks that hold a slot with the agent, but skip.
func (s *State) holdingWith(agent, skip string) int {
	n := 0
	for _, t := range s.tasks {
		if t.State.Holds() && t.Agent == agent && t.ID != skip {
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
		if !s.takesTasks(a) || !worksInWorktrees(a) || len(s.lacksFor(a)) > 0 || !usable(a) {
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

// worksInWorktrees reports whether wilco starts the agent's turns where
// it says (an exec agent): a task worked in parallel, or a dry run, works
// in a worktree, which a mailbox agent (in its own environment) or a tmux
// agent (in its session) does not reach.
func worksInWorktrees(a *Agent) bool { return !a.Pull && a.Adapter != "tmux" }

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
		if t.State.Holds() {
			if inCheckout(t) {
				return
			}
			held++
		}
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
// be kept.
func (s *State) removeWorktree(t *Task) {
	if t.Worktree == "" || t.KeepWorktree {
		return
	}
	s.effect(RemoveWorktree{TaskID: t.ID, Dir: t.Worktree, Branch: t.Branch, DeleteBranch: t.LandedCommit != "" && t.Land != LandNone})
}

// MilestoneLandQueued is the milestone of a verified task waiting for its
// turn to land.
const MilestoneLandQueued = "Verified: waiting for its turn to land..."

// landing is the task whose landing is under way (one at a time), nil for
// none.
func (s *State) landing() *Task {
	for _, t := range s.tasks {
		if t.State == Running && t.Phase == Landing && t.Worktree != "" && t.LandStarted {
			return t
		}
	}
	return nil
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

// landNext starts the next landing when none is under way: landings are
// serialized, in land.order — verified (the order tasks were verified in)
// or submission (the order they were submitted in: a verified task waits
// for every task submitted before it that is still worked on).
func (s *State) landNext(now time.Time) {
	if s.landing() != nil {
		return
	}
	q := s.LandQueue()
	if len(q) == 0 {
		return
	}
	next := s.tasks[q[0].ID]
	if s.policies.Land.Order == "submission" {
		for _, h := range s.Holding() {
			if h.Worktree != "" && h.ID != next.ID && submittedBefore(&h, next) {
				return // an earlier task lands first
			}
		}
	}
	s.emit(now, next.ID, next.Agent, TaskLandStarted{})
	s.emit(now, next.ID, next.Agent, TaskMilestone{Text: MilestoneLanding})
	s.effect(landTask(next))
}

// mergeConflict is the failure record of a landing in conflict.
func mergeConflict(now time.Time, t *Task, o Landed) FailureRecord {
	target := firstOf(o.Branch, t.From, "the target")
	details := "Files in conflict:\n  " + strings.Join(o.Conflict, "\n  ")
	if len(o.Between) > 0 {
		details += "\n\nCommits that landed on " + target + " since this task's branch started:\n  " + strings.Join(o.Between, "\n  ")
	}
	return FailureRecord{Attempt: t.Attempt, Timestamp: now, FailureType: MergeConflict, RunID: o.RunID,
		ExecutorOutput: ExecutorOutput{Status: "failure", FilesModified: nonNil(o.Conflict),
			Error: fmt.Sprintf("your verified change conflicts with what landed on %s since your branch %s started: %s", target, t.Branch, strings.Join(o.Conflict, ", "))},
		Details:        details,
		RootCauseGuess: "other tasks changed the same lines of " + strings.Join(o.Conflict, ", ") + " and landed first",
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
