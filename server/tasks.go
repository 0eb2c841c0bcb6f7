package server

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"wilco/core"
	"wilco/verify"
)

// TaskView is a task on the wire.
type TaskView struct {
	ID                 string         `json:"id"`
	Description        string         `json:"description"`
	Constraints        []string       `json:"constraints"`
	NonGoals           []string       `json:"non_goals"`
	Boundaries         []string       `json:"boundaries"`
	AcceptanceCriteria []string       `json:"acceptance_criteria"`
	State              core.TaskState `json:"state"`
	Phase              *core.Phase    `json:"phase"`
	DryRun             bool           `json:"dry_run"`
	Agent              string         `json:"agent,omitempty"`
	Position           *int           `json:"position"`
	Attempt            int            `json:"attempt"`
	// MaxAttempts is the hard stop in force: the verify loops after
	// which the task stops.
	MaxAttempts         int                  `json:"max_attempts"`
	ConsecutiveFailures int                  `json:"consecutive_failures"`
	TotalVerifyLoops    int                  `json:"total_verify_loops"`
	Replans             int                  `json:"replans"`
	Milestone           string               `json:"milestone"`
	Questions           []string             `json:"questions"`
	Escalation          *core.TaskEscalation `json:"escalation"`
	Failures            []core.FailureRecord `json:"failures"`
	Summary             *core.TaskSummary    `json:"summary"`
	StuckReport         *core.StuckReport    `json:"stuck_report"`
	CreatedAt           time.Time            `json:"created_at"`
	StartedAt           *time.Time           `json:"started_at"`
	FinishedAt          *time.Time           `json:"finished_at"`
	// More of what wilco knows of the task.
	RunID       string         `json:"run_id,omitempty"`
	RunIDs      []string       `json:"run_ids,omitempty"`
	Proposal    *core.Proposal `json:"proposal,omitempty"`
	BlockedBy   string         `json:"blocked_by,omitempty"`
	Warnings    []string       `json:"warnings,omitempty"`
	PlanID      string         `json:"plan_id,omitempty"`
	DependsOn   []string       `json:"depends_on,omitempty"`
	ResumedFrom string         `json:"resumed_from,omitempty"`
	Delivery    string         `json:"delivery,omitempty"`
	// Usage is what the task's turns cost, as the agents' CLIs reported
	// it; Usages per attempt.
	Usage  core.Usage         `json:"usage"`
	Usages []core.UsageRecord `json:"usages"`
	// Review is the last review of the change, when a reviewer is
	// configured.
	Review *core.Review `json:"review,omitempty"`
	// Package is the monorepo package the task is scoped to.
	Package string `json:"package,omitempty"`
	// Consultations are the questions asked of scouts, with their answers.
	Consultations []core.Consultation `json:"consultations,omitempty"`
}

// taskView renders a task; c gives its position and the agent's questions.
func taskView(c *core.State, t core.Task) TaskView {
	pos := 0
	if t.State == core.Queued {
		pos = c.Position(t.ID)
	}
	return taskViewAt(c, t, pos)
}

// taskViewAt renders a task whose queue position is known.
func taskViewAt(c *core.State, t core.Task, position int) TaskView {
	v := TaskView{
		ID: t.ID, Description: t.Description, Constraints: t.Constraints, NonGoals: t.NonGoals, Boundaries: t.Boundaries,
		AcceptanceCriteria: t.AcceptanceCriteria, State: t.State, DryRun: t.DryRun, Agent: t.Agent, Attempt: t.Attempt,
		ConsecutiveFailures: t.ConsecutiveFailures, TotalVerifyLoops: t.TotalVerifyLoops, Replans: t.Replans,
		Milestone: t.Milestone, Questions: []string{}, Escalation: t.Escalation, Failures: t.Failures, Summary: t.Summary,
		StuckReport: t.StuckReport, CreatedAt: t.CreatedAt, StartedAt: timePtr(t.StartedAt), FinishedAt: timePtr(t.FinishedAt),
		RunID: t.RunID, RunIDs: t.RunIDs, Proposal: t.Proposal, BlockedBy: t.BlockedBy, Warnings: t.Warnings,
		PlanID: t.PlanID, DependsOn: t.DependsOn, ResumedFrom: t.ResumedFrom, Delivery: t.Delivery,
		Usage: t.Usage, Usages: t.Usages, Review: t.Review, Package: t.Package, Consultations: t.Consultations,
	}
	if v.Usages == nil {
		v.Usages = []core.UsageRecord{}
	}
	v.MaxAttempts = c.Policies().Loop.HardStop
	if t.Phase != "" && t.State == core.Running {
		p := t.Phase
		v.Phase = &p
	}
	if t.State == core.Queued {
		v.Position = &position
	}
	if t.State == core.TaskClarifying {
		if d, ok := c.Delivery(t.Delivery); ok {
			v.Questions = append(v.Questions, d.Questions()...)
		}
	}
	if v.Failures == nil {
		v.Failures = []core.FailureRecord{}
	}
	return v
}

type submitTaskRequest struct {
	ID                 string   `json:"id"`
	Description        string   `json:"description"`
	Constraints        []string `json:"constraints"`
	NonGoals           []string `json:"non_goals"`
	Boundaries         []string `json:"boundaries"`
	AcceptanceCriteria []string `json:"acceptance_criteria"`
	DryRun             bool     `json:"dry_run"`
	Agent              string   `json:"agent"`
	Package            string   `json:"package"`
}

func (r submitTaskRequest) spec() core.TaskSpec {
	return core.TaskSpec{ID: r.ID, Description: r.Description, Constraints: r.Constraints, NonGoals: r.NonGoals,
		Boundaries: r.Boundaries, AcceptanceCriteria: r.AcceptanceCriteria, DryRun: r.DryRun, Agent: r.Agent, Package: r.Package}
}

// taskSchemas are the OpenAPI component schemas of the task routes.
func taskSchemas() map[string]any {
	nullStr, nullObj := nullable("string"), nullable("object")
	submit := map[string]any{"id": str, "description": str, "constraints": strs, "non_goals": strs, "boundaries": strs,
		"acceptance_criteria": strs, "dry_run": boolean, "agent": str,
		"package": typ("string", "The monorepo package (a folder) the task is scoped to; default: the configuration's package.")}
	planTask := map[string]any{"depends_on": arr(integer)}
	for k, v := range submit {
		planTask[k] = v
	}
	return map[string]any{
		"SubmitTask": obj([]string{"description"}, submit),
		"Respond": obj([]string{"action"}, map[string]any{"action": enum("retry", "fix", "skip", "abort"),
			"instruction": str}),
		"FailureRecord": obj([]string{"attempt", "timestamp", "failure_type", "executor_output"}, map[string]any{
			"attempt": integer, "timestamp": dateTime,
			"failure_type": enum("execution_error", "verification_failed", "timeout", "architect_rejected", "environment"),
			"run_id":       str, "executor_output": typ("object"), "root_cause_guess": str, "suggested_fix": str,
		}),
		"Task": obj([]string{"id", "description", "state", "phase", "dry_run", "position", "attempt", "consecutive_failures", "total_verify_loops",
			"replans", "milestone", "questions", "escalation", "failures", "summary", "stuck_report", "created_at", "started_at", "finished_at"}, map[string]any{
			"id": str, "description": str, "constraints": strs, "non_goals": strs, "boundaries": strs, "acceptance_criteria": strs,
			"state": enum("queued", "awaiting_ack", "clarifying", "running", "escalated", "blocked",
				"proposed", "success", "unverified", "cancelled", "stuck", "skipped", "aborted", "failed"),
			"phase": nullStr, "dry_run": boolean, "agent": str, "position": nullable("integer"),
			"attempt": integer, "max_attempts": integer, "consecutive_failures": integer, "total_verify_loops": integer, "replans": integer,
			"milestone": str, "questions": strs, "escalation": nullObj, "failures": arr(ref("FailureRecord")), "summary": nullObj,
			"stuck_report": nullObj, "created_at": dateTime, "started_at": nullTime, "finished_at": nullTime,
			"usage": ref("Usage"), "usages": arr(obj([]string{"attempt", "agent", "day", "usage"}, map[string]any{
				"attempt": integer, "agent": str, "day": str, "usage": ref("Usage")})),
			"review": obj([]string{"attempt", "reviewer", "delivery", "run_id"}, map[string]any{"attempt": integer, "reviewer": str,
				"delivery": str, "run_id": str, "command": str, "files": strs, "verdict": enum("APPROVED", "REJECTED"), "reasons": str, "at": dateTime}),
			"warnings":      typ("array", "What the definition of done found and let pass, and other warnings."),
			"package":       str,
			"consultations": arr(ref("Consultation")),
		}),
		"TaskList": obj([]string{"tasks", "next", "total", "counts"}, map[string]any{
			"tasks": map[string]any{"type": "array", "items": map[string]any{"oneOf": []any{ref("Task"), ref("TaskBrief")}},
				"description": "Task, or TaskBrief with view=brief."},
			"next":   typ("string", "The cursor of the next page; empty on the last."),
			"total":  typ("integer", "The tasks that match state, on every page."),
			"counts": map[string]any{"type": "object", "additionalProperties": integer, "description": "Every task by state, whatever state asks."}}),
		"TaskBrief": obj([]string{"id", "description", "state", "phase", "dry_run", "position", "attempt", "max_attempts", "milestone", "cost_usd", "created_at", "started_at", "finished_at"}, map[string]any{
			"id": str, "description": typ("string", "The description's first line, at most 200 characters."),
			"state": enum("queued", "awaiting_ack", "clarifying", "running", "escalated", "blocked",
				"proposed", "success", "unverified", "cancelled", "stuck", "skipped", "aborted", "failed"),
			"phase": nullStr, "dry_run": boolean, "agent": str, "position": nullable("integer"), "attempt": integer, "max_attempts": integer,
			"milestone": str, "plan_id": str, "cost_usd": typ("number"), "created_at": dateTime, "started_at": nullTime, "finished_at": nullTime}),
		"Queue": obj([]string{"tasks"}, map[string]any{"tasks": arr(obj([]string{"id", "position", "description"},
			map[string]any{"id": str, "position": integer, "description": str}))}),
		"SubmitPlan": obj([]string{"id", "tasks"}, map[string]any{"id": str, "tasks": arr(obj([]string{"description"}, planTask))}),
		"Plan": obj([]string{"id", "state", "tasks", "summary"}, map[string]any{"id": str, "state": enum("running", "done", "aborted"),
			"tasks": arr(ref("Task")), "summary": nullObj}),
		"Transcript": obj([]string{"task_id", "attempt", "run_id", "entries"}, map[string]any{"task_id": str, "attempt": integer, "run_id": str,
			"entries": arr(obj([]string{"at", "kind"}, map[string]any{"at": dateTime,
				"kind": enum("prompt", "text", "tool_call", "tool_result", "error", "note"), "text": str, "tool": str, "input": typ("object")}))}),
		"Usage": obj([]string{"input_tokens", "output_tokens", "cached_tokens", "cost_usd"}, map[string]any{
			"input_tokens": integer, "output_tokens": integer, "cached_tokens": integer,
			"cost_usd": typ("number", "As the agent's CLI reported it, else from the prices of wilco.yaml; 0 when neither gives one."), "turns": integer, "model": str,
			"priced": typ("boolean", "The cost comes from the prices of wilco.yaml.")}),
		"DailyStats": obj([]string{"days"}, map[string]any{"days": arr(obj([]string{"day", "finished", "success", "first_attempt_success", "retried",
			"retry_success", "escalations", "failures", "usage"}, map[string]any{
			"day": typ("string", "YYYY-MM-DD, UTC"), "finished": typ("integer", "Tasks that ended that day."), "success": integer,
			"first_attempt_success": integer, "retried": typ("integer", "Of finished, tasks with more than one attempt."), "retry_success": integer,
			"escalations": typ("integer", "Tasks whose last escalation was that day."),
			"failures":    map[string]any{"type": "object", "additionalProperties": integer, "description": "Failure records of that day by failure type."},
			"usage":       ref("Usage")}))}),
		"Stats": obj([]string{"summary", "retry_state", "usage"}, map[string]any{"summary": typ("object"), "retry_state": typ("object"),
			"usage": obj([]string{"total", "by_agent", "by_day"}, map[string]any{"total": ref("Usage"),
				"by_agent": map[string]any{"type": "object", "additionalProperties": ref("Usage")},
				"by_day":   map[string]any{"type": "object", "additionalProperties": ref("Usage"), "description": "By UTC day, YYYY-MM-DD."}}),
			"failed_instructions": integer, "failed_deliveries": integer}),
	}
}

func (s *Server) taskRoutes() []Route {
	id := map[string]string{"id": "T-1"}
	return []Route{
		{Method: "POST", Path: "/v1/tasks", Auth: Admin, Summary: "Submit a task: it is queued (strict FIFO) and starts when nothing holds the queue.",
			Request: "SubmitTask", Handler: s.submitTask, Responses: map[int]string{201: "Task"}, Schemas: taskSchemas()},
		{Method: "GET", Path: "/v1/tasks", Auth: Admin, Summary: "List tasks, oldest first (or newest first), all of them or a page at a time, with the count of tasks in each state.",
			Query: []Param{{"state", "string", "only tasks in this state (several: comma-separated)"},
				{"limit", "integer", "a page of at most this many tasks (1 to 1000); next is the cursor of the page after"},
				{"cursor", "string", "the next of the previous page"}, {"order", "string", "oldest (the default) or newest first"},
				{"view", "string", "full (the default: Task) or brief (TaskBrief: what a list shows)"}},
			Handler: s.listTasks, Responses: map[int]string{200: "TaskList"}},
		{Method: "GET", Path: "/v1/tasks/{id}", Auth: Admin, Summary: "One task (404 once a queued task was cancelled).",
			Examples: id, Handler: s.getTask, Responses: map[int]string{200: "Task"}},
		{Method: "GET", Path: "/v1/queue", Auth: Admin, Summary: "The queued tasks, position 1 first.",
			Handler: s.queue, Responses: map[int]string{200: "Queue"}},
		{Method: "POST", Path: "/v1/tasks/{id}/cancel", Auth: Admin, Summary: "Cancel: a queued task is removed (204); a running one is stopped, its working tree kept as it is.",
			Examples: id, Handler: s.cancelTask, Responses: map[int]string{200: "Task", 204: ""}},
		{Method: "POST", Path: "/v1/tasks/{id}/clarify", Auth: Admin, Summary: "Answer the agent's questions.",
			Examples: id, Request: "Clarify", Handler: s.clarifyTask, Responses: map[int]string{200: "Task"}},
		{Method: "POST", Path: "/v1/tasks/{id}/respond", Auth: Admin, Summary: "Answer an escalated or blocked task: retry, fix (with an instruction), skip or abort.",
			Examples: id, Request: "Respond", Handler: s.respondTask, Responses: map[int]string{200: "Task"}},
		{Method: "GET", Path: "/v1/tasks/{id}/diff", Auth: Admin, Summary: "A proposed dry run's unified diff.",
			Examples: id, Handler: s.taskDiff, Responses: map[int]string{200: "text/x-diff"}},
		{Method: "POST", Path: "/v1/tasks/{id}/apply", Auth: Admin, Summary: "Apply a proposed dry run: it is queued, then its diff is written and the full debug loop runs.",
			Examples: id, Handler: s.applyTask, Responses: map[int]string{200: "Task"}},
		{Method: "POST", Path: "/v1/tasks/{id}/discard", Auth: Admin, Summary: "Discard a proposed dry run.",
			Examples: id, Handler: s.discardTask, Responses: map[int]string{200: "Task"}},
		{Method: "POST", Path: "/v1/tasks/{id}/resume", Auth: Admin, Summary: "Start a new task from a stuck task's report.",
			Examples: id, Handler: s.resumeTask, Responses: map[int]string{201: "Task"}},
		{Method: "GET", Path: "/v1/tasks/{id}/transcript", Auth: Admin, Summary: "An attempt's conversation with its agent: the prompt, the assistant's text, each tool call with its input and result (exec agents; bounded in size).",
			Examples: id, Query: []Param{{"attempt", "integer", "the attempt (default: the task's current one)"}},
			Handler: s.taskTranscript, Responses: map[int]string{200: "Transcript"}},
		{Method: "GET", Path: "/v1/runs/{run_id}/log", Auth: Admin, Summary: "A verification run's log.",
			Examples: map[string]string{"run_id": "T-1-a1"}, Handler: s.runLog, Responses: map[int]string{200: "text/plain"}},
		{Method: "POST", Path: "/v1/plans", Auth: Admin, Summary: "Submit a plan: its tasks (ids <plan>:task-<n>) are queued in order, with dependencies.",
			Request: "SubmitPlan", Handler: s.submitPlan, Responses: map[int]string{201: "Plan"}},
		{Method: "GET", Path: "/v1/plans/{id}", Auth: Admin, Summary: "A plan, its tasks, and its retry summary once it ended.",
			Examples: map[string]string{"id": "03-01"}, Handler: s.getPlan, Responses: map[int]string{200: "Plan"}},
		{Method: "GET", Path: "/v1/stats", Auth: Admin, Summary: "The retry summary over every task, and the retry state.",
			Handler: s.stats, Responses: map[int]string{200: "Stats"}},
		{Method: "GET", Path: "/v1/stats/daily", Auth: Admin, Summary: "The numbers of each UTC day, oldest first: tasks ended, first-attempt successes, retried, escalations, failures by type, cost.",
			Query:   []Param{{"days", "integer", "how many days, today included (default 30, at most 366)"}},
			Handler: s.dailyStats, Responses: map[int]string{200: "DailyStats"}},
		{Method: "GET", Path: "/v1/logs/retry", Auth: Admin, Summary: "retry.log (format=text, default) or retry.jsonl (format=jsonl).",
			Query:   []Param{{"format", "string", "text or jsonl"}, {"tail", "integer", "only the last n lines"}},
			Handler: s.retryLog, Responses: map[int]string{200: "text/plain"}},
	}
}

// taskDo runs fn on the loop and answers with the task it returns.
func (s *Server) taskDo(w http.ResponseWriter, r *http.Request, status int, fn func(c *core.State, now time.Time) (core.Task, error)) error {
	v, err := do(r.Context(), s, func(c *core.State, now time.Time) (TaskView, error) {
		t, err := fn(c, now)
		if err != nil {
			return TaskView{}, err
		}
		return taskView(c, t), nil
	})
	if err != nil {
		return err
	}
	if status == http.StatusCreated {
		w.Header().Set("Location", "/v1/tasks/"+v.ID)
	}
	WriteJSON(w, status, v)
	return nil
}

func (s *Server) submitTask(w http.ResponseWriter, r *http.Request) error {
	var req submitTaskRequest
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	return s.taskDo(w, r, http.StatusCreated, func(c *core.State, now time.Time) (core.Task, error) {
		return c.SubmitTask(now, req.spec())
	})
}

// Task list pages.
const (
	// maxTaskPage bounds ?limit= of GET /v1/tasks.
	maxTaskPage = 1000
	// briefDescription bounds a brief task's description, in runes.
	briefDescription = 200
)

// TaskBrief is a task in a list (GET /v1/tasks?view=brief): what a row of
// the page shows, a few hundred bytes whatever the task's history.
type TaskBrief struct {
	ID string `json:"id"`
	// Description is the description's first line, at most 200 runes.
	Description string         `json:"description"`
	State       core.TaskState `json:"state"`
	Phase       *core.Phase    `json:"phase"`
	DryRun      bool           `json:"dry_run"`
	Agent       string         `json:"agent,omitempty"`
	Position    *int           `json:"position"`
	Attempt     int            `json:"attempt"`
	MaxAttempts int            `json:"max_attempts"`
	Milestone   string         `json:"milestone"`
	PlanID      string         `json:"plan_id,omitempty"`
	CostUSD     float64        `json:"cost_usd"`
	CreatedAt   time.Time      `json:"created_at"`
	StartedAt   *time.Time     `json:"started_at"`
	FinishedAt  *time.Time     `json:"finished_at"`
}

func taskBrief(t core.Task, position, maxAttempts int) TaskBrief {
	b := TaskBrief{
		ID: t.ID, Description: firstLine(t.Description, briefDescription), State: t.State, DryRun: t.DryRun, Agent: t.Agent,
		Attempt: t.Attempt, MaxAttempts: maxAttempts, Milestone: t.Milestone, PlanID: t.PlanID, CostUSD: t.Usage.CostUSD,
		CreatedAt: t.CreatedAt, StartedAt: timePtr(t.StartedAt), FinishedAt: timePtr(t.FinishedAt),
	}
	if t.Phase != "" && t.State == core.Running {
		p := t.Phase
		b.Phase = &p
	}
	if position > 0 {
		b.Position = &position
	}
	return b
}

// firstLine is s's first non-empty line, cut to n runes with "…".
func firstLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if r := []rune(s); len(r) > n {
		s = string(r[:n]) + "…"
	}
	return s
}

// taskCursor is the opaque ?cursor= of a task page: the key of the last
// task of the page before.
func taskCursor(k core.TaskKey) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(k.CreatedAt.UnixNano(), 10) + "|" + k.ID))
}

func parseTaskCursor(s string) (*core.TaskKey, error) {
	bad := invalidf("cursor %q: pass the next of a previous page", s)
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, bad
	}
	ns, id, ok := strings.Cut(string(b), "|")
	n, err := strconv.ParseInt(ns, 10, 64)
	if !ok || err != nil || id == "" {
		return nil, bad
	}
	return &core.TaskKey{CreatedAt: time.Unix(0, n), ID: id}, nil
}

func (s *Server) listTasks(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r, "state", "limit", "cursor", "order", "view"); err != nil {
		return err
	}
	qs := r.URL.Query()
	var q core.TaskQuery
	if v := qs.Get("state"); v != "" {
		for st := range strings.SplitSeq(v, ",") {
			state := core.TaskState(strings.TrimSpace(st))
			if !validTaskState(state) {
				return invalidf("state %q: must be one of queued, awaiting_ack, clarifying, running, escalated, blocked, proposed, success, unverified, cancelled, stuck, skipped, aborted, failed (several: comma-separated)", state)
			}
			q.States = append(q.States, state)
		}
	}
	limit, err := uintParam(r, "limit", 0)
	if err != nil {
		return err
	}
	if qs.Has("limit") && (limit == 0 || limit > maxTaskPage) {
		return invalidf("limit: from 1 to %d, got %d", maxTaskPage, limit)
	}
	q.Limit = int(limit)
	switch qs.Get("order") {
	case "", "oldest":
	case "newest":
		q.Newest = true
	default:
		return invalidf("order %q: oldest (the default) or newest", qs.Get("order"))
	}
	brief := false
	switch qs.Get("view") {
	case "", "full":
	case "brief":
		brief = true
	default:
		return invalidf("view %q: full (the default) or brief", qs.Get("view"))
	}
	if v := qs.Get("cursor"); v != "" {
		if q.After, err = parseTaskCursor(v); err != nil {
			return err
		}
	}
	var tasks any
	var page core.TaskPage
	if err := s.read(func(c *core.State) {
		page = c.TaskPage(q)
		if brief {
			out := make([]TaskBrief, 0, len(page.Tasks))
			hardStop := c.Policies().Loop.HardStop
			for i, t := range page.Tasks {
				out = append(out, taskBrief(t, page.Positions[i], hardStop))
			}
			tasks = out
			return
		}
		out := make([]TaskView, 0, len(page.Tasks))
		for i, t := range page.Tasks {
			out = append(out, taskViewAt(c, t, page.Positions[i]))
		}
		tasks = out
	}); err != nil {
		return err
	}
	next := ""
	if page.More {
		next = taskCursor(page.Tasks[len(page.Tasks)-1].Key())
	}
	WriteJSON(w, http.StatusOK, map[string]any{"tasks": tasks, "next": next, "total": page.Total, "counts": page.Counts})
	return nil
}

func validTaskState(s core.TaskState) bool {
	switch s {
	case core.Queued, core.AwaitingAck, core.TaskClarifying, core.Running, core.Escalated, core.Blocked, core.Proposed,
		core.Success, core.Unverified, core.TaskCancelled, core.Stuck, core.Skipped, core.Aborted, core.TaskFailed:
		return true
	}
	return false
}

func (s *Server) findTask(id string) (TaskView, error) {
	var v TaskView
	var found bool
	if err := s.read(func(c *core.State) {
		if t, ok := c.Task(id); ok {
			v, found = taskView(c, t), true
		}
	}); err != nil {
		return v, err
	}
	if !found {
		return v, notFoundf("no task %q", id)
	}
	return v, nil
}

func (s *Server) getTask(w http.ResponseWriter, r *http.Request) error {
	v, err := s.findTask(r.PathValue("id"))
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) queue(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r); err != nil {
		return err
	}
	type entry struct {
		ID          string `json:"id"`
		Position    int    `json:"position"`
		Description string `json:"description"`
	}
	out := []entry{}
	if err := s.read(func(c *core.State) {
		for i, t := range c.Queue() {
			out = append(out, entry{ID: t.ID, Position: i + 1, Description: t.Description})
		}
	}); err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, map[string]any{"tasks": out})
	return nil
}

func (s *Server) cancelTask(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	type res struct {
		removed bool
		view    TaskView
	}
	v, err := do(r.Context(), s, func(c *core.State, now time.Time) (res, error) {
		t, removed, err := c.CancelTask(now, id)
		if err != nil || removed {
			return res{removed: removed}, err
		}
		return res{view: taskView(c, t)}, nil
	})
	if err != nil {
		return err
	}
	if v.removed {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	WriteJSON(w, http.StatusOK, v.view)
	return nil
}

func (s *Server) clarifyTask(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Answers []string `json:"answers"`
	}
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	id := r.PathValue("id")
	return s.taskDo(w, r, http.StatusOK, func(c *core.State, now time.Time) (core.Task, error) {
		return c.ClarifyTask(now, id, req.Answers)
	})
}

func (s *Server) respondTask(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Action      string `json:"action"`
		Instruction string `json:"instruction"`
	}
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	// "fix: <instruction>" in the action itself is accepted too.
	if rest, ok := strings.CutPrefix(req.Action, "fix:"); ok && req.Instruction == "" {
		req.Action, req.Instruction = core.RespondFix, strings.TrimSpace(rest)
	}
	id := r.PathValue("id")
	return s.taskDo(w, r, http.StatusOK, func(c *core.State, now time.Time) (core.Task, error) {
		return c.Respond(now, id, req.Action, req.Instruction)
	})
}

func (s *Server) taskDiff(w http.ResponseWriter, r *http.Request) error {
	v, err := s.findTask(r.PathValue("id"))
	if err != nil {
		return err
	}
	if v.Proposal == nil || v.State != core.Proposed {
		return Errorf(CodeConflict, "task %s is %s: only a proposed dry run has a diff", v.ID, v.State)
	}
	b, err := os.ReadFile(filepath.Join(s.runsDir, v.Proposal.RunID, "diff.patch"))
	if err != nil {
		return notFoundf("the diff of %s is gone: %v", v.ID, err)
	}
	w.Header().Set("Content-Type", "text/x-diff; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
	return nil
}

func (s *Server) taskTranscript(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r, "attempt"); err != nil {
		return err
	}
	v, err := s.findTask(r.PathValue("id"))
	if err != nil {
		return err
	}
	attempt := v.Attempt
	if a := r.URL.Query().Get("attempt"); a != "" {
		n, err := strconv.Atoi(a)
		if err != nil || n < 1 {
			return invalidf("attempt %q: must be a number from 1", a)
		}
		if n > v.Attempt {
			return notFoundf("task %s has had %d attempt(s), not %d", v.ID, v.Attempt, n)
		}
		attempt = n
	}
	if attempt == 0 {
		return notFoundf("task %s has not started", v.ID)
	}
	run := core.RunID(v.ID, attempt)
	entries := []json.RawMessage{}
	b, err := os.ReadFile(filepath.Join(s.runsDir, run, "transcript.jsonl"))
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) != "" && json.Valid([]byte(l)) {
			entries = append(entries, json.RawMessage(l))
		}
	}
	WriteJSON(w, http.StatusOK, map[string]any{"task_id": v.ID, "attempt": attempt, "run_id": run, "entries": entries})
	return nil
}

func (s *Server) applyTask(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	// Refuse at once, not when the task's turn in the queue comes, when
	// the user edited what the diff touches (the apply itself checks
	// again).
	if v, err := s.findTask(id); err == nil && v.State == core.Proposed && v.Proposal != nil && s.opts.EditedSince != nil {
		edited, err := s.opts.EditedSince(r.Context(), id, v.Proposal.Files)
		if err != nil {
			s.log.Warn("checking the working tree before an apply failed; the apply checks again", "task", id, "err", err)
		}
		if len(edited) > 0 {
			return Errorf(CodeConflict, "the working tree changed since dry run %s started, in %s: applying its diff would overwrite those edits. "+
				"Commit, stash or undo them, then apply again (or discard the dry run)", id, strings.Join(edited, ", "))
		}
	}
	return s.taskDo(w, r, http.StatusOK, func(c *core.State, now time.Time) (core.Task, error) { return c.ApplyTask(now, id) })
}

func (s *Server) discardTask(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	return s.taskDo(w, r, http.StatusOK, func(c *core.State, now time.Time) (core.Task, error) { return c.DiscardTask(now, id) })
}

func (s *Server) resumeTask(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	return s.taskDo(w, r, http.StatusCreated, func(c *core.State, now time.Time) (core.Task, error) { return c.ResumeTask(now, id) })
}

func (s *Server) runLog(w http.ResponseWriter, r *http.Request) error {
	run := r.PathValue("run_id")
	if !verify.ValidRunID(run) {
		return invalidf("run id %q is not valid", run)
	}
	path, err := verify.LogFile(s.runsDir, run)
	if err != nil {
		return notFoundf("no log for run %s", run)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return notFoundf("no log for run %s", run)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
	return nil
}

type planTaskRequest struct {
	submitTaskRequest
	DependsOn []int `json:"depends_on"`
}

func (s *Server) submitPlan(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		ID    string            `json:"id"`
		Tasks []planTaskRequest `json:"tasks"`
	}
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	specs := make([]core.PlanTaskSpec, len(req.Tasks))
	for i, t := range req.Tasks {
		specs[i] = core.PlanTaskSpec{TaskSpec: t.spec(), DependsOn: t.DependsOn}
	}
	v, err := do(r.Context(), s, func(c *core.State, now time.Time) (map[string]any, error) {
		p, err := c.SubmitPlan(now, req.ID, specs)
		if err != nil {
			return nil, err
		}
		return planView(c, p), nil
	})
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/v1/plans/"+req.ID)
	WriteJSON(w, http.StatusCreated, v)
	return nil
}

func planView(c *core.State, p core.Plan) map[string]any {
	tasks := []TaskView{}
	for _, id := range p.Tasks {
		if t, ok := c.Task(id); ok {
			tasks = append(tasks, taskView(c, t))
		}
	}
	return map[string]any{"id": p.ID, "state": p.State, "tasks": tasks, "summary": p.Summary, "created_at": p.CreatedAt, "finished_at": timePtr(p.FinishedAt)}
}

func (s *Server) getPlan(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	var v map[string]any
	if err := s.read(func(c *core.State) {
		if p, ok := c.Plan(id); ok {
			v = planView(c, p)
		}
	}); err != nil {
		return err
	}
	if v == nil {
		return notFoundf("no plan %q", id)
	}
	WriteJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) stats(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r); err != nil {
		return err
	}
	var out map[string]any
	if err := s.read(func(c *core.State) {
		// One pass over the deliveries; keep returns false, so none is copied.
		failed, failedDeliveries := 0, 0
		c.Deliveries(func(d *core.Delivery) bool {
			if d.State == core.Failed {
				if d.Type == core.TypeInstruction {
					failed++
				} else {
					failedDeliveries++
				}
			}
			return false
		})
		out = map[string]any{
			"summary":             c.RetrySummary("all tasks", nil),
			"retry_state":         c.RetryStateView(),
			"failed_instructions": failed,
			"failed_deliveries":   failedDeliveries,
			"usage":               c.UsageTotals(nil),
		}
	}); err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, out)
	return nil
}

// Days of GET /v1/stats/daily.
const (
	defaultStatsDays = 30
	maxStatsDays     = 366
)

func (s *Server) dailyStats(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r, "days"); err != nil {
		return err
	}
	days, err := uintParam(r, "days", defaultStatsDays)
	if err != nil {
		return err
	}
	if days == 0 || days > maxStatsDays {
		return invalidf("days: from 1 to %d, got %d", maxStatsDays, days)
	}
	now := time.Now().UTC()
	var out []core.DayNumbers
	if err := s.read(func(c *core.State) { out = c.Daily(now.AddDate(0, 0, -int(days-1)), now) }); err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, map[string]any{"days": out})
	return nil
}

func (s *Server) retryLog(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r, "format", "tail"); err != nil {
		return err
	}
	q := r.URL.Query()
	name := "retry.log"
	switch q.Get("format") {
	case "", "text":
	case "jsonl":
		name = "retry.jsonl"
	default:
		return invalidf("format %q: must be text or jsonl", q.Get("format"))
	}
	tail := 0
	if v := q.Get("tail"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return invalidf("tail %q: must be a number of lines", v)
		}
		tail = n
	}
	b, err := os.ReadFile(filepath.Join(s.logsDir, name))
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	if tail > 0 {
		lines := strings.SplitAfter(string(b), "\n")
		if n := len(lines); n > 0 && lines[n-1] == "" {
			lines = lines[:n-1]
		}
		if len(lines) > tail {
			lines = lines[len(lines)-tail:]
		}
		b = []byte(strings.Join(lines, ""))
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
	return nil
}
