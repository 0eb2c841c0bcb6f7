package retrylog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"wilco/core"
	"wilco/store"
)

var t0 = time.Date(2026, 1, 26, 14, 30, 0, 0, time.UTC)

func ev(seq uint64, at time.Time, task string, d core.EventData) store.Event {
	b, _ := json.Marshal(d)
	return store.Event{Seq: seq, Time: at, Type: d.EventType(), TaskID: task, Data: b}
}

func failure(n int) core.EventData {
	return core.TaskFailure{Record: core.FailureRecord{Attempt: n, FailureType: core.VerificationFailed, RunID: "r",
		ExecutorOutput: core.ExecutorOutput{Status: "failure", Verification: &core.Verification{Command: "npm test", ExitCode: 1, OutputSummary: "2 tests failed: null check, empty string"}},
		SuggestedFix:   "Add validation for null and empty"}}
}

func TestRetryLogLinesFollowTheRetryLogFormat(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := New(dir, 0, 0)
	id := "03-01:task-3"
	err := w.Write([]store.Event{
		ev(1, t0.Add(-time.Minute), id, core.TaskQueued{Task: core.Task{ID: id}}),
		ev(2, t0.Add(-time.Minute), id, core.TaskAttempt{Attempt: 1, Kind: "first"}),
		ev(3, t0, id, failure(1)),
		ev(4, t0.Add(time.Second), id, core.TaskAttempt{Attempt: 2, Kind: "retry"}),
		ev(5, t0.Add(5*time.Minute), id, core.TaskEscalated{Reason: "max_retries_exceeded"}),
		ev(6, t0.Add(10*time.Minute), id, core.TaskResponse{Action: "skip"}),
		ev(7, t0.Add(10*time.Minute), id, core.TaskStateChanged{From: core.Escalated, To: core.Skipped}),
		ev(8, t0.Add(11*time.Minute), "T-9", core.TaskStuckReported{Report: core.StuckReport{Path: ".wilco/stuck/T-9.md", Markdown: "# Stuck report: T-9\n"}}),
	})
	if err != nil {
		t.Fatal(err)
	}
	log, _ := os.ReadFile(w.LogPath())
	want := []string{
		`[2026-01-26T14:30:00Z] [RETRY] [03-01:task-3] attempt=1 status=failed type=verification_failed`,
		`[2026-01-26T14:30:00Z] [RETRY] [03-01:task-3] error="2 tests failed: null check, empty string"`,
		`[2026-01-26T14:30:00Z] [RETRY] [03-01:task-3] suggested_fix="Add validation for null and empty"`,
		`[2026-01-26T14:30:01Z] [RETRY] [03-01:task-3] injecting_feedback attempt=2 kind=retry`,
		`[2026-01-26T14:35:00Z] [RETRY] [03-01:task-3] escalating reason="max_retries_exceeded"`,
		`[2026-01-26T14:40:00Z] [RETRY] [03-01:task-3] user_response="skip"`,
		`[2026-01-26T14:40:00Z] [RETRY] [03-01:task-3] resolved status=skipped`,
	}
	for _, l := range want {
		if !strings.Contains(string(log), l+"\n") {
			t.Errorf("retry.log lacks %q:\n%s", l, log)
		}
	}
	lineRE := regexp.MustCompile(`^\[[0-9TZ:-]+\] \[RETRY\] \[[^\]]+\] \S`)
	for _, l := range strings.Split(strings.TrimSpace(string(log)), "\n") {
		if !lineRE.MatchString(l) {
			t.Errorf("malformed line %q", l)
		}
	}
	jl, _ := os.ReadFile(w.JSONLPath())
	var sawAttempt, sawResolved bool
	for _, l := range strings.Split(strings.TrimSpace(string(jl)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("bad jsonl line %q", l)
		}
		if m["timestamp"] == nil || m["event"] == nil || m["task_id"] == nil {
			t.Fatalf("jsonl line lacks timestamp/event/task_id: %q", l)
		}
		switch m["event"] {
		case "attempt":
			sawAttempt = m["failure_type"] == "verification_failed" && m["duration_ms"].(float64) == 60000
		case "resolved":
			sawResolved = m["resolution"] == "skipped" && m["total_duration_ms"].(float64) == 660000
		}
	}
	if !sawAttempt || !sawResolved {
		t.Fatalf("jsonl:\n%s", jl)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "stuck", "T-9.md")); err != nil || !strings.HasPrefix(string(b), "# Stuck report") {
		t.Fatalf("stuck report: %v", err)
	}
}

func TestRetentionDropsOldLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := New(dir, 7*24*time.Hour, 30*24*time.Hour)
	old, recent := t0.Add(-10*24*time.Hour), t0.Add(-time.Hour)
	if err := w.Write([]store.Event{ev(1, old, "T-1", failure(1)), ev(2, recent, "T-2", failure(1))}); err != nil {
		t.Fatal(err)
	}
	if err := w.Prune(t0); err != nil {
		t.Fatal(err)
	}
	log, _ := os.ReadFile(w.LogPath())
	if strings.Contains(string(log), "[T-1]") || !strings.Contains(string(log), "[T-2]") {
		t.Fatalf("retry.log after 7-day retention:\n%s", log)
	}
	jl, _ := os.ReadFile(w.JSONLPath())
	if !strings.Contains(string(jl), `"T-1"`) {
		t.Fatal("retry.jsonl keeps 30 days; a 10-day-old line was dropped")
	}
}

func TestQuoteAndFraming(t *testing.T) {
	t.Parallel()
	if got := Quote("a\n\tb  \"c\"  "); got != `"a b \"c\""` {
		t.Errorf("Quote = %s", got)
	}
	if got := Quote(strings.Repeat("x", MaxText+10)); got != `"`+strings.Repeat("x", MaxText)+`"` {
		t.Errorf("Quote keeps %d bytes, want %d", len(got)-2, MaxText)
	}
	at := time.Date(2026, 1, 26, 15, 30, 0, 0, time.FixedZone("CET", 3600))
	if got := TextLine(at, "T-1", "resolved status=success"); got != "[2026-01-26T14:30:00Z] [RETRY] [T-1] resolved status=success\n" {
		t.Errorf("TextLine = %q", got)
	}
	b, _ := json.Marshal(Object(at, "T-1", map[string]any{"event": "resolved"}))
	if string(b) != `{"event":"resolved","task_id":"T-1","timestamp":"2026-01-26T14:30:00Z"}` {
		t.Errorf("Object = %s", b)
	}
}
