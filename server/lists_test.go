package server

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"wilco/core"
	"wilco/wire"
)

type taskListPage struct {
	Tasks  []wire.TaskBrief       `json:"tasks"`
	Next   string                 `json:"next"`
	Total  int                    `json:"total"`
	Counts map[core.TaskState]int `json:"counts"`
}

// GET /v1/tasks reads tens of thousands of tasks a page at a time: brief
// rows, newest first, a cursor, a filter of several states, the count of
// each state; without limit it answers every task as before.
func TestTaskListPagesBriefRowsWithACursorAndCounts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("alpha")
	long := strings.Repeat("word ", 100) + "\nsecond line"
	for i := range 25 {
		desc := fmt.Sprintf("task %d", i+1)
		if i == 24 {
			desc = long
		}
		b.must(201, b.call("POST", "/v1/tasks", adminToken, map[string]any{"description": desc}))
	}
	var p taskListPage
	b.must(200, b.call("GET", "/v1/tasks?view=brief&order=newest&limit=10", adminToken, nil), &p)
	if len(p.Tasks) != 10 || p.Tasks[0].ID != "T-25" || p.Tasks[9].ID != "T-16" || p.Next == "" || p.Total != 25 {
		t.Fatalf("first page: %d tasks, %s…, next %q, total %d", len(p.Tasks), p.Tasks[0].ID, p.Next, p.Total)
	}
	if p.Counts[core.AwaitingAck] != 1 || p.Counts[core.Queued] != 24 {
		t.Fatalf("counts %v", p.Counts)
	}
	if d := p.Tasks[0].Description; !strings.HasSuffix(d, "…") || len([]rune(d)) != briefDescription+1 || strings.Contains(d, "second line") {
		t.Fatalf("a long description in a brief row: %q", d)
	}
	if pos := p.Tasks[0].Position; pos == nil || *pos != 24 || p.Tasks[0].MaxAttempts != core.DefaultHardStop {
		t.Fatalf("T-25's position %v, max attempts %d", pos, p.Tasks[0].MaxAttempts)
	}
	var ids []string
	for p.Next != "" {
		for _, tk := range p.Tasks {
			ids = append(ids, tk.ID)
		}
		next := p.Next
		p = taskListPage{}
		b.must(200, b.call("GET", "/v1/tasks?view=brief&order=newest&limit=10&cursor="+next, adminToken, nil), &p)
	}
	for _, tk := range p.Tasks {
		ids = append(ids, tk.ID)
	}
	unique := slices.Clone(ids)
	slices.Sort(unique)
	if len(ids) != 25 || ids[0] != "T-25" || ids[24] != "T-1" || len(slices.Compact(unique)) != 25 {
		t.Fatalf("pages gave %v", ids)
	}

	b.must(200, b.call("GET", "/v1/tasks?view=brief&state=awaiting_ack,running&limit=5", adminToken, nil), &p)
	if len(p.Tasks) != 1 || p.Tasks[0].ID != "T-1" || p.Total != 1 || p.Next != "" {
		t.Fatalf("active tasks: %+v", p)
	}
	var all struct {
		Tasks []wire.Task `json:"tasks"`
	}
	b.must(200, b.call("GET", "/v1/tasks", adminToken, nil), &all)
	if len(all.Tasks) != 25 || all.Tasks[0].ID != "T-1" || all.Tasks[24].Position == nil || *all.Tasks[24].Position != 24 {
		t.Fatalf("every task, full: %d", len(all.Tasks))
	}
	for _, bad := range []string{"limit=0", "limit=1001", "order=sideways", "view=tiny", "cursor=%21%21", "state=queued,nope"} {
		if r := b.call("GET", "/v1/tasks?"+bad, adminToken, nil); r.status != 400 {
			t.Errorf("?%s: %d %s", bad, r.status, r.body)
		}
	}
}

// GET /v1/operations lists the operations; ?limit= keeps the newest.
// GET /v1/instructions?limit= the same for instructions.
func TestOperationAndInstructionListsKeepTheNewest(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("alpha")
	for range 3 {
		b.must(201, b.call("POST", "/v1/operations", adminToken, map[string]any{"operation": "restart", "agents": []string{"alpha"}}))
		b.must(201, b.call("POST", "/v1/instructions", adminToken, map[string]any{"agent": "alpha", "content": "Report the OS"}))
	}
	var ops struct{ Operations []wire.Operation }
	b.must(200, b.call("GET", "/v1/operations?limit=2", adminToken, nil), &ops)
	if len(ops.Operations) != 2 || ops.Operations[0].ID != "OP-2" || ops.Operations[1].ID != "OP-3" || len(ops.Operations[0].Agents) != 1 {
		t.Fatalf("operations %+v", ops.Operations)
	}
	b.must(200, b.call("GET", "/v1/operations?state=done", adminToken, nil), &ops)
	if len(ops.Operations) != 0 {
		t.Fatalf("done operations %+v", ops.Operations)
	}
	var ins struct{ Instructions []wire.Instruction }
	b.must(200, b.call("GET", "/v1/instructions?limit=1", adminToken, nil), &ins)
	if len(ins.Instructions) != 1 || ins.Instructions[0].ID != "I-3" {
		t.Fatalf("instructions %+v", ins.Instructions)
	}
	for _, bad := range []string{"/v1/operations?state=nope", "/v1/operations?limit=0", "/v1/instructions?limit=x"} {
		if r := b.call("GET", bad, adminToken, nil); r.status != 400 {
			t.Errorf("%s: %d %s", bad, r.status, r.body)
		}
	}
}

// An agent shows when it was last heard from, the task it holds, its
// first-attempt successes and its cost.
func TestAgentViewShowsLastSeenCurrentTaskAndRecord(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tok := b.agent("alpha")
	var a wire.Agent
	b.must(200, b.call("GET", "/v1/agents/alpha", adminToken, nil), &a)
	if a.LastSeen != nil || a.CurrentTask != "" {
		t.Fatalf("a new agent: %+v", a)
	}
	b.must(201, b.call("POST", "/v1/tasks", adminToken, map[string]any{"description": "Add a flag"}))
	before := time.Now().Add(-time.Second)
	b.inbox(tok)
	b.must(200, b.call("GET", "/v1/agents/alpha", adminToken, nil), &a)
	if a.LastSeen == nil || a.LastSeen.Before(before) || a.CurrentTask != "T-1" || a.FinishedTasks != 0 {
		t.Fatalf("after a poll, holding T-1: %+v", a)
	}
	var list struct{ Agents []wire.Agent }
	b.must(200, b.call("GET", "/v1/agents", adminToken, nil), &list)
	if len(list.Agents) != 1 || list.Agents[0].CurrentTask != "T-1" || list.Agents[0].LastSeen == nil {
		t.Fatalf("list %+v", list.Agents)
	}
}

// GET /v1/stats/daily answers one row per day, today last.
func TestDailyStatsAnswerEveryDayTodayLast(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var out struct{ Days []core.DayNumbers }
	b.must(200, b.call("GET", "/v1/stats/daily?days=7", adminToken, nil), &out)
	if len(out.Days) != 7 || out.Days[6].Day != time.Now().UTC().Format("2006-01-02") || out.Days[0].Failures == nil {
		t.Fatalf("days %+v", out.Days)
	}
	b.must(200, b.call("GET", "/v1/stats/daily", adminToken, nil), &out)
	if len(out.Days) != defaultStatsDays {
		t.Fatalf("default: %d days", len(out.Days))
	}
	if r := b.call("GET", "/v1/stats/daily?days=400", adminToken, nil); r.status != 400 {
		t.Fatalf("400 days: %d", r.status)
	}
}
