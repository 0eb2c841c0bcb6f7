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

// TestADeliverysLinesAreKeyedByItsTaskElseItsMessage: the records of
// deliveries and operation reminders, each line kind with its text and
// fields, keyed by the task, else the message or operation, else the
// agent.
func TestADeliverysLinesAreKeyedByItsTaskElseItsMessage(t *testing.T) {
	t.Parallel()
	deliveryEv := func(seq uint64, task, agent string, d core.EventData) store.Event {
		e := ev(seq, t0, task, d)
		e.Agent = agent
		return e
	}
	timer := time.Date(2026, 1, 26, 14, 31, 0, 500, time.UTC)
	for _, c := range []struct {
		ev         store.Event
		key, text  string
		fieldsJSON string
	}{
		{deliveryEv(1, "", "codex", core.DeliverySent{Send: core.Send{ID: "I-1", Attempt: 1, Kind: "first", Message: &core.Message{ID: "I-1", Type: core.TypeInstruction}}}),
			"I-1", "attempt=1 status=sent kind=first message=I-1 type=instruction agent=codex",
			`{"agent":"codex","attempt":1,"event":"delivery_sent","kind":"first","message":"I-1","type":"instruction"}`},
		{deliveryEv(2, "T-1", "codex", core.DeliveryRetried{Send: core.Send{ID: "M-1", Attempt: 2, Kind: "ack_request"}}),
			"T-1", "attempt=2 status=retried kind=ack_request message=M-1 agent=codex",
			`{"agent":"codex","attempt":2,"event":"delivery_retried","kind":"ack_request","message":"M-1"}`},
		{deliveryEv(3, "T-1", "codex", core.DeliveryDeferred{ID: "M-1", Reason: "RESOURCE_UNAVAILABLE:\nbusy", TimerAt: timer}),
			"T-1", `deferred message=M-1 reason="RESOURCE_UNAVAILABLE: busy"`,
			`{"event":"delivery_deferred","message":"M-1","reason":"RESOURCE_UNAVAILABLE:\nbusy","until":"2026-01-26T14:31:00.0000005Z"}`},
		{deliveryEv(4, "T-1", "codex", core.DeliveryAcknowledged{ID: "M-1", By: "agent", Status: "received"}),
			"T-1", "resolved status=acknowledged message=M-1 by=agent ack=received",
			`{"ack":"received","by":"agent","event":"delivery_resolved","message":"M-1","resolution":"acknowledged"}`},
		{deliveryEv(5, "T-2", "codex", core.DeliveryClarifying{ID: "M-2", Questions: []string{"which?", "when?"}}),
			"T-2", "clarification_needed message=M-2 questions=2",
			`{"event":"delivery_clarifying","message":"M-2","questions":2}`},
		{deliveryEv(6, "", "silent", core.DeliveryFailed{ID: "I-2", Reason: "max retries reached", Attempts: 3}),
			"I-2", `resolved status=failed message=I-2 attempts=3 reason="max retries reached"`,
			`{"attempts":3,"event":"delivery_resolved","message":"I-2","reason":"max retries reached","resolution":"failed"}`},
		{deliveryEv(7, "T-3", "codex", core.DeliveryCancelled{ID: "M-3", Reason: "the task was cancelled by the user"}),
			"T-3", `resolved status=cancelled message=M-3 reason="the task was cancelled by the user"`,
			`{"event":"delivery_resolved","message":"M-3","reason":"the task was cancelled by the user","resolution":"cancelled"}`},
		{deliveryEv(8, "T-4", "slow", core.DeliveryReassigned{ID: "M-4", From: "slow", To: "backup", NewID: "M-5"}),
			"T-4", "reassigning message=M-4 from=slow to=backup new_message=M-5",
			`{"event":"delivery_reassigned","from":"slow","message":"M-4","new_message":"M-5","to":"backup"}`},
		{deliveryEv(9, "", "codex", core.DeliveryEscalated{ID: "M-6", Reason: "unresponsive"}),
			"M-6", `escalating message=M-6 reason="unresponsive"`,
			`{"event":"delivery_escalated","message":"M-6","reason":"unresponsive"}`},
		{deliveryEv(10, "", "alpha", core.OperationReminder{ID: "OP-1", Delivery: "M-7", Number: 1, Tone: "gentle", Remaining: 90 * time.Second}),
			"OP-1", "reminder operation=OP-1 number=1 tone=gentle remaining=1m30s",
			`{"agent":"alpha","event":"operation_reminder","number":1,"operation":"OP-1","remaining":"1m30s","tone":"gentle"}`},
		{deliveryEv(11, "", "alpha", core.DeliveryFailed{Reason: "timeout"}),
			"alpha", `resolved status=failed message= attempts=0 reason="timeout"`,
			`{"attempts":0,"event":"delivery_resolved","message":"","reason":"timeout","resolution":"failed"}`},
	} {
		lines := NewFormatter().Lines(c.ev)
		if len(lines) != 1 {
			t.Errorf("%s: %d lines", c.ev.Type, len(lines))
			continue
		}
		l := lines[0]
		fields, _ := json.Marshal(l.Fields)
		if l.Key != c.key || l.Text != c.text || string(fields) != c.fieldsJSON {
			t.Errorf("%s:\ngot  %s %q %s\nwant %s %q %s", c.ev.Type, l.Key, l.Text, fields, c.key, c.text, c.fieldsJSON)
		}
	}
	for _, d := range []core.EventData{core.DeliveryReply{ID: "M-1", Kind: "checkpoint"}, core.DeliveryNotice{Send: core.Send{ID: "M-1", Kind: "cancel"}},
		core.AgentStatusChanged{From: core.Available, To: core.Busy}, core.OperationReply{ID: "OP-1", Answer: "ok"}} {
		if lines := NewFormatter().Lines(ev(1, t0, "T-1", d)); len(lines) != 0 {
			t.Errorf("%s has records: %+v", d.EventType(), lines)
		}
	}
}

// TestRetryLogHoldsTheLinesOfTasksOnly: the records of deliveries are made
// for `wilco logs` from the event log; retry.log and retry.jsonl, written
// on the runtime's loop, hold those of tasks.
func TestRetryLogHoldsTheLinesOfTasksOnly(t *testing.T) {
	t.Parallel()
	w := New(t.TempDir(), 0, 0)
	sent := ev(2, t0, "T-1", core.DeliverySent{Send: core.Send{ID: "M-1", Attempt: 1, Kind: "first"}})
	if len(NewFormatter().Lines(sent)) != 1 {
		t.Fatal("a delivery's send has no record")
	}
	if err := w.Write([]store.Event{sent, ev(3, t0, "T-1", core.TaskEscalated{Reason: "max_retries_exceeded"})}); err != nil {
		t.Fatal(err)
	}
	log, _ := os.ReadFile(w.LogPath())
	if string(log) != "[2026-01-26T14:30:00Z] [RETRY] [T-1] escalating reason=\"max_retries_exceeded\"\n" {
		t.Errorf("retry.log:\n%s", log)
	}
	jl, _ := os.ReadFile(w.JSONLPath())
	if strings.Count(string(jl), "\n") != 1 || strings.Contains(string(jl), "delivery") {
		t.Errorf("retry.jsonl:\n%s", jl)
	}
}
