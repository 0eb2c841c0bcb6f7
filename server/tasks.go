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
	"wilco/wire"
)

// Spec is what core makes a task of: the one reading of a submitted task,
// the API's and intake's.
func Spec(r wire.SubmitTask) core.TaskSpec {
	return core.TaskSpec{ID: r.ID, Description: r.Description, Constraints: r.Constraints, NonGoals: r.NonGoals,
		Boundaries: r.Boundaries, AcceptanceCriteria: r.AcceptanceCriteria, DryRun: r.DryRun, Agent: r.Agent, Package: r.Package, Land: string(r.Land), KeepWorktree: r.KeepWorktree}
}

// LandsAsCommit reports whether a task of reqs lands as a commit in the
// checkout, land.how being how: the core then wants the checkout's branch
// (TaskSpec.Checkout), to refuse a task that would commit elsewhere.
func LandsAsCommit(how string, reqs ...wire.SubmitTask) bool {
	for _, q := range reqs {
		if q.Land == wire.LandCommit || q.Land == "" && how == core.LandCommit {
			return true
		}
	}
	return false
}

// checkout is the branch the working tree has checked out, for the core
// to refuse a task that lands as a commit elsewhere; nil when no task of
// reqs lands as a commit (git is not asked) or it cannot be told.
func (s *Server) checkout(r *http.Request, reqs ...wire.SubmitTask) *string {
	if s.opts.Checkout == nil {
		return nil
	}
	how := ""
	if s.opts.Config != nil {
		how = s.opts.Config.Land.How
	}
	if !LandsAsCommit(how, reqs...) {
		return nil
	}
	b, ok := s.opts.Checkout(r.Context())
	if !ok {
		return nil
	}
	return &b
}

func (s *Server) taskRoutes() []Route {
	id := map[string]string{"id": "T-1"}
	return []Route{
		{Method: "POST", Path: "/v1/tasks", Auth: Admin, Summary: "Submit a task: it is queued (strict FIFO) and starts when nothing holds the queue.",
			Request: wire.SubmitTask{}, Handler: s.submitTask, Responses: map[int]any{201: wire.Task{}}},
		{Method: "GET", Path: "/v1/tasks", Auth: Admin, Summary: "List tasks, oldest first (or newest first), all of them or a page at a time, with the count of tasks in each state.",
			Query: []Param{{"state", "string", "only tasks in this state (several: comma-separated)"},
				{"limit", "integer", "a page of at most this many tasks (1 to 1000); next is the cursor of the page after"},
				{"cursor", "string", "the next of the previous page"}, {"order", "string", "oldest (the default) or newest first"},
				{"view", "string", "full (the default: Task) or brief (TaskBrief: what a list shows)"}},
			Handler: s.listTasks, Responses: map[int]any{200: []any{wire.TaskList{}, wire.TaskBriefList{}}}},
		{Method: "GET", Path: "/v1/tasks/{id}", Auth: Admin, Summary: "One task (404 once a queued task was cancelled).",
			Examples: id, Handler: s.getTask, Responses: map[int]any{200: wire.Task{}}},
		{Method: "GET", Path: "/v1/queue", Auth: Admin, Summary: "The queued tasks, position 1 first.",
			Handler: s.queue, Responses: map[int]any{200: wire.Queue{}}},
		{Method: "POST", Path: "/v1/tasks/{id}/cancel", Auth: Admin, Summary: "Cancel: a queued task is removed (204), unless it was made from a forge issue (it ends cancelled, 200: its issue is not taken again); a running one is stopped, its working tree kept as it is.",
			Examples: id, Handler: s.cancelTask, Responses: map[int]any{200: wire.Task{}, 204: nil}},
		{Method: "POST", Path: "/v1/tasks/{id}/clarify", Auth: Admin, Summary: "Answer the agent's questions.",
			Examples: id, Request: wire.Clarify{}, Handler: s.clarifyTask, Responses: map[int]any{200: wire.Task{}}},
		{Method: "POST", Path: "/v1/tasks/{id}/respond", Auth: Admin, Summary: "Answer an escalated or blocked task: retry, fix (with an instruction), skip or abort.",
			Examples: id, Request: wire.Respond{}, Handler: s.respondTask, Responses: map[int]any{200: wire.Task{}}},
		{Method: "GET", Path: "/v1/tasks/{id}/diff", Auth: Admin, Summary: "A proposed dry run's unified diff.",
			Examples: id, Handler: s.taskDiff, Responses: map[int]any{200: "text/x-diff"}},
		{Method: "POST", Path: "/v1/tasks/{id}/apply", Auth: Admin, Summary: "Apply a proposed dry run: it is queued, then its diff is written and the full debug loop runs.",
			Examples: id, Handler: s.applyTask, Responses: map[int]any{200: wire.Task{}}},
		{Method: "POST", Path: "/v1/tasks/{id}/discard", Auth: Admin, Summary: "Discard a proposed dry run.",
			Examples: id, Handler: s.discardTask, Responses: map[int]any{200: wire.Task{}}},
		{Method: "POST", Path: "/v1/tasks/{id}/resume", Auth: Admin, Summary: "Start a new task from a stuck task's report.",
			Examples: id, Handler: s.resumeTask, Responses: map[int]any{201: wire.Task{}}},
		{Method: "GET", Path: "/v1/tasks/{id}/transcript", Auth: Admin, Summary: "An attempt's conversation with its agent: the prompt, the assistant's text, each tool call with its input and result (exec agents; bounded in size).",
			Examples: id, Query: []Param{{"attempt", "integer", "the attempt (default: the task's current one)"}},
			Handler: s.taskTranscript, Responses: map[int]any{200: wire.Transcript{}}},
		{Method: "GET", Path: "/v1/runs/{run_id}/log", Auth: Admin, Summary: "A verification run's log.",
			Examples: map[string]string{"run_id": "T-1-a1"}, Handler: s.runLog, Responses: map[int]any{200: "text/plain"}},
		{Method: "POST", Path: "/v1/plans", Auth: Admin, Summary: "Submit a plan: its tasks (ids <plan>:task-<n>) are queued in order, with dependencies.",
			Request: wire.SubmitPlan{}, Handler: s.submitPlan, Responses: map[int]any{201: wire.Plan{}}},
		{Method: "GET", Path: "/v1/plans/{id}", Auth: Admin, Summary: "A plan, its tasks, and its retry summary once it ended.",
			Examples: map[string]string{"id": "03-01"}, Handler: s.getPlan, Responses: map[int]any{200: wire.Plan{}}},
		{Method: "GET", Path: "/v1/stats", Auth: Admin, Summary: "The retry summary over every task, and the retry state.",
			Handler: s.stats, Responses: map[int]any{200: wire.Stats{}}},
		{Method: "GET", Path: "/v1/stats/daily", Auth: Admin, Summary: "The numbers of each UTC day, oldest first: tasks ended, first-attempt successes, retried, escalations, failures by type, cost.",
			Query:   []Param{{"days", "integer", "how many days, today included (default 30, at most 366)"}},
			Handler: s.dailyStats, Responses: map[int]any{200: wire.DailyStats{}}},
		{Method: "GET", Path: "/v1/logs/retry", Auth: Admin, Summary: "retry.log (format=text, default) or retry.jsonl (format=jsonl).",
			Query:   []Param{{"format", "string", "text or jsonl"}, {"tail", "integer", "only the last n lines"}},
			Handler: s.retryLog, Responses: map[int]any{200: "text/plain"}},
	}
}

// taskDo runs fn on the loop and answers with the task it returns.
func (s *Server) taskDo(w http.ResponseWriter, r *http.Request, status int, fn func(c *core.State, now time.Time) (core.Task, error)) error {
	v, err := do(r.Context(), s, func(c *core.State, now time.Time) (wire.Task, error) {
		t, err := fn(c, now)
		if err != nil {
			return wire.Task{}, err
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
	var req wire.SubmitTask
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	sp := Spec(req)
	sp.Checkout = s.checkout(r, req)
	return s.taskDo(w, r, http.StatusCreated, func(c *core.State, now time.Time) (core.Task, error) {
		return c.SubmitTask(now, sp)
	})
}

// Task list pages.
const (
	// maxTaskPage bounds ?limit= of GET /v1/tasks.
	maxTaskPage = 1000
	// briefDescription bounds a brief task's description, in runes.
	briefDescription = 200
)

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
	var full wire.TaskList
	var briefs wire.TaskBriefList
	var page core.TaskPage
	if err := s.read(func(c *core.State) {
		page = c.TaskPage(q)
		if brief {
			briefs.Tasks = make([]wire.TaskBrief, 0, len(page.Tasks))
			hardStop := c.Policies().Loop.HardStop
			for i, t := range page.Tasks {
				briefs.Tasks = append(briefs.Tasks, taskBrief(t, page.Positions[i], hardStop))
			}
			return
		}
		full.Tasks = make([]wire.Task, 0, len(page.Tasks))
		for i, t := range page.Tasks {
			full.Tasks = append(full.Tasks, taskViewAt(c, t, page.Positions[i]))
		}
	}); err != nil {
		return err
	}
	next := ""
	if page.More {
		next = taskCursor(page.Tasks[len(page.Tasks)-1].Key())
	}
	counts := map[string]int{}
	for st, n := range page.Counts {
		counts[string(st)] = n
	}
	if brief {
		briefs.Next, briefs.Total, briefs.Counts = next, page.Total, counts
		WriteJSON(w, http.StatusOK, briefs)
		return nil
	}
	full.Next, full.Total, full.Counts = next, page.Total, counts
	WriteJSON(w, http.StatusOK, full)
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

func (s *Server) findTask(id string) (wire.Task, error) {
	var v wire.Task
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
	out := wire.Queue{Tasks: []wire.QueueEntry{}, Working: []wire.SlotEntry{}, Landing: []wire.QueueEntry{}}
	if err := s.read(func(c *core.State) {
		for i, t := range c.Queue() {
			out.Tasks = append(out.Tasks, wire.QueueEntry{ID: t.ID, Position: i + 1, Description: t.Description})
		}
		out.Slots = c.Slots()
		for _, t := range c.Holding() {
			out.Working = append(out.Working, wire.SlotEntry{ID: t.ID, State: wire.TaskState(t.State), Phase: phase(t), Agent: t.Agent, Branch: t.Branch, Worktree: t.Worktree})
		}
		for i, t := range c.LandQueue() {
			out.Landing = append(out.Landing, wire.QueueEntry{ID: t.ID, Position: i + 1, Description: t.Description})
		}
	}); err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) cancelTask(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	type res struct {
		removed bool
		view    wire.Task
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
	var req wire.Clarify
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	id := r.PathValue("id")
	return s.taskDo(w, r, http.StatusOK, func(c *core.State, now time.Time) (core.Task, error) {
		return c.ClarifyTask(now, id, req.Answers)
	})
}

func (s *Server) respondTask(w http.ResponseWriter, r *http.Request) error {
	var req wire.Respond
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	// "fix: <instruction>" in the action itself is accepted too.
	action := string(req.Action)
	if rest, ok := strings.CutPrefix(action, "fix:"); ok && req.Instruction == "" {
		action, req.Instruction = core.RespondFix, strings.TrimSpace(rest)
	}
	id := r.PathValue("id")
	return s.taskDo(w, r, http.StatusOK, func(c *core.State, now time.Time) (core.Task, error) {
		return c.Respond(now, id, action, req.Instruction)
	})
}

func (s *Server) taskDiff(w http.ResponseWriter, r *http.Request) error {
	v, err := s.findTask(r.PathValue("id"))
	if err != nil {
		return err
	}
	if v.Proposal == nil || v.State != wire.TaskProposed {
		return Errorf(wire.CodeConflict, "task %s is %s: only a proposed dry run has a diff", v.ID, v.State)
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
	out := wire.Transcript{TaskID: v.ID, Attempt: attempt, RunID: run, Entries: []wire.TranscriptEntry{}}
	b, err := os.ReadFile(filepath.Join(s.runsDir, run, "transcript.jsonl"))
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		var e wire.TranscriptEntry
		if strings.TrimSpace(l) != "" && json.Unmarshal([]byte(l), &e) == nil {
			out.Entries = append(out.Entries, e)
		}
	}
	WriteJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) applyTask(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	// Refuse at once, not when the task's turn in the queue comes, when
	// the user edited what the diff touches (the apply itself checks
	// again).
	if v, err := s.findTask(id); err == nil && v.State == wire.TaskProposed && v.Proposal != nil && s.opts.EditedSince != nil {
		edited, err := s.opts.EditedSince(r.Context(), id, v.Proposal.Files)
		if err != nil {
			s.log.Warn("checking the working tree before an apply failed; the apply checks again", "task", id, "err", err)
		}
		if len(edited) > 0 {
			return Errorf(wire.CodeConflict, "the working tree changed since dry run %s started, in %s: applying its diff would overwrite those edits. "+
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

func (s *Server) submitPlan(w http.ResponseWriter, r *http.Request) error {
	var req wire.SubmitPlan
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	reqs := make([]wire.SubmitTask, len(req.Tasks))
	for i, t := range req.Tasks {
		reqs[i] = t.SubmitTask
	}
	branch := s.checkout(r, reqs...)
	specs := make([]core.PlanTaskSpec, len(req.Tasks))
	for i, t := range req.Tasks {
		specs[i] = core.PlanTaskSpec{TaskSpec: Spec(t.SubmitTask), DependsOn: t.DependsOn}
		specs[i].Checkout = branch
	}
	v, err := do(r.Context(), s, func(c *core.State, now time.Time) (wire.Plan, error) {
		p, err := c.SubmitPlan(now, req.ID, specs)
		if err != nil {
			return wire.Plan{}, err
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

func (s *Server) getPlan(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	var v *wire.Plan
	if err := s.read(func(c *core.State) {
		if p, ok := c.Plan(id); ok {
			view := planView(c, p)
			v = &view
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
	var out wire.Stats
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
		out = wire.Stats{Summary: retrySummary(c.RetrySummary("all tasks", nil)), RetryState: retryState(c.RetryStateView()),
			FailedInstructions: failed, FailedDeliveries: failedDeliveries, Usage: usageTotals(c.UsageTotals(nil))}
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
	WriteJSON(w, http.StatusOK, wire.DailyStats{Days: dayNumbers(out)})
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
