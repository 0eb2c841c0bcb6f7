package realtui

// End-to-end tests of the real Claude Code TUI (the pinned npm version, the
// same cache as the exec tests) run by wilco in tmux, pointed at a scripted
// Anthropic Messages server on 127.0.0.1: delivery by paste and a separate
// Enter, the ACK read from the pane, real file edits, verification,
// retries, and operations that ask for "ok" in the pane.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"wilco/test/blackbox"

	execadapter "wilco/adapter/exec"
	"wilco/modelserver"
)

// claudeTUIAgent is the wilco.yaml agent line of the real Claude Code TUI
// in tmux, pointed at url, with a private HOME whose .claude.json only
// says the onboarding was done: the preset answers Claude Code's own
// questions (trust this folder, use this API key).
func claudeTUIAgent(t testing.TB, claude, url string) (line, home string) {
	t.Helper()
	home = t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte(`{"hasCompletedOnboarding": true, "theme": "dark"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	line = fmt.Sprintf("  - {name: claude, adapter: tmux, preset: claude-code, command: [%s], timeout: 4m, "+
		"env: {ANTHROPIC_BASE_URL: %s, ANTHROPIC_API_KEY: scripted-key-0123456789abcdefghij, HOME: %s, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: \"1\", DISABLE_AUTOUPDATER: \"1\"}, "+
		"tmux: {width: 160, height: 50}}\n", blackbox.Quoted(claude), blackbox.Quoted(url), blackbox.Quoted(home))
	return line, home
}

var ackRequest = regexp.MustCompile(`Reply with \[ACK\] (\S+) - RECEIVED`)

// tuiScript is the model's side: "ok" to an operation's request; for a
// task, the ACK and a Read of file.txt, then a Write of it (a wrong guess
// on the first attempt, the fix on a retry), then the completion report.
func tuiScript(dir *string) modelserver.Script {
	return func(turn modelserver.Turn) modelserver.Reply {
		p := turn.Prompt
		if strings.Contains(p, `reply with "ok"`) || strings.Contains(p, "Please reply 'ok'") {
			return modelserver.Reply{Text: "ok"}
		}
		m := ackRequest.FindStringSubmatch(p)
		if m == nil {
			return modelserver.Reply{Text: "noted"}
		}
		id, file := m[1], filepath.Join(*dir, "file.txt")
		content := "attempt 1\n"
		if strings.Contains(p, "<retry_context") {
			content = "fixed " + id + "\n"
		}
		switch turn.Step {
		case 0:
			return modelserver.Reply{Text: "[ACK] " + id + " - RECEIVED\nUnderstanding: Will write the fix into file.txt\n\nReading it first.",
				Tool: &modelserver.ToolUse{Name: "Read", Input: map[string]any{"file_path": file}}}
		case 1:
			return modelserver.Reply{Text: "Writing the fix.", Tool: blackbox.WriteTool(file, content)}
		}
		return modelserver.Reply{Text: "Done: wrote file.txt.\nStatus: complete\nSummary: wrote the fix into file.txt"}
	}
}

// The real Claude Code TUI in tmux: the task is pasted and submitted, the
// ACK read from the pane (under its "● " marker, beside its decoration),
// a real file edit by its Write tool, a failed verification, a retry whose
// prompt carries the failure, success.
func TestClaudeCodeTUIRetriesWithTheFailureUntilVerified(t *testing.T) {
	t.Parallel()
	blackbox.NeedTmux(t)
	claude := blackbox.NpmBin(t, "@anthropic-ai/claude-code", execadapter.PresetClaudeCode, "claude")
	var dir string
	model := modelserver.NewAnthropic(t, tuiScript(&dir))
	agent, _ := claudeTUIAgent(t, claude, model.URL())
	dir = blackbox.NewRepo(t, "agents:\n"+agent+blackbox.CheckStep)
	blackbox.EndTmux(t, dir)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "T-1", "description": "Write the fix into file.txt"})
	got := in.WaitTask("T-1", 5*time.Minute, "success", "escalated", "stuck")
	if got.State != "success" || got.Attempt != 2 {
		t.Fatalf("the task ended %s at attempt %d:\n%s\nthe model was asked:\n%s\nthe agent's logs:\n%s", got.State, got.Attempt, got,
			prompts(model), blackbox.AgentLogs(t, dir))
	}
	if blackbox.ReadFile(t, filepath.Join(dir, "file.txt")) != "fixed T-1\n" {
		t.Fatal("Claude Code's fix is not in the repository")
	}
	retried := false
	for _, r := range model.AgentRequests() {
		if p := r.Turn.Prompt; strings.Contains(p, `<retry_context attempt="2"`) && strings.Contains(p, "file.txt is not fixed") {
			retried = true
		}
	}
	if !retried {
		t.Fatalf("no request to the model carried the retry context and the failing check:\n%s\nthe agent's logs:\n%s", prompts(model), blackbox.AgentLogs(t, dir))
	}
	// Both delegations were acknowledged from the pane.
	var msgs struct {
		Messages []struct{ State, Type, Understanding string }
	}
	in.Must(200, in.Call("GET", "/v1/messages?task=T-1", blackbox.AdminToken, nil), &msgs)
	acked := 0
	for _, m := range msgs.Messages {
		if m.Type == "task_delegation" && m.State == "acknowledged" && strings.Contains(m.Understanding, "Will write the fix into file.txt") {
			acked++
		}
	}
	if acked != 2 {
		t.Fatalf("the delegations: %+v", msgs.Messages)
	}
	// What Claude Code did showed as milestones; its pane's text is the
	// attempt's transcript, without the TUI's decoration.
	if ms := blackbox.Milestones(t, in, "T-1"); !strings.Contains(ms, "Writing file.txt") {
		t.Fatalf("no milestone said what Claude Code did:\n%s\nthe agent's logs:\n%s", ms, blackbox.AgentLogs(t, dir))
	}
	tr := in.Cli("transcript", "T-1", "--attempt", "1", "--full")
	// Read from Claude Code's own record: its tool calls with their input.
	blackbox.MustContain(t, "wilco transcript T-1 --attempt 1", tr, "[ACK] T-1 - RECEIVED", "tool Write {", `"file_path"`, "Status: complete")
	for _, not := range []string{"esc to interrupt", "accept edits on", "────"} {
		if strings.Contains(tr, not) {
			t.Fatalf("the transcript holds the TUI's decoration %q:\n%s", not, tr)
		}
	}
}

// prompts lists what the model was asked, for failure messages.
func prompts(model *modelserver.Anthropic) string {
	var out []string
	for _, r := range model.AgentRequests() {
		out = append(out, fmt.Sprintf("step %d: %s", r.Turn.Step, blackbox.Tail(r.Turn.Prompt, 8)))
	}
	return strings.Join(out, "\n-----\n")
}

// The real Claude Code TUI through hibernate → install-skill → wake: the
// operation asks for "ok" in the pane (the model answers it), hibernates
// the agent (its session id kept), installs the skill where Claude Code
// loads skills, wakes it resuming its conversation; the next task's
// requests show the skill offered and the earlier conversation.
func TestClaudeCodeTUIHibernatesInstallsASkillAndWakesWithIt(t *testing.T) {
	t.Parallel()
	blackbox.NeedTmux(t)
	claude := blackbox.NpmBin(t, "@anthropic-ai/claude-code", execadapter.PresetClaudeCode, "claude")
	var dir string
	model := modelserver.NewAnthropic(t, tuiScript(&dir))
	agent, home := claudeTUIAgent(t, claude, model.URL())
	dir = blackbox.NewRepo(t, "agents:\n"+agent+blackbox.CheckStep)
	blackbox.EndTmux(t, dir)
	in := blackbox.ServeRepo(t, dir)

	// A first task: the session starts, and has a conversation to keep.
	in.Submit(map[string]any{"id": "T-1", "description": "Write the fix into file.txt"})
	if got := in.WaitTask("T-1", 5*time.Minute, "success", "escalated", "stuck"); got.State != "success" {
		t.Fatalf("T-1 ended %s:\n%s\nserver:\n%s", got.State, got, blackbox.Tail(in.Stderr.String(), 40))
	}
	for _, r := range model.AgentRequests() {
		if strings.Contains(fmt.Sprint(r.Body["system"]), "lint-rules") {
			t.Fatal("the skill is offered before it is installed")
		}
	}

	skill := filepath.Join(t.TempDir(), "lint-rules")
	if err := os.MkdirAll(skill, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte("---\nname: lint-rules\ndescription: The house lint rules, for any change to Go code.\n---\n\nRun gofmt on every file you change.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := len(model.Requests())
	r := blackbox.WilcoCLI(t, dir, in.Url, 4*time.Minute, "op", "install-skill", skill, "--agent", "claude", "--json")
	var op struct {
		ID, State string
		Agents    []struct{ Name, Response string }
		Results   []struct {
			Agent, Action, Error string
			Done                 bool
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &op); err != nil || r.Code != 0 || op.State != "done" || len(op.Agents) != 1 || op.Agents[0].Response != "ok" || len(op.Results) != 1 {
		t.Fatalf("wilco op install-skill: exit %d (%v)\n%s%s\nserver:\n%s", r.Code, err, r.Stdout, r.Stderr, blackbox.Tail(in.Stderr.String(), 40))
	}
	res := op.Results[0]
	installed := filepath.Join(home, ".claude", "skills", "lint-rules", "SKILL.md")
	if !res.Done || !strings.Contains(res.Action, "hibernated") || !strings.Contains(res.Action, "installed skill into "+filepath.Dir(installed)) ||
		!strings.Contains(res.Action, "resuming its conversation") {
		t.Fatalf("what the operation did: %+v", res)
	}
	if _, err := os.Stat(installed); err != nil {
		t.Fatalf("the skill is not where Claude Code loads skills: %v", err)
	}
	// The "ok" came from the model, through the pane.
	answered := false
	for _, req := range model.Requests()[before:] {
		if strings.Contains(req.Turn.Prompt, "install the skill lint-rules") {
			answered = true
		}
	}
	if !answered {
		t.Fatal("the operation's request never reached the model")
	}
	round := in.Cli("op", "log", op.ID)
	blackbox.MustContain(t, "wilco op log", round, "install-skill", "request sent", "answered ok", "done: hibernated", "installed skill", "woken")

	// The woken agent works with the skill, in its resumed conversation.
	in.Submit(map[string]any{"id": "T-2", "description": "Write the fix into file.txt again"})
	if got := in.WaitTask("T-2", 5*time.Minute, "success", "escalated", "stuck"); got.State != "success" {
		t.Fatalf("T-2 ended %s:\n%s\nserver:\n%s", got.State, got, blackbox.Tail(in.Stderr.String(), 40))
	}
	// The resumed conversation is read from Claude Code's record too.
	if log := blackbox.ReadFile(t, filepath.Join(dir, ".wilco", "runs", "T-2-a1", "agent.log")); !strings.Contains(log, "--- wilco: the agent's words are read from its record") {
		t.Fatalf("after the wake, T-2 was not read from Claude Code's record:\n%s", log)
	}
	offered, resumed := false, false
	for _, req := range model.AgentRequests() {
		if !strings.Contains(req.Turn.Prompt, "T-2") {
			continue
		}
		b, _ := json.Marshal(req.Body)
		offered = offered || strings.Contains(string(b), "- lint-rules: The house lint rules")
		msgs, _ := json.Marshal(req.Body["messages"])
		resumed = resumed || strings.Contains(string(msgs), "[ACK] T-1 - RECEIVED")
	}
	if !offered || !resumed {
		t.Fatalf("after the wake, the skill offered: %v; the conversation resumed: %v", offered, resumed)
	}
}
