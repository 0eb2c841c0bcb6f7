package retrylog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"wilco/atomicfile"
	"wilco/core"
	"wilco/store"
)

// Default retention.
const (
	DefaultLogRetention   = 7 * 24 * time.Hour
	DefaultJSONLRetention = 30 * 24 * time.Hour
)

// Writer appends records for committed events.
type Writer struct {
	dir            string // .wilco
	logRetention   time.Duration
	jsonlRetention time.Duration

	mu  sync.Mutex
	fmt *Formatter
}

// Formatter turns events into retry-log records: it is the one place
// that decides the text of each line kind, for retry.log and retry.jsonl
// and for `wilco logs`. It remembers when each task and attempt began,
// for the durations, so one Formatter reads one stream of events in
// order.
type Formatter struct {
	started map[string]time.Time // task → when it was queued
	attempt map[string]time.Time // task → when its current attempt began
}

// NewFormatter returns a formatter.
func NewFormatter() *Formatter {
	return &Formatter{started: map[string]time.Time{}, attempt: map[string]time.Time{}}
}

// Line is one record: Key is what it is about (the task; for a delivery
// without one, the message or operation, else the agent), Text follows
// "[<time>] [RETRY] [<key>] " in retry.log (empty: no text line); Fields
// are its retry.jsonl object without timestamp and task_id (nil: no JSON
// line).
type Line struct {
	Key    string
	Text   string
	Fields map[string]any
}

// Lines returns the records of one event: a task's attempts, retries and
// outcome, and a delivery's sends, waits and outcome and an operation's
// reminders; none for other events. retry.log and retry.jsonl hold the
// records of the events InLog accepts.
func (f *Formatter) Lines(ev store.Event) []Line {
	if !InLog(ev.Type) && !strings.HasPrefix(ev.Type, "delivery.") && ev.Type != core.TypeOperationReminder {
		return nil
	}
	data, err := core.DecodeEventData(ev.Type, ev.Data)
	if err != nil {
		return nil
	}
	if InLog(ev.Type) {
		return f.lines(ev, data)
	}
	return deliveryLines(ev, data)
}

// InLog reports whether the records of events of this type are written to
// retry.log and retry.jsonl: those of tasks. The records of deliveries and
// operations are made from the event log when they are asked for (`wilco
// logs`): the files are written on the runtime's loop, where deliveries
// are most of a busy server's events.
func InLog(typ string) bool { return strings.HasPrefix(typ, "task.") }

// New returns a writer under dir (the .wilco directory).
func New(dir string, logRetention, jsonlRetention time.Duration) *Writer {
	if logRetention <= 0 {
		logRetention = DefaultLogRetention
	}
	if jsonlRetention <= 0 {
		jsonlRetention = DefaultJSONLRetention
	}
	return &Writer{dir: dir, logRetention: logRetention, jsonlRetention: jsonlRetention, fmt: NewFormatter()}
}

// LogPath and JSONLPath name the two logs.
func (w *Writer) LogPath() string   { return filepath.Join(w.dir, "logs", "retry.log") }
func (w *Writer) JSONLPath() string { return filepath.Join(w.dir, "logs", "retry.jsonl") }

// Observe writes the records of a batch of committed events. It is meant
// for runtime.Config.Observe.
func (w *Writer) Observe(events []store.Event) {
	if err := w.Write(events); err != nil {
		fmt.Fprintf(os.Stderr, "wilco: retry log: %v\n", err)
	}
}

// Write formats and appends the records of events.
func (w *Writer) Write(events []store.Event) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var text, jsonl bytes.Buffer
	for _, ev := range events {
		if !InLog(ev.Type) {
			continue
		}
		data, err := core.DecodeEventData(ev.Type, ev.Data)
		if err != nil {
			continue
		}
		for _, l := range w.fmt.lines(ev, data) {
			if l.Text != "" {
				text.WriteString(TextLine(ev.Time, l.Key, l.Text))
			}
			if l.Fields != nil {
				b, _ := json.Marshal(Object(ev.Time, ev.TaskID, l.Fields))
				jsonl.Write(b)
				jsonl.WriteByte('\n')
			}
		}
		if st, ok := data.(core.TaskStuckReported); ok {
			if err := w.writeStuck(ev.TaskID, st.Report); err != nil {
				return err
			}
		}
	}
	if text.Len() > 0 {
		if err := appendFile(w.LogPath(), text.Bytes()); err != nil {
			return err
		}
	}
	if jsonl.Len() > 0 {
		if err := appendFile(w.JSONLPath(), jsonl.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// MaxText is how much of an error, a fix or a reason a record keeps.
const MaxText = 200

// Quote renders a free text for a retry.log line: its runs of white space
// made one space, cut to MaxText bytes, quoted as a Go string.
func Quote(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > MaxText {
		s = s[:MaxText]
	}
	return strconv.Quote(s)
}

// TextLine frames a record's Text as a retry.log line:
// "[<time>] [RETRY] [<key>] <text>\n", the time in UTC as RFC 3339.
func TextLine(t time.Time, key, text string) string {
	return fmt.Sprintf("[%s] [RETRY] [%s] %s\n", t.UTC().Format(time.RFC3339), key, text)
}

// Object is a record's retry.jsonl object: its Fields with the timestamp
// (UTC, RFC 3339) and the task's id.
func Object(t time.Time, taskID string, fields map[string]any) map[string]any {
	obj := map[string]any{"timestamp": t.UTC().Format(time.RFC3339), "task_id": taskID}
	for k, v := range fields {
		obj[k] = v
	}
	return obj
}

// lines are the records of an event of a task, keyed by the task.
func (f *Formatter) lines(ev store.Event, data core.EventData) []Line {
	out := f.taskLines(ev, data)
	for i := range out {
		out[i].Key = ev.TaskID
	}
	return out
}

func (f *Formatter) taskLines(ev store.Event, data core.EventData) []Line {
	id := ev.TaskID
	switch e := data.(type) {
	case core.TaskQueued:
		f.started[id] = ev.Time
	case core.TaskAttempt:
		f.attempt[id] = ev.Time
		if e.Kind == "first" {
			return nil
		}
		return []Line{{
			Text:   fmt.Sprintf("injecting_feedback attempt=%d kind=%s", e.Attempt, e.Kind),
			Fields: map[string]any{"event": "feedback_injected", "attempt": e.Attempt, "kind": e.Kind},
		}}
	case core.TaskFailure:
		rec := e.Record
		errText := rec.ExecutorOutput.Error
		if v := rec.ExecutorOutput.Verification; v != nil && errText == "" {
			errText = v.OutputSummary
		}
		out := []Line{{
			Text: fmt.Sprintf("attempt=%d status=failed type=%s", rec.Attempt, rec.FailureType),
			Fields: map[string]any{"event": "attempt", "attempt": rec.Attempt, "status": "failed", "failure_type": rec.FailureType,
				"error": trim(errText, MaxText), "run_id": rec.RunID, "duration_ms": since(f.attempt[id], ev.Time)},
		}}
		if errText != "" {
			out = append(out, Line{Text: "error=" + Quote(errText)})
		}
		if rec.SuggestedFix != "" {
			out = append(out, Line{Text: "suggested_fix=" + Quote(rec.SuggestedFix)})
		}
		return out
	case core.TaskReplan:
		return []Line{{
			Text:   fmt.Sprintf("replanning number=%d failures=%d", e.Number, e.Failures),
			Fields: map[string]any{"event": "replan", "number": e.Number, "failures": e.Failures},
		}}
	case core.TaskEscalated:
		return []Line{{
			Text:   "escalating reason=" + Quote(e.Reason),
			Fields: map[string]any{"event": "escalated", "reason": e.Reason},
		}}
	case core.TaskResponse:
		v := e.Action
		if e.Instruction != "" {
			v += ": " + e.Instruction
		}
		return []Line{{
			Text:   "user_response=" + Quote(v),
			Fields: map[string]any{"event": "user_response", "response": e.Action, "instruction": e.Instruction},
		}}
	case core.TaskStuckReported:
		return []Line{{
			Text:   "stuck report=" + e.Report.Path,
			Fields: map[string]any{"event": "stuck", "report": e.Report.Path, "run_ids": e.Report.RunIDs},
		}}
	case core.TaskStateChanged:
		if !e.To.Terminal() {
			return nil
		}
		return []Line{{
			Text:   "resolved status=" + string(e.To),
			Fields: map[string]any{"event": "resolved", "resolution": string(e.To), "total_duration_ms": since(f.started[id], ev.Time)},
		}}
	}
	return nil
}

func since(t0, t time.Time) int64 {
	if t0.IsZero() {
		return 0
	}
	return t.Sub(t0).Milliseconds()
}

func trim(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func (w *Writer) writeStuck(task string, r core.StuckReport) error {
	name := strings.NewReplacer("/", "_", "\\", "_").Replace(task) + ".md"
	path := filepath.Join(w.dir, "stuck", name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(r.Markdown), 0o644)
}

func appendFile(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Prune drops the lines older than the retention from both logs.
func (w *Writer) Prune(now time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := prune(w.LogPath(), now.Add(-w.logRetention), textTime); err != nil {
		return err
	}
	return prune(w.JSONLPath(), now.Add(-w.jsonlRetention), jsonTime)
}

func textTime(l string) (time.Time, bool) {
	if !strings.HasPrefix(l, "[") {
		return time.Time{}, false
	}
	end := strings.IndexByte(l, ']')
	if end < 0 {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, l[1:end])
	return t, err == nil
}

func jsonTime(l string) (time.Time, bool) {
	var v struct {
		Timestamp time.Time `json:"timestamp"`
	}
	if json.Unmarshal([]byte(l), &v) != nil || v.Timestamp.IsZero() {
		return time.Time{}, false
	}
	return v.Timestamp, true
}

func prune(path string, cutoff time.Time, stamp func(string) (time.Time, bool)) error {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var kept bytes.Buffer
	dropped := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if t, ok := stamp(l); ok && t.Before(cutoff) {
			dropped++
			continue
		}
		kept.WriteString(l)
		kept.WriteByte('\n')
	}
	f.Close()
	if err := sc.Err(); err != nil {
		return err
	}
	if dropped == 0 {
		return nil
	}
	return atomicfile.WriteFile(path, kept.Bytes(), 0o644)
}
