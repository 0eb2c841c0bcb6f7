package realtui

// End-to-end tests of the real TUIs in tmux acknowledging and completing
// their tasks by calling wilco's MCP tools, which the tmux presets register
// as the exec presets do. The program starts the server once, for its
// first task: a later task's calls name it (task_id, read from the prompt's
// "[ACK] T-2"), and a call that names none is refused, saying so.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"wilco/test/blackbox"

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
func checkMCPTUITasks(t *testing.T, in *blackbox.Instance, dir string, all func() string) {
	t.Helper()
	for _, id := range []string{"T-1", "T-2"} {
		in.Submit(map[string]any{"id": id, "description": "Write the fix into file.txt"})
		got := in.WaitTask(id, 5*time.Minute, "success", "escalated", "stuck")
		if got.State != "success" || got.Attempt != 1 {
			t.Fatalf("%s ended %s at attempt %d:\n%s\nthe model was asked:\n%s\nthe agent's logs:\n%s\nserver:\n%s", id, got.State, got.Attempt, got,
				blackbox.Tail(all(), 6), blackbox.AgentLogs(t, dir), blackbox.Tail(in.Stderr.String(), 30))
		}
		var msgs struct {
			Messages []struct{ State, Type, Understanding string }
		}
		in.Must(200, in.Call("GET", "/v1/messages?task="+id, blackbox.AdminToken, nil), &msgs)
		if len(msgs.Messages) != 1 || msgs.Messages[0].State != "acknowledged" || msgs.Messages[0].Understanding != "Will write the fix into file.txt" {
			t.Fatalf("%s's delegation: %+v", id, msgs.Messages)
		}
	}
	// The completion's answer reaches the model after the turn ended.
	for _, want := range []string{"wilco took it as ack: acknowledged", "name it: task_id", "task-complete recorded; the agent's turn on T-2 is over"} {
		if !blackbox.Eventually(time.Minute, 100*time.Millisecond, func() bool { return strings.Contains(all(), want) }) {
			t.Fatalf("wilco's answer %q did not reach the model:\n%s", want, blackbox.Tail(all(), 6))
		}
	}
}

// The real Claude Code TUI in tmux acknowledges and completes two tasks
// by calling wilco's MCP tools (registered by the tmux preset with
// --mcp-config, allowed with --settings), the second naming its task.
func TestClaudeCodeTUIAcknowledgesThroughWilcosMCPTool(t *testing.T) {
	t.Parallel()
	blackbox.NeedTmux(t)
	claude := blackbox.NpmBin(t, "@anthropic-ai/claude-code", execadapter.PresetClaudeCode, "claude")
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
			return modelserver.Reply{Text: "Writing the fix.", Tool: blackbox.WriteTool(filepath.Join(dir, "file.txt"), "fixed "+m[1]+"\n")}
		}
		return modelserver.Reply{Text: "Calling wilco.", Tool: &modelserver.ToolUse{Name: s.tool, Input: mcpToolInput(s.tool, m[1], s.named)}}
	})
	agent, _ := claudeTUIAgent(t, claude, model.URL())
	dir = blackbox.NewRepo(t, "agents:\n"+agent+blackbox.CheckStep)
	blackbox.EndTmux(t, dir)
	in := blackbox.ServeRepo(t, dir)
	checkMCPTUITasks(t, in, dir, func() string {
		var out []string
		for _, r := range model.AgentRequests() {
			b, _ := json.Marshal(r.Body["messages"])
			out = append(out, fmt.Sprintf("step %d: %s", r.Turn.Step, b))
		}
		return strings.Join(out, "\n")
	})
}

// codexTUIAgent is the wilco.yaml agent line of the real Codex TUI in tmux,
// pointed at a scripted Responses API as codexAgent is; its commands run
// in its workspace-write sandbox without asking (approval_policy never):
// wilco's tools are approved by their registration.
func codexTUIAgent(t testing.TB, codex, url string) string {
	t.Helper()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("model = \"gpt-5.5\"\nmodel_provider = \"scripted\"\napproval_policy = \"never\"\nsandbox_mode = \"workspace-write\"\n\n"+
		"[model_providers.scripted]\nname = \"scripted\"\nbase_url = %q\nwire_api = \"responses\"\n", url)
	if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("  - {name: codex, adapter: tmux, preset: codex, command: [%s], timeout: 4m, env: {HOME: %s}, tmux: {width: 160, height: 50}}\n",
		blackbox.Quoted(codex), blackbox.Quoted(home))
}

// The real Codex TUI in tmux acknowledges and completes two tasks by
// calling wilco's MCP tools (registered by the tmux preset with -c
// mcp_servers.wilco=…), which it offers as a deferred namespace the model
// loads with its tool_search; the second task's calls name it.
func TestCodexTUIAcknowledgesThroughWilcosMCPTool(t *testing.T) {
	t.Parallel()
	blackbox.NeedTmux(t)
	codex := blackbox.NpmBin(t, "@openai/codex", execadapter.PresetCodex, "codex")
	var mu sync.Mutex
	loaded := map[string]string{} // a tool tool_search gave the model → its namespace
	model := modelserver.NewResponses(t, func(turn modelserver.Turn) modelserver.Reply {
		m := ackRequest.FindStringSubmatch(turn.Prompt)
		if m == nil {
			return modelserver.Reply{Text: "noted"}
		}
		if turn.Step == 0 {
			return modelserver.Reply{Tool: &modelserver.ToolUse{Search: true, Input: map[string]any{"query": "wilco acknowledge complete task"}}}
		}
		steps := mcpTUISteps(m[1], "wilco_ack", "wilco_complete")
		if turn.Step > len(steps) {
			return modelserver.Reply{Text: "Done: wrote file.txt."}
		}
		s := steps[turn.Step-1]
		if s.tool == "" {
			return modelserver.Reply{Tool: blackbox.ShellTool("printf 'fixed " + m[1] + "\\n' > file.txt")}
		}
		mu.Lock()
		defer mu.Unlock()
		for name, ns := range loaded {
			if strings.HasSuffix(name, s.tool) {
				return modelserver.Reply{Text: "Calling wilco.", Tool: &modelserver.ToolUse{Namespace: ns, Name: name, Input: mcpToolInput(s.tool, m[1], s.named)}}
			}
		}
		return modelserver.Reply{Text: "No wilco tool was found."}
	})
	model.OnRequest(func(body map[string]any) {
		items, _ := body["input"].([]any)
		for _, it := range items {
			m, _ := it.(map[string]any)
			if m["type"] != "tool_search_output" {
				continue
			}
			tools, _ := m["tools"].([]any)
			for _, tl := range tools {
				ns, _ := tl.(map[string]any)
				children, _ := ns["tools"].([]any)
				for _, c := range children {
					cm, _ := c.(map[string]any)
					mu.Lock()
					loaded[fmt.Sprint(cm["name"])] = fmt.Sprint(ns["name"])
					mu.Unlock()
				}
			}
		}
	})
	dir := blackbox.NewRepo(t, "agents:\n"+codexTUIAgent(t, codex, model.URL())+blackbox.CheckStep)
	blackbox.EndTmux(t, dir)
	in := blackbox.ServeRepo(t, dir)
	checkMCPTUITasks(t, in, dir, func() string {
		var out []string
		for _, r := range model.AgentRequests() {
			b, _ := json.Marshal(r.Body["input"])
			out = append(out, fmt.Sprintf("step %d: %s", r.Turn.Step, b))
		}
		return strings.Join(out, "\n")
	})
}

// The real Gemini CLI TUI in tmux acknowledges and completes two tasks by
// calling wilco's MCP tools, registered by the tmux preset in a home of
// wilco's (GEMINI_CLI_HOME) as the exec preset registers them; the second
// task's calls name it.
func TestGeminiCLITUIAcknowledgesThroughWilcosMCPTool(t *testing.T) {
	t.Parallel()
	blackbox.NeedTmux(t)
	gemini := blackbox.NpmBin(t, "@google/gemini-cli", execadapter.PresetGemini, "gemini")
	var dir string
	model := modelserver.NewGemini(t, func(turn modelserver.Turn) modelserver.Reply {
		m := ackRequest.FindStringSubmatch(turn.Prompt)
		if m == nil {
			return modelserver.Reply{Text: "noted"}
		}
		steps := mcpTUISteps(m[1], "mcp_wilco_wilco_ack", "mcp_wilco_wilco_complete")
		if turn.Step >= len(steps) {
			return modelserver.Reply{Text: "Done: wrote file.txt."}
		}
		s := steps[turn.Step]
		if s.tool == "" {
			return modelserver.Reply{Tool: &modelserver.ToolUse{Name: "write_file", Input: map[string]any{"file_path": filepath.Join(dir, "file.txt"), "content": "fixed " + m[1] + "\n"}}}
		}
		return modelserver.Reply{Text: "Calling wilco.", Tool: &modelserver.ToolUse{Name: s.tool, Input: mcpToolInput(s.tool, m[1], s.named)}}
	})
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(`{"security":{"auth":{"selectedType":"gemini-api-key"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	agent := fmt.Sprintf("  - {name: gemini, adapter: tmux, preset: gemini, command: [%s, --approval-mode, auto_edit], timeout: 4m, "+
		"env: {HOME: %s, GOOGLE_GEMINI_BASE_URL: %s, GEMINI_API_KEY: scripted-key}, tmux: {width: 160, height: 50}}\n", blackbox.Quoted(gemini), blackbox.Quoted(home), blackbox.Quoted(model.URL()))
	dir = blackbox.NewRepo(t, "agents:\n"+agent+blackbox.CheckStep)
	blackbox.EndTmux(t, dir)
	in := blackbox.ServeRepo(t, dir)
	checkMCPTUITasks(t, in, dir, func() string {
		var out []string
		for _, r := range model.AgentRequests() {
			b, _ := json.Marshal(r.Body["contents"])
			out = append(out, fmt.Sprintf("step %d: %s", r.Turn.Step, b))
		}
		return strings.Join(out, "\n")
	})
}

// The real opencode TUI in tmux acknowledges and completes two tasks by
// calling wilco's MCP tools, registered by the tmux preset through
// OPENCODE_CONFIG_CONTENT as the exec preset registers them (its tools
// named wilco_wilco_ack…); the second task's calls name it.
func TestOpencodeTUIAcknowledgesThroughWilcosMCPTool(t *testing.T) {
	t.Parallel()
	blackbox.NeedTmux(t)
	opencode := blackbox.NpmBin(t, "opencode-ai", execadapter.PresetOpencode, "opencode")
	var dir string
	model := modelserver.NewChat(t, func(turn modelserver.Turn) modelserver.Reply {
		m := ackRequest.FindStringSubmatch(turn.Prompt)
		if m == nil {
			return modelserver.Reply{Text: "noted"}
		}
		steps := mcpTUISteps(m[1], "wilco_wilco_ack", "wilco_wilco_complete")
		if turn.Step >= len(steps) {
			return modelserver.Reply{Text: "Done: wrote file.txt."}
		}
		s := steps[turn.Step]
		if s.tool == "" {
			return modelserver.Reply{Text: "Writing the fix.", Tool: &modelserver.ToolUse{Name: "write",
				Input: map[string]any{"filePath": filepath.Join(dir, "file.txt"), "content": "fixed " + m[1] + "\n"}}}
		}
		return modelserver.Reply{Text: "Calling wilco.", Tool: &modelserver.ToolUse{Name: s.tool, Input: mcpToolInput(s.tool, m[1], s.named)}}
	})
	agent, _ := opencodeTUIAgent(t, opencode, model.URL(), "tmux: {width: 160, height: 50}")
	dir = blackbox.NewRepo(t, "agents:\n"+agent+blackbox.CheckStep)
	blackbox.EndTmux(t, dir)
	in := blackbox.ServeRepo(t, dir)
	checkMCPTUITasks(t, in, dir, func() string {
		var out []string
		for _, r := range model.AgentRequests() {
			b, _ := json.Marshal(r.Body["messages"])
			out = append(out, fmt.Sprintf("step %d: %s", r.Turn.Step, b))
		}
		return strings.Join(out, "\n")
	})
}
