package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"wilco/wire"
)

// Submit queues a task: POST /v1/tasks.
func (c *Client) Submit(ctx context.Context, t wire.SubmitTask) (*wire.Task, error) {
	return one[wire.Task](ctx, c, request{method: http.MethodPost, path: "/v1/tasks", body: t})
}

// Tasks lists the tasks, of one state if state is not empty:
// GET /v1/tasks?state=.
func (c *Client) Tasks(ctx context.Context, state string) ([]wire.Task, error) {
	var q url.Values
	if state != "" {
		q = url.Values{"state": {state}}
	}
	var out wire.TaskList
	_, err := c.call(ctx, request{method: http.MethodGet, path: "/v1/tasks", query: q}, &out)
	return out.Tasks, err
}

// Task returns one task: GET /v1/tasks/{id}. A queued task that was
// cancelled is not found.
func (c *Client) Task(ctx context.Context, id string) (*wire.Task, error) {
	return one[wire.Task](ctx, c, request{method: http.MethodGet, path: "/v1/tasks/" + seg(id)})
}

// Queue lists the queued tasks, position 1 first: GET /v1/queue.
func (c *Client) Queue(ctx context.Context) ([]wire.QueueEntry, error) {
	q, err := c.QueueView(ctx)
	return q.Tasks, err
}

// QueueView is the whole of GET /v1/queue: the queued tasks, and with
// tasks worked in parallel the slots, the tasks that hold them and the
// landing queue.
func (c *Client) QueueView(ctx context.Context) (wire.Queue, error) {
	var out wire.Queue
	_, err := c.call(ctx, request{method: http.MethodGet, path: "/v1/queue"}, &out)
	return out, err
}

// taskAction posts to /v1/tasks/{id}/{action} and decodes the task the
// server answers with; it returns nil for an answer without a body.
func (c *Client) taskAction(ctx context.Context, id, action string, body any) (*wire.Task, error) {
	if body == nil {
		body = struct{}{}
	}
	var out *wire.Task
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
func (c *Client) Cancel(ctx context.Context, id string) (*wire.Task, error) {
	return c.taskAction(ctx, id, "cancel", nil)
}

// Clarify answers an agent's questions about a task:
// POST /v1/tasks/{id}/clarify.
func (c *Client) Clarify(ctx context.Context, id string, answers []string) (*wire.Task, error) {
	if answers == nil {
		answers = []string{}
	}
	return c.taskAction(ctx, id, "clarify", wire.Clarify{Answers: answers})
}

// Respond answers an escalated or blocked task: action is retry, skip,
// abort or fix (with an instruction): POST /v1/tasks/{id}/respond.
func (c *Client) Respond(ctx context.Context, id string, action wire.Action, instruction string) (*wire.Task, error) {
	return c.taskAction(ctx, id, "respond", wire.Respond{Action: action, Instruction: instruction})
}

// Diff returns the unified diff of a dry run in state proposed:
// GET /v1/tasks/{id}/diff.
func (c *Client) Diff(ctx context.Context, id string) (string, error) {
	return c.text(ctx, request{method: http.MethodGet, path: "/v1/tasks/" + seg(id) + "/diff", accept: "text/x-diff"})
}

// Apply writes a dry run's diff into the working tree and queues the task
// for the full debug loop: POST /v1/tasks/{id}/apply.
func (c *Client) Apply(ctx context.Context, id string) (*wire.Task, error) {
	return c.taskAction(ctx, id, "apply", nil)
}

// Discard drops a dry run's diff: POST /v1/tasks/{id}/discard.
func (c *Client) Discard(ctx context.Context, id string) (*wire.Task, error) {
	return c.taskAction(ctx, id, "discard", nil)
}

// Resume starts a new task from a stuck task's report:
// POST /v1/tasks/{id}/resume.
func (c *Client) Resume(ctx context.Context, id string) (*wire.Task, error) {
	return c.taskAction(ctx, id, "resume", nil)
}

// RunLog returns the saved log of one verification run:
// GET /v1/runs/{run_id}/log.
func (c *Client) RunLog(ctx context.Context, runID string) (string, error) {
	return c.text(ctx, request{method: http.MethodGet, path: "/v1/runs/" + seg(runID) + "/log", accept: "text/plain"})
}

// SubmitPlan submits a plan of tasks with dependencies: POST /v1/plans.
func (c *Client) SubmitPlan(ctx context.Context, p wire.SubmitPlan) (*wire.Plan, error) {
	return one[wire.Plan](ctx, c, request{method: http.MethodPost, path: "/v1/plans", body: p})
}

// Plan returns a plan, its tasks and its retry summary: GET /v1/plans/{id}.
func (c *Client) Plan(ctx context.Context, id string) (*wire.Plan, error) {
	return one[wire.Plan](ctx, c, request{method: http.MethodGet, path: "/v1/plans/" + seg(id)})
}

// Transcript returns an attempt's conversation (attempt 0: the current
// one): GET /v1/tasks/{id}/transcript.
func (c *Client) Transcript(ctx context.Context, id string, attempt int) (*wire.Transcript, error) {
	q := url.Values{}
	if attempt > 0 {
		q.Set("attempt", strconv.Itoa(attempt))
	}
	var t wire.Transcript
	if _, err := c.call(ctx, request{method: http.MethodGet, path: "/v1/tasks/" + seg(id) + "/transcript", query: q}, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// Stats fills st from GET /v1/stats.
func (c *Client) Stats(ctx context.Context, st *wire.Stats) error {
	return c.Do(ctx, http.MethodGet, "/v1/stats", nil, nil, st)
}
