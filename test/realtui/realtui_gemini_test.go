package realtui

// The real Gemini CLI TUI (the pinned npm version) run by wilco in tmux,
// against the scripted Gemini API, its words read from its own record:
// four tasks in one conversation, its permission questions answered by
// the agent's allow list, and a delegation sent again word for word.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"wilco/test/blackbox"

	execadapter "wilco/adapter/exec"
	"wilco/modelserver"
)

// geminiTUIAgent is the wilco.yaml agent line of the real Gemini CLI TUI in
// tmux, pointed at url, with a private HOME (home) whose settings choose
// the API-key authentication and hold the user's own MCP servers
// (mcpServers, a JSON object; "" for none); its pane is narrower than the
// Understanding and lower than a prompt, and its WriteFile questions are
// allowed.
func geminiTUIAgent(t testing.TB, gemini, url, mcpServers string) (line, home string) {
	t.Helper()
	home = t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o755); err != nil {
		t.Fatal(err)
	}
	settings := `{"security":{"auth":{"selectedType":"gemini-api-key"}}`
	if mcpServers != "" {
		settings += `,"mcpServers":` + mcpServers
	}
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(settings+"}"), 0o644); err != nil {
		t.Fatal(err)
	}
	line = fmt.Sprintf("  - {name: gemini, adapter: tmux, preset: gemini, command: [%s], timeout: 4m, "+
		"env: {HOME: %s, GOOGLE_GEMINI_BASE_URL: %s, GEMINI_API_KEY: scripted-key}, "+
		"tmux: {width: 120, height: 40, allow: [WriteFile]}}\n", blackbox.Quoted(gemini), blackbox.Quoted(home), blackbox.Quoted(url))
	return line, home
}

// showGeminiOnFailure logs, when the test failed, the agent's logs and
// what its pane shows (called after endTmux, so that it runs before the
// tmux server is ended).
func showGeminiOnFailure(t *testing.T, dir string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		pane, _ := exec.Command("tmux", blackbox.TmuxServer(t, dir).Args("capture-pane", "-p", "-t", "=wilco-gemini:", "-S", "-80")...).CombinedOutput()
		t.Logf("the agent's logs:\n%s\nits pane:\n%s", blackbox.AgentLogs(t, dir), pane)
	})
}

// geminiWrites makes a script's Write calls (Claude Code's tool) Gemini
// CLI's write_file, with the same file and content.
func geminiWrites(script modelserver.Script) modelserver.Script {
	return func(turn modelserver.Turn) modelserver.Reply {
		r := script(turn)
		if r.Tool != nil && r.Tool.Name == "Write" {
			r.Tool = &modelserver.ToolUse{Name: "write_file", Input: r.Tool.Input}
		}
		return r
	}
}

// readFromRecord checks that every turn of each run was read from Gemini
// CLI's record (never from its pane), and returns the record each run
// was read from.
func readFromRecord(t *testing.T, dir, runs string) map[string]string {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, ".wilco", "runs", runs))
	if len(paths) == 0 {
		t.Fatalf("no run %s", runs)
	}
	records := map[string]string{}
	for _, run := range paths {
		log := blackbox.ReadFile(t, filepath.Join(run, "agent.log"))
		turns := strings.Count(log, "typed into tmux session")
		read := strings.Count(log, "--- wilco: the agent's words are read from its record ")
		if turns == 0 || read != turns || strings.Contains(log, "read from the pane") {
			t.Errorf("%s: %d turns, %d read from Gemini CLI's record:\n%s", filepath.Base(run), turns, read, blackbox.Tail(log, 60))
			continue
		}
		_, path, _ := strings.Cut(log, "--- wilco: the agent's words are read from its record ")
		path, _, _ = strings.Cut(path, "\n")
		if !strings.Contains(path, filepath.Join(".gemini", "tmp")) {
			t.Errorf("%s: read from %s", filepath.Base(run), path)
		}
		records[filepath.Base(run)] = path
	}
	return records
}

// The real Gemini CLI TUI through the four tasks of fourTasksScript in
// one conversation (a pane narrower than the Understanding and lower than
// a prompt and than T-4's answer; T-2's retry answering word for word as
// its first attempt did), its words read from its record: each ACK whole, no
// correction, nothing of a prompt taken for the agent's, its write_file
// calls (allowed in the pane) in the transcripts and milestones. The user
// has an MCP server of their own that is slow to start: Gemini CLI holds
// the first prompt in its queue (its input box empty) until it is done
// starting it.
func TestGeminiCLITUIIsReadFromItsRecordThroughFourTasksInOneConversation(t *testing.T) {
	t.Parallel()
	blackbox.NeedTmux(t)
	gemini := blackbox.NpmBin(t, "@google/gemini-cli", execadapter.PresetGemini, "gemini")
	var dir string
	model := modelserver.NewGemini(t, geminiWrites(fourTasksScript(&dir)))
	// The user's own MCP server, which fails after 18 s: Gemini CLI
	// holds the first prompt until then.
	agent, home := geminiTUIAgent(t, gemini, model.URL(), `{"slow":{"command":"sh","args":["-c","sleep 18; exit 1"]}}`)
	dir = blackbox.NewRepo(t, "agents:\n"+agent+blackbox.CheckStep)
	blackbox.EndTmux(t, dir)
	showGeminiOnFailure(t, dir)
	in := blackbox.ServeRepo(t, dir)
	blackbox.CheckReadRight(t, in, dir, runFourTasks(t, in, dir), longUnderstanding)
	// One conversation, one record, read in every run.
	records := readFromRecord(t, dir, "T-*")
	chats, _ := filepath.Glob(filepath.Join(home, ".gemini", "tmp", "*", "chats", "session-*.jsonl"))
	if len(chats) == 1 {
		chats[0], _ = filepath.EvalSymlinks(chats[0])
	}
	if first, _ := filepath.EvalSymlinks(records["T-1-a1"]); len(chats) != 1 || first != chats[0] {
		t.Errorf("the tasks went through the records %v; read from %v", chats, records)
	}
	for run, path := range records {
		if path != records["T-1-a1"] {
			t.Errorf("%s was read from %s, T-1 from %s: not one conversation", run, path, records["T-1-a1"])
		}
	}
	if ms := blackbox.Milestones(t, in, "T-1"); !strings.Contains(ms, "Writing file.txt") || !strings.Contains(ms, "Permission for WriteFile: allowed by the allow list") {
		t.Errorf("the milestones do not say what Gemini CLI did:\n%s", ms)
	}
	// T-2's attempts, word for word the same but for what they wrote:
	// each read whole from its own turn.
	for attempt, content := range map[string]string{"1": "attempt 1", "2": "fixed T-2"} {
		tr := in.Cli("transcript", "T-2", "--attempt", attempt, "--full")
		blackbox.MustContain(t, "wilco transcript T-2 --attempt "+attempt, tr, "[ACK] T-2 - RECEIVED", longUnderstanding, "tool write_file {", `"file_path"`, content, "Done: wrote file.txt.")
		for _, not := range []string{"esc to cancel", "Type your message", "────", "✦", "Apply this change?"} {
			if strings.Contains(tr, not) {
				t.Errorf("the transcript of T-2's attempt %s holds the TUI's decoration %q:\n%s", attempt, not, tr)
			}
		}
	}
	blackbox.MustContain(t, "wilco transcript T-4", in.Cli("transcript", "T-4", "--full"), "- line 1 of a long answer", "- line 70 of a long answer")
}

// geminiPermissionScript is the model's side of two tasks: P-1 writes its
// fix with write_file, which the allow list allows; P-2 first asks to run
// rm on keep.txt — its words name WriteFile, its tool is Shell — which
// the list does not allow: Gemini CLI cancels the request, the
// verification fails, and the retry writes the fix with write_file.
func geminiPermissionScript(dir *string) modelserver.Script {
	return func(turn modelserver.Turn) modelserver.Reply {
		m := ackRequest.FindStringSubmatch(turn.Prompt)
		if m == nil {
			return modelserver.Reply{Text: "noted"}
		}
		id := m[1]
		ack := "[ACK] " + id + " - RECEIVED\nUnderstanding: Will write the fix into file.txt\n\n"
		write := &modelserver.ToolUse{Name: "write_file", Input: map[string]any{"file_path": filepath.Join(*dir, "file.txt"), "content": "fixed " + id + "\n"}}
		switch {
		case turn.Step > 0:
			return modelserver.Reply{Text: "Done: wrote file.txt.\nStatus: complete\nSummary: wrote the fix into file.txt"}
		case id == "P-2" && !strings.Contains(turn.Prompt, "<retry_context"):
			return modelserver.Reply{Text: ack + "Clearing the way first, then WriteFile.",
				Tool: &modelserver.ToolUse{Name: "run_shell_command", Input: map[string]any{"command": "rm -f keep.txt", "description": "Remove keep.txt"}}}
		}
		return modelserver.Reply{Text: ack + "Writing it.", Tool: write}
	}
}

// The real Gemini CLI TUI asks before it writes a file or runs a command:
// wilco answers by the agent's allow list, matched against the tool its
// question's box names and the box's text — yes to WriteFile (P-1
// succeeds), no to Shell's rm, though the model's words above the box name
// WriteFile (Gemini CLI cancels the request, rm never ran, the retry
// succeeds). Each question is an agent.permission event and the task's
// milestone; its text is the box's, never the prompt or the model's words.
func TestGeminiCLITUIPermissionQuestionsAreAnsweredByTheAllowList(t *testing.T) {
	t.Parallel()
	blackbox.NeedTmux(t)
	gemini := blackbox.NpmBin(t, "@google/gemini-cli", execadapter.PresetGemini, "gemini")
	var dir string
	model := modelserver.NewGemini(t, geminiPermissionScript(&dir))
	agent, _ := geminiTUIAgent(t, gemini, model.URL(), "")
	dir = blackbox.NewRepo(t, "agents:\n"+agent+blackbox.CheckStep)
	blackbox.EndTmux(t, dir)
	showGeminiOnFailure(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "keep.txt"), []byte("kept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "P-1", "description": "Write the fix into file.txt"})
	in.Submit(map[string]any{"id": "P-2", "description": "Write the fix into file.txt"})
	for _, id := range []string{"P-1", "P-2"} {
		attempt := map[string]int{"P-1": 1, "P-2": 2}[id]
		if got := in.WaitTask(id, 4*time.Minute, "success", "escalated", "stuck", "failed"); got.State != "success" || got.Attempt != attempt {
			t.Fatalf("%s ended %s at attempt %d (want success at %d):\n%s\nthe agent's logs:\n%s", id, got.State, got.Attempt, attempt, got, blackbox.AgentLogs(t, dir))
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "keep.txt")); err != nil {
		t.Fatalf("the command wilco denied ran: %v\nthe agent's logs:\n%s", err, blackbox.AgentLogs(t, dir))
	}
	// Each question asked once, answered by the list, as its event says.
	type asked struct{ task, tool, answer, head string }
	want := []asked{
		{"P-1", "WriteFile", "allowed", "? WriteFile  Writing to file.txt"},
		{"P-2", "Shell", "denied", "? Shell  rm -f keep.txt"},
		{"P-2", "WriteFile", "allowed", "? WriteFile  Writing to file.txt"},
	}
	var got []asked
	evs, _ := in.Events(0)
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
		head, _, _ := strings.Cut(p.Text, "\n")
		got = append(got, asked{p.TaskID, p.Tool, p.Answer, head})
		for _, not := range append([]string{"Understanding:", "Clearing the way", "[ACK]", "Writing it."}, blackbox.PromptLines...) {
			if strings.Contains(p.Text, not) {
				t.Errorf("%s: the permission question's text holds %q, not the question's: %s", p.TaskID, not, p.Text)
			}
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the permission questions:\n%v\nwant:\n%v", got, want)
	}
	blackbox.MustContain(t, "P-1's milestones", blackbox.Milestones(t, in, "P-1"), "Permission for WriteFile: allowed by the allow list")
	blackbox.MustContain(t, "P-2's milestones", blackbox.Milestones(t, in, "P-2"), "Permission for Shell: denied (not in the allow list)", "Permission for WriteFile: allowed by the allow list")
	// What Gemini CLI did is read from its record: the denied command's
	// call, cancelled.
	blackbox.MustContain(t, "wilco transcript P-2 --attempt 1", in.Cli("transcript", "P-2", "--attempt", "1", "--full"), "[ACK] P-2 - RECEIVED", "tool run_shell_command {", "rm -f keep.txt", "User denied execution")
	readFromRecord(t, dir, "P-*")
	blackbox.MustContain(t, "P-2's first agent.log", blackbox.ReadFile(t, filepath.Join(dir, ".wilco", "runs", "P-2-a1", "agent.log")),
		"--- wilco: permission asked (denied): ? Shell  rm -f keep.txt")
}

// A delegation sent again as it was (the agent said it was busy: wilco
// resends it after the wait it gave) is typed into Gemini CLI word for
// word while the first is still in its conversation: its turn is still
// read from the record, and the task succeeds.
func TestAGeminiCLIDelegationSentAgainWordForWordIsReadFromItsRecord(t *testing.T) {
	t.Parallel()
	blackbox.NeedTmux(t)
	gemini := blackbox.NpmBin(t, "@google/gemini-cli", execadapter.PresetGemini, "gemini")
	var dir string
	var mu sync.Mutex
	firsts := 0
	model := modelserver.NewGemini(t, func(turn modelserver.Turn) modelserver.Reply {
		if turn.Step > 0 {
			return modelserver.Reply{Text: "Done: wrote file.txt.\nStatus: complete\nSummary: wrote the fix into file.txt"}
		}
		mu.Lock()
		firsts++
		n := firsts
		mu.Unlock()
		if n == 1 {
			return modelserver.Reply{Text: "I am busy for a moment.\n" +
				`{"type":"task-acknowledgment-error","task_id":"R-1","error_code":"RESOURCE_UNAVAILABLE","retry_after_minutes":0.01}`}
		}
		return modelserver.Reply{Text: "[ACK] R-1 - RECEIVED\nUnderstanding: Will write the fix into file.txt\n\nWriting it.",
			Tool: &modelserver.ToolUse{Name: "write_file", Input: map[string]any{"file_path": filepath.Join(dir, "file.txt"), "content": "fixed R-1\n"}}}
	})
	agent, _ := geminiTUIAgent(t, gemini, model.URL(), "")
	dir = blackbox.NewRepo(t, "agents:\n"+agent+blackbox.CheckStep)
	blackbox.EndTmux(t, dir)
	showGeminiOnFailure(t, dir)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "R-1", "description": "Write the fix into file.txt"})
	if got := in.WaitTask("R-1", 4*time.Minute, "success", "escalated", "stuck", "failed"); got.State != "success" || got.Attempt != 1 {
		t.Fatalf("R-1 ended %s at attempt %d:\n%s\nthe agent's logs:\n%s", got.State, got.Attempt, got, blackbox.AgentLogs(t, dir))
	}
	// The same words typed twice (the first after Gemini CLI's context).
	var prompts []string
	for _, r := range model.AgentRequests() {
		if r.Turn.Step == 0 {
			prompts = append(prompts, r.Turn.Prompt)
		}
	}
	if len(prompts) != 2 || !strings.HasSuffix(prompts[0], "\n"+prompts[1]) || !strings.HasPrefix(prompts[1], "## Task: R-1") {
		t.Fatalf("the model was asked at a turn's start:\n%s", strings.Join(prompts, "\n-----\n"))
	}
	resent := false
	evs, _ := in.Events(0)
	for _, e := range evs {
		resent = resent || strings.Contains(string(e.Data), `"kind":"resend"`)
	}
	if !resent {
		t.Fatal("the delegation was not sent again")
	}
	var msgs struct{ Messages []blackbox.Message }
	in.Must(200, in.Call("GET", "/v1/messages?task=R-1", blackbox.AdminToken, nil), &msgs)
	for _, m := range msgs.Messages {
		if m.Type == "task_delegation" && (m.State != "acknowledged" || m.Understanding != "Will write the fix into file.txt") {
			t.Errorf("the delegation %s is %s with the understanding %q", m.ID, m.State, m.Understanding)
		}
	}
	// Both turns read from the record: the second's words too.
	readFromRecord(t, dir, "R-1-a1")
	blackbox.MustContain(t, "wilco transcript R-1", in.Cli("transcript", "R-1", "--full"), "RESOURCE_UNAVAILABLE", "[ACK] R-1 - RECEIVED", "tool write_file {", "Done: wrote file.txt.")
}
