package core

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// PlanTaskSpec is one task of a submitted plan. DependsOn lists the
// 1-based numbers of earlier tasks of the same plan.
type PlanTaskSpec struct {
	TaskSpec
	DependsOn []int
	// Malformed says why the task could not be read; such a task fails at
	// once with that parse error and is not retried.
	Malformed string
}

// SubmitPlan queues a plan's tasks in order, with ids
// {phase}-{plan}:task-{n}. Each task passes the checks a task submitted
// alone passes (admit) before any is created, and keeps its package as
// one does.
func (s *State) SubmitPlan(now time.Time, id string, tasks []PlanTaskSpec) (Plan, error) {
	now = norm(now)
	if !validName(id) || strings.Contains(id, ":") {
		return Plan{}, invalidf("plan id %q: use 1 to 64 of A-Z a-z 0-9 . _ - (such as 03-01)", id)
	}
	if _, ok := s.plans[id]; ok {
		return Plan{}, conflictf("plan %s exists", id)
	}
	if len(tasks) == 0 {
		return Plan{}, invalidf("tasks: a plan needs at least one task")
	}
	p := Plan{ID: id, State: PlanRunning}
	admissions := make([]admitted, len(tasks))
	for i, t := range tasks {
		n := i + 1
		tid := id + ":task-" + strconv.Itoa(n)
		if _, ok := s.tasks[tid]; ok {
			return Plan{}, conflictf("task %s exists", tid)
		}
		if t.ID != "" && t.ID != tid {
			return Plan{}, invalidf("tasks[%d].id: plan tasks are numbered %s", i, tid)
		}
		adm, err := s.admit(t.TaskSpec)
		if err != nil {
			return Plan{}, within(fmt.Sprintf("tasks[%d]", i), err)
		}
		admissions[i] = adm
		for _, dep := range t.DependsOn {
			if dep < 1 || dep >= n {
				return Plan{}, invalidf("tasks[%d].depends_on: %d is not an earlier task of the plan (1..%d)", i, dep, n-1)
			}
		}
		p.Tasks = append(p.Tasks, tid)
	}
	s.emit(now, "", "", PlanCreated{Plan: p})
	for i, t := range tasks {
		spec := t.TaskSpec
		spec.ID, spec.PlanID = p.Tasks[i], id
		spec.DependsOn = nil
		for _, dep := range t.DependsOn {
			spec.DependsOn = append(spec.DependsOn, p.Tasks[dep-1])
		}
		task := Task{
			ID: spec.ID, Description: spec.Description, Constraints: nonNil(spec.Constraints), NonGoals: nonNil(spec.NonGoals),
			Boundaries: nonNil(spec.Boundaries), AcceptanceCriteria: nonNil(spec.AcceptanceCriteria), DryRun: spec.DryRun,
			RequestedAgent: spec.Agent, PlanID: id, DependsOn: spec.DependsOn, State: Queued, Failures: []FailureRecord{},
			Package: admissions[i].pkg, Land: admissions[i].land, KeepWorktree: spec.KeepWorktree,
		}
		s.emit(now, task.ID, "", TaskQueued{Task: task})
		if why := malformed(t); why != "" {
			s.emit(now, task.ID, "", TaskStateChanged{From: Queued, To: TaskFailed, Reason: "malformed task, not retried: " + why})
		}
	}
	s.schedule(now)
	c, _ := s.Plan(id)
	return c, nil
}

// planProgress ends a plan, with its retry summary, once all its tasks
// have ended.
func (s *State) planProgress(now time.Time, id string) {
	p := s.plans[id]
	if p == nil || p.State != PlanRunning {
		return
	}
	aborted := false
	for _, tid := range p.Tasks {
		t := s.tasks[tid]
		if t == nil || !t.State.Terminal() {
			return
		}
		aborted = aborted || t.State == Aborted
	}
	to := PlanDone
	if aborted {
		to = PlanAborted
	}
	sum := s.RetrySummary("Plan "+id, func(t *Task) bool { return t.PlanID == id })
	s.emit(now, "", "", PlanStateChanged{ID: id, From: p.State, To: to, Summary: &sum})
}

// RetrySummary is the retry summary over the tasks keep accepts
// (nil: every task): first-attempt success, retried, retry success,
// escalations, skipped, and the common failure patterns.
func (s *State) RetrySummary(title string, keep func(*Task) bool) PlanSummary {
	var sum PlanSummary
	types := map[string]int{}
	causes := map[string]int{}
	for _, t := range s.Tasks(keep) {
		sum.TotalTasks++
		retried := t.Attempt > 1
		switch {
		case t.State == Success && !retried:
			sum.FirstAttemptSuccess++
		case retried:
			sum.RetriedTasks++
			if t.State == Success {
				sum.RetrySuccess++
			}
		}
		if t.Escalation != nil {
			sum.Escalations++
		}
		if t.State == Skipped {
			sum.Skipped++
		}
		if t.State == Unverified {
			sum.Unverified++
		}
		switch {
		case t.LandedCommit == "":
		case t.Worktree != "" && t.Land == LandNone:
			sum.LeftOnBranch++
		default:
			sum.Landed++
		}
		if slices.ContainsFunc(t.Failures, func(f FailureRecord) bool { return f.FailureType == MergeConflict }) {
			sum.Conflicted++
		}
		if slices.ContainsFunc(t.Failures, func(f FailureRecord) bool { return f.FailureType == IntegrationFailed }) {
			sum.IntegrationFailed++
		}
		result := string(t.State)
		switch {
		case t.State == Success && retried:
			result = "success (retry worked)"
		case t.State == Unverified:
			result = "unverified (no check ran)"
		case t.Escalation != nil && t.State.Terminal():
			result += " (escalated)"
		}
		sum.Details = append(sum.Details, SummaryRow{Task: t.ID, Attempts: t.Attempt, Result: result})
		for _, f := range t.Failures {
			types[f.FailureType]++
			if f.RootCauseGuess != "" {
				causes[f.RootCauseGuess]++
			}
		}
	}
	for _, m := range []map[string]int{types, causes} {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			if m[keys[i]] != m[keys[j]] {
				return m[keys[i]] > m[keys[j]]
			}
			return keys[i] < keys[j]
		})
		for _, k := range keys {
			sum.FailurePatterns = append(sum.FailurePatterns, FailurePattern{Pattern: k, Occurrences: m[k]})
		}
	}
	if sum.Details == nil {
		sum.Details = []SummaryRow{}
	}
	if sum.FailurePatterns == nil {
		sum.FailurePatterns = []FailurePattern{}
	}
	sum.Text = summaryText(title, sum)
	return sum
}

func pct(n, of int) string {
	if of == 0 {
		return "0%"
	}
	return fmt.Sprintf("%d%%", n*100/of)
}

func summaryText(title string, s PlanSummary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Retry Summary for %s\n\n| Metric | Value |\n|--------|-------|\n", title)
	fmt.Fprintf(&b, "| Total tasks | %d |\n", s.TotalTasks)
	fmt.Fprintf(&b, "| First-attempt success | %d (%s) |\n", s.FirstAttemptSuccess, pct(s.FirstAttemptSuccess, s.TotalTasks))
	fmt.Fprintf(&b, "| Retried tasks | %d (%s) |\n", s.RetriedTasks, pct(s.RetriedTasks, s.TotalTasks))
	fmt.Fprintf(&b, "| Retry success | %d |\n| Escalations | %d |\n| Skipped | %d |\n", s.RetrySuccess, s.Escalations, s.Skipped)
	if s.Unverified > 0 {
		fmt.Fprintf(&b, "| Unverified (no check ran) | %d |\n", s.Unverified)
	}
	if s.Landed > 0 {
		fmt.Fprintf(&b, "| Landed as commits | %d |\n", s.Landed)
	}
	if s.LeftOnBranch > 0 {
		fmt.Fprintf(&b, "| Left on their branch (land none) | %d |\n", s.LeftOnBranch)
	}
	if s.Conflicted > 0 {
		fmt.Fprintf(&b, "| Merge conflicts (tasks) | %d |\n", s.Conflicted)
	}
	if s.IntegrationFailed > 0 {
		fmt.Fprintf(&b, "| Integration failures (tasks) | %d |\n", s.IntegrationFailed)
	}
	b.WriteString("\n")
	b.WriteString("### Retry Details\n\n| Task | Attempts | Result |\n|------|----------|--------|\n")
	for _, r := range s.Details {
		fmt.Fprintf(&b, "| %s | %d | %s |\n", r.Task, r.Attempts, r.Result)
	}
	b.WriteString("\n### Common Failure Patterns\n\n")
	if len(s.FailurePatterns) == 0 {
		b.WriteString("- none\n")
	}
	for _, p := range s.FailurePatterns {
		fmt.Fprintf(&b, "- %s: %d occurrences\n", p.Pattern, p.Occurrences)
	}
	return b.String()
}

// RetryState is the retry-state view.
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
	Attempt      int       `json:"attempt"`
	Timestamp    time.Time `json:"timestamp"`
	FailureType  string    `json:"failure_type"`
	ErrorSummary string    `json:"error_summary"`
	SuggestedFix string    `json:"suggested_fix"`
}

// GlobalStats are the retry state's totals.
type GlobalStats struct {
	TotalRetries      int `json:"total_retries"`
	SuccessfulRetries int `json:"successful_retries"`
	Escalations       int `json:"escalations"`
}

// RetryStateView builds the retry-state JSON: every task that was
// retried or is being retried, and the totals.
func (s *State) RetryStateView() RetryState {
	v := RetryState{TaskRetries: map[string]TaskRetry{}}
	for _, t := range s.Tasks(nil) {
		if t.Escalation != nil {
			v.GlobalStats.Escalations++
		}
		if t.Attempt > 1 {
			v.GlobalStats.TotalRetries += t.Attempt - 1
			if t.State == Success {
				v.GlobalStats.SuccessfulRetries++
			}
		}
		if len(t.Failures) == 0 {
			continue
		}
		status := string(t.State)
		if t.State == Running {
			status = string(t.Phase)
		}
		r := TaskRetry{TaskID: t.ID, TaskName: firstLine(t.Description), RetryCount: len(t.Failures), MaxRetries: s.policies.Loop.HardStop,
			Status: status, CurrentAttempt: t.Attempt, StartedAt: t.StartedAt}
		for _, f := range t.Failures {
			sum := f.ExecutorOutput.Error
			if f.ExecutorOutput.Verification != nil {
				sum = f.ExecutorOutput.Verification.OutputSummary
			}
			r.Failures = append(r.Failures, RetryFailure{Attempt: f.Attempt, Timestamp: f.Timestamp, FailureType: f.FailureType, ErrorSummary: sum, SuggestedFix: f.SuggestedFix})
			r.LastAttemptAt = f.Timestamp
		}
		v.TaskRetries[t.ID] = r
	}
	return v
}

func malformed(t PlanTaskSpec) string {
	switch {
	case t.Malformed != "":
		return t.Malformed
	case strings.TrimSpace(t.Description) == "":
		return "the description is empty"
	}
	for field, items := range map[string][]string{"constraints": t.Constraints, "non_goals": t.NonGoals, "boundaries": t.Boundaries, "acceptance_criteria": t.AcceptanceCriteria} {
		if err := validItems(field, items); err != nil {
			return err.Error()
		}
	}
	return ""
}
