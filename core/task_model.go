package core

import (
	"slices"
	"time"
)

// TaskState is where a task stands.
type TaskState string

// Task states.
const (
	Queued         TaskState = "queued"
	AwaitingAck    TaskState = "awaiting_ack"
	TaskClarifying TaskState = "clarifying"
	Running        TaskState = "running"
	Escalated      TaskState = "escalated"
	Blocked        TaskState = "blocked"
	Proposed       TaskState = "proposed"
	Success        TaskState = "success"
	// Unverified: the agent finished and no check verified its work, for
	// no verify step is configured. It is never success.
	Unverified    TaskState = "unverified"
	TaskCancelled TaskState = "cancelled"
	Stuck         TaskState = "stuck"
	Skipped       TaskState = "skipped"
	Aborted       TaskState = "aborted"
	TaskFailed    TaskState = "failed"
)

// Holds reports whether a task in this state holds the queue: the working
// tree belongs to it.
func (s TaskState) Holds() bool {
	switch s {
	case AwaitingAck, TaskClarifying, Running, Escalated, Blocked:
		return true
	}
	return false
}

// HoldsSlot reports whether a task holds one of the slots of tasks worked
// at once, and its agent's instance: it holds the queue (Holds), and,
// worked in parallel, it did not let go of them once verified.
func (t *Task) HoldsSlot() bool { return t.State.Holds() && !t.Released }

// Terminal reports whether the task has ended.
func (s TaskState) Terminal() bool {
	switch s {
	case Success, Unverified, TaskCancelled, Stuck, Skipped, Aborted, TaskFailed:
		return true
	}
	return false
}

// Phase is what a running task is doing.
type Phase string

// Phases of a running task.
const (
	Executing  Phase = "executing"
	Verifying  Phase = "verifying"
	Retrying   Phase = "retrying"
	Replanning Phase = "replanning"
)

// Failure types.
const (
	ExecutionError     = "execution_error"
	VerificationFailed = "verification_failed"
	Timeout            = "timeout"
	ArchitectRejected  = "architect_rejected"
	// Environment is a failure no retry can fix: a missing program, an
	// agent that is not logged in or has no API key, a permission the agent
	// cannot get. The first one escalates with what to do.
	Environment = "environment"
	// MergeConflict is the failure of a verified task whose branch could
	// not be merged or rebased onto the target without conflicts: the
	// agent resolves them in its worktree.
	MergeConflict = "merge_conflict"
	// IntegrationFailed is the failure of a verified task whose
	// combination with what landed on the target since its base failed a
	// check, though each passed alone.
	IntegrationFailed = "integration_failed"
	// CIFailed is a check of a task's pull request (a check run or a
	// commit status) that ended in failure: its name, conclusion and log
	// go into the retry context.
	CIFailed = "ci_failed"
	// ChangesRequested is a review of a task's pull request that asked
	// for changes, or commented on lines of its diff: each comment goes
	// into the retry context with its file and line.
	ChangesRequested = "changes_requested"
)

// Milestones pushed to the user.
const (
	MilestoneWaitingAck   = "Waiting for acknowledgment..."
	MilestoneAnalyzing    = "Analyzing codebase..."
	MilestoneImplementing = "Implementing changes..."
	MilestoneVerifying    = "Running verification..."
	MilestoneDebugging    = "Verification failed, debugging..."
	MilestoneExecFailed   = "The agent's turn failed, retrying..."
	MilestoneTimedOut     = "The agent's turn timed out, retrying..."
	MilestoneRejected     = "The reviewer rejected the work, retrying..."
	MilestoneUserRetry    = "Retrying as you answered..."
	MilestoneReplanning   = "Replanning..."
	MilestoneApplying     = "Applying the proposed changes..."
	MilestoneProposing    = "Preparing the proposed diff..."
	MilestoneUnverified   = "Done, NOT verified: no verify step is configured"
	MilestoneConflict     = "The change conflicts with what landed first, resolving..."
	MilestoneCIFailed     = "CI failed on the pull request, debugging..."
	// MilestoneChangesRequested: a review asked for changes.
	MilestoneChangesRequested = "The review asked for changes, making them..."
)

// FailureRecord is what went wrong in one attempt.
type FailureRecord struct {
	Attempt        int            `json:"attempt"`
	Timestamp      time.Time      `json:"timestamp"`
	FailureType    string         `json:"failure_type"`
	RunID          string         `json:"run_id,omitempty"`
	ExecutorOutput ExecutorOutput `json:"executor_output"`
	RootCauseGuess string         `json:"root_cause_guess,omitempty"`
	SuggestedFix   string         `json:"suggested_fix,omitempty"`
	FilesState     []FileState    `json:"files_state,omitempty"`
	// Details is the tail of the failing output, for the retry context.
	Details string `json:"details,omitempty"`
	// Escalate names a condition that cannot be fixed by retrying
	// (permission_denied, service_unavailable, conflicting_requirements,
	// impossible): the task is escalated at once.
	Escalate string `json:"escalate,omitempty"`
	// DurationMS is how long the failing verification ran.
	DurationMS int64 `json:"duration_ms,omitempty"`
}

// ExecutorOutput is the executor's side of a failure record.
type ExecutorOutput struct {
	Status        string        `json:"status"`
	FilesModified []string      `json:"files_modified"`
	Verification  *Verification `json:"verification,omitempty"`
	Error         string        `json:"error,omitempty"`
}

// Verification is the failing verify command of a failure record.
type Verification struct {
	Command       string `json:"command"`
	ExitCode      int    `json:"exit_code"`
	OutputSummary string `json:"output_summary"`
}

// FileState is one file the attempt left changed.
type FileState struct {
	Path         string `json:"path"`
	Status       string `json:"status"`
	LinesChanged int    `json:"lines_changed"`
}

// TaskEscalation is what the user is asked to decide.
type TaskEscalation struct {
	Reason  string    `json:"reason"`
	Message string    `json:"message"`
	At      time.Time `json:"at"`
}

// TaskSummary says what a successful task changed, why, and how it was
// verified.
type TaskSummary struct {
	Files []string `json:"files"`
	Why   string   `json:"why"`
	RunID string   `json:"run_id"`
	Text  string   `json:"text"`
}

// StuckReport is what a hard stop leaves for a later retry.
type StuckReport struct {
	Hypotheses []string `json:"hypotheses"`
	RunIDs     []string `json:"run_ids"`
	Path       string   `json:"path"`
	Markdown   string   `json:"markdown"`
}

// Proposal is a dry run's result.
type Proposal struct {
	RunID string   `json:"run_id"`
	Files []string `json:"files"`
}

// Task is a unit of user work.
type Task struct {
	Version            uint64   `json:"version"`
	ID                 string   `json:"id"`
	Description        string   `json:"description"`
	Constraints        []string `json:"constraints"`
	NonGoals           []string `json:"non_goals"`
	Boundaries         []string `json:"boundaries"`
	AcceptanceCriteria []string `json:"acceptance_criteria"`
	DryRun             bool     `json:"dry_run"`
	// Package is the monorepo package (a folder) the task is scoped to.
	Package        string    `json:"package,omitempty"`
	RequestedAgent string    `json:"requested_agent,omitempty"`
	Agent          string    `json:"agent,omitempty"`
	PlanID         string    `json:"plan_id,omitempty"`
	DependsOn      []string  `json:"depends_on,omitempty"`
	Context        string    `json:"context,omitempty"`
	ResumedFrom    string    `json:"resumed_from,omitempty"`
	State          TaskState `json:"state"`
	Phase          Phase     `json:"phase,omitempty"`

	Attempt             int `json:"attempt"`
	ConsecutiveFailures int `json:"consecutive_failures"`
	TotalVerifyLoops    int `json:"total_verify_loops"`
	Replans             int `json:"replans"`
	// SinceEscalation counts failures since the last retry, for
	// escalate_after.
	SinceEscalation int `json:"since_escalation,omitempty"`

	Milestone    string          `json:"milestone,omitempty"`
	Escalation   *TaskEscalation `json:"escalation,omitempty"`
	BlockedBy    string          `json:"blocked_by,omitempty"`
	Failures     []FailureRecord `json:"failures"`
	Learnings    []string        `json:"learnings,omitempty"`
	Intervention string          `json:"intervention,omitempty"`
	Warnings     []string        `json:"warnings,omitempty"`
	Delivery     string          `json:"delivery,omitempty"`
	RunID        string          `json:"run_id,omitempty"`
	RunIDs       []string        `json:"run_ids,omitempty"`
	LastSummary  string          `json:"last_summary,omitempty"`
	// Usage is what the task's turns cost, in all; Usages per attempt.
	Usage  Usage         `json:"usage"`
	Usages []UsageRecord `json:"usages,omitempty"`
	// TurnBlocker is the line of the last turn's output that showed an
	// authentication error or a permission the agent could not get, in a
	// turn that otherwise ended well: if verification then fails, the
	// failure is the environment's.
	TurnBlocker string       `json:"turn_blocker,omitempty"`
	Summary     *TaskSummary `json:"summary"`
	StuckReport *StuckReport `json:"stuck_report"`
	Proposal    *Proposal    `json:"proposal,omitempty"`
	// Review is the last review of the task's change (see ReviewPolicy).
	Review *Review `json:"review,omitempty"`
	// Consultations are the questions the task's agents asked scouts,
	// with their answers.
	Consultations []Consultation `json:"consultations,omitempty"`
	// Applying: a dry run's diff is to be applied when the task starts.
	Applying bool `json:"applying,omitempty"`
	// Baseline: the working tree's changes before the task's first send
	// were noted (see RecordBaseline).
	Baseline bool `json:"baseline,omitempty"`
	// Land is how its verified change lands (LandCommit, LandNone; ""
	// for a task of an earlier version: none).
	Land string `json:"land,omitempty"`
	// Verified is its change that passed its checks, while it lands (and
	// after); LandedCommit the commit it landed as.
	Verified     *VerifiedChange `json:"verified,omitempty"`
	LandedCommit string          `json:"landed_commit,omitempty"`
	// Worktree and Branch are where a task worked in parallel works
	// (relative to the checkout's root), made from the head of From (the
	// target; "" for the checkout's HEAD); Base is the commit they started
	// from.
	Worktree string `json:"worktree,omitempty"`
	// KeepWorktree: its worktree and branch are kept when it ends.
	KeepWorktree bool   `json:"keep_worktree,omitempty"`
	Branch       string `json:"branch,omitempty"`
	From         string `json:"from,omitempty"`
	Base         string `json:"base,omitempty"`
	// LandSeq orders the landing queue by verification: the seq of the
	// event that asked for the task's landing; LandStarted: its landing
	// is under way.
	LandSeq     uint64 `json:"land_seq,omitempty"`
	LandStarted bool   `json:"land_started,omitempty"`
	// LandOn is the commit its landing is combined on while tasks ahead
	// of it in the landing queue land: the combination of the one just
	// ahead, not yet landed ("" once first: on the target's head).
	LandOn string `json:"land_on,omitempty"`
	// Released: verified, it let go of its slot and its agent's instance
	// while it lands (or waits on its pull request): the agent is done
	// with it, and the next task starts. It takes them again to be worked
	// on once more (a conflict, a failed combination or check, a
	// review); Resume is the kind of attempt that waits for them.
	Released bool   `json:"released,omitempty"`
	Resume   string `json:"resume,omitempty"`
	// Integration is its combination with the target being verified,
	// while it lands.
	Integration *Integration `json:"integration,omitempty"`
	// Issue is the forge's issue the task was made from (0: none).
	Issue int `json:"issue,omitempty"`
	// IssueSeen is the last comment of its issue's thread read (the
	// forge's comment id; 0: none).
	IssueSeen int64 `json:"issue_seen,omitempty"`
	// PR is the pull request its verified change is in (land.how pr).
	PR *PullRequest `json:"pull_request,omitempty"`
	// QueuedSeq orders the queue: the seq of the event that queued it.
	QueuedSeq uint64 `json:"queued_seq,omitempty"`

	CreatedAt  time.Time `json:"created_at"`
	StartedAt  time.Time `json:"started_at,omitzero"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
}

func (t *Task) copy() Task {
	c := *t
	c.Constraints, c.NonGoals = slices.Clone(t.Constraints), slices.Clone(t.NonGoals)
	c.Boundaries, c.AcceptanceCriteria = slices.Clone(t.Boundaries), slices.Clone(t.AcceptanceCriteria)
	c.DependsOn, c.Learnings, c.Warnings, c.RunIDs = slices.Clone(t.DependsOn), slices.Clone(t.Learnings), slices.Clone(t.Warnings), slices.Clone(t.RunIDs)
	c.Failures, c.Usages, c.Consultations = slices.Clone(t.Failures), slices.Clone(t.Usages), slices.Clone(t.Consultations)
	if t.Escalation != nil {
		e := *t.Escalation
		c.Escalation = &e
	}
	if t.Summary != nil {
		s := *t.Summary
		s.Files = slices.Clone(t.Summary.Files)
		c.Summary = &s
	}
	if t.StuckReport != nil {
		r := *t.StuckReport
		r.Hypotheses, r.RunIDs = slices.Clone(r.Hypotheses), slices.Clone(r.RunIDs)
		c.StuckReport = &r
	}
	if t.Proposal != nil {
		p := *t.Proposal
		p.Files = slices.Clone(p.Files)
		c.Proposal = &p
	}
	if t.Integration != nil {
		i := *t.Integration
		c.Integration = &i
	}
	if t.PR != nil {
		pr := *t.PR
		pr.Seen, pr.Files = slices.Clone(t.PR.Seen), slices.Clone(t.PR.Files)
		c.PR = &pr
	}
	if t.Verified != nil {
		v := *t.Verified
		v.Files, v.Warnings = slices.Clone(v.Files), slices.Clone(v.Warnings)
		c.Verified = &v
	}
	return c
}

// PlanSummary is the retry summary of a plan (or of all tasks).
type PlanSummary struct {
	TotalTasks          int `json:"total_tasks"`
	FirstAttemptSuccess int `json:"first_attempt_success"`
	RetriedTasks        int `json:"retried_tasks"`
	RetrySuccess        int `json:"retry_success"`
	Escalations         int `json:"escalations"`
	Skipped             int `json:"skipped"`
	// Unverified counts tasks that ended with no check run: never a
	// success.
	Unverified int `json:"unverified"`
	// Landed counts the tasks whose verified change landed as a commit
	// on the target; LeftOnBranch those worked in parallel that landed as
	// none: committed on their own branch, not on the target; Conflicted
	// and IntegrationFailed the tasks that had a merge_conflict or an
	// integration_failed failure (tasks worked in parallel).
	Landed            int              `json:"landed"`
	LeftOnBranch      int              `json:"left_on_branch,omitempty"`
	Conflicted        int              `json:"conflicted,omitempty"`
	IntegrationFailed int              `json:"integration_failed,omitempty"`
	Details           []SummaryRow     `json:"details"`
	FailurePatterns   []FailurePattern `json:"failure_patterns"`
	Text              string           `json:"text"`
}

// SummaryRow is one task of a retry summary.
type SummaryRow struct {
	Task     string `json:"task"`
	Attempts int    `json:"attempts"`
	Result   string `json:"result"`
}

// FailurePattern counts a recurring failure.
type FailurePattern struct {
	Pattern     string `json:"pattern"`
	Occurrences int    `json:"occurrences"`
}

// PlanState is where a plan stands.
type PlanState string

// Plan states.
const (
	PlanRunning PlanState = "running"
	PlanDone    PlanState = "done"
	PlanAborted PlanState = "aborted"
)

// Plan is an ordered set of tasks with dependencies.
type Plan struct {
	Version    uint64       `json:"version"`
	ID         string       `json:"id"`
	Tasks      []string     `json:"tasks"`
	State      PlanState    `json:"state"`
	Summary    *PlanSummary `json:"summary"`
	CreatedAt  time.Time    `json:"created_at"`
	FinishedAt time.Time    `json:"finished_at,omitzero"`
}
