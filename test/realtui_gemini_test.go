package test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	execadapter "wilco/adapter/exec"
	"wilco/modelserver"
)

// geminiTUIAgent is the wilco.yaml agent line of the real Gemini CLI TUI in
// tmux, pointed at url, with a private HOME choosing the API-key
// authentication; its write_file calls are allowed from the pane.
func geminiTUIAgent(t testing.TB, gemini, url string) string {
	t.Helper()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(`{"security":{"auth":{"selectedType":"gemini-api-key"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("  - {name: gemini, adapter: tmux, preset: gemini, command: [%s], timeout: 4m, "+
		"env: {HOME: %s, GOOGLE_GEMINI_BASE_URL: %s, GEMINI_API_KEY: scripted-key}, "+
		"tmux: {width: 160, height: 50, allow: ['WriteFile|write_file']}}\n", quoted(gemini), quoted(home), quoted(url))
}

// The real Gemini CLI TUI in tmux: the task pasted and submitted, its ACK,
// its write_file call (allowed in the pane) and its words read from its
// own record of the conversation — each ACK whole, nothing of the prompt
// taken for the agent's — a failed verification, a retry, success.
func TestGeminiCLITUIIsReadFromItsOwnRecordUntilVerified(t *testing.T) {
	t.Parallel()
	needTmux(t)
	gemini := npmBin(t, "@google/gemini-cli", execadapter.PresetGemini, "gemini")
	var dir string
	model := modelserver.NewGemini(t, retryScript("inline", func(content string) *modelserver.ToolUse {
		return &modelserver.ToolUse{Name: "write_file", Input: map[string]any{"file_path": filepath.Join(dir, "file.txt"), "content": content + "\n"}}
	}))
	dir = newRepo(t, "agents:\n"+geminiTUIAgent(t, gemini, model.URL())+checkStep)
	endTmux(t, dir)
	in := serveRepo(t, dir)
	in.submit(map[string]any{"id": "T-1", "description": "Write the fix into file.txt"})
	got := in.waitTask("T-1", 5*time.Minute, "success", "escalated", "stuck")
	if got.State != "success" || got.Attempt != 2 {
		var asked []string
		for _, r := range model.AgentRequests() {
			asked = append(asked, fmt.Sprintf("step %d: %s", r.Turn.Step, tail(r.Turn.Prompt, 8)))
		}
		t.Fatalf("the task ended %s at attempt %d:\n%s\nthe model was asked:\n%s\nthe agent's logs:\n%s", got.State, got.Attempt, got,
			strings.Join(asked, "\n-----\n"), agentLogs(t, dir))
	}
	if readFile(t, filepath.Join(dir, "file.txt")) != "fixed T-1\n" {
		t.Fatal("Gemini CLI's fix is not in the repository")
	}
	checkReadRight(t, in, dir, map[string]int{"T-1": 2}, "Will write the fix into file.txt")
	logs := agentLogs(t, dir)
	if !strings.Contains(logs, "the agent's words are read from its record") || !strings.Contains(logs, filepath.Join(".gemini", "tmp")) {
		t.Fatalf("the turns were not read from Gemini CLI's record:\n%s", logs)
	}
	if ms := milestones(t, in, "T-1"); !strings.Contains(ms, "Writing file.txt") {
		t.Fatalf("no milestone said what Gemini CLI did:\n%s\nthe agent's logs:\n%s", ms, logs)
	}
	for attempt, content := range map[string]string{"1": "attempt 1", "2": "fixed T-1"} {
		tr := in.cli("transcript", "T-1", "--attempt", attempt, "--full")
		// Its call with its input, and the reply's exact text.
		mustContain(t, "wilco transcript T-1 --attempt "+attempt, tr, "[ACK] T-1 - RECEIVED", "tool write_file {", `"file_path"`, content, "Done: wrote file.txt.")
		for _, not := range []string{"esc to cancel", "Type your message", "────", "✦"} {
			if strings.Contains(tr, not) {
				t.Fatalf("the transcript of attempt %s holds the TUI's decoration %q:\n%s", attempt, not, tr)
			}
		}
	}
}
