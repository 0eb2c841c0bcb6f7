package test

// End-to-end tests of the real TUIs in tmux acknowledging and completing
// their tasks by calling wilco's MCP tools, which the tmux presets register
// as the exec presets do. The program starts the server once, for its
// first task: a later task's calls name it (task_id, read from the prompt's
// "[ACK] T-2"), and a call that names none is refused, saying so.

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	execadapter "wilco/adapter/exec"
	"wilco/modelserver"
)

// mcpStep is one step of the model's side of a task acknowledged through
// wilco's MCP tools: a tool's name (as the CLI offers it, "" for the
// write of file.txt) and whether the call names its task.
type mcpStep struct {
	tool  string
	named bool
}

// mcpTUISteps are the model's steps for a task: the first task's calls
// name no task (the server's own, from the program's environment); a later
// task's first ACK names none either and is refused, then its calls name
// it.
func mcpTUISteps(id, ack, complete string) []mcpStep {
	if id == "T-1" {
		return []mcpStep{{tool: ack}, {}, {tool: complete}}
	}
	return []mcpStep{{tool: ack}, {tool: ack, named: true}, {}, {tool: complete, named: true}}
}

// mcpToolInput is the input of a call of wilco's tool to the task id.
func mcpToolInput(tool, id string, named bool) map[string]any {
	in := map[string]any{"status": "RECEIVED", "understanding": "Will write the fix into file.txt"}
	if strings.HasSuffix(tool, "wilco_complete") {
		in = map[string]any{"status": "success", "summary": "Wrote the fix into file.txt", "files_modified": []string{"file.txt"}}
	}
	if named {
		in["task_id"] = id
	}
	return in
}

// checkMCPTUITasks runs T-1 then T-2 on a TUI agent whose model
// acknowledges and completes through wilco's MCP tools, and checks that
// both succeed at their first attempt with both delegations acknowledged,
// and that wilco's refusal of T-2's unnamed ACK reached the model (all is
// the text of every request to it).
func checkMCPTUITasks(t *testing.T, in *instance, dir string, all func() string) {
	t.Helper()
	for _, id := range []string{"T-1", "T-2"} {
		in.submit(map[string]any{"id": id, "description": "Write the fix into file.txt"})
		got := in.waitTask(id, 5*time.Minute, "success", "escalated", "stuck")
		if got.State != "success" || got.Attempt != 1 {
			t.Fatalf("%s ended %s at attempt %d:\n%s\nthe model was asked:\n%s\nthe agent's logs:\n%s\nserver:\n%s", id, got.State, got.Attempt, got,
				tail(all(), 6), agentLogs(t, dir), tail(in.stderr.String(), 30))
		}
		var msgs struct {
			Messages []struct{ State, Type, Understanding string }
		}
		in.must(200, in.call("GET", "/v1/messages?task="+id, adminToken, nil), &msgs)
		if len(msgs.Messages) != 1 || msgs.Messages[0].State != "acknowledged" || msgs.Messages[0].Understanding != "Will write the fix into file.txt" {
			t.Fatalf("%s's delegation: %+v", id, msgs.Messages)
		}
	}
	// The completion's answer reaches the model after the turn ended.
	for _, want := range []string{"wilco took it as ack: acknowledged", "name it: task_id", "task-complete recorded; the agent's turn on T-2 is over"} {
		if !eventually(time.Minute, 100*time.Millisecond, func() bool { return strings.Contains(all(), want) }) {
			t.Fatalf("wilco's answer %q did not reach the model:\n%s", want, tail(all(), 6))
		}
	}
}

// The real Claude Code TUI in tmux acknowledges and completes two tasks
// by calling wilco's MCP tools (registered by the tmux preset with
// --mcp-config, allowed with --settings), the second naming its task.
func TestClaudeCodeTUIAcknowledgesThroughWilcosMCPTool(t *testing.T) {
	t.Parallel()
	needTmux(t)
	claude := npmBin(t, "@anthropic-ai/claude-code", execadapter.PresetClaudeCode, "claude")
	var dir string
	model := modelserver.NewAnthropic(t, func(turn modelserver.Turn) modelserver.Reply {
		m := ackRequest.FindStringSubmatch(turn.Prompt)
		if m == nil {
			return modelserver.Reply{Text: "noted"}
		}
		steps := mcpTUISteps(m[1], "mcp__wilco__wilco_ack", "mcp__wilco__wilco_complete")
		if turn.Step >= len(steps) {
			return modelserver.Reply{Text: "Done: wrote file.txt."}
		}
		s := steps[turn.Step]
		if s.tool == "" {
			return modelserver.Reply{Text: "Writing the fix.", Tool: writeTool(filepath.Join(dir, "file.txt"), "fixed "+m[1]+"\n")}
		}
		return modelserver.Reply{Text: "Calling wilco.", Tool: &modelserver.ToolUse{Name: s.tool, Input: mcpToolInput(s.tool, m[1], s.named)}}
	})
	agent, _ := claudeTUIAgent(t, claude, model.URL())
	dir = newRepo(t, "agents:\n"+agent+checkStep)
	endTmux(t, dir)
	in := serveRepo(t, dir)
	checkMCPTUITasks(t, in, dir, func() string {
		var out []string
		for _, r := range model.AgentRequests() {
			b, _ := json.Marshal(r.Body["messages"])
			out = append(out, fmt.Sprintf("step %d: %s", r.Turn.Step, b))
		}
		return strings.Join(out, "\n")
	})
}
