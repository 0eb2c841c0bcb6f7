package modelserver

import (
	"encoding/json"
	"testing"
)

// A request as Claude Code sends it: a system prompt of text blocks, the
// user's prompt, an assistant turn with a tool call and its result, and
// its environment in a message of role "system" at the end.
func TestATurnCarriesTheSystemTextOfTheRequestAndOfItsSystemMessages(t *testing.T) {
	const body = `{
	  "system": [{"type": "text", "text": "You are an agent."}, {"type": "text", "text": "Be brief."}],
	  "tools": [{"name": "Write"}],
	  "messages": [
	    {"role": "user", "content": [{"type": "text", "text": "## Task: T-2\n\nWrite T-2."}]},
	    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Write", "input": {}}]},
	    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]},
	    {"role": "system", "content": [{"type": "text", "text": " - Primary working directory: /repo/.wilco/worktrees/T-2"}]}
	  ]
	}`
	var req map[string]any
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	got := anthropicTurn(req)
	if got.Prompt != "## Task: T-2\n\nWrite T-2." || got.Step != 1 || len(got.Tools) != 1 || got.Tools[0] != "Write" {
		t.Fatalf("turn: %+v", got)
	}
	if want := "You are an agent.\nBe brief.\n - Primary working directory: /repo/.wilco/worktrees/T-2"; got.System != want {
		t.Fatalf("system %q, want %q", got.System, want)
	}
}
