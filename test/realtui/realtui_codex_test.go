package realtui

// The real Codex TUI (the pinned npm version) run by wilco in tmux, against
// the scripted Responses API, its words read from its own record of the
// conversation (its rollout): four tasks through one session, and its
// approval questions answered by the agent's allow list.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"wilco/test/blackbox"

	execadapter "wilco/adapter/exec"
	"wilco/modelserver"
)

// codexFirstRunAgent is the wilco.yaml agent line of the real Codex TUI in
// tmux pointed at url, with a private HOME (codexHome) as a first run has it:
// the folder not trusted yet, the newer model not offered yet — the preset
// answers both. Its pane is narrower than the Understanding and lower than
// a prompt; tmux is more of the agent's tmux block.
func codexFirstRunAgent(t testing.TB, codex, url, tmux string) (line, home string) {
	t.Helper()
	home = blackbox.CodexHome(t, url)
	line = fmt.Sprintf("  - {name: codex, adapter: tmux, preset: codex, command: [%s], timeout: 4m, env: {HOME: %s}, tmux: {width: 120, height: 40%s}}\n",
		blackbox.Quoted(codex), blackbox.Quoted(home), tmux)
	return line, home
}

// codexWrites makes a script's Write calls (Claude Code's tool) Codex's:
// the same content written into the same file of the repository by a
// printf its exec_command runs.
func codexWrites(script modelserver.Script) modelserver.Script {
	return func(turn modelserver.Turn) modelserver.Reply {
		r := script(turn)
		if r.Tool != nil && r.Tool.Name == "Write" {
			file, _ := r.Tool.Input["file_path"].(string)
			content, _ := r.Tool.Input["content"].(string)
			r.Tool = blackbox.ShellTool("printf '" + strings.ReplaceAll(content, "\n", `\n`) + "' > " + filepath.Base(file))
		}
		return r
	}
}

// noProcessOutlives fails the test when a process whose command line names
// home (the Codex agent's: its app-server under $CODEX_HOME) still runs
// once the test's tmux server ended, and ends it. Called before endTmux,
// so that its check runs after endTmux's.
func noProcessOutlives(t *testing.T, home string) {
	t.Cleanup(func() {
		var left []int
		blackbox.Eventually(10*time.Second, 100*time.Millisecond, func() bool {
			left = processesNaming(home)
			return len(left) == 0
		})
		for _, pid := range left {
			t.Errorf("a process of the agent outlived its tmux session: %s", describeProcess(pid))
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

// describeProcess is a process's pid and command line.
func describeProcess(pid int) string {
	cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return fmt.Sprintf("pid %d: %s", pid, strings.ReplaceAll(string(cmd), "\x00", " "))
}

// processesNaming lists the processes whose command line holds home, or
// whose HOME it is.
func processesNaming(home string) []int {
	dirs, _ := os.ReadDir("/proc")
	var out []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		env, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
		if strings.Contains(string(cmd), home) || slices.Contains(strings.Split(string(env), "\x00"), "HOME="+home) {
			out = append(out, pid)
		}
	}
	return out
}

// The real Codex TUI through the four tasks of fourTasksScript in one
// session, started as a user's first run starts it (it asks to trust the
// folder, then offers a newer model: the existing one is kept), its words
// read from its rollout; nothing of it runs once its session ended.
func TestCodexTUIIsReadFromItsRecordThroughFourTasksInOneSession(t *testing.T) {
	t.Parallel()
	blackbox.NeedTmux(t)
	codex := blackbox.NpmBin(t, "@openai/codex", execadapter.PresetCodex, "codex")
	var dir string
	model := modelserver.NewResponses(t, codexWrites(fourTasksScript(&dir)))
	agent, home := codexFirstRunAgent(t, codex, model.URL(), "")
	noProcessOutlives(t, home)
	dir = blackbox.NewRepo(t, "agents:\n"+agent+blackbox.CheckStep)
	blackbox.EndTmux(t, dir)
	in := blackbox.ServeRepo(t, dir)
	blackbox.CheckReadRight(t, in, dir, runFourTasks(t, in, dir), longUnderstanding)
	// Codex's words were read from its record, in every run.
	runs, _ := filepath.Glob(filepath.Join(dir, ".wilco", "runs", "T-*"))
	for _, run := range runs {
		if log := blackbox.ReadFile(t, filepath.Join(run, "agent.log")); !strings.Contains(log, "--- wilco: the agent's words are read from its record") {
			t.Errorf("%s: Codex's words were not read from its record:\n%s", filepath.Base(run), blackbox.Tail(log, 40))
		}
	}
	// One Codex conversation served the four tasks, on the model
	// configured: the newer one it offered was declined.
	rollouts, _ := filepath.Glob(filepath.Join(home, ".codex", "sessions", "*", "*", "*", "rollout-*.jsonl"))
	if len(rollouts) != 1 {
		t.Errorf("the tasks went through %d Codex conversations: %v", len(rollouts), rollouts)
	}
	for _, r := range model.AgentRequests() {
		if r.Body["model"] != "gpt-5.5" {
			t.Errorf("Codex asked for the model %v, not the one configured (gpt-5.5): the offer of a newer model was taken", r.Body["model"])
			break
		}
	}
}

// codexPermissionScript is the model's side of two tasks whose commands
// ask to leave Codex's sandbox (sandbox_permissions "require_escalated",
// as a model asks Codex for approval): P-1 writes its fix with printf,
// which the allow list allows; P-2 first asks to remove keep.txt — its
// reason names printf, its command does not — which the list does not
// allow: Codex stops the turn, the verification fails, and the retry
// writes the fix inside the sandbox, asking nothing.
func codexPermissionScript(turn modelserver.Turn) modelserver.Reply {
	m := ackRequest.FindStringSubmatch(turn.Prompt)
	if m == nil {
		return modelserver.Reply{Text: "noted"}
	}
	id := m[1]
	ack := "[ACK] " + id + " - RECEIVED\nUnderstanding: Will write the fix into file.txt\n\n"
	escalated := func(cmd, why string) *modelserver.ToolUse {
		return &modelserver.ToolUse{Name: "exec_command", Input: map[string]any{"cmd": cmd, "justification": why, "sandbox_permissions": "require_escalated"}}
	}
	switch {
	case turn.Step > 0:
		return modelserver.Reply{Text: "Done: wrote file.txt.\nStatus: complete\nSummary: wrote the fix into file.txt"}
	case id == "P-1":
		return modelserver.Reply{Text: ack + "Writing it.", Tool: escalated(`printf 'fixed P-1\n' > file.txt`, "to write the fix")}
	case !strings.Contains(turn.Prompt, "<retry_context"):
		return modelserver.Reply{Text: ack + "Clearing the way first.", Tool: escalated("rm -f keep.txt", "printf alone cannot clear the way")}
	}
	return modelserver.Reply{Text: ack + "Writing it.", Tool: blackbox.ShellTool(`printf 'fixed P-2\n' > file.txt`)}
}

// The real Codex TUI asks for approval to run a command outside its
// sandbox: wilco answers by the agent's allow list, matched against the
// command Codex would run — yes to printf (the task succeeds), no to rm,
// though the model's reason for it names printf (Codex stops its turn,
// the command never ran, the retry succeeds). Each question is an
// agent.permission event and the task's milestone; its text is the
// question, never a line of the prompt.
func TestCodexTUIApprovalQuestionsAreAnsweredByTheAllowList(t *testing.T) {
	t.Parallel()
	blackbox.NeedTmux(t)
	codex := blackbox.NpmBin(t, "@openai/codex", execadapter.PresetCodex, "codex")
	model := modelserver.NewResponses(t, codexPermissionScript)
	agent, home := codexFirstRunAgent(t, codex, model.URL(), ", allow: [printf]")
	noProcessOutlives(t, home)
	dir := blackbox.NewRepo(t, "agents:\n"+agent+blackbox.CheckStep)
	blackbox.EndTmux(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "keep.txt"), []byte("kept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "P-1", "description": "Write the fix into file.txt"})
	if got := in.WaitTask("P-1", 4*time.Minute, "success", "escalated", "stuck", "failed"); got.State != "success" || got.Attempt != 1 {
		t.Fatalf("P-1 ended %s at attempt %d:\n%s\nthe agent's logs:\n%s", got.State, got.Attempt, got, blackbox.AgentLogs(t, dir))
	}
	in.Submit(map[string]any{"id": "P-2", "description": "Write the fix into file.txt"})
	if got := in.WaitTask("P-2", 4*time.Minute, "success", "escalated", "stuck", "failed"); got.State != "success" || got.Attempt != 2 {
		t.Fatalf("P-2 ended %s at attempt %d:\n%s\nthe agent's logs:\n%s", got.State, got.Attempt, got, blackbox.AgentLogs(t, dir))
	}
	if _, err := os.Stat(filepath.Join(dir, "keep.txt")); err != nil {
		t.Fatalf("the command wilco denied ran: %v\nthe agent's logs:\n%s", err, blackbox.AgentLogs(t, dir))
	}
	// Each question asked once, answered by the list, as its event says.
	want := map[string]struct{ tool, answer, milestone string }{
		"P-1": {`printf 'fixed P-1\n' > file.txt`, "allowed", "Permission for printf 'fixed P-1\\n' > file.txt: allowed by the allow list"},
		"P-2": {"rm -f keep.txt", "denied", "Permission for rm -f keep.txt: denied (not in the allow list)"},
	}
	evs, _ := in.Events(0)
	asked := map[string]int{}
	for _, e := range evs {
		if e.Type != "agent.permission" {
			continue
		}
		var p struct {
			TaskID             string `json:"task_id"`
			Tool, Text, Answer string
		}
		if err := json.Unmarshal(e.Data, &p); err != nil {
			t.Fatal(err)
		}
		w := want[p.TaskID]
		asked[p.TaskID]++
		if p.Tool != w.tool || p.Answer != w.answer || !strings.HasPrefix(p.Text, "Would you like to run the following command?") {
			t.Errorf("%s: the permission asked: %s", p.TaskID, e.Data)
		}
		for _, l := range blackbox.PromptLines {
			if strings.Contains(p.Text, l) {
				t.Errorf("%s: the permission question's text holds a line of the prompt %q: %s", p.TaskID, l, p.Text)
			}
		}
	}
	for id, w := range want {
		if asked[id] != 1 {
			t.Errorf("%s: %d permission questions recorded, want 1", id, asked[id])
		}
		if ms := blackbox.Milestones(t, in, id); !strings.Contains(ms, w.milestone) {
			t.Errorf("%s: no milestone said how the question was answered:\n%s", id, ms)
		}
	}
	// What Codex did is read from its record: the denied command's call,
	// declined; no line of a prompt in the agent's logs.
	blackbox.MustContain(t, "wilco transcript P-2 --attempt 1", in.Cli("transcript", "P-2", "--attempt", "1", "--full"), "[ACK] P-2 - RECEIVED", "rm -f keep.txt", "aborted by user")
	runs, _ := filepath.Glob(filepath.Join(dir, ".wilco", "runs", "P-*"))
	for _, run := range runs {
		b, _ := os.ReadFile(filepath.Join(run, "agent.log"))
		if !strings.Contains(string(b), "--- wilco: the agent's words are read from its record") {
			t.Errorf("%s: the agent's words were not read from its record:\n%s", filepath.Base(run), blackbox.Tail(string(b), 40))
		}
		for _, l := range strings.Split(string(b), "\n") {
			for _, p := range blackbox.PromptLines {
				if strings.Contains(l, p) {
					t.Errorf("%s: the agent's log holds a line of the prompt: %q", filepath.Base(run), l)
				}
			}
		}
	}
	blackbox.MustContain(t, "P-1's agent.log", blackbox.ReadFile(t, filepath.Join(dir, ".wilco", "runs", "P-1-a1", "agent.log")),
		"--- wilco: permission asked (allowed): Would you like to run the following command?")
	blackbox.MustContain(t, "P-2's first agent.log", blackbox.ReadFile(t, filepath.Join(dir, ".wilco", "runs", "P-2-a1", "agent.log")),
		"--- wilco: permission asked (denied): Would you like to run the following command?", "--- wilco: the agent's record ends the turn: aborted: interrupted")
}

// The real Codex TUI hibernated (its "ok" answered by the model in its
// pane) and woken: it stops whole — nothing of it runs while it
// hibernates — and starts again in its conversation (`codex resume <id>`,
// the id its record gave), which its next task's words are read from.
func TestCodexTUIHibernatesWholeAndWakesInItsConversation(t *testing.T) {
	t.Parallel()
	blackbox.NeedTmux(t)
	codex := blackbox.NpmBin(t, "@openai/codex", execadapter.PresetCodex, "codex")
	model := modelserver.NewResponses(t, func(turn modelserver.Turn) modelserver.Reply {
		p := turn.Prompt
		if strings.Contains(p, `reply with "ok"`) || strings.Contains(p, "Please reply 'ok'") {
			return modelserver.Reply{Text: "ok"}
		}
		m := ackRequest.FindStringSubmatch(p)
		if m == nil {
			return modelserver.Reply{Text: "noted"}
		}
		if turn.Step == 0 {
			return modelserver.Reply{Text: "[ACK] " + m[1] + " - RECEIVED\nUnderstanding: Will write the fix into file.txt",
				Tool: blackbox.ShellTool("printf 'fixed " + m[1] + "\\n' > file.txt")}
		}
		return modelserver.Reply{Text: "Done: wrote file.txt.\nStatus: complete\nSummary: wrote the fix into file.txt"}
	})
	agent, home := codexFirstRunAgent(t, codex, model.URL(), "")
	noProcessOutlives(t, home)
	dir := blackbox.NewRepo(t, "agents:\n"+agent+blackbox.CheckStep)
	blackbox.EndTmux(t, dir)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "T-1", "description": "Write the fix into file.txt"})
	if got := in.WaitTask("T-1", 4*time.Minute, "success", "escalated", "stuck", "failed"); got.State != "success" {
		t.Fatalf("T-1 ended %s:\n%s\nthe agent's logs:\n%s", got.State, got, blackbox.AgentLogs(t, dir))
	}
	// The conversation's id, which Codex made itself, came from its record.
	var view struct{ Pane struct{ Conversation string } }
	in.Must(200, in.Call("GET", "/v1/agents/codex", blackbox.AdminToken, nil), &view)
	rollouts, _ := filepath.Glob(filepath.Join(home, ".codex", "sessions", "*", "*", "*", "rollout-*.jsonl"))
	if conv := view.Pane.Conversation; conv == "" || len(rollouts) != 1 || !strings.HasSuffix(rollouts[0], "-"+conv+".jsonl") {
		t.Fatalf("the agent's conversation is %q; Codex's rollouts: %v", conv, rollouts)
	}
	r := blackbox.WilcoCLI(t, dir, in.Url, 2*time.Minute, "op", "hibernate", "--agent", "codex")
	if r.Code != 0 || !strings.Contains(r.Stdout, "codex: ok") || !strings.Contains(r.Stdout, "hibernated") {
		t.Fatalf("wilco op hibernate: exit %d\n%s%s\nserver:\n%s", r.Code, r.Stdout, r.Stderr, blackbox.Tail(in.Stderr.String(), 30))
	}
	var left []int
	if !blackbox.Eventually(10*time.Second, 100*time.Millisecond, func() bool { left = processesNaming(home); return len(left) == 0 }) {
		for _, pid := range left {
			t.Errorf("a process of the agent runs while it hibernates: %s", describeProcess(pid))
		}
	}
	r = blackbox.WilcoCLI(t, dir, in.Url, 2*time.Minute, "op", "wake", "--agent", "codex", "--timeout", "1s", "--reminders", "500ms")
	if r.Code != 0 || !strings.Contains(r.Stdout, "woken") {
		t.Fatalf("wilco op wake: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	in.Submit(map[string]any{"id": "T-2", "description": "Write the fix into file.txt again"})
	if got := in.WaitTask("T-2", 4*time.Minute, "success", "escalated", "stuck", "failed"); got.State != "success" || got.Attempt != 1 {
		t.Fatalf("T-2 ended %s at attempt %d:\n%s\nthe agent's logs:\n%s", got.State, got.Attempt, got, blackbox.AgentLogs(t, dir))
	}
	// T-2 went on in T-1's conversation, read from the same record.
	record := func(id string) string {
		log := blackbox.ReadFile(t, filepath.Join(dir, ".wilco", "runs", id+"-a1", "agent.log"))
		_, path, ok := strings.Cut(log, "--- wilco: the agent's words are read from its record ")
		if !ok {
			t.Fatalf("%s was not read from Codex's record:\n%s", id, log)
		}
		path, _, _ = strings.Cut(path, "\n")
		return path
	}
	if a, b := record("T-1"), record("T-2"); a != b {
		t.Errorf("T-1 was read from %s, T-2 from %s: not one conversation", a, b)
	}
	resumed := false
	for _, req := range model.AgentRequests() {
		in, _ := json.Marshal(req.Body["input"])
		resumed = resumed || strings.Contains(req.Turn.Prompt, "T-2") && strings.Contains(string(in), "[ACK] T-1 - RECEIVED")
	}
	if !resumed {
		t.Error("T-2's requests to the model do not carry T-1's conversation: Codex was not resumed")
	}
}
