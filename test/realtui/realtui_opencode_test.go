package realtui

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"wilco/test/blackbox"

	execadapter "wilco/adapter/exec"
	"wilco/modelserver"
)

// opencode's TUI run by wilco in tmux: what the agent said — its ACK, its
// write, its report — is read from its database, not from its screen
// (whose markdown was once seen to drop the brackets of "[ACK]"), through
// a failed verification, a retry whose prompt carries the failure, and
// success.
func TestOpencodeTUIIsReadFromItsRecordThroughARetry(t *testing.T) {
	t.Parallel()
	blackbox.NeedTmux(t)
	opencode := blackbox.NpmBin(t, "opencode-ai", execadapter.PresetOpencode, "opencode")
	var dir string
	model := modelserver.NewChat(t, blackbox.RetryScript("inline", func(content string) *modelserver.ToolUse {
		return &modelserver.ToolUse{Name: "write", Input: map[string]any{"filePath": filepath.Join(dir, "file.txt"), "content": content + "\n"}}
	}))
	home := blackbox.OpencodeHome(t, model.URL())
	agent := fmt.Sprintf("  - {name: opencode, adapter: tmux, preset: opencode, command: [%s], timeout: 4m, env: {HOME: %s}, tmux: {width: 160, height: 50}}\n",
		blackbox.Quoted(opencode), blackbox.Quoted(home))
	dir = blackbox.NewRepo(t, "agents:\n"+agent+blackbox.CheckStep)
	blackbox.EndTmux(t, dir)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "T-1", "description": "Write the fix into file.txt"})
	got := in.WaitTask("T-1", 5*time.Minute, "success", "escalated", "stuck")
	var asked []string
	retried := false
	for _, r := range model.AgentRequests() {
		asked = append(asked, fmt.Sprintf("step %d: %s", r.Turn.Step, blackbox.Tail(r.Turn.Prompt, 8)))
		if p := r.Turn.Prompt; strings.Contains(p, `<retry_context attempt="2"`) && strings.Contains(p, "file.txt is not fixed") {
			retried = true
		}
	}
	if got.State != "success" || got.Attempt != 2 || !retried {
		t.Fatalf("the task ended %s at attempt %d (the retry context reached the model: %v):\n%s\nthe model was asked:\n%s\nthe agent's logs:\n%s",
			got.State, got.Attempt, retried, got, strings.Join(asked, "\n-----\n"), blackbox.AgentLogs(t, dir))
	}
	if blackbox.ReadFile(t, filepath.Join(dir, "file.txt")) != "fixed T-1\n" {
		t.Fatal("opencode's fix is not in the repository")
	}
	logs := blackbox.AgentLogs(t, dir)
	if strings.Count(logs, "the agent's words are read from its record") < 2 || strings.Contains(logs, "is read from the pane") {
		t.Fatalf("the turns were not read from opencode's record:\n%s", logs)
	}
	if ms := blackbox.Milestones(t, in, "T-1"); !strings.Contains(ms, "Writing file.txt") {
		t.Fatalf("no milestone said what opencode did:\n%s\nthe agent's logs:\n%s", ms, logs)
	}
	tr := in.Cli("transcript", "T-1", "--attempt", "1", "--full")
	blackbox.MustContain(t, "wilco transcript T-1 --attempt 1", tr, "[ACK] T-1 - RECEIVED", "tool write {", `"filePath"`, "Done: wrote file.txt.")
	for _, not := range []string{"esc interrupt", "Build ·", "┃"} {
		if strings.Contains(tr, not) {
			t.Fatalf("the transcript holds the TUI's decoration %q:\n%s", not, tr)
		}
	}
}

// opencodeTUIAgent is the wilco.yaml agent line of the real opencode TUI in
// tmux pointed at url, with a private HOME (opencodeHome); tmux is more of
// the agent's entry (its pane's size, an allow list).
func opencodeTUIAgent(t testing.TB, opencode, url, tmux string) (line, home string) {
	t.Helper()
	home = blackbox.OpencodeHome(t, url)
	line = fmt.Sprintf("  - {name: opencode, adapter: tmux, preset: opencode, command: [%s], timeout: 4m, env: {HOME: %s}, %s}\n",
		blackbox.Quoted(opencode), blackbox.Quoted(home), tmux)
	return line, home
}

// opencodeWrites makes a script's Write calls (Claude Code's tool)
// opencode's: the same content written into the same file by its write
// tool.
func opencodeWrites(script modelserver.Script) modelserver.Script {
	return func(turn modelserver.Turn) modelserver.Reply {
		r := script(turn)
		if r.Tool != nil && r.Tool.Name == "Write" {
			r.Tool = &modelserver.ToolUse{Name: "write", Input: map[string]any{"filePath": r.Tool.Input["file_path"], "content": r.Tool.Input["content"]}}
		}
		return r
	}
}

// recordOf is the record the agent's words of a run were read from, as its
// agent.log says ("" when they were not read from a record).
func recordOf(t *testing.T, dir, run string) string {
	t.Helper()
	log := blackbox.ReadFile(t, filepath.Join(dir, ".wilco", "runs", run, "agent.log"))
	_, path, ok := strings.Cut(log, "--- wilco: the agent's words are read from its record ")
	if !ok {
		return ""
	}
	path, _, _ = strings.Cut(path, "\n")
	return path
}

// The real opencode TUI through the four tasks of fourTasksScript, one
// program in one pane narrower than the Understanding and lower than a
// prompt (which opencode shows as "[Pasted ~N lines]"): its words read
// from its database, one conversation throughout.
func TestOpencodeTUIIsReadFromItsRecordThroughFourTasksInOneConversation(t *testing.T) {
	t.Parallel()
	blackbox.NeedTmux(t)
	opencode := blackbox.NpmBin(t, "opencode-ai", execadapter.PresetOpencode, "opencode")
	var dir string
	model := modelserver.NewChat(t, opencodeWrites(fourTasksScript(&dir)))
	agent, _ := opencodeTUIAgent(t, opencode, model.URL(), "tmux: {width: 120, height: 40}")
	dir = blackbox.NewRepo(t, "agents:\n"+agent+blackbox.CheckStep)
	blackbox.EndTmux(t, dir)
	in := blackbox.ServeRepo(t, dir)
	attempts := runFourTasks(t, in, dir)
	blackbox.CheckReadRight(t, in, dir, attempts, longUnderstanding)
	// Every turn was read from opencode's record, of one conversation.
	first := recordOf(t, dir, "T-1-a1")
	for _, run := range []string{"T-1-a1", "T-2-a1", "T-2-a2", "T-3-a1", "T-4-a1"} {
		if r := recordOf(t, dir, run); r == "" || r != first {
			t.Errorf("%s was read from the record %q, T-1 from %q:\n%s", run, r, first, blackbox.ReadFile(t, filepath.Join(dir, ".wilco", "runs", run, "agent.log")))
		}
	}
}

// opencodeAsksForCommands makes the opencode of home ask before it runs
// any shell command, as a user who wants to approve them configures it
// ("permission": {"bash": "ask"} in its opencode.json).
func opencodeAsksForCommands(t *testing.T, home string) {
	t.Helper()
	path := filepath.Join(home, ".config", "opencode", "opencode.json")
	var cfg map[string]any
	if err := json.Unmarshal([]byte(blackbox.ReadFile(t, path)), &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["permission"] = map[string]any{"bash": "ask"}
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// opencodePermissionScript is the model's side of two tasks whose fix is
// written by a shell command, which opencode asks to run: P-1's printf,
// which the allow list allows; P-2 first asks to remove keep.txt — the
// model's words above the question name printf, and P-1's printf shows
// above it too — which the list does not allow: opencode ends the turn,
// the verification fails, and the retry writes the fix with its write
// tool, asking nothing.
func opencodePermissionScript(dir *string) modelserver.Script {
	return func(turn modelserver.Turn) modelserver.Reply {
		m := ackRequest.FindStringSubmatch(turn.Prompt)
		if m == nil {
			return modelserver.Reply{Text: "noted"}
		}
		id := m[1]
		ack := "[ACK] " + id + " - RECEIVED\nUnderstanding: Will write the fix into file.txt\n\n"
		bash := func(cmd string) *modelserver.ToolUse {
			return &modelserver.ToolUse{Name: "bash", Input: map[string]any{"command": cmd, "description": "Writes the fix"}}
		}
		switch {
		case turn.Step > 0:
			return modelserver.Reply{Text: "Done: wrote file.txt.\nStatus: complete\nSummary: wrote the fix into file.txt"}
		case id == "P-1":
			return modelserver.Reply{Text: ack + "Writing it with printf.", Tool: bash(`printf 'fixed P-1\n' > file.txt`)}
		case !strings.Contains(turn.Prompt, "<retry_context"):
			return modelserver.Reply{Text: ack + "With printf, once keep.txt is out of the way.", Tool: bash("rm -f keep.txt")}
		}
		return modelserver.Reply{Text: ack + "Writing it.", Tool: &modelserver.ToolUse{Name: "write",
			Input: map[string]any{"filePath": filepath.Join(*dir, "file.txt"), "content": "fixed P-2\n"}}}
	}
}

// The real opencode TUI, configured to ask before it runs a command, in a
// pane wide enough for its side panel: wilco answers its questions by the
// agent's allow list, matched against the whole command opencode would
// run and nothing else — yes to P-1's printf (the task succeeds), no to
// P-2's rm, though the model's words and P-1's printf above the question
// name printf. opencode then ends its turn and its record says nothing of
// that end: wilco ends the turn once the pane has been ready for its
// settle time, reports it as a turn over (not a stall), the verification
// fails and the retry succeeds. Each question is an agent.permission
// event and the task's milestone.
func TestOpencodeTUIPermissionQuestionsAreAnsweredByTheAllowList(t *testing.T) {
	t.Parallel()
	blackbox.NeedTmux(t)
	opencode := blackbox.NpmBin(t, "opencode-ai", execadapter.PresetOpencode, "opencode")
	var dir string
	model := modelserver.NewChat(t, opencodePermissionScript(&dir))
	agent, home := opencodeTUIAgent(t, opencode, model.URL(), `tmux: {width: 160, height: 50, allow: ['^printf .* > file\.txt$']}`)
	opencodeAsksForCommands(t, home)
	dir = blackbox.NewRepo(t, "agents:\n"+agent+blackbox.CheckStep)
	blackbox.EndTmux(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "keep.txt"), []byte("kept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := blackbox.ServeRepo(t, dir)
	showOnFailure(t, dir, in, "wilco-opencode")
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
	if blackbox.ReadFile(t, filepath.Join(dir, "file.txt")) != "fixed P-2\n" {
		t.Fatal("opencode's fix is not in the repository")
	}
	// Each question asked once, answered by the list, as its event says.
	want := map[string]struct{ tool, answer, milestone string }{
		"P-1": {`printf 'fixed P-1\n' > file.txt`, "allowed", `Permission for printf 'fixed P-1\n' > file.txt: allowed by the allow list`},
		"P-2": {"rm -f keep.txt", "denied", "Permission for rm -f keep.txt: denied (not in the allow list)"},
	}
	evs, _ := in.Events(0)
	asked := map[string]int{}
	var deniedAt, endedAt time.Time
	for _, e := range evs {
		switch {
		case e.Type == "agent.permission":
			var p struct {
				TaskID             string `json:"task_id"`
				Tool, Text, Answer string
			}
			if err := json.Unmarshal(e.Data, &p); err != nil {
				t.Fatal(err)
			}
			w := want[p.TaskID]
			asked[p.TaskID]++
			if p.Tool != w.tool || p.Answer != w.answer || !strings.HasPrefix(p.Text, "△ Permission required\n# Shell command\n$ "+w.tool+"\nAllow once") ||
				strings.ContainsAny(p.Text, "┃") || strings.Contains(p.Text, "OpenCode 1.18.33") {
				t.Errorf("%s: the permission asked: %s", p.TaskID, e.Data)
			}
			for _, l := range blackbox.PromptLines {
				if strings.Contains(p.Text, l) {
					t.Errorf("%s: the permission question's text holds a line of the prompt %q: %s", p.TaskID, l, p.Text)
				}
			}
			if p.TaskID == "P-2" {
				deniedAt = e.Time
			}
		case e.Type == "task.turn_ended" && e.TaskID == "P-2":
			var r struct {
				Attempt  int
				ExitCode int `json:"exit_code"`
				Status   string
			}
			if err := json.Unmarshal(e.Data, &r); err != nil {
				t.Fatal(err)
			}
			if r.Attempt == 1 {
				endedAt = e.Time
				if r.ExitCode != 0 || r.Status != "success" {
					t.Errorf("P-2's denied turn was reported as %s", e.Data)
				}
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
	// The turn opencode ended on the denial was over once the pane had
	// been ready a while: not at the agent's timeout.
	if wait := endedAt.Sub(deniedAt); deniedAt.IsZero() || endedAt.IsZero() || wait <= 0 || wait > time.Minute {
		t.Errorf("P-2's first turn ended %s after the denial (at %s, denied at %s)", wait, endedAt, deniedAt)
	} else {
		t.Logf("P-2's first turn ended %s after the denial", wait)
	}
	// What opencode did is read from its record: the denied command's
	// call and its rejection; the retry was told the check failed.
	blackbox.MustContain(t, "wilco transcript P-2 --attempt 1", in.Cli("transcript", "P-2", "--attempt", "1", "--full"),
		"[ACK] P-2 - RECEIVED", "rm -f keep.txt", "The user rejected permission to use this specific tool call.")
	retried := false
	for _, r := range model.AgentRequests() {
		retried = retried || strings.Contains(r.Turn.Prompt, `<retry_context attempt="2"`) && strings.Contains(r.Turn.Prompt, "file.txt is not fixed")
	}
	if !retried {
		t.Error("P-2's retry was not told why its first attempt failed")
	}
	for _, run := range []string{"P-1-a1", "P-2-a1", "P-2-a2"} {
		log := blackbox.ReadFile(t, filepath.Join(dir, ".wilco", "runs", run, "agent.log"))
		if recordOf(t, dir, run) == "" {
			t.Errorf("%s: the agent's words were not read from its record:\n%s", run, blackbox.Tail(log, 40))
		}
		for _, l := range strings.Split(log, "\n") {
			for _, p := range blackbox.PromptLines {
				if strings.Contains(l, p) {
					t.Errorf("%s: the agent's log holds a line of the prompt: %q", run, l)
				}
			}
		}
	}
	blackbox.MustContain(t, "P-1's agent.log", blackbox.ReadFile(t, filepath.Join(dir, ".wilco", "runs", "P-1-a1", "agent.log")),
		"--- wilco: permission asked (allowed): △ Permission required")
	blackbox.MustContain(t, "P-2's first agent.log", blackbox.ReadFile(t, filepath.Join(dir, ".wilco", "runs", "P-2-a1", "agent.log")),
		"--- wilco: permission asked (denied): △ Permission required", "--- wilco: the agent is ready again: turn over")
}

// showOnFailure logs, once a test failed, what the agent's pane shows, the
// agent's logs and wilco's: called after endTmux, so that it runs while
// the session still does.
func showOnFailure(t *testing.T, dir string, in *blackbox.Instance, session string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		p, err := blackbox.TmuxServer(t, dir).Capture(context.Background(), session)
		t.Logf("the pane of %s (%v):\n%s\nthe agent's logs:\n%s\nwilco:\n%s", session, err, p.Screen.Text(), blackbox.AgentLogs(t, dir), blackbox.Tail(in.Stderr.String(), 60))
	})
}
