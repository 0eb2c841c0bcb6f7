package loadgen

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"wilco/client"
	"wilco/core"
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
	if err := noopRepo(ctx, dir); err != nil {
		return TaskResult{}, err
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
	if err := waitEnd(ctx, c, last); err != nil {
		return TaskResult{}, err
	}
	spans, err := attemptSpans(ctx, c)
	if err != nil {
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
	status, err := statusTimes(ctx, self, d.URL, d.Token, last, statusRuns)
	if err != nil {
		return res, err
	}
	res.StatusP50MS, res.StatusP99MS = percentile(status, 0.5), percentile(status, 0.99)
	res.PeakRSSMB = PeakRSSMB()
	return res, nil
}

// noopRepo makes dir a git repository with an agent and a verify step
// that do nothing.
func noopRepo(ctx context.Context, dir string) error {
	files := map[string]string{
		"agent.sh":   noopAgent,
		".gitignore": ".wilco/\n",
		"wilco.yaml": "version: 1\nagents:\n  - name: noop\n    adapter: exec\n    command: [./agent.sh]\nverify:\n  steps:\n    - {name: noop, run: \"true\"}\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o755); err != nil {
			return err
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=bench", "-c", "user.email=bench@wilco.invalid", "commit", "-qm", "bench"}} {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %v: %s", args, err, b)
		}
	}
	return nil
}

// waitEnd follows task id's events until it ends.
func waitEnd(ctx context.Context, c *client.Client, id string) error {
	err := c.Follow(ctx, client.EventQuery{Task: id}, func(ev wire.Event) error {
		data, err := core.DecodeEventData(ev.Type, ev.Data)
		if s, ok := data.(core.TaskStateChanged); ok && err == nil {
			switch s.To {
			case core.Success, core.Stuck, core.Escalated, core.TaskFailed:
				return client.ErrStop
			}
		}
		return nil
	})
	if errors.Is(err, client.ErrStop) {
		return nil
	}
	return err
}

// span is a task's attempt, from the event log, and the agent's and the
// verify step's own time in it as wilco measured them (process lifetimes).
type span struct {
	start, end time.Time
	own        time.Duration
}

// attemptSpans are the tasks' last attempts, by task.
func attemptSpans(ctx context.Context, c *client.Client) (map[string]*span, error) {
	spans := map[string]*span{}
	err := c.EachEvent(ctx, client.EventQuery{}, func(ev wire.Event) error {
		data, err := core.DecodeEventData(ev.Type, ev.Data)
		if err != nil {
			return nil
		}
		s := spans[ev.TaskID]
		if _, ok := data.(core.TaskAttempt); ok {
			spans[ev.TaskID] = &span{start: ev.Time}
			return nil
		}
		if s == nil || !s.end.IsZero() {
			return nil
		}
		switch d := data.(type) {
		case core.TaskTurnEnded:
			s.own += time.Duration(d.DurationMS) * time.Millisecond
		case core.TaskSucceeded:
			s.own += time.Duration(d.VerifyMS) * time.Millisecond
			s.end = ev.Time
		}
		return nil
	})
	return spans, err
}

// statusTimes are how long runs of `wilco status ID --json` took.
func statusTimes(ctx context.Context, self, url, token, id string, runs int) ([]time.Duration, error) {
	var status []time.Duration
	for range runs {
		cmd := exec.CommandContext(ctx, self, "status", id, "--json")
		cmd.Env = append(os.Environ(), "WILCO_ADDR="+url, "WILCO_TOKEN="+token)
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			return status, fmt.Errorf("wilco status: %v: %s", err, out)
		}
		status = append(status, time.Since(start))
	}
	return status, nil
}
