package server

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzMaestroReplyForm feeds the reader of AI Maestro messages to the
// orchestrator whatever content a remote agent may send: it never panics,
// a structured form it picks is a JSON object of a known form, and a task
// id from the context is only ever written into an [ACK] line.
func FuzzMaestroReplyForm(f *testing.F) {
	// Shapes of AI Maestro's Message content (lib/messageQueue.ts of
	// ai-maestro): {type, message, context?}.
	for _, s := range []struct{ typ, text, context string }{
		{"response", "[ACK] T-1 - RECEIVED\nUnderstanding: add a --json flag", ``},
		{"response", "[ACK] RECEIVED\nUnderstanding: add a --json flag", `{"taskId":"T-1"}`},
		{"update", "Status: complete\nSummary: done", `{"task_id":"T-1"}`},
		{"task-acknowledgment", "[ACK] T-2 - RECEIVED\nUnderstanding: x", `{"task_id":"T-2"}`},
		{"notification", "BLOCKED: need the password", `{"task":"T-3"}`},
		{"request", "hello", `{"type":"task-complete","task_id":"T-4","status":"success"}`},
		{"acknowledgment", "ok", `{"ready":true}`},
		{"response", "[ACK] - CONFIRMED", `{"taskId":"../x"}`},
	} {
		f.Add(s.typ, s.text, s.context)
	}
	f.Fuzz(func(t *testing.T, typ, text, context string) {
		ctx := json.RawMessage(context)
		content, _ := json.Marshal(map[string]any{"type": typ, "message": text, "context": ctx})
		if !json.Valid(ctx) {
			content, _ = json.Marshal(map[string]any{"type": typ, "message": text})
			ctx = nil
		}
		form, data, plain := maestroReplyForm(typ, text, content, ctx)
		if form != "" {
			if !replyForms[form] {
				t.Fatalf("form %q is not a form of the ACK protocol", form)
			}
			var m map[string]any
			if json.Unmarshal(data, &m) != nil {
				t.Fatalf("form %s with data that is not a JSON object: %s", form, data)
			}
			if plain != "" {
				t.Fatalf("both a form and text: %q", plain)
			}
			return
		}
		if id := contextTaskID(ctx); id == "" && plain != text {
			t.Fatalf("the text changed with no task id in the context: %q → %q", text, plain)
		} else if id != "" && plain != text && !strings.Contains(plain, "[ACK] "+id+" - ") {
			t.Fatalf("the text changed other than by the task id: %q → %q", text, plain)
		}
	})
}
