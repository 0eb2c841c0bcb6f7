package test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	needTmux(t)
	opencode := npmBin(t, "opencode-ai", execadapter.PresetOpencode, "opencode")
	var dir string
	model := modelserver.NewChat(t, retryScript("inline", func(content string) *modelserver.ToolUse {
		return &modelserver.ToolUse{Name: "write", Input: map[string]any{"filePath": filepath.Join(dir, "file.txt"), "content": content + "\n"}}
	}))
	home := opencodeHome(t, model.URL())
	agent := fmt.Sprintf("  - {name: opencode, adapter: tmux, preset: opencode, command: [%s], timeout: 4m, env: {HOME: %s}, tmux: {width: 160, height: 50}}\n",
		quoted(opencode), quoted(home))
	dir = newRepo(t, "agents:\n"+agent+checkStep)
	endTmux(t, dir)
	in := serveRepo(t, dir)
	in.submit(map[string]any{"id": "T-1", "description": "Write the fix into file.txt"})
	got := in.waitTask("T-1", 5*time.Minute, "success", "escalated", "stuck")
	var asked []string
	retried := false
	for _, r := range model.AgentRequests() {
		asked = append(asked, fmt.Sprintf("step %d: %s", r.Turn.Step, tail(r.Turn.Prompt, 8)))
		if p := r.Turn.Prompt; strings.Contains(p, `<retry_context attempt="2"`) && strings.Contains(p, "file.txt is not fixed") {
			retried = true
		}
	}
	if got.State != "success" || got.Attempt != 2 || !retried {
		t.Fatalf("the task ended %s at attempt %d (the retry context reached the model: %v):\n%s\nthe model was asked:\n%s\nthe agent's logs:\n%s",
			got.State, got.Attempt, retried, got, strings.Join(asked, "\n-----\n"), agentLogs(t, dir))
	}
	if readFile(t, filepath.Join(dir, "file.txt")) != "fixed T-1\n" {
		t.Fatal("opencode's fix is not in the repository")
	}
	logs := agentLogs(t, dir)
	if strings.Count(logs, "the agent's words are read from its record") < 2 || strings.Contains(logs, "is read from the pane") {
		t.Fatalf("the turns were not read from opencode's record:\n%s", logs)
	}
	if ms := milestones(t, in, "T-1"); !strings.Contains(ms, "Writing file.txt") {
		t.Fatalf("no milestone said what opencode did:\n%s\nthe agent's logs:\n%s", ms, logs)
	}
	tr := in.cli("transcript", "T-1", "--attempt", "1", "--full")
	mustContain(t, "wilco transcript T-1 --attempt 1", tr, "[ACK] T-1 - RECEIVED", "tool write {", `"filePath"`, "Done: wrote file.txt.")
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
	home = opencodeHome(t, url)
	line = fmt.Sprintf("  - {name: opencode, adapter: tmux, preset: opencode, command: [%s], timeout: 4m, env: {HOME: %s}, %s}\n",
		quoted(opencode), quoted(home), tmux)
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
	log := readFile(t, filepath.Join(dir, ".wilco", "runs", run, "agent.log"))
	_, path, ok := strings.Cut(log, "--- wilco: the agent's words are read from its record ")
	if !ok {
		return ""
	}
	path, _, _ = strings.Cut(path, "\n")
	return path
}

// The real opencode TUI through the four tasks of fourTasksScript in one
// session, in a pane narrower than the Understanding and lower than a
// prompt (which opencode shows as "[Pasted ~N lines]"): its words read
// from its database, one conversation throughout.
func TestOpencodeTUIIsReadFromItsRecordThroughFourTasksInOneSession(t *testing.T) {
	t.Parallel()
	needTmux(t)
	opencode := npmBin(t, "opencode-ai", execadapter.PresetOpencode, "opencode")
	var dir string
	model := modelserver.NewChat(t, opencodeWrites(fourTasksScript(&dir)))
	agent, _ := opencodeTUIAgent(t, opencode, model.URL(), "tmux: {width: 120, height: 40}")
	dir = newRepo(t, "agents:\n"+agent+checkStep)
	endTmux(t, dir)
	in := serveRepo(t, dir)
	attempts := runFourTasks(t, in, dir)
	checkReadRight(t, in, dir, attempts, longUnderstanding)
	// Every turn was read from opencode's record, of one conversation.
	first := recordOf(t, dir, "T-1-a1")
	for _, run := range []string{"T-1-a1", "T-2-a1", "T-2-a2", "T-3-a1", "T-4-a1"} {
		if r := recordOf(t, dir, run); r == "" || r != first {
			t.Errorf("%s was read from the record %q, T-1 from %q:\n%s", run, r, first, readFile(t, filepath.Join(dir, ".wilco", "runs", run, "agent.log")))
		}
	}
}
