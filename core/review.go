package core

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"wilco/ack"
	"wilco/prompt"
)

// What the definition of done checks, beyond the verify steps' PASS: the
// size of the change against the task, tests for new or changed behaviour,
// and, when a reviewer is configured, the reviewer's verdict. The summary
// of every success names what changed, why, and the run that verified it.

// Check says what a definition-of-done check does when it finds something.
type Check string

// Checks.
const (
	// CheckWarn adds a warning to the task and its summary (the default).
	CheckWarn Check = "warn"
	// CheckBlock stops the task there: see DonePolicy.
	CheckBlock Check = "block"
	// CheckOff skips the check.
	CheckOff Check = "off"
)

// DonePolicy is the definition of done's checks.
type DonePolicy struct {
	// MaxFiles and MaxLines bound the size of a task's change (files
	// changed, lines added plus removed); 0 is no bound.
	MaxFiles int `json:"max_files,omitempty"`
	MaxLines int `json:"max_lines,omitempty"`
	// Size is what a change over those bounds does: warn, or block — the
	// reviewer is asked when one is configured, otherwise the task is
	// escalated to the user.
	Size Check `json:"size,omitempty"`
	// Tests is what a change to a source file whose package gained or
	// changed no test does: warn, block (a failure of type
	// architect_rejected, which enters the debug loop), or off.
	Tests Check `json:"tests,omitempty"`
}

// ReviewPolicy names the reviewer that approves or rejects each change
// once its verification passed.
type ReviewPolicy struct {
	// Agent is the reviewer; "" for no review.
	Agent string `json:"agent,omitempty"`
	// Timeout is how long the reviewer has to answer (default
	// DefaultReviewTimeout); past it the task is escalated.
	Timeout time.Duration `json:"timeout,omitempty"`
}

// DefaultReviewTimeout is how long a reviewer has to answer.
const DefaultReviewTimeout = 10 * time.Minute

// Validate reports the first bad value, naming its key.
func (p DonePolicy) Validate() error {
	switch {
	case p.MaxFiles < 0:
		return policyError("done.max_files", "must not be negative, got %d", p.MaxFiles)
	case p.MaxLines < 0:
		return policyError("done.max_lines", "must not be negative, got %d", p.MaxLines)
	case p.Size != "" && p.Size != CheckWarn && p.Size != CheckBlock && p.Size != CheckOff:
		return policyError("done.size", "must be warn, block or off, got %q", p.Size)
	case p.Tests != "" && p.Tests != CheckWarn && p.Tests != CheckBlock && p.Tests != CheckOff:
		return policyError("done.tests", "must be warn, block or off, got %q", p.Tests)
	}
	return nil
}

// Validate reports the first bad value, naming its key.
func (p ReviewPolicy) Validate() error {
	if p.Agent != "" && !validName(p.Agent) {
		return policyError("review.agent", "%q: use 1 to 64 of A-Z a-z 0-9 . _ : -", p.Agent)
	}
	if p.Timeout < 0 {
		return policyError("review.timeout", "must not be negative, got %s", p.Timeout)
	}
	return nil
}

func (p ReviewPolicy) timeout() time.Duration {
	if p.Timeout > 0 {
		return p.Timeout
	}
	return DefaultReviewTimeout
}

// Inspection is what the shell found of a task's change once its
// verification passed: the files with their lines, the source files
// changed without a test, and the change itself for the reviewer.
type Inspection struct {
	Files []FileState `json:"files,omitempty"`
	// Untested are the source files changed whose package gained or
	// changed no test, each with its language ("calc.go (Go: no _test.go
	// changed in .)").
	Untested []string `json:"untested,omitempty"`
	// Diff is the change (git's unified diff), cut to a bound.
	Diff string `json:"diff,omitempty"`
}

// Review is the review of a task's change: asked of the reviewer once its
// verification passed, and answered.
type Review struct {
	Attempt  int    `json:"attempt"`
	Reviewer string `json:"reviewer"`
	Delivery string `json:"delivery"`
	// RunID, Command, Files and Checks are the passed verification's, for
	// the summary once the change is approved.
	RunID   string   `json:"run_id"`
	Command string   `json:"command,omitempty"`
	Files   []string `json:"files,omitempty"`
	// Warnings are what the definition of done let pass in this change.
	Warnings []string `json:"warnings,omitempty"`
	// Verdict is APPROVED or REJECTED once the reviewer answered.
	Verdict string    `json:"verdict,omitempty"`
	Reasons string    `json:"reasons,omitempty"`
	At      time.Time `json:"at,omitzero"`
}

// Phase and milestones of a review.
const (
	Reviewing          Phase = "reviewing"
	MilestoneReviewing       = "Waiting for the reviewer..."
)

// TypeReview is the message that asks a reviewer for its verdict.
const TypeReview MessageType = "review"

// Review events.
const (
	TypeTaskReviewRequested = "task.review_requested"
	TypeTaskReviewed        = "task.reviewed"
)

// TaskReviewRequested records that the reviewer was asked.
type TaskReviewRequested struct {
	Review Review `json:"review"`
}

// TaskReviewed records the reviewer's verdict.
type TaskReviewed struct {
	Verdict string `json:"verdict"`
	Reasons string `json:"reasons,omitempty"`
}

func (TaskReviewRequested) EventType() string { return TypeTaskReviewRequested }
func (TaskReviewed) EventType() string        { return TypeTaskReviewed }

func init() {
	register[TaskReviewRequested]()
	register[TaskReviewed]()
}

// checkDone applies the definition of done to a task whose verification
// passed: a failure, an escalation, a review when there is a reviewer, or
// else success.
func (s *State) checkDone(now time.Time, t *Task, r VerifyResult, command string) {
	p := s.policies.Done
	var sizeNote string
	var warnings []string
	if ins := r.Inspection; ins != nil {
		lines := 0
		for _, f := range ins.Files {
			lines += f.LinesChanged
		}
		over := p.MaxFiles > 0 && len(ins.Files) > p.MaxFiles || p.MaxLines > 0 && lines > p.MaxLines
		if over && p.Size != CheckOff {
			sizeNote = fmt.Sprintf("the change is larger than the definition of done allows: %d files and %d lines changed (done.max_files %d, done.max_lines %d)",
				len(ins.Files), lines, p.MaxFiles, p.MaxLines)
			if p.Size == CheckBlock && s.policies.Review.Agent == "" {
				s.escalateTask(now, t, sizeNote+". Answer skip to keep the change as it is, fix with how to make it smaller, or abort")
				return
			}
			if p.Size != CheckBlock {
				s.warnOnce(now, t, sizeNote)
				warnings = append(warnings, sizeNote)
			}
		}
		if len(ins.Untested) > 0 && p.Tests != CheckOff {
			what := "new or changed behaviour without tests: " + strings.Join(ins.Untested, "; ")
			if p.Tests == CheckBlock {
				f := FailureRecord{Attempt: t.Attempt, Timestamp: now, FailureType: ArchitectRejected, RunID: r.RunID,
					ExecutorOutput: ExecutorOutput{Status: "failure", FilesModified: nonNil(r.Files), Error: "done criteria unmet: " + what},
					Details:        "The verification passed, but the definition of done asks for tests of new or changed behaviour.\n" + strings.Join(ins.Untested, "\n"),
					RootCauseGuess: "the change has no tests for what it changed",
					SuggestedFix:   "add or change tests beside the changed code: " + strings.Join(ins.Untested, "; ")}
				s.failure(now, t, f)
				return
			}
			s.warnOnce(now, t, what)
			warnings = append(warnings, what)
		}
	}
	reviewer := s.policies.Review.Agent
	if reviewer == "" {
		s.succeed(now, t, r.RunID, command, r.Files, r.Duration, warnings)
		return
	}
	a := s.agents[reviewer]
	if a == nil || a.Removed {
		s.escalateTask(now, t, fmt.Sprintf("review.agent %q is not an agent: add it to wilco.yaml (or change review.agent), then answer retry; or skip", reviewer))
		return
	}
	diff := ""
	var files []FileState
	if r.Inspection != nil {
		diff, files = r.Inspection.Diff, r.Inspection.Files
	}
	rf := make([]prompt.ReviewFile, len(files))
	for i, f := range files {
		rf[i] = prompt.ReviewFile{Path: f.Path, Status: f.Status, Lines: f.LinesChanged}
	}
	body := prompt.ReviewRequest(prompt.Review{Task: promptTask(t), Attempt: t.Attempt, RunID: r.RunID, Command: command,
		Files: rf, Diff: diff, SizeNote: sizeNote})
	m := Message{
		ID: s.nextID("M"), From: Orchestrator, To: reviewer, Type: TypeReview, Policy: PolicyNone,
		Subject: fmt.Sprintf("Review of task %s (attempt %d)", t.ID, t.Attempt), Body: body, TaskID: t.ID, TaskAttempt: t.Attempt,
	}
	s.emit(now, t.ID, reviewer, TaskReviewRequested{Review: Review{Attempt: t.Attempt, Reviewer: reviewer, Delivery: m.ID,
		RunID: r.RunID, Command: command, Files: slices.Clone(r.Files), Warnings: warnings}})
	s.emit(now, t.ID, t.Agent, TaskStateChanged{From: t.State, To: Running, Phase: Reviewing, Milestone: MilestoneReviewing})
	s.emit(now, t.ID, reviewer, DeliverySent{Send{ID: m.ID, Attempt: 1, Kind: SendFirst, Round: 1, TimerAt: now.Add(s.policies.Review.timeout()), Message: &m}})
}

// warnOnce adds a warning to the task unless it has it already.
func (s *State) warnOnce(now time.Time, t *Task, text string) {
	if !slices.Contains(t.Warnings, text) {
		s.emit(now, t.ID, "", TaskWarning{Text: text})
	}
}

// reviewFor is the task a review delivery is for, while it waits for that
// review; nil otherwise.
func (s *State) reviewFor(d *Delivery) *Task {
	t := s.tasks[d.TaskID]
	if t == nil || t.State != Running || t.Phase != Reviewing || t.Review == nil || t.Review.Delivery != d.ID {
		return nil
	}
	return t
}

// reviewAnswer takes a reviewer's answer: APPROVED ends the task in
// success; REJECTED — or an answer without a verdict — is a failure of type
// architect_rejected whose reasons go into the next attempt's retry
// context.
func (s *State) reviewAnswer(now time.Time, a *Agent, d *Delivery, text string) (Interpretation, error) {
	in := Interpretation{Kind: KindReview, DeliveryID: d.ID, TaskID: d.TaskID}
	if d.State.Terminal() {
		return in, s.settled(d)
	}
	s.seen(now, a, "replied")
	s.emit(now, d.TaskID, d.To, DeliveryAcknowledged{ID: d.ID, By: "reply"})
	in.Acknowledged = []string{d.ID}
	t := s.reviewFor(d)
	if t == nil {
		in.Action = "logged: the task no longer waits for this review"
		return in, nil
	}
	v, reasons, ok := ack.ParseVerdict(text)
	if !ok {
		v, reasons = ack.ReviewRejected, "the reviewer gave no verdict (APPROVED or REJECTED); its answer:\n"+strings.TrimSpace(text)
	}
	s.emit(now, t.ID, a.Name, TaskReviewed{Verdict: string(v), Reasons: reasons})
	if v == ack.ReviewApproved {
		in.Action = "approved: task " + t.ID + " succeeds"
		rv := t.Review
		s.succeed(now, t, rv.RunID, rv.Command, rv.Files, 0, rv.Warnings)
		return in, nil
	}
	in.Action = "rejected: task " + t.ID + " is retried with the reasons"
	why := firstOf(firstLine(reasons), "no reasons given")
	f := FailureRecord{Attempt: t.Attempt, Timestamp: now, FailureType: ArchitectRejected, RunID: t.Review.RunID,
		ExecutorOutput: ExecutorOutput{Status: "failure", FilesModified: nonNil(t.Review.Files), Error: "the reviewer " + a.Name + " rejected the work: " + why},
		Details:        reasons,
		RootCauseGuess: "the reviewer found the change does not do what the task asks: " + why,
		SuggestedFix:   "address every reason the reviewer gave"}
	s.failure(now, t, f)
	return in, nil
}

// reviewFailed ends a review that will get no verdict (why: the reviewer
// did not answer in time, or could not) and escalates its task.
func (s *State) reviewFailed(now time.Time, d *Delivery, why string) {
	s.emit(now, d.TaskID, d.To, DeliveryFailed{ID: d.ID, Reason: why, Attempts: d.Sends})
	if t := s.reviewFor(d); t != nil {
		s.escalateTask(now, t, fmt.Sprintf("the reviewer %s %s: answer retry to run the attempt again, skip to keep the change unreviewed, or abort", d.To, why))
	}
}

// onlyOpen is the open delivery of type typ to agent when there is exactly
// one: what an answer that names no message answers.
func (s *State) onlyOpen(agent string, typ MessageType) *Delivery {
	open := s.openTo(agent, func(d *Delivery) bool { return d.Type == typ && !d.State.Terminal() })
	if len(open) == 1 {
		return open[0]
	}
	return nil
}
