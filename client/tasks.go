package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Submit queues a task: POST /v1/tasks.
func (c *Client) Submit(ctx context.Context, t TaskRequest) (*Task, error) {
	return one[Task](ctx, c, request{method: http.MethodPost, path: "/v1/tasks", body: t})
}

// Tasks lists the tasks, of one state if state is not empty:
// GET /v1/tasks?state=.
func (c *Client) Tasks(ctx context.Context, state string) ([]Task, error) {
	var q url.Values
	if state != "" {
		q = url.Values{"state": {state}}
	}
	var out struct {
		Tasks []Task `json:"tasks"`
	}
	_, err := c.call(ctx, request{method: http.MethodGet, path: "/v1/tasks", query: q}, &out)
	return out.Tasks, err
}

// Task returns one task: GET /v1/tasks/{id}. A queued task that was
// cancelled is not found.
func (c *Client) Task(ctx context.Context, id string) (*Task, error) {
	return one[Task](ctx, c, request{method: http.MethodGet, path: "/v1/tasks/" + seg(id)})
}

// Queue lists the queued tasks, position 1 first: GET /v1/queue.
func (c *Client) Queue(ctx context.Context) ([]QueueEntry, error) {
	var out struct {
		Tasks []QueueEntry `json:"tasks"`
	}
	_, err := c.call(ctx, request{method: http.MethodGet, path: "/v1/queue"}, &out)
	return out.Tasks, err
}

// taskAction posts to /v1/tasks/{id}/{action} and decodes the task the
// server answers with; it returns nil for an answer without a body.
func (c *Client) taskAction(ctx context.Context, id, action string, body any) (*Task, error) {
	if body == nil {
		body = struct{}{}
	}
	var out *Task
	status, err := c.call(ctx, request{method: http.MethodPost, path: "/v1/tasks/" + seg(id) + "/" + action, body: body}, &out)
	if err != nil {
		return nil, err
	}
	if status == http.StatusNoContent {
		return nil, nil
	}
	return out, nil
}

// Cancel cancels a task: POST /v1/tasks/{id}/cancel. A queued task is
// removed and leaves no trace: Cancel then returns a nil task.
func (c *Client) Cancel(ctx context.Context, id string) (*Task, error) {
	return c.taskAction(ctx, id, "cancel", nil)
}

// Clarify answers an agent's questions about a task:
// POST /v1/tasks/{id}/clarify.
func (c *Client) Clarify(ctx context.Context, id string, answers []string) (*Task, error) {
	if answers == nil {
		answers = []string{}
	}
	return c.taskAction(ctx, id, "clarify", struct {
		Answers []string `json:"answers"`
	}{answers})
}

// Respond answers an escalated or blocked task: action is retry, skip,
// abort or fix (with an instruction): POST /v1/tasks/{id}/respond.
func (c *Client) Respond(ctx context.Context, id, action, instruction string) (*Task, error) {
	return c.taskAction(ctx, id, "respond", struct {
		Action      string `json:"action"`
		Instruction string `json:"instruction,omitempty"`
	}{action, instruction})
}

// Diff returns the unified diff of a dry run in state proposed:
// GET /v1/tasks/{id}/diff.
func (c *Client) Diff(ctx context.Context, id string) (string, error) {
	return c.text(ctx, request{method: http.MethodGet, path: "/v1/tasks/" + seg(id) + "/diff", accept: "text/x-diff"})
}

// Apply writes a dry run's diff into the working tree and queues the task
// for the full debug loop: POST /v1/tasks/{id}/apply.
func (c *Client) Apply(ctx context.Context, id string) (*Task, error) {
	return c.taskAction(ctx, id, "apply", nil)
}

// Discard drops a dry run's diff: POST /v1/tasks/{id}/discard.
func (c *Client) Discard(ctx context.Context, id string) (*Task, error) {
	return c.taskAction(ctx, id, "discard", nil)
}

// Resume starts a new task from a stuck task's report:
// POST /v1/tasks/{id}/resume.
func (c *Client) Resume(ctx context.Context, id string) (*Task, error) {
	return c.taskAction(ctx, id, "resume", nil)
}

// RunLog returns the saved log of one verification run:
// GET /v1/runs/{run_id}/log.
func (c *Client) RunLog(ctx context.Context, runID string) (string, error) {
	return c.text(ctx, request{method: http.MethodGet, path: "/v1/runs/" + seg(runID) + "/log", accept: "text/plain"})
}

// SubmitPlan submits a plan of tasks with dependencies: POST /v1/plans.
func (c *Client) SubmitPlan(ctx context.Context, p PlanRequest) (*Plan, error) {
	return one[Plan](ctx, c, request{method: http.MethodPost, path: "/v1/plans", body: p})
}

// Plan returns a plan, its tasks and its retry summary: GET /v1/plans/{id}.
func (c *Client) Plan(ctx context.Context, id string) (*Plan, error) {
	return one[Plan](ctx, c, request{method: http.MethodGet, path: "/v1/plans/" + seg(id)})
}

// Stats is GET /v1/stats: the retry summary over every task, the
// retry state, and the failed instructions and deliveries.
type Stats struct {
	Summary struct {
		TotalTasks          int `json:"total_tasks"`
		FirstAttemptSuccess int `json:"first_attempt_success"`
		RetriedTasks        int `json:"retried_tasks"`
		RetrySuccess        int `json:"retry_success"`
		Escalations         int `json:"escalations"`
		Skipped             int `json:"skipped"`
		Details             []struct {
			Task     string `json:"task"`
			Attempts int    `json:"attempts"`
			Result   string `json:"result"`
		} `json:"details"`
		FailurePatterns []struct {
			Pattern     string `json:"pattern"`
			Occurrences int    `json:"occurrences"`
		} `json:"failure_patterns"`
		Text string `json:"text"`
	} `json:"summary"`
	RetryState         json.RawMessage `json:"retry_state"`
	FailedInstructions int             `json:"failed_instructions"`
	FailedDeliveries   int             `json:"failed_deliveries"`
	// Usage is what the agents' turns cost, in all, per agent and per
	// (UTC) day.
	Usage struct {
		Total   Usage            `json:"total"`
		ByAgent map[string]Usage `json:"by_agent"`
		ByDay   map[string]Usage `json:"by_day"`
	} `json:"usage"`
}

// Usage is what agents' turns cost, as their CLIs reported it.
type Usage struct {
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CachedTokens int64   `json:"cached_tokens"`
	CostUSD      float64 `json:"cost_usd"`
	Turns        int     `json:"turns,omitempty"`
	Model        string  `json:"model,omitempty"`
	// Priced: the cost comes from wilco.yaml's prices.
	Priced bool `json:"priced,omitempty"`
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

// TranscriptEntry is one step of an attempt's conversation.
type TranscriptEntry struct {
	At    time.Time      `json:"at"`
	Kind  string         `json:"kind"`
	Text  string         `json:"text,omitempty"`
	Tool  string         `json:"tool,omitempty"`
	Input map[string]any `json:"input,omitempty"`
}

// Transcript is an attempt's conversation with its agent.
type Transcript struct {
	TaskID  string            `json:"task_id"`
	Attempt int               `json:"attempt"`
	RunID   string            `json:"run_id"`
	Entries []TranscriptEntry `json:"entries"`
}

// Transcript returns an attempt's conversation (attempt 0: the current
// one): GET /v1/tasks/{id}/transcript.
func (c *Client) Transcript(ctx context.Context, id string, attempt int) (*Transcript, error) {
	q := url.Values{}
	if attempt > 0 {
		q.Set("attempt", strconv.Itoa(attempt))
	}
	var t Transcript
	if _, err := c.call(ctx, request{method: http.MethodGet, path: "/v1/tasks/" + seg(id) + "/transcript", query: q}, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// Stats fills st from GET /v1/stats.
func (c *Client) Stats(ctx context.Context, st *Stats) error {
	return c.Do(ctx, http.MethodGet, "/v1/stats", nil, nil, st)
}
