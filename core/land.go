package core

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"wilco/prompt"
)

// How a verified change lands on the target branch (land.how).
const (
	// LandNone leaves the change in the working tree, uncommitted.
	LandNone = "none"
	// LandCommit commits the task's own changes in the checkout, on the
	// target branch.
	LandCommit = "commit"
	LandMerge  = "merge"
	LandRebase = "rebase"
	LandSquash = "squash"
	LandPR     = "pr"
)

// LandHows are the values of land.how.
var LandHows = []string{LandMerge, LandRebase, LandSquash, LandCommit, LandNone, LandPR}

// LandOrders are the values of land.order: the order verified changes
// land in. With one task at a time both are the order tasks end in.
var LandOrders = []string{DefaultLandOrder, "submission"}

// DefaultLandOrder is land.order's default: verified changes land in the
// order they were verified.
const DefaultLandOrder = "verified"

// CheckLand says why a change cannot land this way when parallel tasks
// are worked at once: with one (parallel 1) a task works in the checkout
// itself and lands as a commit there, or not at all; with more each works
// in a worktree of its own and lands by merge, rebase or squash onto the
// target (none leaves it on its branch).
func CheckLand(how string, parallel int) error {
	switch how {
	case LandNone:
		return nil
	case LandCommit:
		if parallel > 1 {
			return fmt.Errorf("commit lands in the checkout itself, where tasks worked in parallel (parallel %d) do not work: use merge, rebase or squash", parallel)
		}
		return nil
	case LandMerge, LandRebase, LandSquash, LandPR:
		if parallel <= 1 {
			return fmt.Errorf("%s needs each task in a worktree of its own (parallel > 1): use commit or none, or set parallel", how)
		}
		return nil
	}
	return fmt.Errorf("must be one of %s, got %q", strings.Join(LandHows, ", "), how)
}

// DefaultLandHow is land.how's default: merge when tasks are worked in
// parallel (each lands from its worktree), none when one at a time.
func DefaultLandHow(parallel int) string {
	if parallel > 1 {
		return LandMerge
	}
	return LandNone
}

// Worktreed reports whether a way to land needs the task in a worktree
// and branch of its own.
func Worktreed(how string) bool {
	return how == LandMerge || how == LandRebase || how == LandSquash || how == LandPR
}

// CheckBranch says what makes name no branch name git would take (git
// check-ref-format's rules for a branch).
func CheckBranch(name string) error {
	bad := func(why string) error { return fmt.Errorf("%q is not a branch name: %s", name, why) }
	switch {
	case name == "" || name == "@":
		return bad("it is empty or @")
	case strings.HasPrefix(name, "-"):
		return bad("it starts with -")
	case strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") || strings.Contains(name, "//"):
		return bad("it has an empty part between slashes")
	case strings.HasSuffix(name, ".") || strings.HasSuffix(name, ".lock"):
		return bad("it ends with . or .lock")
	case strings.Contains(name, "..") || strings.Contains(name, "@{"):
		return bad("it holds .. or @{")
	case strings.ContainsAny(name, " ~^:?*[\\\x7f"):
		return bad("it holds a blank or one of ~ ^ : ? * [ \\")
	}
	for _, part := range strings.Split(name, "/") {
		if strings.HasPrefix(part, ".") {
			return bad("a part of it starts with .")
		}
	}
	for _, r := range name {
		if r < 0x20 {
			return bad("it holds a control character")
		}
	}
	return nil
}

// LandPolicy is where and how verified changes land.
type LandPolicy struct {
	// To is the target branch: land.to, else the branch checked out when
	// wilco started ("" when that was a detached HEAD).
	To string `json:"to,omitempty"`
	// How is how a task lands unless it says otherwise ("" is none).
	How   string `json:"how,omitempty"`
	Order string `json:"order,omitempty"`
	// Merge is how a pull request is merged (MergeManual, MergeAuto;
	// "" is manual); CITimeout how long its checks may run
	// (0: DefaultCITimeout).
	Merge     string        `json:"merge,omitempty"`
	CITimeout time.Duration `json:"ci_timeout,omitempty"`
	// Forge: a forge is configured, where pull requests are opened.
	Forge bool `json:"forge,omitempty"`
}

// Validate checks the landing policy, for parallel tasks at once.
func (p LandPolicy) Validate(parallel int) error {
	if p.How != "" {
		if err := CheckLand(p.How, parallel); err != nil {
			return policyError("land.how", "%v", err)
		}
	}
	if p.How == LandPR && !p.Forge {
		return policyError("land.how", "pr opens pull requests on a forge: configure forge (kind, repo, token)")
	}
	if p.Merge != "" && p.Merge != MergeManual && p.Merge != MergeAuto {
		return policyError("land.merge", "must be one of %s, %s, got %q", MergeManual, MergeAuto, p.Merge)
	}
	if p.CITimeout < 0 {
		return policyError("land.ci_timeout", "must be positive, got %s", p.CITimeout)
	}
	if p.Order != "" && !slices.Contains(LandOrders, p.Order) {
		return policyError("land.order", "must be one of %s, got %q", strings.Join(LandOrders, ", "), p.Order)
	}
	if p.To != "" {
		if err := CheckBranch(p.To); err != nil {
			return policyError("land.to", "%v", err)
		}
	}
	return nil
}

// landOf is how a task submitted with how ("" for the configuration's)
// lands, or why it cannot: an unknown way is invalid; a commit needs the
// checkout on the target branch (checkout is the branch checked out, ""
// for a detached HEAD; nil when the shell did not say).
func (s *State) landOf(how string, checkout *string) (string, error) {
	how = firstOf(how, s.policies.Land.How, DefaultLandHow(s.policies.Parallel))
	if err := CheckLand(how, s.policies.Parallel); err != nil {
		return "", invalidf("land: %v", err)
	}
	to := s.policies.Land.To
	if how == LandPR && !s.policies.Land.Forge {
		return "", invalidf("land pr: no forge is configured: configure forge (kind, repo, token) in wilco.yaml")
	}
	if Worktreed(how) && to == "" {
		return "", conflictf("land %s: there is no target branch: wilco started on a detached HEAD and land.to is not set; set land.to in wilco.yaml, or submit with land none", how)
	}
	if how != LandCommit || checkout == nil {
		return how, nil
	}
	switch {
	case to == "":
		return "", conflictf("land commit: there is no target branch: wilco started on a detached HEAD and land.to is not set; set land.to in wilco.yaml, or submit with land none")
	case *checkout == "":
		return "", conflictf("land commit: the checkout is on no branch (a detached HEAD), not on %s (land.to): check out %s, or submit with land none", to, to)
	case *checkout != to:
		return "", conflictf("land commit: the checkout is on branch %s, not on %s (land.to): check out %s (wilco does not switch branches), or submit with land none", *checkout, to, to)
	}
	return how, nil
}

// Landing is the phase of a verified task whose change is being
// committed.
const (
	Landing          Phase = "landing"
	MilestoneLanding       = "Committing the verified change..."
)

// VerifiedChange is a task's change that passed its checks, kept while it
// lands: what its success summary will say.
type VerifiedChange struct {
	RunID    string   `json:"run_id"`
	Command  string   `json:"command,omitempty"`
	Files    []string `json:"files"`
	Warnings []string `json:"warnings,omitempty"`
	VerifyMS int64    `json:"verify_ms,omitempty"`
	// Branch is where it lands: land.to when it passed.
	Branch string `json:"branch"`
}

// LandTask asks the runtime to commit a verified task's own changes in
// the checkout, on Branch — the files it changed that had no uncommitted
// change before it began — unless a commit of the task's run is on the
// branch already (wilco stopped after the commit), and to report with
// Landed. It is asked again after a restart until its end is recorded.
type LandTask struct {
	TaskID  string
	RunID   string
	Attempt int
	Agent   string
	Branch  string
	// Description, Why and Command make the commit's message.
	Description, Why, Command string
	// Worktree, TaskBranch and Base are those of a task worked in
	// parallel: its change is committed there, on its own branch, and
	// lands on Branch by How (merge, rebase, squash; none leaves it on
	// TaskBranch). When Branch moved since Base, the task's branch is
	// combined with Branch's head in the worktree and reported
	// (Landed.Combined) without landing: the combination is verified
	// first. Advance is a combination that passed: Branch moves from Onto
	// to it (a fast-forward of the checkout when Branch is checked out).
	Worktree, TaskBranch, Base, How string
	Advance, Onto                   string
	// On, when set, is the commit to combine the task's branch on instead
	// of Branch's head: the combination of the task landing ahead of it,
	// not landed yet. The combination is reported (Landed.Combined, with
	// Onto On) and never lands: the worktree holds it detached, its branch
	// stays at the task's own change.
	On string
	// Title and Body are those of the pull request a task landing as one
	// (How pr) opens, when there is none for its branch yet.
	Title, Body string
}

func (LandTask) isEffect() {}

// Landed is the end of a LandTask: the commit made (or found) on Branch,
// with the files it holds and those left out (changed before the task
// began); none when no file could be committed. Refused: a git hook
// refused the commit (its exit code and output); Error: the commit could
// not be made for another reason.
type Landed struct {
	TaskID, RunID  string
	Commit, Branch string
	Files, Left    []string
	Refused        bool
	ExitCode       int
	Output         string
	Error          string
	// Conflict are the files in conflict when the task's branch was
	// merged or rebased onto the target, which moved since its base;
	// Between the commits that landed on the target in between, newest
	// first.
	Conflict []string
	Between  []TargetCommit
	// Combined is the task's branch combined with the target's head
	// Onto, now checked out in its worktree and not landed: it is to be
	// verified. Moved: the target moved since Onto (its combination is
	// made again).
	Combined, Onto string
	Moved          bool
	// PR is the pull request a task landing as one was pushed to (land.how
	// pr): Commit is the head pushed, Files the files the pull request
	// then changes (its branch's since its base).
	PR *PROpened
}

func (Landed) isOutcome() {}

// TargetCommit is a commit that landed on a task's target since its
// branch started: its short hash, its subject and the task its
// Wilco-Task trailer names ("" when none does).
type TargetCommit struct {
	Hash, Subject, Task string
}

// String is the commit as a failure record lists it: "<hash> <subject>
// (task <id>)", the task left out when no trailer names one.
func (c TargetCommit) String() string {
	s := strings.TrimSpace(c.Hash + " " + c.Subject)
	if c.Task != "" {
		s += " (task " + c.Task + ")"
	}
	return s
}

// CommitCommand is the command of the failure record of a commit a git
// hook refused.
const CommitCommand = "git commit"

// succeed ends a task whose change passed its checks — once it landed,
// when it lands as a commit; warnings are what the definition of done let
// pass in that change.
func (s *State) succeed(now time.Time, t *Task, runID, command string, files []string, verify time.Duration, warnings []string) {
	v := VerifiedChange{RunID: runID, Command: command, Files: nonNil(files), Warnings: slices.Clone(warnings), VerifyMS: verify.Milliseconds(), Branch: s.policies.Land.To}
	if t.Worktree != "" {
		// Committed on its branch, then landed through the queue.
		if t.Land == LandNone {
			v.Branch = t.Branch
		}
		s.emit(now, t.ID, t.Agent, TaskLandRequested{Change: v})
		s.emit(now, t.ID, t.Agent, TaskStateChanged{From: t.State, To: Running, Phase: Landing, Milestone: MilestoneLandQueued})
		s.released(now, t)
		s.landNext(now)
		return
	}
	if t.Land != LandCommit {
		s.complete(now, t, v, nil)
		return
	}
	s.emit(now, t.ID, t.Agent, TaskLandRequested{Change: v})
	s.emit(now, t.ID, t.Agent, TaskStateChanged{From: t.State, To: Running, Phase: Landing, Milestone: MilestoneLanding})
	s.effect(landTask(t))
}

// landTask is the LandTask of a task whose verified change lands.
func landTask(t *Task) LandTask {
	v := t.Verified
	l := LandTask{TaskID: t.ID, RunID: v.RunID, Attempt: t.Attempt, Agent: t.Agent, Branch: v.Branch,
		Description: t.Description, Why: firstOf(t.LastSummary, t.Description), Command: v.Command}
	if t.Worktree != "" {
		l.Worktree, l.TaskBranch, l.Base, l.How, l.On = t.Worktree, t.Branch, t.Base, t.Land, t.LandOn
		if i := t.Integration; i != nil && i.Passed && t.LandOn == "" {
			l.Advance, l.Onto = i.Combined, i.Onto
		}
	}
	if t.Land == LandPR {
		l.Title, l.Body = prompt.PullRequestTitle(t.Description), prompt.PullRequestBody(pullRequestText(t))
	}
	return l
}

// complete ends a verified task in success with its summary, which names
// its commit when it landed as one.
func (s *State) complete(now time.Time, t *Task, v VerifiedChange, landed *TaskLanded) {
	sum := TaskSummary{Files: nonNil(v.Files), Why: firstOf(t.LastSummary, t.Description), RunID: v.RunID}
	ps := prompt.Summary{Files: sum.Files, Why: sum.Why, RunID: v.RunID, Command: v.Command, Attempts: t.Attempt, Warnings: v.Warnings}
	milestone := "Done: verified in run " + v.RunID
	if landed != nil {
		ps.Land = &prompt.Landed{Commit: ShortCommit(landed.Commit), Branch: landed.Branch, Left: landed.Left}
		if landed.Commit != "" {
			milestone += ", landed as " + ShortCommit(landed.Commit) + " on " + landed.Branch
		}
	}
	sum.Text = prompt.SummaryText(ps)
	s.emit(now, t.ID, t.Agent, TaskSucceeded{Summary: sum, VerifyMS: v.VerifyMS})
	s.emit(now, t.ID, t.Agent, TaskMilestone{Text: milestone})
	s.finish(now, t, Success, "verification passed in run "+v.RunID)
}

// ShortCommit is a commit's hash as the summaries show it: its first 7
// characters.
func ShortCommit(commit string) string {
	if len(commit) > 7 {
		return commit[:7]
	}
	return commit
}

// landed records the end of a LandTask: the task succeeds with its
// commit; a git hook's refusal is a failure of the attempt (the agent's to
// fix: the hook's output goes into the retry context); any other error
// escalates, with nothing committed. A commit made for a task cancelled
// while it was being made is recorded on the task, with a warning.
func (s *State) landed(now time.Time, o Landed) error {
	now = norm(now)
	t, ok := s.tasks[o.TaskID]
	if !ok {
		return notFoundf("no task %q", o.TaskID)
	}
	if t.State == TaskCancelled && t.Verified != nil && t.Verified.RunID == o.RunID && o.Commit != "" && t.LandedCommit == "" {
		// Cancelled while its change was being committed, and committed:
		// the task says so rather than leave a commit it does not name.
		l := TaskLanded{Commit: o.Commit, Branch: firstOf(o.Branch, t.Verified.Branch), Files: nonNil(o.Files), Left: nonNil(o.Left)}
		s.emit(now, t.ID, t.Agent, l)
		s.emit(now, t.ID, "", TaskWarning{Text: "the verified change was committed as " + ShortCommit(o.Commit) + " on " + l.Branch + " before the cancel took effect"})
		return nil
	}
	if t.State != Running || t.Phase != Landing || t.Verified == nil || t.Verified.RunID != o.RunID {
		return conflictf("task %s is not landing run %s", t.ID, o.RunID)
	}
	if t.Worktree != "" && !t.LandStarted {
		return conflictf("task %s is waiting for its turn to land, not landing run %s", t.ID, o.RunID)
	}
	if t.LandOn != "" && (len(o.Conflict) > 0 || o.Combined != "" || o.Moved) {
		// Combined behind the tasks landing ahead of it.
		var comb *Landed
		if o.Combined != "" {
			comb = &o
		}
		s.behind(now, t, comb, len(o.Conflict) > 0 || o.Moved)
		s.landNext(now)
		return nil
	}
	v := *t.Verified
	switch {
	case len(o.Conflict) > 0:
		s.failure(now, t, mergeConflict(now, t, o))
	case o.Moved && t.Worktree != "":
		s.emit(now, t.ID, t.Agent, TaskIntegrating{})
		s.emit(now, t.ID, t.Agent, TaskMilestone{Text: "The target moved: combining again..."})
		s.effect(landTask(t))
	case o.Combined != "" && t.Worktree != "":
		s.integrate(now, t, o)
	case o.Refused:
		out := strings.TrimSpace(o.Output)
		f := FailureRecord{Attempt: t.Attempt, Timestamp: now, FailureType: VerificationFailed, RunID: o.RunID,
			ExecutorOutput: ExecutorOutput{Status: "failure", FilesModified: nonNil(v.Files),
				Verification: &Verification{Command: CommitCommand, ExitCode: o.ExitCode, OutputSummary: tail(out, 500)},
				Error:        "the repository's git hooks refused the commit of the verified change: " + firstOf(firstLine(out), fmt.Sprintf("exit status %d", o.ExitCode))},
			Details:        tail(out, 4000),
			RootCauseGuess: "the change passed the verify steps, but the repository's git hooks (pre-commit, commit-msg) refused to commit it",
			SuggestedFix:   "change the code so that the hooks pass: their output says what they want"}
		s.failure(now, t, f)
	case o.Error != "":
		s.escalateTask(now, t, "the verified change could not be committed on "+v.Branch+": "+o.Error+
			". Nothing was committed. Answer retry once that is fixed (wilco commits it again), or skip to leave the change uncommitted")
	case t.Land == LandPR && o.PR != nil:
		s.prOpened(now, t, o)
	default:
		l := TaskLanded{Commit: o.Commit, Branch: firstOf(o.Branch, v.Branch), Files: nonNil(o.Files), Left: nonNil(o.Left)}
		s.emit(now, t.ID, t.Agent, l)
		if len(l.Left) > 0 {
			s.warnOnce(now, t, "left uncommitted: "+strings.Join(l.Left, ", ")+" ("+prompt.LeftUncommitted+")")
		}
		if t.Worktree != "" && l.Commit != "" {
			s.promote(now, t, l.Commit)
		}
		s.complete(now, t, v, &l)
	}
	// A landing that ended without landing (a conflict, a refused
	// commit, an escalation) hands the turn to the next verified task.
	s.landNext(now)
	return nil
}

// landingEscalated reports whether a task was escalated because its
// verified change could not be committed (not for a failure of its
// attempt): the change verified is its current attempt's, and that
// attempt has no failure — neither of its own run nor of its
// combination with the target (an integration failure, a conflict),
// after which the worktree holds what was not verified.
func landingEscalated(t *Task) bool {
	return t.State == Escalated && t.Verified != nil && t.Verified.RunID == t.RunID && t.RunID == runID(t.ID, t.Attempt) &&
		!slices.ContainsFunc(t.Failures, func(f FailureRecord) bool { return f.RunID == t.RunID || f.Attempt == t.Attempt })
}

// sameRefusalRepeated reports whether the last two failures are the git
// hooks refusing the commit with the same output: the agent could not
// satisfy them (a hook may check what wilco writes, such as the message).
func sameRefusalRepeated(fs []FailureRecord) bool {
	if len(fs) < 2 {
		return false
	}
	a, b := fs[len(fs)-2], fs[len(fs)-1]
	refusal := func(f FailureRecord) bool {
		return f.ExecutorOutput.Verification != nil && f.ExecutorOutput.Verification.Command == CommitCommand
	}
	return refusal(a) && refusal(b) && strings.TrimSpace(a.Details) == strings.TrimSpace(b.Details)
}

// Task landing event types.
const (
	TypeTaskLanding = "task.landing"
	TypeTaskLanded  = "task.landed"
)

// TaskLandRequested records a verified change that lands as a commit: the
// task waits for its commit.
type TaskLandRequested struct {
	Change VerifiedChange `json:"change"`
}

// TaskLanded records the commit a verified change landed as on Branch
// (none when no file could be committed), with the files it holds and
// those left uncommitted.
type TaskLanded struct {
	Commit string   `json:"commit,omitempty"`
	Branch string   `json:"branch"`
	Files  []string `json:"files"`
	Left   []string `json:"left,omitempty"`
}

func (TaskLandRequested) EventType() string { return TypeTaskLanding }
func (TaskLanded) EventType() string        { return TypeTaskLanded }

func init() {
	register[TaskLandRequested]()
	register[TaskLanded]()
}
