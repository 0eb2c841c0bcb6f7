package exec

import (
	"slices"
	"strings"
	"testing"
)

func TestToolCallsBecomeMilestones(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, line string
		want       []string
	}{
		{"claude write", `{"type":"assistant","message":{"content":[{"type":"text","text":"ok"},{"type":"tool_use","id":"t1","name":"Write","input":{"file_path":"/r/calc.go","content":"x"}}]}}`, []string{"Writing calc.go"}},
		{"claude bash", `{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"go test ./..."}}]}}`, []string{"Running go test ./..."}},
		{"codex command", `{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -lc 'go test ./...'","status":"in_progress"}}`, []string{"Running go test ./..."}},
		{"codex file change", `{"type":"item.completed","item":{"type":"file_change","changes":[{"path":"/r/calc.go","kind":"update"}]}}`, []string{"Editing calc.go"}},
		{"gemini", `{"type":"tool_use","timestamp":"x","tool_name":"read_file","tool_id":"r1","parameters":{"absolute_path":"/r/calc.go"}}`, []string{"Reading calc.go"}},
		{"opencode", `{"type":"tool_use","part":{"type":"tool","tool":"edit","state":{"status":"completed","input":{"filePath":"/r/calc.go"}}}}`, []string{"Editing calc.go"}},
		{"grep", `{"type":"tool_use","tool_name":"grep_search","parameters":{"pattern":"func Add"}}`, []string{"Searching for func Add"}},
		{"unknown tool", `{"type":"tool_use","tool_name":"web_fetch","parameters":{}}`, []string{"Using web_fetch"}},
		{"text only", `{"type":"assistant","message":{"content":[{"type":"text","text":"tool time"}]}}`, nil},
		{"plain text", `I will use a tool`, nil},
	} {
		if got := toolActivity(c.line); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestClaudeAPIRetriesAreReadAsAPIErrors(t *testing.T) {
	t.Parallel()
	p := &claudeParser{}
	text, _ := p.Line(`{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":574,"error_status":401,"error":"authentication_failed","session_id":"s"}`)
	if len(text) != 1 || !fatalAPIRe.MatchString(text[0]) || text[0] != "API Error: 401 authentication_failed (the CLI retries: attempt 1 of 10)" {
		t.Fatalf("401 retry read as %q", text)
	}
	text, _ = p.Line(`{"type":"system","subtype":"api_retry","attempt":2,"max_retries":10,"error_status":null,"error":"unknown"}`)
	if len(text) != 1 || fatalAPIRe.MatchString(text[0]) || !strings.Contains(text[0], "no response from the model's API") {
		t.Fatalf("a retry without a status read as %q", text)
	}
	text, _ = p.Line(`{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"error_status":529,"error":"overloaded_error"}`)
	if len(text) != 1 || fatalAPIRe.MatchString(text[0]) {
		t.Fatalf("an overload is not fatal: %q", text)
	}
}

func TestUsageIsReadFromEachCLIsOutput(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, line             string
		in, out, cached, turns int64
		cost                   float64
		model                  string
	}{
		{"claude", `{"type":"result","subtype":"success","total_cost_usd":0.0123,"num_turns":3,"usage":{"input_tokens":100,"output_tokens":20,"cache_read_input_tokens":5},"modelUsage":{"claude-x":{"inputTokens":100}}}`, 100, 20, 5, 3, 0.0123, "claude-x"},
		{"codex", `{"type":"turn.completed","usage":{"input_tokens":200,"cached_input_tokens":50,"output_tokens":40,"reasoning_output_tokens":0}}`, 200, 40, 50, 1, 0, ""},
		{"gemini", `{"type":"result","status":"success","stats":{"total_tokens":130,"input_tokens":100,"output_tokens":30,"cached":10,"duration_ms":5,"tool_calls":1,"models":{"gemini-x":{"total_tokens":130}}}}`, 100, 30, 10, 1, 0, "gemini-x"},
		{"opencode", `{"type":"step_finish","part":{"type":"step-finish","tokens":{"total":120,"input":100,"output":20,"reasoning":0,"cache":{"write":0,"read":7}},"cost":0.002}}`, 100, 20, 7, 1, 0.002, ""},
	} {
		u, ok := usageOf(c.line)
		if !ok || u.InputTokens != c.in || u.OutputTokens != c.out || u.CachedTokens != c.cached || int64(u.Turns) != c.turns || u.CostUSD != c.cost || u.Model != c.model {
			t.Errorf("%s: %+v, %v", c.name, u, ok)
		}
	}
	if _, ok := usageOf(`{"type":"assistant","message":{"content":[{"type":"text","text":"tokens"}]}}`); ok {
		t.Error("usage read from a message")
	}
}
