package exec

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"wilco/ack"
	"wilco/core"
)

func TestBuildCommandPresets(t *testing.T) {
	t.Parallel()
	const prompt, file = "PROMPT", "/runs/T-1-a1/prompt.md"
	ptr := pointer(file)
	for _, tc := range []struct {
		c       AgentConfig
		session string
		argv    []string
		stdin   bool
	}{
		{AgentConfig{Preset: PresetClaudeCode}, "", []string{"claude", "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits"}, true},
		{AgentConfig{Preset: PresetClaudeCode, Prompt: PromptArg, Command: []string{"bin/claude", "--model", "opus"}}, "S1",
			[]string{"bin/claude", "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits", "--model", "opus", "--resume", "S1", prompt}, false},
		{AgentConfig{Preset: PresetClaudeCode, Prompt: PromptFile}, "", []string{"claude", "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits", ptr}, false},
		{AgentConfig{Preset: PresetCodex}, "", []string{"codex", "exec", "--sandbox", "workspace-write", "--json", "-"}, true},
		{AgentConfig{Preset: PresetCodex, Prompt: PromptArg, Command: []string{"codex", "--model", "gpt-5"}}, "th-1",
			[]string{"codex", "exec", "--sandbox", "workspace-write", "--json", "--model", "gpt-5", "resume", "th-1", prompt}, false},
		{AgentConfig{Preset: PresetCodex, MCP: []string{"/bin/wilco", "mcp"}}, "", []string{"codex", "exec", "--sandbox", "workspace-write", "--json",
			"-c", `mcp_servers.wilco={command="/bin/wilco",args=["mcp"],env_vars=["WILCO_URL","WILCO_AGENT_TOKEN","WILCO_TASK_ID","WILCO_MESSAGE_ID","WILCO_AGENT","WILCO_ATTEMPT"],default_tools_approval_mode="approve"}`, "-"}, true},
		{AgentConfig{Preset: PresetGemini, Prompt: PromptArg}, "", []string{"gemini", "--output-format", "stream-json", "--approval-mode", "auto_edit", "-p", prompt}, false},
		{AgentConfig{Preset: PresetGemini, Prompt: PromptFile}, "g-1", []string{"gemini", "--output-format", "stream-json", "--approval-mode", "auto_edit", "--resume", "g-1", "-p", ptr}, false},
		{AgentConfig{Preset: PresetAider}, "ignored", []string{"aider", "--yes-always", "--no-auto-commits", "--no-pretty", "--message-file", file}, true},
		{AgentConfig{Preset: PresetAider, Prompt: PromptArg}, "", []string{"aider", "--yes-always", "--no-auto-commits", "--no-pretty", "--message", prompt}, false},
		{AgentConfig{Preset: PresetAider, Prompt: PromptFile}, "", []string{"aider", "--yes-always", "--no-auto-commits", "--no-pretty", "--message-file", file}, false},
		{AgentConfig{Preset: PresetOpencode, Prompt: PromptArg}, "ses_1", []string{"opencode", "run", "--format", "json", "--session", "ses_1", prompt}, false},
		{AgentConfig{Preset: PresetOpencode}, "", []string{"opencode", "run", "--format", "json", ptr}, true},
		{AgentConfig{Command: []string{"my-agent", "--print"}}, "", []string{"my-agent", "--print"}, true},
		{AgentConfig{Command: []string{"my-agent"}, Prompt: PromptArg}, "", []string{"my-agent", prompt}, false},
		{AgentConfig{Command: []string{"my-agent"}, Prompt: PromptFile}, "S", []string{"my-agent", file}, false},
	} {
		inv, err := buildCommand(tc.c, prompt, file, tc.session)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(inv.argv, tc.argv) || inv.stdin != tc.stdin {
			t.Errorf("%s %s: argv %q stdin %v, want %q %v", tc.c.Preset, tc.c.Prompt, inv.argv, inv.stdin, tc.argv, tc.stdin)
		}
	}
	if _, err := buildCommand(AgentConfig{Name: "x", Preset: "cursor"}, prompt, file, ""); err == nil {
		t.Error("an unknown preset is accepted")
	}
	if canResume(AgentConfig{Preset: PresetAider}) || canResume(AgentConfig{Command: []string{"x"}}) || !canResume(AgentConfig{Preset: PresetCodex}) {
		t.Error("canResume")
	}
}

// feed runs lines through p and returns the text and the block ends.
func feed(p outputParser, in ...string) (text []string, ends int) {
	for _, l := range in {
		out, end := p.Line(l)
		text = append(text, out...)
		if end {
			ends++
		}
	}
	return append(text, p.Flush()...), ends
}

func TestClaudeParser(t *testing.T) {
	t.Parallel()
	p := &claudeParser{}
	text, ends := feed(p,
		`{"type":"system","subtype":"init","session_id":"s-1","tools":[]}`,
		`{"type":"assistant","message":{"content":[{"type":"text","text":"[ACK] T-1 - RECEIVED\nUnderstanding: x"},{"type":"tool_use","name":"Edit"}]},"session_id":"s-1"}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","content":"[ACK] T-9 - RECEIVED"}]}}`,
		`a warning on stderr`,
		`{"type":"result","subtype":"success","is_error":false,"result":"All done.","session_id":"s-1"}`,
	)
	if want := []string{"[ACK] T-1 - RECEIVED", "Understanding: x", "a warning on stderr"}; !slices.Equal(text, want) || ends != 1 {
		t.Fatalf("text %q (%d ends), want %q", text, ends, want)
	}
	if p.Result() != "All done." || p.Session() != "s-1" {
		t.Fatalf("result %q session %q", p.Result(), p.Session())
	}
	// --output-format json: one result object is all the text.
	p = &claudeParser{}
	if text, _ := feed(p, `{"type":"result","result":"[ACK] T-1 - RECEIVED\nUnderstanding: y","session_id":"s-2"}`); len(text) != 2 || p.Session() != "s-2" {
		t.Fatalf("json output: %q", text)
	}
}

func TestCodexParser(t *testing.T) {
	t.Parallel()
	p := &codexParser{}
	text, ends := feed(p,
		`{"type":"thread.started","thread_id":"0199a213"}`,
		`{"type":"turn.started"}`,
		`{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"**Thinking**"}}`,
		`{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"[ACK] T-1 - RECEIVED\nUnderstanding: z"}}`,
		`{"type":"item.completed","item":{"id":"item_2","type":"command_execution","command":"ls","aggregated_output":"x"}}`,
		`{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"Done."}}`,
		`{"type":"turn.failed","error":{"message":"rate limited"}}`,
	)
	if want := []string{"[ACK] T-1 - RECEIVED", "Understanding: z", "Done.", "error: rate limited"}; !slices.Equal(text, want) || ends != 3 {
		t.Fatalf("text %q (%d ends)", text, ends)
	}
	if p.Result() != "Done." || p.Session() != "0199a213" {
		t.Fatalf("result %q session %q", p.Result(), p.Session())
	}
	p = &codexParser{}
	if text, _ := feed(p, `{"id":"0","msg":{"type":"agent_message","message":"old form"}}`); !slices.Equal(text, []string{"old form"}) {
		t.Fatalf("old form: %q", text)
	}
}

func TestGeminiParser(t *testing.T) {
	t.Parallel()
	p := &geminiParser{}
	text, ends := feed(p,
		`{"type":"init","timestamp":"t","session_id":"g-1","model":"gemini"}`,
		`{"type":"message","role":"user","content":"the prompt [ACK] T-1 - RECEIVED"}`,
		`{"type":"message","role":"assistant","content":"[ACK] T-1 - REC","delta":true}`,
		`{"type":"message","role":"assistant","content":"EIVED\nUnderstanding: w","delta":true}`,
		`{"type":"tool_use","tool_name":"write_file","tool_id":"1","parameters":{}}`,
		`{"type":"message","role":"assistant","content":"Finished","delta":true}`,
		`{"type":"result","status":"success","stats":{}}`,
	)
	if want := []string{"[ACK] T-1 - RECEIVED", "Understanding: w", "Finished"}; !slices.Equal(text, want) || ends != 2 {
		t.Fatalf("text %q (%d ends)", text, ends)
	}
	if p.Result() != "Finished" || p.Session() != "g-1" {
		t.Fatalf("result %q session %q", p.Result(), p.Session())
	}
	p = &geminiParser{}
	if text, _ := feed(p, `{"response":"one\ntwo","stats":{}}`); !slices.Equal(text, []string{"one", "two"}) || p.Result() != "one\ntwo" {
		t.Fatalf("json output: %q", text)
	}
}

func TestOpencodeParser(t *testing.T) {
	t.Parallel()
	p := &opencodeParser{}
	text, ends := feed(p,
		`{"type":"step_start","timestamp":1,"sessionID":"ses_1","part":{"type":"step-start"}}`,
		`{"type":"text","timestamp":2,"sessionID":"ses_1","part":{"type":"text","text":"[ACK] T-1 - RECEIVED\nUnderstanding: v"}}`,
		`{"type":"tool_use","sessionID":"ses_1","part":{"tool":"bash"}}`,
		`{"type":"text","sessionID":"ses_1","part":{"type":"text","text":"All good."}}`,
		`{"type":"error","sessionID":"ses_1","error":{"name":"APIError","data":{"message":"overloaded"}}}`,
	)
	if want := []string{"[ACK] T-1 - RECEIVED", "Understanding: v", "All good.", "error: overloaded"}; !slices.Equal(text, want) || ends != 3 {
		t.Fatalf("text %q (%d ends)", text, ends)
	}
	if p.Result() != "All good." || p.Session() != "ses_1" {
		t.Fatalf("result %q session %q", p.Result(), p.Session())
	}
}

// scan runs lines through a scanner and returns the ACK texts in order.
func scan(s *scanner, in ...string) []string {
	var out []string
	for _, l := range in {
		s.line(l)
		if a, _ := s.take(); a != "" {
			out = append(out, a)
		}
	}
	s.flush()
	if a, _ := s.take(); a != "" {
		out = append(out, a)
	}
	return out
}

func TestScannerAckBlock(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   []string
		want []string
	}{
		{"up to a blank line", []string{"prose", "[ACK] T-1 - RECEIVED", "Understanding: u", "", "work"}, []string{"[ACK] T-1 - RECEIVED\nUnderstanding: u"}},
		{"questions", []string{"**[ACK]** T-1 - CLARIFICATION_NEEDED", "Understanding: u", "Questions:", "1. a?", "2. b?"},
			[]string{"**[ACK]** T-1 - CLARIFICATION_NEEDED\nUnderstanding: u\nQuestions:\n1. a?\n2. b?"}},
		{"once per turn", []string{"[ACK] T-1 - RECEIVED", "[ACK] T-1 - QUEUED", "", "[ACK] T-1 - REJECTED"}, []string{"[ACK] T-1 - RECEIVED"}},
		{"the wrong id is the core's to judge", []string{"[ACK] T-9 - RECEIVED", ""}, []string{"[ACK] T-9 - RECEIVED"}},
		{"the lesson echoed", strings.Split(ack.Teach("T-1"), "\n"), nil},
		{"the request echoed", []string{"Please confirm receipt with: [ACK] T-1 - {status}", "[ACK] - RECEIVED"}, nil},
		{"json", []string{`{"type":"task-acknowledgment","task_id":"T-1","status":"received","understanding":"u"}`, "more"},
			[]string{`{"type":"task-acknowledgment","task_id":"T-1","status":"received","understanding":"u"}`}},
		{"json error", []string{`{"type":"task-acknowledgment-error","task_id":"T-1","error_code":"RESOURCE_UNAVAILABLE","error_message":"busy","retry_after_minutes":5}`},
			[]string{`{"type":"task-acknowledgment-error","task_id":"T-1","error_code":"RESOURCE_UNAVAILABLE","error_message":"busy","retry_after_minutes":5}`}},
	} {
		if got := scan(&scanner{wantAck: true}, tc.in...); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	long := []string{"[ACK] T-1 - RECEIVED"}
	for range 30 {
		long = append(long, "more understanding")
	}
	if got := scan(&scanner{wantAck: true}, long...); len(got) != 1 || strings.Count(got[0], "\n") != maxAckLines {
		t.Errorf("a long block: %q", got)
	}
	if got := scan(&scanner{}, "[ACK] T-1 - RECEIVED", ""); got != nil {
		t.Errorf("no ACK is asked for, but %q", got)
	}
}

func TestScannerProgressAndCompletion(t *testing.T) {
	t.Parallel()
	s := &scanner{}
	s.line(`{"type":"checkpoint-ack","task_id":"T-1","checkpoint":1,"status":"completed","summary":"tests"}`)
	s.line(`{"type":"task-complete","task_id":"T-1","status":"success","summary":"first"}`)
	s.line(`{"type":"task-complete","task_id":"T-1","status":"failure","summary":"second","error":"e"}`)
	_, progress := s.take()
	if len(progress) != 1 || s.complete == nil || s.complete.Complete != ack.CompleteFailure || s.complete.Summary != "second" {
		t.Fatalf("progress %q complete %+v", progress, s.complete)
	}
}

func TestTurnResult(t *testing.T) {
	t.Parallel()
	tr := &turn{agent: AgentConfig{Timeout: 30e9, IdleTimeout: 10e9}}
	text := &textTail{max: maxText}
	for _, l := range []string{"a", "", "b", "c"} {
		text.add(l)
	}
	base := core.TurnResult{TaskID: "T-1", Attempt: 2}
	r := tr.result(base, procResult{exitCode: 0, text: text})
	if r.Summary != "a\nb\nc" || r.Output != "a\n\nb\nc" || r.Error != "" || r.TaskID != "T-1" || r.Attempt != 2 {
		t.Fatalf("%+v", r)
	}
	r = tr.result(base, procResult{exitCode: 0, text: text, result: " final "})
	if r.Summary != "final" {
		t.Fatalf("summary %q", r.Summary)
	}
	r = tr.result(base, procResult{exitCode: 143, timedOut: true, idle: true, text: text})
	if !r.TimedOut || !strings.Contains(r.Error, "10s (idle_timeout)") {
		t.Fatalf("%+v", r)
	}
	r = tr.result(base, procResult{exitCode: 139, signal: "segmentation fault", text: text})
	if !strings.Contains(r.Error, "segmentation fault") {
		t.Fatalf("%+v", r)
	}
	success := &ack.Reply{Kind: ack.KindComplete, Complete: ack.CompleteSuccess, Summary: "claims success", FilesModified: []string{"x"}}
	r = tr.result(base, procResult{exitCode: 1, text: text, complete: success})
	if r.Status != "" || r.Summary != "claims success" || !slices.Equal(r.Files, []string{"x"}) {
		t.Fatalf("a success must not overrule exit 1: %+v", r)
	}
	r = tr.result(base, procResult{exitCode: 0, text: text, complete: success})
	if r.Status != ack.CompleteSuccess {
		t.Fatalf("%+v", r)
	}
}

func TestEnvironment(t *testing.T) {
	t.Parallel()
	base := []string{"PATH=/bin", "WILCO_TOKEN=admin-secret", "WILCO_PHASE=stale", "HOME=/h", "KEY=parent"}
	got := envFor(base, map[string]string{"WILCO_PHASE": "work", "WILCO_AGENT": "a"}, map[string]string{"KEY": "agent", "WILCO_AGENT": "override"})
	want := []string{"PATH=/bin", "HOME=/h", "WILCO_AGENT=a", "WILCO_PHASE=work", "KEY=agent", "WILCO_AGENT=override"}
	if !slices.Equal(got, want) {
		t.Fatalf("env %q, want %q", got, want)
	}
}

func TestPathSafeAndRunDir(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"T-3": "T-3", "03-01:task-2": "03-01_task-2", "a/../b": "a_.._b", "": "_"} {
		if got := pathSafe(in); got != want {
			t.Errorf("pathSafe(%q) = %q, want %q", in, got, want)
		}
	}
	dir := t.TempDir()
	a, err := New(Options{Dir: dir, Report: newReporter()})
	if err != nil {
		t.Fatal(err)
	}
	if got := a.RunDir("03-01:task-2", 3); got != filepath.Join(dir, ".wilco", "runs", "03-01_task-2-a3") {
		t.Fatalf("RunDir = %q", got)
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	for typ, want := range map[string]sendKind{
		"task_delegation": sendTaskFirst, "task_turn": sendTaskFirst, "resend": sendTaskFirst,
		"ack_request": sendTaskAgain, "correction": sendTaskAgain, "wrong_id": sendTaskAgain, "task_clarification": sendTaskAgain,
		"cancel": sendCancel, "timeout_notice": sendNotice, "extension_granted": sendNotice, "operation_outcome": sendNotice,
		"conversation": sendMessage, "pre_operation": sendMessage, "reminder": sendMessage, "followup": sendMessage, "instruction": sendMessage,
	} {
		if got := classify(typ); got != want {
			t.Errorf("classify(%q) = %d, want %d", typ, got, want)
		}
	}
}

func TestClaudeCodesResultEndsTheTurnAndSaysWhetherItFailed(t *testing.T) {
	for _, c := range []struct {
		line          string
		ended, failed bool
	}{
		{`{"type":"assistant","message":{"content":[{"type":"text","text":"working"}]}}`, false, false},
		{`{"type":"result","subtype":"success","is_error":false,"result":"Done."}`, true, false},
		{`{"type":"result","subtype":"error_during_execution","is_error":true}`, true, true},
	} {
		p := &claudeParser{}
		p.Line(c.line)
		if ended, failed := p.Ended(); ended != c.ended || failed != c.failed {
			t.Errorf("%s: Ended() = %v, %v, want %v, %v", c.line, ended, failed, c.ended, c.failed)
		}
	}
}
