package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"wilco/client"
	"wilco/daemon"
	"wilco/wire"
)

// TaskResult is what the orchestration benchmark prints.
type TaskResult struct {
	System string `json:"system"`
	Tasks  int    `json:"tasks"`
	// Attempt overhead: from the task's attempt being recorded to its
	// verification being recorded, minus the agent's and the verify step's
	// own run time (their process lifetimes, as wilco measured them), in ms.
	OverheadP50MS float64 `json:"overhead_p50_ms"`
	OverheadP99MS float64 `json:"overhead_p99_ms"`
	// The same, whole: what a user waits for a no-op attempt.
	AttemptP50MS float64 `json:"attempt_p50_ms"`
	// StatusP50MS is the median of `wilco status` run as a process.
	StatusP50MS float64 `json:"status_p50_ms"`
	StatusP99MS float64 `json:"status_p99_ms"`
	PeakRSSMB   float64 `json:"peak_rss_mb"`
}

const noopAgent = `#!/bin/sh
cat >/dev/null
echo "[ACK] $WILCO_TASK_ID - RECEIVED"
echo "Understanding: nothing to do"
`

// RunTasks measures wilco's orchestration overhead per attempt: n tasks,
// one at a time, with a no-op agent and a no-op verify step, on a real
// repository, server and store; then `wilco status` (self, run as a
// process) statusRuns times.
func RunTasks(ctx context.Context, n, statusRuns int, self string) (TaskResult, error) {
	if n <= 0 {
		return TaskResult{}, fmt.Errorf("--tasks must be positive, got %d", n)
	}
	dir, err := os.MkdirTemp("", "wilco-bench-tasks-")
	if err != nil {
		return TaskResult{}, err
	}
	defer os.RemoveAll(dir)
	files := map[string]string{
		"agent.sh":   noopAgent,
		".gitignore": ".wilco/\n",
		"wilco.yaml": "version: 1\nagents:\n  - name: noop\n    adapter: exec\n    command: [./agent.sh]\nverify:\n  steps:\n    - {name: noop, run: \"true\"}\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o755); err != nil {
			return TaskResult{}, err
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=bench", "-c", "user.email=bench@wilco.invalid", "commit", "-qm", "bench"}} {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			return TaskResult{}, fmt.Errorf("git %v: %v: %s", args, err, b)
		}
	}
	d, err := daemon.Start(ctx, daemon.Options{ConfigPath: filepath.Join(dir, "wilco.yaml"), Addr: "127.0.0.1:0", Token: "bench-token",
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return TaskResult{}, err
	}
	defer d.Close()
	c := client.New(d.URL, d.Token)
	var ids []string
	for i := range n {
		t, err := c.Submit(ctx, wire.SubmitTask{Description: fmt.Sprintf("no-op %d", i)})
		if err != nil {
			return TaskResult{}, err
		}
		ids = append(ids, t.ID)
	}
	last := ids[len(ids)-1]
	err = c.Follow(ctx, client.EventQuery{Task: last}, func(ev wire.Event) error {
		if ev.Type != "task.state" {
			return nil
		}
		var s struct {
			To string `json:"to"`
		}
		_ = json.Unmarshal(ev.Data, &s)
		if s.To == "success" || s.To == "stuck" || s.To == "escalated" || s.To == "failed" {
			return client.ErrStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, client.ErrStop) {
		return TaskResult{}, err
	}
	// Attempt spans from the event log, and the agent's and the verify
	// step's own time as wilco measured them (process lifetimes).
	type span struct {
		start, end time.Time
		own        time.Duration
	}
	spans := map[string]*span{}
	if err := c.EachEvent(ctx, client.EventQuery{}, func(ev wire.Event) error {
		var d struct {
			DurationMS int64 `json:"duration_ms"`
			VerifyMS   int64 `json:"verify_ms"`
		}
		_ = json.Unmarshal(ev.Data, &d)
		s := spans[ev.TaskID]
		switch {
		case ev.Type == "task.attempt":
			spans[ev.TaskID] = &span{start: ev.Time}
		case s == nil || !s.end.IsZero():
		case ev.Type == "task.turn_ended":
			s.own += time.Duration(d.DurationMS) * time.Millisecond
		case ev.Type == "task.success":
			s.own += time.Duration(d.VerifyMS) * time.Millisecond
			s.end = ev.Time
		}
		return nil
	}); err != nil {
		return TaskResult{}, err
	}
	var overhead, whole []time.Duration
	for _, id := range ids {
		s := spans[id]
		if s == nil || s.end.IsZero() {
			return TaskResult{}, fmt.Errorf("task %s did not succeed on its attempt", id)
		}
		w := s.end.Sub(s.start)
		whole = append(whole, w)
		overhead = append(overhead, w-s.own)
	}
	res := TaskResult{System: "wilco", Tasks: n,
		OverheadP50MS: percentile(overhead, 0.5), OverheadP99MS: percentile(overhead, 0.99), AttemptP50MS: percentile(whole, 0.5)}
	var status []time.Duration
	for range statusRuns {
		cmd := exec.CommandContext(ctx, self, "status", last, "--json")
		cmd.Env = append(os.Environ(), "WILCO_ADDR="+d.URL, "WILCO_TOKEN="+d.Token)
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			return res, fmt.Errorf("wilco status: %v: %s", err, out)
		}
		status = append(status, time.Since(start))
	}
	res.StatusP50MS, res.StatusP99MS = percentile(status, 0.5), percentile(status, 0.99)
	res.PeakRSSMB = PeakRSSMB()
	return res, nil
}
