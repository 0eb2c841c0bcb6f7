package core

// Task and plan event types.
const (
	TypeTaskQueued    = "task.queued"
	TypeTaskState     = "task.state"
	TypeTaskMilestone = "task.milestone"
	TypeTaskAttempt   = "task.attempt"
	TypeTaskTurnEnded = "task.turn_ended"
	TypeTaskFailure   = "task.failure"
	TypeTaskReplan    = "task.replan"
	TypeTaskEscalated = "task.escalated"
	TypeTaskResponse  = "task.response"
	TypeTaskSuccess   = "task.success"
	// TypeTaskUnverified records the end of a task no check verified.
	TypeTaskUnverified = "task.unverified"
	TypeTaskStuck      = "task.stuck"
	TypeTaskProposed   = "task.proposed"
	TypeTaskRemoved    = "task.removed"
	TypeTaskBaseline   = "task.baseline"
	TypeTaskWarning    = "task.warning"
	TypePlanCreated    = "plan.created"
	TypePlanState      = "plan.state"
)

// TaskQueued records a submitted task.
type TaskQueued struct {
	Task Task `json:"task"`
}

// TaskStateChanged records a task's new state and phase.
type TaskStateChanged struct {
	From      TaskState `json:"from"`
	To        TaskState `json:"to"`
	Phase     Phase     `json:"phase,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	Milestone string    `json:"milestone,omitempty"`
	// RunID is set when the task starts verifying.
	RunID string `json:"run_id,omitempty"`
	// Agent and Delivery are set when the task's delegation moves to
	// another agent.
	Agent    string `json:"agent,omitempty"`
	Delivery string `json:"delivery,omitempty"`
}

// TaskMilestone records progress shown to the user.
type TaskMilestone struct {
	Text string `json:"text"`
}

// TaskAttempt records the start of an attempt: the agent's turn.
type TaskAttempt struct {
	Attempt  int    `json:"attempt"`
	Agent    string `json:"agent"`
	Delivery string `json:"delivery"`
	// Kind is first, retry, replan or fix.
	Kind string `json:"kind"`
	// MaxAttempts is the hard stop in force: the verify loops after which
	// the task stops.
	MaxAttempts int `json:"max_attempts,omitempty"`
}

// TaskTurnEnded records the end of an agent's turn.
type TaskTurnEnded struct {
	Attempt  int      `json:"attempt"`
	ExitCode int      `json:"exit_code"`
	Status   string   `json:"status"`
	Summary  string   `json:"summary,omitempty"`
	Files    []string `json:"files,omitempty"`
	// Blocker is the line of the output that showed an authentication
	// error or a permission the agent could not get, in a turn that
	// otherwise ended well.
	Blocker string `json:"blocker,omitempty"`
	// Usage is what the turn cost, as the agent's CLI reported it.
	Usage *Usage `json:"usage,omitempty"`
	// DurationMS is how long the turn ran.
	DurationMS int64 `json:"duration_ms"`
}

// TaskFailure records a failed attempt.
type TaskFailure struct {
	Record FailureRecord `json:"record"`
}

// TaskReplan records a REPLAN.
type TaskReplan struct {
	Number   int `json:"number"`
	Failures int `json:"failures"`
}

// TaskEscalated records an escalation to the user.
type TaskEscalated struct {
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// TaskResponse records the user's answer to an escalated or blocked task.
type TaskResponse struct {
	Action      string `json:"action"`
	Instruction string `json:"instruction,omitempty"`
}

// TaskSucceeded records a verified task and its summary.
type TaskSucceeded struct {
	Summary TaskSummary `json:"summary"`
	// VerifyMS is how long the verify steps ran.
	VerifyMS int64 `json:"verify_ms"`
}

// TaskUnverifiedEnd records a task whose agent finished when no verify
// step is configured: its summary says that no check verified it.
type TaskUnverifiedEnd struct {
	Summary TaskSummary `json:"summary"`
}

// TaskStuckReported records a hard stop and its report.
type TaskStuckReported struct {
	Report StuckReport `json:"report"`
}

// TaskProposedDiff records a dry run's diff, ready to apply or discard.
type TaskProposedDiff struct {
	Proposal Proposal `json:"proposal"`
}

// TaskRemoved records a queued task cancelled: it leaves the queue and the
// task list as if never submitted.
type TaskRemoved struct{}

// TaskWarning records a warning on a task (a skipped dependency).
type TaskWarning struct {
	Text string `json:"text"`
}

// TaskBaselineRecorded records that the working tree's changes were noted
// before the task's first send (see RecordBaseline).
type TaskBaselineRecorded struct {
	Error string `json:"error,omitempty"`
}

// PlanCreated records a plan; its tasks' TaskQueued events follow.
type PlanCreated struct {
	Plan Plan `json:"plan"`
}

// PlanStateChanged records a plan's end and its retry summary.
type PlanStateChanged struct {
	ID      string       `json:"id"`
	From    PlanState    `json:"from"`
	To      PlanState    `json:"to"`
	Summary *PlanSummary `json:"summary,omitempty"`
}

func (TaskQueued) EventType() string           { return TypeTaskQueued }
func (TaskStateChanged) EventType() string     { return TypeTaskState }
func (TaskMilestone) EventType() string        { return TypeTaskMilestone }
func (TaskAttempt) EventType() string          { return TypeTaskAttempt }
func (TaskTurnEnded) EventType() string        { return TypeTaskTurnEnded }
func (TaskFailure) EventType() string          { return TypeTaskFailure }
func (TaskReplan) EventType() string           { return TypeTaskReplan }
func (TaskEscalated) EventType() string        { return TypeTaskEscalated }
func (TaskResponse) EventType() string         { return TypeTaskResponse }
func (TaskSucceeded) EventType() string        { return TypeTaskSuccess }
func (TaskUnverifiedEnd) EventType() string    { return TypeTaskUnverified }
func (TaskStuckReported) EventType() string    { return TypeTaskStuck }
func (TaskProposedDiff) EventType() string     { return TypeTaskProposed }
func (TaskRemoved) EventType() string          { return TypeTaskRemoved }
func (TaskWarning) EventType() string          { return TypeTaskWarning }
func (TaskBaselineRecorded) EventType() string { return TypeTaskBaseline }
func (PlanCreated) EventType() string          { return TypePlanCreated }
func (PlanStateChanged) EventType() string     { return TypePlanState }

func init() {
	register[TaskQueued]()
	register[TaskStateChanged]()
	register[TaskMilestone]()
	register[TaskAttempt]()
	register[TaskTurnEnded]()
	register[TaskFailure]()
	register[TaskReplan]()
	register[TaskEscalated]()
	register[TaskResponse]()
	register[TaskSucceeded]()
	register[TaskUnverifiedEnd]()
	register[TaskStuckReported]()
	register[TaskProposedDiff]()
	register[TaskRemoved]()
	register[TaskWarning]()
	register[TaskBaselineRecorded]()
	register[PlanCreated]()
	register[PlanStateChanged]()
}
