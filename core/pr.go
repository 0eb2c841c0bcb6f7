package core

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"wilco/prompt"
)

// Tasks that land as pull requests (land.how pr): a verified task is
// committed on its branch, pushed, and a pull request opened against the
// target (LandTask, reported by Landed with its PullRequest). The task
// then waits in the InPullRequest phase while the shell follows the pull
// request on the forge and reports what it sees (PRObserved): a failed
// check is a ci_failed failure of the attempt with the check's log, a
// review asking for changes or commenting on lines a changes_requested
// failure quoting each comment — both start a new attempt in the task's
// worktree, whose verified change is pushed to the same branch; green
// checks and an approval merge it (land.merge auto) or say it is ready
// (manual); the pull request merged ends the task in success, closed
// unmerged cancels it. CI that does not finish within land.ci_timeout
// escalates.

// InPullRequest is the phase of a task whose verified change is in a
// pull request: waiting for its checks and its review.
const InPullRequest Phase = "pull_request"

// Ways a pull request is merged (land.merge).
const (
	// MergeManual: a human merges; wilco says when it is ready.
	MergeManual = "manual"
	// MergeAuto: wilco merges once its checks passed and a review
	// approved it.
	MergeAuto = "auto"
)

// DefaultCITimeout is land.ci_timeout's default: how long the checks of
// a pull request's head may run before the task escalates.
const DefaultCITimeout = time.Hour

// PullRequest is the pull request a task's verified change is in.
type PullRequest struct {
	Number int    `json:"number"`
	URL    string `json:"url,omitempty"`
	// Head is the commit pushed last: what its checks and reviews are of.
	Head string `json:"head"`
	// Files are the files it changes at Head: every attempt's pushed to
	// it, which its merge lands (none recorded: the verified change's).
	Files []string `json:"files,omitempty"`
	// CIDeadline is when its checks must have ended (land.ci_timeout
	// after Head was pushed); zero once they did.
	CIDeadline time.Time `json:"ci_deadline,omitzero"`
	// ChecksDone and Checks count the head's checks that ended, and all.
	ChecksDone int `json:"checks_done"`
	Checks     int `json:"checks"`
	// Seen are the reviews and comments already acted on ("review:ID",
	// "comment:ID").
	Seen []string `json:"seen,omitempty"`
	// Ready: checks passed and a review approved, and the user was told
	// (land.merge manual); Merging: wilco asked the forge to merge it.
	Ready   bool `json:"ready,omitempty"`
	Merging bool `json:"merging,omitempty"`
}

// PRCheck is one check of a pull request's head: a check run (Status
// queued, in_progress or completed, with a Conclusion once completed) or
// a commit status (Status completed, Conclusion its state). Log is the
// tail of its log, or its output text, when it failed.
type PRCheck struct {
	Name       string `json:"name"`
	Status     string `json:"status"`
	Conclusion string `json:"conclusion,omitempty"`
	URL        string `json:"url,omitempty"`
	Log        string `json:"log,omitempty"`
}

// Done reports whether the check ended.
func (c PRCheck) Done() bool { return c.Status == "completed" }

// Failed reports whether the check ended in failure (a neutral or skipped
// check passes).
func (c PRCheck) Failed() bool {
	if !c.Done() {
		return false
	}
	switch c.Conclusion {
	case "success", "neutral", "skipped":
		return false
	}
	return true
}

// PRReview is a review of a pull request: State APPROVED,
// CHANGES_REQUESTED or COMMENTED, with the comments it made on lines of
// the diff.
type PRReview struct {
	ID       string      `json:"id"`
	Author   string      `json:"author"`
	State    string      `json:"state"`
	Body     string      `json:"body,omitempty"`
	Comments []PRComment `json:"comments,omitempty"`
}

// PRComment is a comment on a line of a pull request's diff.
type PRComment struct {
	ID     string `json:"id"`
	Author string `json:"author"`
	Path   string `json:"path"`
	Line   int    `json:"line,omitempty"`
	Body   string `json:"body"`
}

// PROpened is the pull request a LandTask of a task landing as one pushed
// to (Landed.PR): opened, or found open for its branch.
type PROpened struct {
	Number int
	URL    string
}

// PRObserved is what the shell saw of a task's pull request on the forge:
// its state (open, closed or merged; who closed it; the merge's commit),
// its head and that head's checks, and its reviews. Error: a MergePR that
// failed.
type PRObserved struct {
	TaskID      string
	Number      int
	Head        string
	State       string
	ClosedBy    string
	MergeCommit string
	Checks      []PRCheck
	Reviews     []PRReview
	Error       string
}

func (PRObserved) isOutcome() {}

// States of a pull request in PRObserved.
const (
	PROpen   = "open"
	PRClosed = "closed"
	PRMerged = "merged"
)

// MergePR asks the runtime to merge a task's pull request on the forge,
// at Head (the forge refuses when the head moved), and to report what it
// then sees with PRObserved.
type MergePR struct {
	TaskID string
	Number int
	Head   string
}

func (MergePR) isEffect() {}

// Pull request event types.
const (
	TypeTaskPROpened = "task.pr_opened"
	TypeTaskPRChecks = "task.pr_checks"
	TypeTaskPRSeen   = "task.pr_seen"
	TypeTaskPRReady  = "task.pr_ready"
	TypeTaskPRMerge  = "task.pr_merging"
)

// TaskPROpened records the pull request a task's verified change was
// pushed to, and when its checks must have ended.
type TaskPROpened struct {
	Number     int       `json:"number"`
	URL        string    `json:"url,omitempty"`
	Head       string    `json:"head"`
	CIDeadline time.Time `json:"ci_deadline,omitzero"`
	// Again: pushed again to the pull request it was pushed to before.
	Again bool `json:"again,omitempty"`
	// Files are the files the pull request changes at Head.
	Files []string `json:"files,omitempty"`
}

// TaskPRChecks records how many of the head's checks ended (Done of
// Total); Ended: all did, the CI deadline is disarmed.
type TaskPRChecks struct {
	Done  int  `json:"done"`
	Total int  `json:"total"`
	Ended bool `json:"ended,omitempty"`
}

// TaskPRSeen records reviews and comments acted on.
type TaskPRSeen struct {
	IDs []string `json:"ids"`
}

// TaskPRReady records that a pull request passed its checks and was
// approved, and the user was told it is ready to merge.
type TaskPRReady struct{}

// TaskPRMerging records that wilco asked the forge to merge a pull
// request.
type TaskPRMerging struct{}

func (TaskPROpened) EventType() string  { return TypeTaskPROpened }
func (TaskPRChecks) EventType() string  { return TypeTaskPRChecks }
func (TaskPRSeen) EventType() string    { return TypeTaskPRSeen }
func (TaskPRReady) EventType() string   { return TypeTaskPRReady }
func (TaskPRMerging) EventType() string { return TypeTaskPRMerge }

func init() {
	register[TaskPROpened]()
	register[TaskPRChecks]()
	register[TaskPRSeen]()
	register[TaskPRReady]()
	register[TaskPRMerging]()
}

// applyPR applies the events of pull requests.
func (s *State) applyPR(ev Event) bool {
	switch ev.Data.(type) {
	case TaskPROpened, TaskPRChecks, TaskPRSeen, TaskPRReady, TaskPRMerging:
	default:
		return false
	}
	t := s.taskAt(ev.TaskID, ev.Seq)
	if t == nil {
		return true
	}
	if e, ok := ev.Data.(TaskPROpened); ok {
		pr := PullRequest{Number: e.Number, URL: e.URL, Head: e.Head, CIDeadline: e.CIDeadline, Files: slices.Clone(e.Files)}
		if t.PR != nil && t.PR.Number == e.Number {
			pr.Seen = t.PR.Seen
		}
		t.PR = &pr
		return true
	}
	if t.PR == nil {
		return true
	}
	switch e := ev.Data.(type) {
	case TaskPRChecks:
		t.PR.ChecksDone, t.PR.Checks = e.Done, e.Total
		if e.Ended {
			t.PR.CIDeadline = time.Time{}
		}
	case TaskPRSeen:
		t.PR.Seen = append(slices.Clone(t.PR.Seen), e.IDs...)
	case TaskPRReady:
		t.PR.Ready = true
	case TaskPRMerging:
		t.PR.Merging = true
	}
	return true
}

// pullRequestText is what a task's pull request says of it.
func pullRequestText(t *Task) prompt.PullRequest {
	v := t.Verified
	p := prompt.PullRequest{TaskID: t.ID, Description: t.Description, Criteria: t.AcceptanceCriteria, VerifyMS: v.VerifyMS,
		Summary:     prompt.Summary{Files: v.Files, Why: firstOf(t.LastSummary, t.Description), RunID: v.RunID, Command: v.Command, Attempts: t.Attempt, Warnings: v.Warnings},
		InputTokens: t.Usage.InputTokens, OutputTokens: t.Usage.OutputTokens, CostUSD: t.Usage.CostUSD, Agent: t.Agent, Issue: t.Issue}
	for _, f := range t.Failures {
		line := fmt.Sprintf("attempt %d: %s", f.Attempt, f.FailureType)
		if f.RunID != "" {
			line += " (run `" + f.RunID + "`)"
		}
		if e := firstLine(firstOf(f.ExecutorOutput.Error, f.Details)); e != "" {
			line += ": " + e
		}
		p.Failed = append(p.Failed, line)
	}
	return p
}

// prURL is the address of a task's pull request, "" for none.
func prURL(t *Task) string {
	if t.PR == nil {
		return ""
	}
	return t.PR.URL
}

// ciTimerKey is the key of the timer of a task's CI deadline.
func ciTimerKey(taskID string) string { return taskID + "/ci" }

// prOpened records a pull request a verified change was pushed to: the
// task waits for its checks and review, its CI deadline armed.
func (s *State) prOpened(now time.Time, t *Task, o Landed) {
	e := TaskPROpened{Number: o.PR.Number, URL: firstOf(o.PR.URL, prURL(t)), Head: o.Commit, Again: t.PR != nil && t.PR.Number == o.PR.Number,
		Files: slices.Clone(o.Files)}
	if d := s.policies.Land.ciTimeout(); d > 0 {
		e.CIDeadline = now.Add(d)
	}
	s.emit(now, t.ID, t.Agent, e)
	s.emit(now, t.ID, t.Agent, TaskStateChanged{From: t.State, To: Running, Phase: InPullRequest,
		Milestone: fmt.Sprintf("Pull request #%d opened: waiting for CI...", e.Number)})
	if !e.CIDeadline.IsZero() {
		s.effect(ArmTimer{Key: ciTimerKey(t.ID), At: e.CIDeadline})
	}
	s.landNext(now)
}

// ObservePR records what the shell saw of a task's pull request. What it
// saw of an earlier head (the forge not yet showing the last push) or of
// a task no longer waiting on its pull request changes nothing.
func (s *State) ObservePR(now time.Time, o PRObserved) error {
	now = norm(now)
	t, ok := s.tasks[o.TaskID]
	if !ok {
		return notFoundf("no task %q", o.TaskID)
	}
	if t.State != Running || t.Phase != InPullRequest || t.PR == nil || t.PR.Number != o.Number {
		return conflictf("task %s is not waiting on pull request #%d", t.ID, o.Number)
	}
	switch {
	case o.State == PRMerged:
		s.prMerged(now, t, o)
		return nil
	case o.State == PRClosed:
		s.finish(now, t, TaskCancelled, fmt.Sprintf("pull request #%d was closed unmerged by %s", o.Number, firstOf(o.ClosedBy, "someone")))
		return nil
	case o.Error != "":
		s.escalateTask(now, t, fmt.Sprintf("pull request #%d could not be merged: %s. Merge it yourself, or answer retry once that is fixed", o.Number, o.Error))
		return nil
	case o.Head != t.PR.Head:
		return nil
	}
	s.prChecks(now, t, o.Checks)
	if s.prFeedback(now, t, o) {
		return nil
	}
	s.prGreen(now, t, o)
	return nil
}

// prMerged ends a task whose pull request was merged: it landed as the
// merge's commit, with the files the pull request changed (the earlier
// attempts' pushed to it too, not only the last verified change's).
func (s *State) prMerged(now time.Time, t *Task, o PRObserved) {
	v := *t.Verified
	if len(t.PR.Files) > 0 {
		v.Files = slices.Clone(t.PR.Files)
	}
	l := TaskLanded{Commit: firstOf(o.MergeCommit, o.Head), Branch: v.Branch, Files: nonNil(v.Files)}
	s.emit(now, t.ID, t.Agent, l)
	s.complete(now, t, v, &l)
}

// prChecks records the progress of the head's checks, in the milestone
// while they run.
func (s *State) prChecks(now time.Time, t *Task, checks []PRCheck) {
	done := 0
	for _, c := range checks {
		if c.Done() {
			done++
		}
	}
	ended := done == len(checks)
	if done == t.PR.ChecksDone && len(checks) == t.PR.Checks && (!ended || t.PR.CIDeadline.IsZero()) {
		return
	}
	s.emit(now, t.ID, t.Agent, TaskPRChecks{Done: done, Total: len(checks), Ended: ended})
	if !ended {
		s.emit(now, t.ID, t.Agent, TaskMilestone{Text: fmt.Sprintf("Waiting for CI: %d of %d checks", done, len(checks))})
	}
}

// prFeedback starts a new attempt when a check failed (ci_failed, with
// its log) or a review not yet acted on asked for changes or commented on
// lines (changes_requested, quoting each comment); both in one failure
// when both came.
func (s *State) prFeedback(now time.Time, t *Task, o PRObserved) bool {
	var failed []PRCheck
	for _, c := range o.Checks {
		if c.Failed() {
			failed = append(failed, c)
		}
	}
	reviews, seen := newFeedback(t.PR, o.Reviews)
	if len(seen) > 0 {
		s.emit(now, t.ID, t.Agent, TaskPRSeen{IDs: seen})
	}
	if len(failed) == 0 && len(reviews) == 0 {
		return false
	}
	s.failure(now, t, prFailure(now, t, failed, reviews))
	return true
}

// newFeedback are the reviews not yet acted on that ask for something —
// changes requested, or comments on lines — and the ids of every review
// and comment now acted on.
func newFeedback(pr *PullRequest, reviews []PRReview) ([]PRReview, []string) {
	var out []PRReview
	var seen []string
	for _, r := range reviews {
		id := "review:" + r.ID
		if slices.Contains(pr.Seen, id) {
			continue
		}
		seen = append(seen, id)
		var fresh []PRComment
		for _, c := range r.Comments {
			if cid := "comment:" + c.ID; !slices.Contains(pr.Seen, cid) {
				seen = append(seen, cid)
				fresh = append(fresh, c)
			}
		}
		if r.State == "CHANGES_REQUESTED" || len(fresh) > 0 {
			r.Comments = fresh
			out = append(out, r)
		}
	}
	return out, seen
}

// prFailure is the failure record of a pull request's failed checks and
// the reviews that asked for changes.
func prFailure(now time.Time, t *Task, failed []PRCheck, reviews []PRReview) FailureRecord {
	f := FailureRecord{Attempt: t.Attempt, Timestamp: now, FailureType: ChangesRequested, RunID: t.Verified.RunID,
		ExecutorOutput: ExecutorOutput{Status: "failure", FilesModified: nonNil(t.Verified.Files)}}
	var details, errs []string
	if len(failed) > 0 {
		f.FailureType = CIFailed
		var names []string
		for _, c := range failed {
			names = append(names, c.Name+" ("+firstOf(c.Conclusion, "failure")+")")
			d := "Check " + c.Name + " ended " + firstOf(c.Conclusion, "failure")
			if c.URL != "" {
				d += " (" + c.URL + ")"
			}
			if log := strings.TrimSpace(c.Log); log != "" {
				d += ". The end of its log:\n" + tail(log, 3000)
			}
			details = append(details, d)
		}
		errs = append(errs, fmt.Sprintf("CI failed on pull request #%d: %s", t.PR.Number, strings.Join(names, ", ")))
		f.ExecutorOutput.Verification = &Verification{Command: "CI: " + failed[0].Name, ExitCode: 1, OutputSummary: tail(strings.TrimSpace(failed[0].Log), 500)}
		f.RootCauseGuess = "the change passed wilco's checks, but the pull request's CI runs checks that failed"
		f.SuggestedFix = "read the end of the failing check's log, fix the cause in your worktree; wilco pushes your verified fix to the same pull request"
	}
	if len(reviews) > 0 {
		var who []string
		for _, r := range reviews {
			who = append(who, r.Author)
			details = append(details, reviewText(r))
		}
		errs = append(errs, fmt.Sprintf("the review of pull request #%d asks for changes (%s)", t.PR.Number, strings.Join(slices.Compact(who), ", ")))
		f.RootCauseGuess = firstOf(f.RootCauseGuess, "a reviewer asked for changes")
		f.SuggestedFix = firstOf(f.SuggestedFix, "make each change the review asks for, at the file and line it names")
	}
	f.ExecutorOutput.Error = strings.Join(errs, "; ")
	f.Details = strings.Join(details, "\n\n")
	return f
}

// reviewText quotes a review: its verdict and body, and each comment with
// its file and line.
func reviewText(r PRReview) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Review by %s", firstOf(r.Author, "a reviewer"))
	if r.State == "CHANGES_REQUESTED" {
		b.WriteString(" (changes requested)")
	}
	if body := strings.TrimSpace(r.Body); body != "" {
		b.WriteString(":\n> " + strings.ReplaceAll(body, "\n", "\n> "))
	}
	for _, c := range r.Comments {
		where := c.Path
		if c.Line > 0 {
			where = fmt.Sprintf("%s:%d", c.Path, c.Line)
		}
		fmt.Fprintf(&b, "\n%s (%s):\n> %s", where, firstOf(c.Author, r.Author), strings.ReplaceAll(strings.TrimSpace(c.Body), "\n", "\n> "))
	}
	return b.String()
}

// approved reports whether a review approved the pull request and no
// reviewer's last word asks for changes.
func approved(reviews []PRReview) bool {
	last := map[string]string{}
	for _, r := range reviews {
		if r.State == "APPROVED" || r.State == "CHANGES_REQUESTED" {
			last[r.Author] = r.State
		}
	}
	ok := false
	for _, state := range last {
		if state == "CHANGES_REQUESTED" {
			return false
		}
		ok = true
	}
	return ok
}

// prGreen acts on a pull request whose checks all passed: approved, it is
// merged (land.merge auto) or the user told it is ready (manual); not
// yet, it waits for a review.
func (s *State) prGreen(now time.Time, t *Task, o PRObserved) {
	for _, c := range o.Checks {
		if !c.Done() {
			return
		}
	}
	switch {
	case !approved(o.Reviews):
		text := fmt.Sprintf("CI passed (%d checks): waiting for a review of pull request #%d", len(o.Checks), t.PR.Number)
		if t.Milestone != text {
			s.emit(now, t.ID, t.Agent, TaskMilestone{Text: text})
		}
	case s.policies.Land.Merge == MergeAuto:
		if !t.PR.Merging {
			s.emit(now, t.ID, t.Agent, TaskPRMerging{})
			s.emit(now, t.ID, t.Agent, TaskMilestone{Text: fmt.Sprintf("CI passed and the review approved: merging pull request #%d...", t.PR.Number)})
			s.effect(MergePR{TaskID: t.ID, Number: t.PR.Number, Head: t.PR.Head})
		}
	case !t.PR.Ready:
		s.emit(now, t.ID, t.Agent, TaskPRReady{})
		s.emit(now, t.ID, t.Agent, TaskMilestone{Text: fmt.Sprintf("Ready to merge: pull request #%d passed CI and was approved", t.PR.Number)})
	}
}

// ciTimedOut escalates a task whose pull request's checks did not end by
// its CI deadline.
func (s *State) ciTimedOut(now time.Time, taskID string) {
	t := s.tasks[taskID]
	if t == nil || t.State != Running || t.Phase != InPullRequest || t.PR == nil || t.PR.CIDeadline.IsZero() || now.Before(t.PR.CIDeadline) {
		return
	}
	s.emit(now, t.ID, t.Agent, TaskPRChecks{Done: t.PR.ChecksDone, Total: t.PR.Checks, Ended: true})
	s.escalateTask(now, t, fmt.Sprintf("CI did not finish within %s on pull request #%d (%d of %d checks ended). Look at the CI, then answer retry to have the agent work on it again, or skip",
		s.policies.Land.ciTimeout(), t.PR.Number, t.PR.ChecksDone, t.PR.Checks))
}

// ciTimeout is land.ci_timeout, its default when unset.
func (p LandPolicy) ciTimeout() time.Duration {
	if p.CITimeout > 0 {
		return p.CITimeout
	}
	return DefaultCITimeout
}

// prTimers calls fn for the CI deadline of every task waiting on its pull
// request's checks.
func (s *State) prTimers(fn func(key string, at time.Time)) {
	for _, t := range s.tasks {
		if t.PR != nil && !t.PR.CIDeadline.IsZero() && t.State == Running && t.Phase == InPullRequest {
			fn(ciTimerKey(t.ID), t.PR.CIDeadline)
		}
	}
}

// fireCI fires the timer of a CI deadline, when key is one.
func (s *State) fireCI(now time.Time, key string) bool {
	id, ok := strings.CutSuffix(key, "/ci")
	if !ok {
		return false
	}
	s.ciTimedOut(now, id)
	return true
}

// PullRequestTasks lists the tasks waiting on their pull requests, oldest
// first: what the shell follows on the forge.
func (s *State) PullRequestTasks() []Task {
	return s.Tasks(func(t *Task) bool { return t.State == Running && t.Phase == InPullRequest && t.PR != nil })
}
