package wire

import (
	"fmt"
	"time"
)

// SubmitTask submits a task: POST /v1/tasks.
type SubmitTask struct {
	Description        string   `json:"description"`
	Constraints        []string `json:"constraints,omitempty"`
	NonGoals           []string `json:"non_goals,omitempty"`
	Boundaries         []string `json:"boundaries,omitempty"`
	AcceptanceCriteria []string `json:"acceptance_criteria,omitempty"`
	DryRun             bool     `json:"dry_run,omitempty"`
	Agent              string   `json:"agent,omitempty"`
	ID                 string   `json:"id,omitempty" doc:"The task's id; default: the next T-<n>."`
	Package            string   `json:"package,omitempty" doc:"The monorepo package (a folder) the task is scoped to; default: the configuration's package."`
	Land               LandHow  `json:"land,omitempty" doc:"How its verified change lands: with parallel 1, commit (its own changes committed in the checkout, which must be on the target branch: else 409) or none (left uncommitted); with parallel > 1, merge, rebase, squash or none (left on its branch); default: land.how of wilco.yaml. The others are refused (400)."`
	KeepWorktree       bool     `json:"keep_worktree,omitempty" doc:"A task worked in parallel: keep its worktree and branch when it ends."`
}

// PlanTask is one task of a plan; DependsOn lists the 1-based numbers of
// the tasks it waits for.
type PlanTask struct {
	SubmitTask
	DependsOn []int `json:"depends_on,omitempty"`
}

// SubmitPlan submits a plan: POST /v1/plans. Its tasks get the ids
// "<id>:task-<n>".
type SubmitPlan struct {
	ID    string     `json:"id"`
	Tasks []PlanTask `json:"tasks"`
}

// Respond answers an escalated or blocked task: POST
// /v1/tasks/{id}/respond.
type Respond struct {
	Action      Action `json:"action"`
	Instruction string `json:"instruction,omitempty"`
}

// Clarify answers an agent's questions: POST /v1/tasks/{id}/clarify and
// /v1/messages/{id}/clarify.
type Clarify struct {
	Answers []string `json:"answers"`
}

// Task is a unit of user work and where it stands.
type Task struct {
	ID                  string          `json:"id"`
	Description         string          `json:"description"`
	Constraints         []string        `json:"constraints"`
	NonGoals            []string        `json:"non_goals"`
	Boundaries          []string        `json:"boundaries"`
	AcceptanceCriteria  []string        `json:"acceptance_criteria"`
	State               TaskState       `json:"state"`
	Phase               *Phase          `json:"phase" doc:"What a running task is doing; null in any other state."`
	DryRun              bool            `json:"dry_run"`
	Agent               string          `json:"agent,omitempty"`
	Position            *int            `json:"position" doc:"A queued task's place in the queue (1 runs next); null in any other state."`
	Attempt             int             `json:"attempt"`
	MaxAttempts         int             `json:"max_attempts" doc:"The hard stop in force: the verify loops after which the task stops."`
	ConsecutiveFailures int             `json:"consecutive_failures"`
	TotalVerifyLoops    int             `json:"total_verify_loops"`
	Replans             int             `json:"replans"`
	Milestone           string          `json:"milestone"`
	Questions           []string        `json:"questions" doc:"The agent's questions while the task is clarifying."`
	Escalation          *Escalation     `json:"escalation"`
	Failures            []FailureRecord `json:"failures"`
	Summary             *TaskSummary    `json:"summary"`
	StuckReport         *StuckReport    `json:"stuck_report"`
	CreatedAt           time.Time       `json:"created_at"`
	StartedAt           *time.Time      `json:"started_at"`
	FinishedAt          *time.Time      `json:"finished_at"`
	RunID               string          `json:"run_id,omitempty" doc:"The current attempt's run: its verification log is GET /v1/runs/{run_id}/log."`
	RunIDs              []string        `json:"run_ids,omitempty" doc:"Every run of the task, oldest first."`
	Proposal            *Proposal       `json:"proposal,omitempty"`
	BlockedBy           string          `json:"blocked_by,omitempty" doc:"Why a blocked task is blocked, in the agent's words."`
	Warnings            []string        `json:"warnings,omitempty" doc:"What the definition of done found and let pass, and other warnings."`
	PlanID              string          `json:"plan_id,omitempty"`
	DependsOn           []string        `json:"depends_on,omitempty" doc:"The tasks of its plan it waits for."`
	ResumedFrom         string          `json:"resumed_from,omitempty" doc:"The stuck task this one was started from."`
	Delivery            string          `json:"delivery,omitempty" doc:"The message that delegated the current attempt."`
	Usage               Usage           `json:"usage" doc:"What the task's turns cost, as the agents' CLIs reported it."`
	Usages              []UsageRecord   `json:"usages" doc:"What each attempt's turns cost."`
	Review              *Review         `json:"review,omitempty" doc:"The last review of the change, when a reviewer is configured."`
	Package             string          `json:"package,omitempty" doc:"The monorepo package the task is scoped to."`
	Consultations       []Consultation  `json:"consultations,omitempty" doc:"The questions asked of scouts, with their answers."`
	Land                LandHow         `json:"land" doc:"How its verified change lands: commit or none; merge, rebase, squash or none for a task worked in parallel."`
	LandedCommit        string          `json:"landed_commit,omitempty" doc:"The commit its verified change landed as (land commit), once it did."`
	Branch              string          `json:"branch,omitempty" doc:"The branch of a task worked in parallel (wilco/<id>)."`
	Worktree            string          `json:"worktree,omitempty" doc:"The worktree of a task worked in parallel, relative to the repository's root (.wilco/worktrees/<id>)."`
	KeepWorktree        bool            `json:"keep_worktree,omitempty" doc:"Its worktree and branch are kept when it ends."`
	LandPosition        int             `json:"land_position,omitempty" doc:"Its place in the landing queue (1: landing now), while a verified task worked in parallel waits to land."`
	PullRequest         *PullRequest    `json:"pull_request,omitempty" doc:"The pull request its verified change is in (land pr)."`
	Issue               int             `json:"issue,omitempty" doc:"The forge's issue the task was made from (intake); its thread is the task's conversation."`
}

// PullRequest is the pull request a task's verified change is in.
type PullRequest struct {
	Number     int        `json:"number"`
	URL        string     `json:"url,omitempty"`
	Head       string     `json:"head" doc:"The commit pushed last: what its checks and reviews are of."`
	Checks     int        `json:"checks" doc:"How many checks the head has."`
	ChecksDone int        `json:"checks_done" doc:"How many of them ended."`
	CIDeadline *time.Time `json:"ci_deadline,omitempty" doc:"When its checks must have ended (land.ci_timeout after the push), while they run."`
	Ready      bool       `json:"ready,omitempty" doc:"Its checks passed and a review approved it (land.merge manual: a human merges)."`
	Merging    bool       `json:"merging,omitempty" doc:"wilco asked the forge to merge it (land.merge auto)."`
}

// Escalation is what the user of an escalated task is asked to decide.
type Escalation struct {
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

// Proposal is a dry run's result: its diff is GET /v1/tasks/{id}/diff.
type Proposal struct {
	RunID string   `json:"run_id"`
	Files []string `json:"files"`
}

// FailureRecord is what went wrong in one attempt.
type FailureRecord struct {
	Attempt        int            `json:"attempt"`
	Timestamp      time.Time      `json:"timestamp"`
	FailureType    FailureType    `json:"failure_type"`
	RunID          string         `json:"run_id,omitempty"`
	ExecutorOutput ExecutorOutput `json:"executor_output"`
	RootCauseGuess string         `json:"root_cause_guess,omitempty"`
	SuggestedFix   string         `json:"suggested_fix,omitempty"`
	FilesState     []FileState    `json:"files_state,omitempty" doc:"The files the attempt left changed."`
	Details        string         `json:"details,omitempty" doc:"The tail of the failing output, for the retry context."`
	Escalate       string         `json:"escalate,omitempty" doc:"A condition no retry can fix (permission_denied, service_unavailable, conflicting_requirements, impossible): the task is escalated at once."`
	DurationMS     int64          `json:"duration_ms,omitempty" doc:"How long the failing verification ran."`
}

// ExecutorOutput is the agent's side of a failure record.
type ExecutorOutput struct {
	Status        string        `json:"status"`
	FilesModified []string      `json:"files_modified"`
	Verification  *Verification `json:"verification,omitempty"`
	Error         string        `json:"error,omitempty"`
}

// Verification is the failing verify step of a failure record.
type Verification struct {
	Command       string `json:"command"`
	ExitCode      int    `json:"exit_code"`
	OutputSummary string `json:"output_summary"`
}

// FileState is one file an attempt left changed.
type FileState struct {
	Path         string `json:"path"`
	Status       string `json:"status"`
	LinesChanged int    `json:"lines_changed"`
}

// Review is a reviewer's review of a task's change.
type Review struct {
	Attempt  int       `json:"attempt"`
	Reviewer string    `json:"reviewer"`
	Delivery string    `json:"delivery"`
	RunID    string    `json:"run_id"`
	Command  string    `json:"command,omitempty"`
	Files    []string  `json:"files,omitempty"`
	Warnings []string  `json:"warnings,omitempty"`
	Verdict  Verdict   `json:"verdict,omitempty" doc:"Set once the reviewer answered."`
	Reasons  string    `json:"reasons,omitempty"`
	At       time.Time `json:"at,omitzero"`
}

// Consultation is a question an agent asked a scout, and its answer.
type Consultation struct {
	ID       string            `json:"id" doc:"The question's message id: the scout answers it."`
	TaskID   string            `json:"task_id"`
	Attempt  int               `json:"attempt"`
	From     string            `json:"from"`
	Scout    string            `json:"scout"`
	Question string            `json:"question"`
	State    ConsultationState `json:"state"`
	Answer   string            `json:"answer,omitempty"`
	Error    string            `json:"error,omitempty"`
	AskedAt  time.Time         `json:"asked_at"`
	EndedAt  time.Time         `json:"ended_at,omitzero"`
}

// Usage is what an agent's turns cost, as its CLI reported it.
type Usage struct {
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CachedTokens int64   `json:"cached_tokens"`
	CostUSD      float64 `json:"cost_usd" doc:"As the agent's CLI reported it, else from the prices of wilco.yaml; 0 when neither gives one."`
	Turns        int     `json:"turns,omitempty"`
	Model        string  `json:"model,omitempty"`
	Priced       bool    `json:"priced,omitempty" doc:"The cost comes from the prices of wilco.yaml."`
}

// String says a usage in a line: tokens in and out (cached), the cost,
// the model's turns, the model.
func (u Usage) String() string {
	s := fmt.Sprintf("%d tokens in (%d cached), %d out", u.InputTokens, u.CachedTokens, u.OutputTokens)
	if u.CostUSD > 0 {
		s += fmt.Sprintf(", $%.4f", u.CostUSD)
		if u.Priced {
			s += " (from the prices in wilco.yaml)"
		}
	}
	if u.Turns > 0 {
		s += fmt.Sprintf(", %d model turns", u.Turns)
	}
	if u.Model != "" {
		s += ", " + u.Model
	}
	return s
}

// UsageRecord is the usage of one attempt's turn: by whom and on which
// UTC day.
type UsageRecord struct {
	Attempt int    `json:"attempt"`
	Agent   string `json:"agent"`
	Day     string `json:"day"`
	Usage   Usage  `json:"usage"`
}

// TaskList is a page of tasks: GET /v1/tasks.
type TaskList struct {
	Tasks  []Task         `json:"tasks"`
	Next   string         `json:"next" doc:"The cursor of the next page; empty on the last."`
	Total  int            `json:"total" doc:"The tasks that match state, on every page."`
	Counts map[string]int `json:"counts" doc:"Every task by state, whatever state asks."`
}

// TaskBriefList is a page of tasks as a list shows them: GET
// /v1/tasks?view=brief.
type TaskBriefList struct {
	Tasks  []TaskBrief    `json:"tasks"`
	Next   string         `json:"next" doc:"The cursor of the next page; empty on the last."`
	Total  int            `json:"total" doc:"The tasks that match state, on every page."`
	Counts map[string]int `json:"counts" doc:"Every task by state, whatever state asks."`
}

// TaskBrief is a task in a list: what a row of the page shows, a few
// hundred bytes whatever the task's history.
type TaskBrief struct {
	ID          string     `json:"id"`
	Description string     `json:"description" doc:"The description's first line, at most 200 characters."`
	State       TaskState  `json:"state"`
	Phase       *Phase     `json:"phase"`
	DryRun      bool       `json:"dry_run"`
	Agent       string     `json:"agent,omitempty"`
	Position    *int       `json:"position"`
	Attempt     int        `json:"attempt"`
	MaxAttempts int        `json:"max_attempts"`
	Milestone   string     `json:"milestone"`
	PlanID      string     `json:"plan_id,omitempty"`
	CostUSD     float64    `json:"cost_usd"`
	CreatedAt   time.Time  `json:"created_at"`
	StartedAt   *time.Time `json:"started_at"`
	FinishedAt  *time.Time `json:"finished_at"`
}

// Queue is the queued tasks, position 1 first: GET /v1/queue.
type Queue struct {
	Tasks []QueueEntry `json:"tasks"`
	// Slots, Working and Landing describe tasks worked in parallel.
	Slots   int          `json:"slots" doc:"How many tasks are worked at once (parallel)."`
	Working []SlotEntry  `json:"working" doc:"The tasks that hold a slot, oldest first."`
	Landing []QueueEntry `json:"landing" doc:"The verified tasks waiting to land, in the order they will (position 1: landing now)."`
}

// SlotEntry is a task that holds a slot: where it works.
type SlotEntry struct {
	ID       string    `json:"id"`
	State    TaskState `json:"state"`
	Phase    *Phase    `json:"phase"`
	Agent    string    `json:"agent,omitempty"`
	Branch   string    `json:"branch,omitempty" doc:"Its branch, when tasks are worked in parallel."`
	Worktree string    `json:"worktree,omitempty" doc:"Its worktree, when tasks are worked in parallel."`
}

// QueueEntry is one queued task (position 1 runs next).
type QueueEntry struct {
	ID          string `json:"id"`
	Position    int    `json:"position"`
	Description string `json:"description"`
}

// Plan is a plan, its tasks, and its retry summary once it ended.
type Plan struct {
	ID         string        `json:"id"`
	State      PlanState     `json:"state"`
	Tasks      []Task        `json:"tasks"`
	Summary    *RetrySummary `json:"summary"`
	CreatedAt  time.Time     `json:"created_at"`
	FinishedAt *time.Time    `json:"finished_at"`
}

// RetrySummary is the retry summary of a plan, or of every task.
type RetrySummary struct {
	TotalTasks          int              `json:"total_tasks"`
	FirstAttemptSuccess int              `json:"first_attempt_success"`
	RetriedTasks        int              `json:"retried_tasks"`
	RetrySuccess        int              `json:"retry_success"`
	Escalations         int              `json:"escalations"`
	Skipped             int              `json:"skipped"`
	Unverified          int              `json:"unverified" doc:"Tasks that ended with no check run: never a success."`
	Landed              int              `json:"landed" doc:"Tasks whose verified change landed as a commit on the target."`
	LeftOnBranch        int              `json:"left_on_branch,omitempty" doc:"Tasks worked in parallel that land as none: their verified change is committed on their own branch, not on the target."`
	Conflicted          int              `json:"conflicted,omitempty" doc:"Tasks worked in parallel that had a merge_conflict failure."`
	IntegrationFailed   int              `json:"integration_failed,omitempty" doc:"Tasks worked in parallel that had an integration_failed failure."`
	Details             []SummaryRow     `json:"details"`
	FailurePatterns     []FailurePattern `json:"failure_patterns"`
	Text                string           `json:"text" doc:"The summary as Markdown."`
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

// Transcript is an attempt's conversation with its agent: GET
// /v1/tasks/{id}/transcript.
type Transcript struct {
	TaskID  string            `json:"task_id"`
	Attempt int               `json:"attempt"`
	RunID   string            `json:"run_id"`
	Entries []TranscriptEntry `json:"entries"`
}

// TranscriptEntry is one step of a transcript.
type TranscriptEntry struct {
	At    time.Time      `json:"at"`
	Kind  TranscriptKind `json:"kind"`
	Text  string         `json:"text,omitempty"`
	Tool  string         `json:"tool,omitempty"`
	Input map[string]any `json:"input,omitempty"`
}

// Stats are the retry summary over every task, the retry state, and what
// the agents' turns cost: GET /v1/stats.
type Stats struct {
	Summary            RetrySummary `json:"summary"`
	RetryState         RetryState   `json:"retry_state"`
	FailedInstructions int          `json:"failed_instructions"`
	FailedDeliveries   int          `json:"failed_deliveries"`
	Usage              UsageTotals  `json:"usage"`
}

// RetryState is every task that was retried or is being retried, and the
// totals.
type RetryState struct {
	TaskRetries map[string]TaskRetry `json:"task_retries"`
	GlobalStats GlobalStats          `json:"global_stats"`
}

// TaskRetry is one task's entry of the retry state.
type TaskRetry struct {
	TaskID         string         `json:"task_id"`
	TaskName       string         `json:"task_name"`
	RetryCount     int            `json:"retry_count"`
	MaxRetries     int            `json:"max_retries"`
	Status         string         `json:"status"`
	Failures       []RetryFailure `json:"failures"`
	CurrentAttempt int            `json:"current_attempt"`
	StartedAt      time.Time      `json:"started_at"`
	LastAttemptAt  time.Time      `json:"last_attempt_at"`
}

// RetryFailure is one failure of the retry state.
type RetryFailure struct {
	Attempt      int         `json:"attempt"`
	Timestamp    time.Time   `json:"timestamp"`
	FailureType  FailureType `json:"failure_type"`
	ErrorSummary string      `json:"error_summary"`
	SuggestedFix string      `json:"suggested_fix"`
}

// GlobalStats are the retry state's totals.
type GlobalStats struct {
	TotalRetries      int `json:"total_retries"`
	SuccessfulRetries int `json:"successful_retries"`
	Escalations       int `json:"escalations"`
}

// UsageTotals are usage totals over tasks: all, per agent and per day.
type UsageTotals struct {
	Total   Usage            `json:"total"`
	ByAgent map[string]Usage `json:"by_agent"`
	ByDay   map[string]Usage `json:"by_day" doc:"By UTC day, YYYY-MM-DD."`
}

// DailyStats are the numbers of each UTC day, oldest first: GET
// /v1/stats/daily.
type DailyStats struct {
	Days []DayNumbers `json:"days"`
}

// DayNumbers are one UTC day's numbers over the tasks.
type DayNumbers struct {
	Day                 string         `json:"day" doc:"YYYY-MM-DD, UTC"`
	Finished            int            `json:"finished" doc:"Tasks that ended that day."`
	Success             int            `json:"success"`
	FirstAttemptSuccess int            `json:"first_attempt_success"`
	Retried             int            `json:"retried" doc:"Of finished, tasks with more than one attempt."`
	RetrySuccess        int            `json:"retry_success"`
	Escalations         int            `json:"escalations" doc:"Tasks whose last escalation was that day."`
	Failures            map[string]int `json:"failures" doc:"Failure records of that day by failure type."`
	Usage               Usage          `json:"usage"`
}
