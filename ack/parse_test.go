package ack_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"wilco/ack"
)

func TestParseIsLenientOnFormStrictOnTaskID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text   string
		id     string
		status ack.Status
	}{
		// Markdown around the line and the words.
		{"**[ACK]** T-3 - RECEIVED", "T-3", ack.Received},
		{"**[ACK] T-3 - RECEIVED**", "T-3", ack.Received},
		{"- [ACK] T-3 - RECEIVED", "T-3", ack.Received},
		{"* [ACK] T-3 - RECEIVED", "T-3", ack.Received},
		{"1. [ACK] T-3 - RECEIVED", "T-3", ack.Received},
		{"> [ACK] T-3 - RECEIVED", "T-3", ack.Received},
		{"## [ACK] T-3 - RECEIVED", "T-3", ack.Received},
		{"`[ACK] T-3 - RECEIVED`", "T-3", ack.Received},
		{"    [ACK] T-3 - RECEIVED", "T-3", ack.Received},
		{"[ACK] `T-3` - RECEIVED", "T-3", ack.Received},
		{"[ACK] **T-3** - **RECEIVED**", "T-3", ack.Received},
		{"[ACK] T-3 - _received_", "T-3", ack.Received},
		// Any dash, a colon, or nothing between id and STATUS.
		{"[ACK] T-3 – RECEIVED", "T-3", ack.Received},
		{"[ACK] T-3 — RECEIVED", "T-3", ack.Received},
		{"[ACK] T-3—RECEIVED", "T-3", ack.Received},
		{"[ACK] T-3 -- RECEIVED", "T-3", ack.Received},
		{"[ACK] T-3 -RECEIVED", "T-3", ack.Received},
		{"[ACK] T-3: RECEIVED", "T-3", ack.Received},
		{"[ACK] T-3 RECEIVED", "T-3", ack.Received},
		{"[ACK]T-3 - RECEIVED", "T-3", ack.Received},
		{"[ACK]: T-3 - RECEIVED", "T-3", ack.Received},
		// Case of ACK and of STATUS; STATUS spellings.
		{"[ack] T-3 - received", "T-3", ack.Received},
		{"[Ack] T-3 - Received.", "T-3", ack.Received},
		{"[ ACK ] T-3 - RECEIVED", "T-3", ack.Received},
		{"[ACK] T-3 - Clarification Needed", "T-3", ack.ClarificationNeeded},
		{"[ACK] T-3 - needs-clarification", "T-3", ack.ClarificationNeeded},
		{"[ACK] T-3 - NEEDS CLARIFICATION", "T-3", ack.ClarificationNeeded},
		{"[ACK] T-3 - REJECTED", "T-3", ack.Rejected},
		{"[ACK] T-3 - queued", "T-3", ack.Queued},
		{"[ACK] T-3 - CONFIRMED", "T-3", ack.Confirmed},
		// A "Task" word before the id.
		{"[ACK] Task GH-42 - RECEIVED", "GH-42", ack.Received},
		{"[ACK] Task ID: GH-42 - RECEIVED", "GH-42", ack.Received},
		{"[ACK] Task - RECEIVED", "Task", ack.Received}, // an id that is the word itself
		// A bare ACK, when well formed.
		{"ACK T-3 - RECEIVED", "T-3", ack.Received},
		{"ACK: T-3 - RECEIVED", "T-3", ack.Received},
		// Prose before and after.
		{"Sure, I'll take this on.\n\n[ACK] T-3 - RECEIVED\nUnderstanding: fix it\n\nStarting now.", "T-3", ack.Received},
		// Ids with every allowed character; trailing punctuation of prose.
		{"[ACK] GH-4-xls-implementation - RECEIVED", "GH-4-xls-implementation", ack.Received},
		{"[ACK] 03-01:task-3 - RECEIVED", "03-01:task-3", ack.Received},
		{"[ACK] a.b_c:d-e - RECEIVED", "a.b_c:d-e", ack.Received},
		{"[ACK] T-3. RECEIVED", "T-3", ack.Received},
		{"[ACK] T-3, RECEIVED", "T-3", ack.Received},
		{"[ACK] (T-3) RECEIVED", "T-3", ack.Received},
		{"[ACK] \"T-3\" - RECEIVED", "T-3", ack.Received},
		{"[ACK] _T-3_ - RECEIVED", "T-3", ack.Received},
		{"[ACK] __T_3__ - RECEIVED", "T_3", ack.Received},
		{"[ACK] t-3 - RECEIVED", "t-3", ack.Received}, // kept as written: For is case-sensitive
		// CRLF line ends.
		{"[ACK] T-3 - RECEIVED\r\nUnderstanding: x\r\n", "T-3", ack.Received},
	}
	for _, tt := range tests {
		got, err := ack.Parse(tt.text)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.text, err)
			continue
		}
		if got.Kind != ack.KindAck || got.TaskID != tt.id || got.Status != tt.status {
			t.Errorf("Parse(%q) = %s %q %s, want ack %q %s", tt.text, got.Kind, got.TaskID, got.Status, tt.id, tt.status)
		}
		if err := got.For(tt.id); err != nil {
			t.Errorf("Parse(%q).For(%q): %v", tt.text, tt.id, err)
		}
		// Strict on the id: never for another task, however close.
		for _, other := range []string{"T-30", "T-", "T", "t-3", "T-3.1", "T-4", "GH-4", "03-01:task-30", tt.id + "x", "x" + tt.id} {
			if other == tt.id {
				continue
			}
			if err := got.For(other); err == nil {
				t.Errorf("Parse(%q).For(%q) = nil, want an error", tt.text, other)
			} else if !errors.Is(err, ack.ErrWrongTaskID) {
				t.Errorf("For error %v does not wrap ErrWrongTaskID", err)
			}
		}
	}
}

func TestParseBrokenACKSaysWhatIsWrong(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		want string // in the error
	}{
		{"[ACK] - RECEIVED", `no task id before "- RECEIVED"`},
		{"[ACK] — RECEIVED", `no task id before`},
		{"[ACK]", "no task id and no STATUS"},
		{"**[ACK]**", "no task id and no STATUS"},
		{"[ACK] RECEIVED", `no task id before STATUS "RECEIVED"`},
		{"[ACK] T-3", `no STATUS after task id "T-3"`},
		{"[ACK] T-3 -", `no STATUS after task id "T-3"`},
		{"[ACK] T-3 - ACCEPTED", `unknown STATUS "ACCEPTED" after task id "T-3"`},
		{"[ACK] T-3 - OK", `unknown STATUS "OK"`},
		{"[ACK] T-3 - 42", `unknown STATUS "42"`},
		{"[ACK] T-3 - ✅", `STATUS expected after task id "T-3"`},
		{"[ACK] {task_id} - RECEIVED", `task id expected, found "{task_id}"`},
		{"[ACK] T-3/4 - RECEIVED", `task id "T-3" goes on with "/4"`},
		{"[ACK] T-3-RECEIVED", `no STATUS after task id "T-3-RECEIVED"`},
		{"[ACK] -x - RECEIVED", `task id expected, found "-x" (a task id starts with a letter or a digit)`},
		{"[ACK] .x - RECEIVED", `a task id starts with a letter or a digit`},
		{"[ACK] Task T-3/4 - RECEIVED", `unknown STATUS "T-3" after task id "Task"`},
		{"[ACK] " + strings.Repeat("x", 65) + " - RECEIVED", "longer than 64 characters"},
		{"Prose first.\n\n[ACK] - RECEIVED", "line 3:"},
	}
	for _, tt := range tests {
		got, err := ack.Parse(tt.text)
		if err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", tt.text, got)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) error = %q, want it to say %q", tt.text, err, tt.want)
		}
		var pe *ack.ParseError
		if !errors.As(err, &pe) {
			t.Errorf("Parse(%q) error %T is not a *ParseError", tt.text, err)
		}
		if got.Kind != ack.KindMessage || got.Text != tt.text {
			t.Errorf("Parse(%q) on error = %+v, want a message with the text", tt.text, got)
		}
	}
}

func TestParseProseIsAMessage(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		"",
		"Working on it.",
		"ACK", // a bare ACK that is not a well-formed line is prose
		"Ack, will do.",
		"ACK received, thanks",
		"Acknowledged: I'll look at it later.",
		"I will reply with [ACK] T-3 - RECEIVED once I have read it.", // not at the start of a line
		"Let me know if you need anything - {task_id}",
		`{"type": "function", "name": "x"}`,
		`{"task_id": "T-3", "status": "received"}`, // JSON without a known type
		"[ACKNOWLEDGED] T-3",
		"[ ] T-3 - RECEIVED",
	} {
		got, err := ack.Parse(text)
		if err != nil || got.Kind != ack.KindMessage || got.Text != text {
			t.Errorf("Parse(%q) = %+v, %v; want a plain message", text, got, err)
		}
	}
}

func TestParseTakesTheFirstACK(t *testing.T) {
	t.Parallel()
	text := "[ACK] T-3 - QUEUED\nUnderstanding: first\nNote: busy\n\n[ACK] T-4 - RECEIVED\nUnderstanding: second"
	got, err := ack.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if got.TaskID != "T-3" || got.Status != ack.Queued || got.Understanding != "first" || got.Note != "busy" {
		t.Errorf("Parse = %+v, want the first ACK, T-3 QUEUED", got)
	}
	// The first form wins even when it is broken: the agent must hear of it.
	if _, err := ack.Parse("[ACK] - RECEIVED\n[ACK] T-3 - RECEIVED"); err == nil {
		t.Error("Parse(broken, good) = nil error, want the first line's error")
	}
	// ParseAll returns both ACKs, each with its own lines.
	all, err := ack.ParseAll(text)
	if err != nil || len(all) != 2 {
		t.Fatalf("ParseAll = %d replies, %v; want 2", len(all), err)
	}
	if all[1].TaskID != "T-4" || all[1].Understanding != "second" || all[1].Note != "" || all[1].Text != text {
		t.Errorf("ParseAll[1] = %+v", all[1])
	}
}

func TestParseACKBody(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
		want ack.Reply
	}{
		{"labels in any case and markdown", "[ACK] T-3 - RECEIVED\n**Understanding:** fix the parser\n", ack.Reply{Understanding: "fix the parser"}},
		{"emphasised label, colon outside", "[ACK] T-3 - RECEIVED\n**Understanding**: fix the parser", ack.Reply{Understanding: "fix the parser"}},
		{"whole line emphasised", "[ACK] T-3 - RECEIVED\n**UNDERSTANDING: fix the parser**", ack.Reply{Understanding: "fix the parser"}},
		{"bulleted labels", "[ACK] T-3 - RECEIVED\n- understanding: fix it\n- note: after T-2", ack.Reply{Understanding: "fix it", Note: "after T-2"}},
		{"understanding on the next lines", "[ACK] T-3 - RECEIVED\nUnderstanding:\n  fix the parser\n  and its tests\n\nprose", ack.Reply{Understanding: "fix the parser and its tests"}},
		{"understanding on the ACK line", "[ACK] T-3 - RECEIVED — Understanding: fix it", ack.Reply{Understanding: "fix it"}},
		{"first understanding wins", "[ACK] T-3 - RECEIVED\nUnderstanding: one\nUnderstanding: two", ack.Reply{Understanding: "one"}},
		{"bulleted questions", "[ACK] T-3 - CLARIFICATION_NEEDED\nQuestions:\n- A?\n* B?\n+ C?", ack.Reply{Status: ack.ClarificationNeeded, Questions: []string{"A?", "B?", "C?"}}},
		{"loose numbered list", "[ACK] T-3 - CLARIFICATION_NEEDED\n**Questions:**\n\n1. A?\n\n2) B?\n\nThanks!", ack.Reply{Status: ack.ClarificationNeeded, Questions: []string{"A?", "B?"}}},
		{"plain question lines", "[ACK] T-3 - CLARIFICATION_NEEDED\nQuestions:\nA?\nB?\n\nThanks!", ack.Reply{Status: ack.ClarificationNeeded, Questions: []string{"A?", "B?"}}},
		{"inline question", "[ACK] T-3 - CLARIFICATION_NEEDED\nQuestion: A?\nThanks!", ack.Reply{Status: ack.ClarificationNeeded, Questions: []string{"A?"}}},
		{"questions end at a label", "[ACK] T-3 - CLARIFICATION_NEEDED\nQuestions:\n1. A?\nNote: urgent", ack.Reply{Status: ack.ClarificationNeeded, Questions: []string{"A?"}, Note: "urgent"}},
		{"reason of a rejection", "[ACK] T-3 - REJECTED\nReason: no Rust toolchain here", ack.Reply{Status: ack.Rejected, Note: "no Rust toolchain here"}},
		{"reason on the ACK line", "[ACK] T-3 - REJECTED - no Rust toolchain here", ack.Reply{Status: ack.Rejected, Note: "no Rust toolchain here"}},
		{"reason in parentheses", "[ACK] T-3 - REJECTED (no Rust toolchain here)", ack.Reply{Status: ack.Rejected, Note: "no Rust toolchain here"}},
		{"Note: wins over the ACK line", "[ACK] T-3 - QUEUED - later\nNote: after GH-3", ack.Reply{Status: ack.Queued, Note: "after GH-3"}},
		{"nothing but emphasis after STATUS", "**[ACK] T-3 - RECEIVED**", ack.Reply{}},
		{"questions begun on the ACK line", "[ACK] T-3 - CLARIFICATION_NEEDED. Questions:\n1. A?\n2. B?", ack.Reply{Status: ack.ClarificationNeeded, Questions: []string{"A?", "B?"}}},
		{"understanding begun on the ACK line", "[ACK] T-3 - RECEIVED; Understanding:\nfix it", ack.Reply{Understanding: "fix it"}},
		{"a note label on the ACK line wins", "[ACK] T-3 - QUEUED - Note: after GH-3\nReason: busy", ack.Reply{Status: ack.Queued, Note: "after GH-3"}},
		{"an empty understanding followed by a label", "[ACK] T-3 - RECEIVED\nUnderstanding:\nNote: x\nUnderstanding: y", ack.Reply{Understanding: "y", Note: "x"}},
		{"an understanding on the lines below wins", "[ACK] T-3 - RECEIVED\nUnderstanding:\n- a\n- b\nUnderstanding: y", ack.Reply{Understanding: "a b"}},
		{"plain questions end at an ACK line", "[ACK] T-3 - CLARIFICATION_NEEDED\nQuestions:\nA?\n[ACK] T-4 - RECEIVED", ack.Reply{Status: ack.ClarificationNeeded, Questions: []string{"A?"}}},
		{"prose between labels", "[ACK] T-3 - RECEIVED\nI read the task.\nUnderstanding: fix it\nThen I start.", ack.Reply{Understanding: "fix it"}},
		{"labels stop at the next ACK", "[ACK] T-3 - RECEIVED\n[ACK] T-4 - RECEIVED\nUnderstanding: for T-4", ack.Reply{}},
	}
	for _, tt := range tests {
		got, err := ack.Parse(tt.text)
		if err != nil {
			t.Errorf("%s: Parse: %v", tt.name, err)
			continue
		}
		want := tt.want
		want.Kind, want.TaskID, want.Text = ack.KindAck, "T-3", tt.text
		if want.Status == "" {
			want.Status = ack.Received
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Parse =\n%#v\nwant\n%#v", tt.name, got, want)
		}
	}
}

func TestParseFindsJSONInProseAndFences(t *testing.T) {
	t.Parallel()
	obj := `{"type":"task-acknowledgment","task_id":"T-3","status":"received","understanding":"fix it"}`
	for _, text := range []string{
		obj,
		"Acknowledging: " + obj + " — starting now.",
		"```json\n" + obj + "\n```",
		"~~~\n" + obj + "\n~~~",
		`{"from": "agent", "content": ` + obj + `}`,
		"Prose with {braces} and a {\"broken\": first, then " + obj,
		`{"type": "note", "body": "see below"} ` + obj,
	} {
		got, err := ack.Parse(text)
		if err != nil {
			t.Errorf("Parse(%q): %v", text, err)
			continue
		}
		if got.Kind != ack.KindAck || got.TaskID != "T-3" || got.Status != ack.Received || got.Understanding != "fix it" || got.Text != text {
			t.Errorf("Parse(%q) = %+v", text, got)
		}
	}
}

func TestParseReadsJSONStringsCarefully(t *testing.T) {
	t.Parallel()
	// Escaped quotes and braces inside strings; an unterminated string in
	// prose before the object ends at its line.
	obj := `{"type":"task-acknowledgment","task_id":"T-3","status":"received","understanding":"fix \"it\" {now} \\"}`
	for _, text := range []string{obj, "He wrote {\"note\": \"open string\n" + obj, `[{"a": "b"}, ` + obj + `]`} {
		got, err := ack.Parse(text)
		if err != nil || got.Kind != ack.KindAck || got.Understanding != `fix "it" {now} \` {
			t.Errorf("Parse(%q) = %+v, %v", text, got, err)
		}
	}
}

func TestParseBrokenJSONFormSaysWhatIsWrong(t *testing.T) {
	t.Parallel()
	tests := []struct{ text, want string }{
		{`{"type": "task-acknowledgment", "status": "received"}`, `task-acknowledgment: field "task_id": missing`},
		{`{"type": "task-acknowledgment", "task_id": "T-3", "status": "ready"}`, `field "status": unknown status "ready"`},
		{`{"type": "task-acknowledgment-error", "task_id": "T-3", "error_code": "BUSY"}`, `field "error_code": unknown error code "BUSY"`},
		{`{"type": "task-acknowledgment", "task_id": "T-3", "status": "received",}`, "task-acknowledgment: invalid JSON"},
		{"```json\n{\"type\": \"task-complete\", \"task_id\": \"T-3\", \"status\": \"success\"\n```", "task-complete: invalid JSON: no closing brace"},
		{`{"type": "checkpoint-ack", "task_id": "T-3", "checkpoint": "one"}`, `field "checkpoint": want an integer, got JSON string`},
	}
	for _, tt := range tests {
		_, err := ack.Parse(tt.text)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) error = %v, want it to say %q", tt.text, err, tt.want)
		}
	}
	// A broken outer object around a good form is not the form's fault.
	text := `{from: agent, "content": {"type": "acknowledgment", "message": "ok"}}`
	if got, err := ack.Parse(text); err != nil || got.Answer != ack.AnswerOK {
		t.Errorf("Parse(%q) = %+v, %v; want the inner acknowledgment", text, got, err)
	}
}

func TestParseAllReturnsEveryForm(t *testing.T) {
	t.Parallel()
	// An exec agent's whole output: the ACK line, work, then task-complete.
	text := "[ACK] T-3 - RECEIVED\nUnderstanding: fix the parser\n\nEditing ack/parse.go…\nRunning go test…\n\n" +
		"```json\n{\"type\": \"task-complete\", \"task_id\": \"T-3\", \"status\": \"success\", \"summary\": \"fixed\", " +
		"\"files_modified\": [\"ack/parse.go\"], \"verification\": {\"command\": \"go test ./...\", \"exit_code\": 0}}\n```\n" +
		"[ACK] - RECEIVED\n"
	all, err := ack.ParseAll(text)
	if len(all) != 2 {
		t.Fatalf("ParseAll = %d replies, want 2", len(all))
	}
	if all[0].Kind != ack.KindAck || all[1].Kind != ack.KindComplete || all[1].Complete != ack.CompleteSuccess {
		t.Errorf("ParseAll kinds = %s, %s (%s)", all[0].Kind, all[1].Kind, all[1].Complete)
	}
	want := &ack.Verification{Command: "go test ./...", ExitCode: 0}
	if !reflect.DeepEqual(all[1].Verification, want) || !reflect.DeepEqual(all[1].FilesModified, []string{"ack/parse.go"}) {
		t.Errorf("task-complete = %+v", all[1])
	}
	var pe *ack.ParseError
	if !errors.As(err, &pe) || pe.Line != 10 {
		t.Errorf("ParseAll error = %v, want the broken line 10", err)
	}
	if all, err := ack.ParseAll("nothing here"); len(all) != 0 || err != nil {
		t.Errorf("ParseAll(prose) = %v, %v", all, err)
	}
}

func TestOurOwnMessagesAreNeverAnAck(t *testing.T) {
	t.Parallel()
	// An agent, or a terminal, that echoes wilco's prompt back must not
	// acknowledge by accident.
	_, reqBody := ack.AckRequired("T-3")
	_, corrBody := ack.Correction("T-3", []string{"--sort flag"}, "list files")
	_, wrongBody := ack.WrongID("T-3", "T-4")
	delegation := "## Task: T-3\nFix the parser.\n\n## Acceptance Criteria\n- [ ] tests pass\n\n" + ack.Teach("T-3")
	for _, text := range []string{ack.Teach("T-3"), reqBody, corrBody, wrongBody, delegation} {
		got, err := ack.Parse(text)
		if err != nil || got.Kind != ack.KindMessage {
			t.Errorf("Parse(%.60q…) = %s, %v; want a plain message", text, got.Kind, err)
		}
	}
}

func TestForIsStrictOnTaskID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		got, want string
		ok        bool
	}{
		{"T-3", "T-3", true},
		{" T-3 ", "T-3", true},
		{"T-3", " T-3\n", true},
		{"T-3.", "T-3", true}, // prose punctuation after the reply's id
		{"T-3:", "T-3", true},
		{"T-3", "t-3", false},
		{"T-3", "T-3.", false}, // the expected id is taken as it is
		{"T-3", "T-30", false},
		{"T-30", "T-3", false},
		{"T-3", "", false},
		{"", "T-3", false},
		{"", "", false},
		{"03-01:task-3", "03-01:task-3", true},
		{"03-01:task-3", "03-01:task-31", false},
	}
	for _, tt := range tests {
		err := ack.Reply{Kind: ack.KindAck, TaskID: tt.got}.For(tt.want)
		if (err == nil) != tt.ok {
			t.Errorf("Reply{TaskID: %q}.For(%q) = %v, want ok=%v", tt.got, tt.want, err, tt.ok)
		}
		if err != nil && tt.got != "" && tt.want != "" && (!strings.Contains(err.Error(), strings.TrimSpace(tt.want)) || !strings.Contains(err.Error(), strings.TrimSpace(tt.got))) {
			t.Errorf("For error %q does not name both ids", err)
		}
	}
}

func TestValidateTaskID(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"T-3", "GH-4-xls-implementation", "03-01:task-3", "a", "A.b_c:d-e", strings.Repeat("x", 64)} {
		if err := ack.ValidateTaskID(id); err != nil {
			t.Errorf("ValidateTaskID(%q) = %v", id, err)
		}
	}
	for _, id := range []string{"", "T 3", "T/3", "T-3.", "T-3:", "-", "-x", "_T", ".x", ":x", "{task_id}", "é", strings.Repeat("x", 65)} {
		if err := ack.ValidateTaskID(id); err == nil {
			t.Errorf("ValidateTaskID(%q) = nil, want an error", id)
		}
	}
}
