package realagents

// End-to-end tests with the real agent CLIs from npm, pointed at scripted
// model servers (package modelserver) on 127.0.0.1: wilco's presets, its
// ACK reading, its retries and its verification, against the programs
// users run.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"wilco/test/blackbox"

	execadapter "wilco/adapter/exec"
	"wilco/modelserver"
)

// Claude Code, for real, in both handshakes: it acknowledges, writes a
// wrong fix with its Write tool, wilco's verification fails, the retry's
// prompt — as the model receives it — carries the retry context and the
// failing check's output, Claude Code writes the right fix, and the task
// is verified.
func TestClaudeCodeRetriesWithTheFailureUntilVerified(t *testing.T) {
	t.Parallel()
	claude := blackbox.NpmBin(t, "@anthropic-ai/claude-code", execadapter.PresetClaudeCode, "claude")
	for _, handshake := range []string{"inline", "session"} {
		t.Run(handshake, func(t *testing.T) {
			t.Parallel()
			var dir string
			model := modelserver.NewAnthropic(t, func(turn modelserver.Turn) modelserver.Reply {
				retry := strings.Contains(turn.Prompt, `<retry_context attempt="2"`)
				ack := "[ACK] T-1 - RECEIVED\nUnderstanding: Will write the fix into file.txt\n\n"
				switch {
				case !strings.Contains(turn.Prompt, "T-1"):
					return modelserver.Reply{Text: "I do not know this task."}
				case handshake == "session" && strings.Contains(turn.Prompt, "for the acknowledgment only"):
					return modelserver.Reply{Text: ack}
				case turn.Step == 0 && !retry:
					return modelserver.Reply{Text: ack + "I will write a first guess.", Tool: blackbox.WriteTool(filepath.Join(dir, "file.txt"), "attempt 1\n")}
				case turn.Step == 0:
					return modelserver.Reply{Text: ack + "The check says what it wants; writing it.", Tool: blackbox.WriteTool(filepath.Join(dir, "file.txt"), "fixed T-1\n")}
				}
				return modelserver.Reply{Text: "Done: wrote file.txt."}
			})
			dir = blackbox.NewRepo(t, "agents:\n"+claudeAgent(t, claude, handshake, model.URL())+blackbox.CheckStep)
			in := blackbox.ServeRepo(t, dir)
			in.Submit(map[string]any{"id": "T-1", "description": "Write the fix into file.txt"})
			got := in.WaitTask("T-1", 3*time.Minute, "success", "escalated", "stuck")
			var prompts []string
			for _, r := range model.AgentRequests() {
				prompts = append(prompts, fmt.Sprintf("step %d: %s", r.Turn.Step, blackbox.Tail(r.Turn.Prompt, 12)))
			}
			if got.State != "success" || got.Attempt != 2 {
				t.Fatalf("the task ended %s at attempt %d:\n%s\nthe model was asked:\n%s\nserver:\n%s", got.State, got.Attempt, got,
					strings.Join(prompts, "\n-----\n"), blackbox.Tail(in.Stderr.String(), 30))
			}
			// What the model received on the retry: the retry context and
			// the failing check's output.
			retried := false
			for _, r := range model.AgentRequests() {
				p := r.Turn.Prompt
				if strings.Contains(p, `<retry_context attempt="2"`) && strings.Contains(p, "file.txt is not fixed") && strings.Contains(p, "attempt 1") {
					retried = true
				}
			}
			if !retried {
				t.Fatalf("no request to the model carried the retry context and the failing check:\n%s", strings.Join(prompts, "\n-----\n"))
			}
			if blackbox.ReadFile(t, filepath.Join(dir, "file.txt")) != "fixed T-1\n" {
				t.Fatal("Claude Code's fix is not in the repository")
			}
			usageRecorded(t, in, "T-1", "claude", true)
			// The first attempt's conversation is on record: the prompt, the
			// ACK, the Write call with its input, its result.
			tr := in.Cli("transcript", "T-1", "--attempt", "1")
			blackbox.MustContain(t, "wilco transcript T-1 --attempt 1", tr, "T-1 attempt 1 (run T-1-a1)", "prompt:", "## Task: T-1",
				"agent:", "[ACK] T-1 - RECEIVED", "tool Write", `"content":"attempt 1\n"`, "result:")
			blackbox.MustContain(t, "wilco transcript T-1", in.Cli("transcript", "T-1"), "T-1 attempt 2", `<retry_context attempt="2"`)
			// Its tool calls were live milestones.
			if ms := blackbox.Milestones(t, in, "T-1"); !strings.Contains(ms, "Writing file.txt") {
				t.Fatalf("no milestone said what Claude Code did:\n%s", ms)
			}
			if handshake == "session" {
				// The work resumed the session of the acknowledgment: the
				// model saw its own ACK before the go-ahead.
				resumed := false
				for _, r := range model.AgentRequests() {
					if strings.Contains(r.Turn.Prompt, "was accepted") && strings.Contains(fmt.Sprint(r.Body["messages"]), "for the acknowledgment only") {
						resumed = true
					}
				}
				if !resumed {
					t.Fatalf("the work did not resume the acknowledgment's session:\n%s", strings.Join(prompts, "\n-----\n"))
				}
			}
		})
	}
}

// claudeAgent is the wilco.yaml agent line of the real Claude Code pointed
// at model, with a private HOME.
func claudeAgent(t testing.TB, claude, handshake, url string) string {
	return fmt.Sprintf("  - {name: claude, adapter: exec, preset: claude-code, handshake: %s, command: [%s], timeout: 2m, "+
		"env: {ANTHROPIC_BASE_URL: %s, ANTHROPIC_API_KEY: scripted-key, HOME: %s, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: \"1\", DISABLE_AUTOUPDATER: \"1\"}}\n",
		handshake, blackbox.Quoted(claude), blackbox.Quoted(url), blackbox.Quoted(t.TempDir()))
}

// Claude Code whose model API refuses every call — an invalid request
// (400), a refused key (401, which Claude Code would retry for minutes):
// the task escalates at once with the API's own error, not after 12
// processes.
func TestClaudeCodeWhoseModelAPIRefusesEveryRequestEscalatesAtOnce(t *testing.T) {
	t.Parallel()
	claude := blackbox.NpmBin(t, "@anthropic-ai/claude-code", execadapter.PresetClaudeCode, "claude")
	for _, c := range []struct {
		status       int
		errType, msg string
		want         string
	}{
		{400, "invalid_request_error", "max_tokens: 999999 > 64000, which is the maximum allowed", "max_tokens: 999999"},
		{401, "authentication_error", "invalid x-api-key", "could not authenticate"},
	} {
		t.Run(fmt.Sprint(c.status), func(t *testing.T) {
			t.Parallel()
			model := modelserver.NewAnthropic(t, func(modelserver.Turn) modelserver.Reply { return modelserver.Reply{Text: "unused"} })
			model.FailWith(c.status, c.errType, c.msg)
			dir := blackbox.NewRepo(t, "agents:\n"+claudeAgent(t, claude, "inline", model.URL())+blackbox.CheckStep)
			in := blackbox.ServeRepo(t, dir)
			in.Submit(map[string]any{"id": "T-1", "description": "Write the fix into file.txt"})
			got := in.WaitTask("T-1", 3*time.Minute, "escalated", "stuck", "success")
			if got.State != "escalated" || got.Attempt > 1 || got.Escalation == nil || !strings.Contains(got.Escalation.Reason, c.want) {
				t.Fatalf("the task ended %s at attempt %d:\n%s\nserver:\n%s", got.State, got.Attempt, got, blackbox.Tail(in.Stderr.String(), 20))
			}
		})
	}
}

// codexAgent is the wilco.yaml agent line of the real Codex CLI pointed at
// a scripted Responses API, with a private HOME (codexHome).
func codexAgent(t testing.TB, codex, handshake, url string) string {
	t.Helper()
	home := blackbox.CodexHome(t, url)
	return fmt.Sprintf("  - {name: codex, adapter: exec, preset: codex, handshake: %s, command: [%s], timeout: 2m, env: {HOME: %s}}\n",
		handshake, blackbox.Quoted(codex), blackbox.Quoted(home))
}

// Codex CLI, for real, in both handshakes: the same scenario, its fix
// written by a command it runs in its workspace-write sandbox.
func TestCodexRetriesWithTheFailureUntilVerified(t *testing.T) {
	t.Parallel()
	codex := blackbox.NpmBin(t, "@openai/codex", execadapter.PresetCodex, "codex")
	for _, handshake := range []string{"inline", "session"} {
		t.Run(handshake, func(t *testing.T) {
			t.Parallel()
			model := modelserver.NewResponses(t, blackbox.RetryScript(handshake, func(content string) *modelserver.ToolUse {
				return blackbox.ShellTool("printf '%s\\n' '" + content + "' > file.txt")
			}))
			// Codex reports tokens, no cost: the prices give it.
			dir := blackbox.NewRepo(t, "agents:\n"+codexAgent(t, codex, handshake, model.URL())+blackbox.CheckStep+
				"prices: {codex: {input_per_mtok: 1.25, output_per_mtok: 10}}\n")
			in := blackbox.ServeRepo(t, dir)
			in.Submit(map[string]any{"id": "T-1", "description": "Write the fix into file.txt"})
			got := in.WaitTask("T-1", 3*time.Minute, "success", "escalated", "stuck")
			var prompts []string
			retried := false
			for _, r := range model.AgentRequests() {
				prompts = append(prompts, fmt.Sprintf("step %d: %s", r.Turn.Step, blackbox.Tail(r.Turn.Prompt, 12)))
				p := r.Turn.Prompt
				if strings.Contains(p, `<retry_context attempt="2"`) && strings.Contains(p, "file.txt is not fixed") && strings.Contains(p, "attempt 1") {
					retried = true
				}
			}
			if got.State != "success" || got.Attempt != 2 || !retried {
				t.Fatalf("the task ended %s at attempt %d (the retry context reached the model: %v):\n%s\nthe model was asked:\n%s\nserver:\n%s",
					got.State, got.Attempt, retried, got, strings.Join(prompts, "\n-----\n"), blackbox.Tail(in.Stderr.String(), 30))
			}
			if blackbox.ReadFile(t, filepath.Join(dir, "file.txt")) != "fixed T-1\n" {
				t.Fatal("Codex's fix is not in the repository")
			}
			usageRecorded(t, in, "T-1", "codex", true)
			if ms := blackbox.Milestones(t, in, "T-1"); !strings.Contains(ms, "Running printf") {
				t.Fatalf("no milestone said what Codex did:\n%s", ms)
			}
			if handshake == "session" {
				resumed := false
				for _, r := range model.AgentRequests() {
					if strings.Contains(r.Turn.Prompt, "was accepted") && strings.Contains(fmt.Sprint(r.Body["input"]), "for the acknowledgment only") {
						resumed = true
					}
				}
				if !resumed {
					t.Fatalf("the work did not resume the acknowledgment's thread:\n%s", strings.Join(prompts, "\n-----\n"))
				}
			}
		})
	}
}

// geminiAgent is the wilco.yaml agent line of the real Gemini CLI pointed
// at a scripted Gemini API: a private HOME whose .gemini/settings.json
// chooses the API-key authentication (without it Gemini CLI exits 41,
// "Invalid auth method selected."), GOOGLE_GEMINI_BASE_URL and
// GEMINI_API_KEY. The folder's trust comes from the preset.
func geminiAgent(t testing.TB, gemini, handshake, url string) string {
	t.Helper()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(`{"security":{"auth":{"selectedType":"gemini-api-key"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("  - {name: gemini, adapter: exec, preset: gemini, handshake: %s, command: [%s], timeout: 2m, env: {HOME: %s, GOOGLE_GEMINI_BASE_URL: %s, GEMINI_API_KEY: scripted-key}}\n",
		handshake, blackbox.Quoted(gemini), blackbox.Quoted(home), blackbox.Quoted(url))
}

// Gemini CLI, for real, in both handshakes: the same scenario, its fix
// written with its write_file tool.
func TestGeminiCLIRetriesWithTheFailureUntilVerified(t *testing.T) {
	t.Parallel()
	gemini := blackbox.NpmBin(t, "@google/gemini-cli", execadapter.PresetGemini, "gemini")
	for _, handshake := range []string{"inline", "session"} {
		t.Run(handshake, func(t *testing.T) {
			t.Parallel()
			var dir string
			model := modelserver.NewGemini(t, blackbox.RetryScript(handshake, func(content string) *modelserver.ToolUse {
				return &modelserver.ToolUse{Name: "write_file", Input: map[string]any{"file_path": filepath.Join(dir, "file.txt"), "content": content + "\n"}}
			}))
			dir = blackbox.NewRepo(t, "agents:\n"+geminiAgent(t, gemini, handshake, model.URL())+blackbox.CheckStep)
			in := blackbox.ServeRepo(t, dir)
			in.Submit(map[string]any{"id": "T-1", "description": "Write the fix into file.txt"})
			got := in.WaitTask("T-1", 3*time.Minute, "success", "escalated", "stuck")
			var prompts []string
			retried := false
			for _, r := range model.AgentRequests() {
				prompts = append(prompts, fmt.Sprintf("step %d: %s", r.Turn.Step, blackbox.Tail(r.Turn.Prompt, 12)))
				p := r.Turn.Prompt
				if strings.Contains(p, `<retry_context attempt="2"`) && strings.Contains(p, "file.txt is not fixed") && strings.Contains(p, "attempt 1") {
					retried = true
				}
			}
			if got.State != "success" || got.Attempt != 2 || !retried {
				t.Fatalf("the task ended %s at attempt %d (the retry context reached the model: %v):\n%s\nthe model was asked:\n%s\nserver:\n%s",
					got.State, got.Attempt, retried, got, strings.Join(prompts, "\n-----\n"), blackbox.Tail(in.Stderr.String(), 30))
			}
			if blackbox.ReadFile(t, filepath.Join(dir, "file.txt")) != "fixed T-1\n" {
				t.Fatal("Gemini CLI's fix is not in the repository")
			}
			usageRecorded(t, in, "T-1", "gemini", false)
			if ms := blackbox.Milestones(t, in, "T-1"); !strings.Contains(ms, "Writing file.txt") {
				t.Fatalf("no milestone said what Gemini CLI did:\n%s", ms)
			}
			if handshake == "session" {
				resumed := false
				for _, r := range model.AgentRequests() {
					if strings.Contains(r.Turn.Prompt, "was accepted") && strings.Contains(fmt.Sprint(r.Body["contents"]), "for the acknowledgment only") {
						resumed = true
					}
				}
				if !resumed {
					t.Fatalf("the work did not resume the acknowledgment's session:\n%s", strings.Join(prompts, "\n-----\n"))
				}
			}
		})
	}
}

// opencodeAgent is the wilco.yaml agent line of the real opencode pointed
// at a scripted Chat Completions API (opencodeHome).
func opencodeAgent(t testing.TB, opencode, handshake, url string) string {
	t.Helper()
	home := blackbox.OpencodeHome(t, url)
	return fmt.Sprintf("  - {name: opencode, adapter: exec, preset: opencode, handshake: %s, command: [%s], timeout: 2m, env: {HOME: %s}}\n",
		handshake, blackbox.Quoted(opencode), blackbox.Quoted(home))
}

// opencode, for real, in both handshakes: the same scenario, its fix
// written with its write tool. (It takes its working directory from PWD,
// which wilco sets to where the agent works.)
func TestOpencodeRetriesWithTheFailureUntilVerified(t *testing.T) {
	t.Parallel()
	opencode := blackbox.NpmBin(t, "opencode-ai", execadapter.PresetOpencode, "opencode")
	for _, handshake := range []string{"inline", "session"} {
		t.Run(handshake, func(t *testing.T) {
			t.Parallel()
			var dir string
			model := modelserver.NewChat(t, blackbox.RetryScript(handshake, func(content string) *modelserver.ToolUse {
				return &modelserver.ToolUse{Name: "write", Input: map[string]any{"filePath": filepath.Join(dir, "file.txt"), "content": content + "\n"}}
			}))
			dir = blackbox.NewRepo(t, "agents:\n"+opencodeAgent(t, opencode, handshake, model.URL())+blackbox.CheckStep)
			in := blackbox.ServeRepo(t, dir)
			in.Submit(map[string]any{"id": "T-1", "description": "Write the fix into file.txt"})
			got := in.WaitTask("T-1", 3*time.Minute, "success", "escalated", "stuck")
			var prompts []string
			retried := false
			for _, r := range model.AgentRequests() {
				prompts = append(prompts, fmt.Sprintf("step %d: %s", r.Turn.Step, blackbox.Tail(r.Turn.Prompt, 12)))
				p := r.Turn.Prompt
				if strings.Contains(p, `<retry_context attempt="2"`) && strings.Contains(p, "file.txt is not fixed") && strings.Contains(p, "attempt 1") {
					retried = true
				}
			}
			if got.State != "success" || got.Attempt != 2 || !retried {
				t.Fatalf("the task ended %s at attempt %d (the retry context reached the model: %v):\n%s\nthe model was asked:\n%s\nserver:\n%s",
					got.State, got.Attempt, retried, got, strings.Join(prompts, "\n-----\n"), blackbox.Tail(in.Stderr.String(), 30))
			}
			if blackbox.ReadFile(t, filepath.Join(dir, "file.txt")) != "fixed T-1\n" {
				t.Fatal("opencode's fix is not in the repository")
			}
			usageRecorded(t, in, "T-1", "opencode", false)
			if ms := blackbox.Milestones(t, in, "T-1"); !strings.Contains(ms, "Writing file.txt") {
				t.Fatalf("no milestone said what opencode did:\n%s", ms)
			}
			if handshake == "session" {
				resumed := false
				for _, r := range model.AgentRequests() {
					if strings.Contains(r.Turn.Prompt, "was accepted") && strings.Contains(fmt.Sprint(r.Body["messages"]), "for the acknowledgment only") {
						resumed = true
					}
				}
				if !resumed {
					t.Fatalf("the work did not resume the acknowledgment's session:\n%s", strings.Join(prompts, "\n-----\n"))
				}
			}
		})
	}
}

// `wilco agents check` runs one probe turn of each exec agent, for real,
// and says what works and what is wrong in words a user acts on: the real
// Claude Code answering, the same with its API refusing the key, with the
// API unreachable, a program that is not installed, and a CLI that
// refuses a flag.
func TestAgentsCheckProbesEachAgentAndSaysWhatIsWrong(t *testing.T) {
	t.Parallel()
	claude := blackbox.NpmBin(t, "@anthropic-ai/claude-code", execadapter.PresetClaudeCode, "claude")
	good := modelserver.NewAnthropic(t, func(turn modelserver.Turn) modelserver.Reply {
		return modelserver.Reply{Text: "[ACK] PROBE-1 - RECEIVED\nUnderstanding: a check that I can be reached"}
	})
	badKey := modelserver.NewAnthropic(t, func(modelserver.Turn) modelserver.Reply { return modelserver.Reply{} })
	badKey.FailWith(401, "authentication_error", "invalid x-api-key")
	closed := modelserver.NewAnthropic(t, func(modelserver.Turn) modelserver.Reply { return modelserver.Reply{} })
	closedURL := closed.URL()
	closed.Close()
	yaml := "agents:\n" + strings.Replace(claudeAgent(t, claude, "inline", good.URL()), "name: claude", "name: good", 1) +
		strings.Replace(claudeAgent(t, claude, "inline", badKey.URL()), "name: claude", "name: nokey", 1) +
		strings.Replace(claudeAgent(t, claude, "inline", closedURL), "name: claude", "name: offline", 1) +
		"  - {name: ghost, adapter: exec, preset: codex, command: [wilco-test-no-such-codex]}\n" +
		"  - {name: flags, adapter: exec, preset: codex, command: [" + blackbox.Quoted(executable(t, "refused_flag.sh")) + "]}\n" +
		"  - {name: remote, adapter: mailbox}\n" + blackbox.CheckStep
	dir := blackbox.NewRepo(t, yaml)
	r := blackbox.WilcoCLI(t, dir, "http://127.0.0.1:1", 3*time.Minute, "agents", "check", "--timeout", "10s")
	if r.Code != 1 {
		t.Fatalf("wilco agents check with failing agents: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, want := range []string{
		"good (claude-code): ok — " + claude + " 2.1.331 answered the probe with its ACK",
		"nokey (claude-code): FAILED", "could not authenticate",
		"offline (claude-code): FAILED", "the model's API cannot be reached",
		"ghost (codex): FAILED", `"wilco-test-no-such-codex" is not installed`,
		"flags (codex): FAILED", "refuses a flag of its command line: error: unexpected argument '--full-auto' found",
		"remote: not checked",
	} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("wilco agents check does not say %q:\n%s", want, r.Stdout)
		}
	}
	if r := blackbox.WilcoCLI(t, dir, "http://127.0.0.1:1", 3*time.Minute, "agents", "check", "good"); r.Code != 0 {
		t.Fatalf("wilco agents check good: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// executable is a copy of the agent script that can be run as a program.
func executable(t *testing.T, script string) string {
	t.Helper()
	b, err := os.ReadFile(blackbox.ScriptPath(t, script))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), strings.TrimSuffix(script, ".sh"))
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// usageRecorded checks that the task's turns' usage, as the CLI reported
// it, is on record: tokens on the task, per attempt, in wilco status and
// in the stats by agent; a cost when the CLI reports one.
func usageRecorded(t *testing.T, in *blackbox.Instance, id, agent string, wantCost bool) {
	t.Helper()
	var v struct {
		Usage struct {
			InputTokens, OutputTokens int64
			CostUSD                   float64 `json:"cost_usd"`
		}
		Usages []struct{ Attempt int }
	}
	in.Must(200, in.Call("GET", "/v1/tasks/"+id, blackbox.AdminToken, nil), &v)
	var raw map[string]any
	in.Must(200, in.Call("GET", "/v1/tasks/"+id, blackbox.AdminToken, nil), &raw)
	u := raw["usage"].(map[string]any)
	if u["input_tokens"].(float64) <= 0 || u["output_tokens"].(float64) <= 0 || len(v.Usages) < 2 || wantCost && u["cost_usd"].(float64) <= 0 {
		t.Fatalf("the task's usage is not on record: %v, %d attempts", u, len(v.Usages))
	}
	blackbox.MustContain(t, "wilco status "+id, in.Cli("status", id), "usage:", "tokens in")
	blackbox.MustContain(t, "wilco stats", in.Cli("stats"), "usage: ", "agent "+agent+": ")
	metrics := string(in.Must(200, in.Call("GET", "/metrics", blackbox.AdminToken, nil)).Body)
	blackbox.MustContain(t, "/metrics", metrics, `wilco_agent_tokens_total{agent="`+agent+`",kind="input"}`)
	if wantCost {
		blackbox.MustContain(t, "/metrics", metrics, `wilco_agent_cost_usd_total{agent="`+agent+`"}`)
	}
}

// A task over its budget, with the real Claude Code (whose own price table
// gives each turn a cost): the turn's cost crosses policy.budget.task, and
// the task escalates with what was spent instead of going on.
func TestClaudeCodeOverBudgetEscalatesWithWhatWasSpent(t *testing.T) {
	t.Parallel()
	claude := blackbox.NpmBin(t, "@anthropic-ai/claude-code", execadapter.PresetClaudeCode, "claude")
	var dir string
	model := modelserver.NewAnthropic(t, blackbox.RetryScript("inline", func(content string) *modelserver.ToolUse {
		return blackbox.WriteTool(filepath.Join(dir, "file.txt"), content+"\n")
	}))
	dir = blackbox.NewRepo(t, "agents:\n"+claudeAgent(t, claude, "inline", model.URL())+blackbox.CheckStep+
		"policy:\n  budget: {task: {max_cost_usd: 0.0001}}\n")
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "T-1", "description": "Write the fix into file.txt"})
	got := in.WaitTask("T-1", 3*time.Minute, "escalated", "success", "stuck")
	if got.State != "escalated" || got.Attempt != 1 || got.Escalation == nil ||
		!strings.Contains(got.Escalation.Reason, "budget: task T-1 spent $") || !strings.Contains(got.Escalation.Reason, "over its max_cost_usd of $0.0001") {
		t.Fatalf("the task ended %s at attempt %d:\n%s", got.State, got.Attempt, got)
	}
}

// A budget crossed while the real Claude Code is still working: its model
// keeps calling tools, each call's usage is in Claude Code's output as it
// streams, and wilco stops the agent at the call that crosses
// policy.budget.task.max_tokens — not when the turn ends — and escalates
// with what was spent.
func TestClaudeCodeIsStoppedMidTurnWhenItCrossesTheBudget(t *testing.T) {
	t.Parallel()
	claude := blackbox.NpmBin(t, "@anthropic-ai/claude-code", execadapter.PresetClaudeCode, "claude")
	var dir string
	model := modelserver.NewAnthropic(t, func(turn modelserver.Turn) modelserver.Reply {
		if turn.Step == 0 {
			return modelserver.Reply{Text: "[ACK] T-1 - RECEIVED\nUnderstanding: Will write the fix into file.txt\n\n",
				Tool: &modelserver.ToolUse{Name: "Read", Input: map[string]any{"file_path": filepath.Join(dir, "file.txt")}}}
		}
		if turn.Step < 60 {
			// A model that never finishes: it reads the file again and again.
			return modelserver.Reply{Text: fmt.Sprintf("Reading it once more (%d).", turn.Step),
				Tool: &modelserver.ToolUse{Name: "Read", Input: map[string]any{"file_path": filepath.Join(dir, "file.txt")}}}
		}
		return modelserver.Reply{Text: "Done."}
	})
	dir = blackbox.NewRepo(t, "agents:\n"+claudeAgent(t, claude, "inline", model.URL())+blackbox.CheckStep+
		"policy:\n  budget: {task: {max_tokens: 700}}\n")
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "T-1", "description": "Write the fix into file.txt"})
	got := in.WaitTask("T-1", 3*time.Minute, "escalated", "success", "stuck")
	calls := len(model.AgentRequests())
	if got.State != "escalated" || got.Attempt != 1 || got.Escalation == nil ||
		!strings.Contains(got.Escalation.Reason, "budget: task T-1 used") || !strings.Contains(got.Escalation.Reason, "over its max_tokens of 700") {
		t.Fatalf("the task ended %s at attempt %d after %d model calls:\n%s\nserver:\n%s", got.State, got.Attempt, calls, got, blackbox.Tail(in.Stderr.String(), 20))
	}
	// Each call costs 120 tokens: the agent was stopped at the sixth or so,
	// long before the model would have finished (60).
	if calls > 20 {
		t.Fatalf("the agent went on for %d model calls after crossing the budget", calls)
	}
}

// Claude Code acknowledges by calling wilco's MCP tool (registered by the
// preset: wilco mcp), not in its text: the tool-call ACK passes the same
// checks, the task goes on, and a completion reported by tool ends the
// turn.
func TestClaudeCodeAcknowledgesThroughWilcosMCPTool(t *testing.T) {
	t.Parallel()
	claude := blackbox.NpmBin(t, "@anthropic-ai/claude-code", execadapter.PresetClaudeCode, "claude")
	var dir string
	var toolResults []string
	model := modelserver.NewAnthropic(t, func(turn modelserver.Turn) modelserver.Reply {
		switch turn.Step {
		case 0:
			return modelserver.Reply{Text: "Acknowledging through wilco.", Tool: &modelserver.ToolUse{Name: "mcp__wilco__wilco_ack",
				Input: map[string]any{"status": "RECEIVED", "understanding": "Will write the fix into file.txt"}}}
		case 1:
			return modelserver.Reply{Text: "Writing the fix.", Tool: blackbox.WriteTool(filepath.Join(dir, "file.txt"), "fixed T-1\n")}
		case 2:
			return modelserver.Reply{Tool: &modelserver.ToolUse{Name: "mcp__wilco__wilco_complete",
				Input: map[string]any{"status": "success", "summary": "Wrote the fix into file.txt", "files_modified": []string{"file.txt"}}}}
		}
		return modelserver.Reply{Text: "Done."}
	})
	dir = blackbox.NewRepo(t, "agents:\n"+claudeAgent(t, claude, "inline", model.URL())+blackbox.CheckStep)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "T-1", "description": "Write the fix into file.txt"})
	got := in.WaitTask("T-1", 3*time.Minute, "success", "escalated", "stuck")
	for _, r := range model.AgentRequests() {
		msgs, _ := json.Marshal(r.Body["messages"])
		toolResults = append(toolResults, string(msgs))
	}
	all := strings.Join(toolResults, "\n")
	if got.State != "success" || got.Attempt != 1 {
		t.Fatalf("the task ended %s at attempt %d:\n%s\nserver:\n%s\nrequests:\n%s", got.State, got.Attempt, got, blackbox.Tail(in.Stderr.String(), 30), blackbox.Tail(all, 40))
	}
	// wilco's answer to the ACK's tool call reached the model (Claude Code
	// defers MCP tools behind its ToolSearch: they are called by name).
	// The completion's tool call ends the turn: wilco verifies at once.
	if !strings.Contains(all, "wilco took it as ack: acknowledged") {
		t.Fatalf("wilco's answer to the tool-call ACK did not reach the model:\n%s", blackbox.Tail(all, 20))
	}
	// The ACK is on record as the agent's.
	var msgs struct {
		Messages []struct{ State, Type string }
	}
	in.Must(200, in.Call("GET", "/v1/messages?task=T-1", blackbox.AdminToken, nil), &msgs)
	if len(msgs.Messages) == 0 || msgs.Messages[0].State != "acknowledged" {
		t.Fatalf("the delegation: %+v", msgs.Messages)
	}
}

// opencode acknowledges by calling wilco's MCP tool too: the preset
// registers `wilco mcp` through OPENCODE_CONFIG_CONTENT.
func TestOpencodeAcknowledgesThroughWilcosMCPTool(t *testing.T) {
	t.Parallel()
	opencode := blackbox.NpmBin(t, "opencode-ai", execadapter.PresetOpencode, "opencode")
	var dir string
	model := modelserver.NewChat(t, func(turn modelserver.Turn) modelserver.Reply {
		switch turn.Step {
		case 0:
			return modelserver.Reply{Text: "Acknowledging through wilco.", Tool: &modelserver.ToolUse{Name: "wilco_wilco_ack",
				Input: map[string]any{"status": "RECEIVED", "understanding": "Will write the fix into file.txt"}}}
		case 1:
			return modelserver.Reply{Tool: &modelserver.ToolUse{Name: "write", Input: map[string]any{"filePath": filepath.Join(dir, "file.txt"), "content": "fixed T-1\n"}}}
		}
		return modelserver.Reply{Text: "Done."}
	})
	dir = blackbox.NewRepo(t, "agents:\n"+opencodeAgent(t, opencode, "inline", model.URL())+blackbox.CheckStep)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "T-1", "description": "Write the fix into file.txt"})
	got := in.WaitTask("T-1", 3*time.Minute, "success", "escalated", "stuck")
	var all []string
	for _, r := range model.AgentRequests() {
		b, _ := json.Marshal(r.Body["messages"])
		all = append(all, string(b))
	}
	if got.State != "success" || got.Attempt != 1 || !strings.Contains(strings.Join(all, "\n"), "wilco took it as ack: acknowledged") {
		t.Fatalf("the task ended %s at attempt %d:\n%s\nrequests:\n%s", got.State, got.Attempt, got, blackbox.Tail(strings.Join(all, "\n"), 10))
	}
}

// Codex acknowledges by calling wilco's MCP tool too. The preset registers
// `wilco mcp` with -c mcp_servers.wilco=…; Codex offers an MCP server's
// tools to the model as a deferred namespace (mcp__wilco) that the model
// loads with its tool_search, then calls.
func TestCodexAcknowledgesThroughWilcosMCPTool(t *testing.T) {
	t.Parallel()
	codex := blackbox.NpmBin(t, "@openai/codex", execadapter.PresetCodex, "codex")
	var mu sync.Mutex
	var loaded []string // the tools tool_search gave the model
	model := modelserver.NewResponses(t, func(turn modelserver.Turn) modelserver.Reply {
		switch turn.Step {
		case 0:
			return modelserver.Reply{Tool: &modelserver.ToolUse{Search: true, Input: map[string]any{"query": "wilco acknowledge task"}}}
		case 1:
			mu.Lock()
			defer mu.Unlock()
			for _, name := range loaded {
				if ns, tool, ok := strings.Cut(name, " "); ok && strings.HasSuffix(tool, "wilco_ack") {
					return modelserver.Reply{Text: "Acknowledging through wilco.", Tool: &modelserver.ToolUse{Namespace: ns, Name: tool,
						Input: map[string]any{"status": "RECEIVED", "understanding": "Will write the fix into file.txt"}}}
				}
			}
			return modelserver.Reply{Text: "No wilco tool was found."}
		case 2:
			return modelserver.Reply{Tool: blackbox.ShellTool("printf 'fixed T-1\\n' > file.txt")}
		}
		return modelserver.Reply{Text: "Done: wrote file.txt."}
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
					loaded = append(loaded, fmt.Sprintf("%v %v", ns["name"], cm["name"]))
					mu.Unlock()
				}
			}
		}
	})
	dir := blackbox.NewRepo(t, "agents:\n"+codexAgent(t, codex, "inline", model.URL())+blackbox.CheckStep)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "T-1", "description": "Write the fix into file.txt"})
	got := in.WaitTask("T-1", 3*time.Minute, "success", "escalated", "stuck")
	var all []string
	for _, r := range model.AgentRequests() {
		items, _ := r.Body["input"].([]any)
		if len(items) > 3 {
			items = items[len(items)-3:]
		}
		b, _ := json.Marshal(items)
		all = append(all, fmt.Sprintf("step %d: %s", r.Turn.Step, b))
	}
	joined := strings.Join(all, "\n")
	mu.Lock()
	found := fmt.Sprint(loaded)
	mu.Unlock()
	if got.State != "success" || got.Attempt != 1 || !strings.Contains(joined, "wilco took it as ack: acknowledged") {
		t.Fatalf("the task ended %s at attempt %d (tools loaded by tool_search: %s):\n%s\nserver:\n%s\nrequests:\n%s",
			got.State, got.Attempt, found, got, blackbox.Tail(in.Stderr.String(), 30), blackbox.Tail(joined, 10))
	}
	var msgs struct {
		Messages []struct{ State, Type string }
	}
	in.Must(200, in.Call("GET", "/v1/messages?task=T-1", blackbox.AdminToken, nil), &msgs)
	if len(msgs.Messages) == 0 || msgs.Messages[0].State != "acknowledged" {
		t.Fatalf("the delegation: %+v", msgs.Messages)
	}
}

// Gemini CLI acknowledges by calling wilco's MCP tool too. Gemini CLI
// takes MCP servers from its settings files only: the preset gives it a
// home of wilco's whose settings are the user's with wilco's server added
// (GEMINI_CLI_HOME), and the user's own settings file is left as it was.
func TestGeminiCLIAcknowledgesThroughWilcosMCPTool(t *testing.T) {
	t.Parallel()
	gemini := blackbox.NpmBin(t, "@google/gemini-cli", execadapter.PresetGemini, "gemini")
	var dir string
	model := modelserver.NewGemini(t, func(turn modelserver.Turn) modelserver.Reply {
		switch turn.Step {
		case 0:
			return modelserver.Reply{Text: "Acknowledging through wilco.", Tool: &modelserver.ToolUse{Name: "mcp_wilco_wilco_ack",
				Input: map[string]any{"status": "RECEIVED", "understanding": "Will write the fix into file.txt"}}}
		case 1:
			return modelserver.Reply{Tool: &modelserver.ToolUse{Name: "write_file", Input: map[string]any{"file_path": filepath.Join(dir, "file.txt"), "content": "fixed T-1\n"}}}
		}
		return modelserver.Reply{Text: "Done."}
	})
	agent := geminiAgent(t, gemini, "inline", model.URL())
	home := regexp.MustCompile(`HOME: "?([^,"}]+)`).FindStringSubmatch(agent)[1]
	settings := filepath.Join(home, ".gemini", "settings.json")
	before := blackbox.ReadFile(t, settings)
	dir = blackbox.NewRepo(t, "agents:\n"+agent+blackbox.CheckStep)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "T-1", "description": "Write the fix into file.txt"})
	got := in.WaitTask("T-1", 3*time.Minute, "success", "escalated", "stuck")
	var all []string
	for _, r := range model.AgentRequests() {
		b, _ := json.Marshal(r.Body["contents"])
		all = append(all, string(b))
	}
	joined := strings.Join(all, "\n")
	if got.State != "success" || got.Attempt != 1 || !strings.Contains(joined, "wilco took it as ack: acknowledged") {
		t.Fatalf("the task ended %s at attempt %d:\n%s\nserver:\n%s\nrequests:\n%s", got.State, got.Attempt, got, blackbox.Tail(in.Stderr.String(), 30), blackbox.Tail(joined, 10))
	}
	if after := blackbox.ReadFile(t, settings); after != before {
		t.Fatalf("the user's Gemini CLI settings were changed:\n%s\nwere:\n%s", after, before)
	}
}
