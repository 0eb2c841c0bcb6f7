package test

// The real Claude Code TUI in tmux through four tasks in one session, the
// way a first use goes wrong when the agent is read from its screen: it
// draws on the alternate screen (no scrollback), a long prompt pushes the
// earlier lines away, it wraps its own lines, and a model may repeat its
// last answer word for word.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	execadapter "wilco/adapter/exec"
	"wilco/modelserver"
)

// longUnderstanding is wider than the pane: the TUI wraps it; the part
// after the wrap names the criteria.
const longUnderstanding = "Will write the fix into file.txt, and make sure that first.txt holds the word first, " +
	"that second.txt holds the word second, and that third.txt holds the word third, exactly as the acceptance criteria say"

// promptLines are lines of wilco's prompts that are never the agent's.
var promptLines = []string{
	"Include: Understanding: {1-line summary of what you will do}",
	"Status options: RECEIVED, CLARIFICATION_NEEDED, REJECTED, QUEUED",
	"How to acknowledge. Before you do any work on task",
	"<retry_context", "This is retry attempt", "## Task: T-",
}

// fourTasksScript answers every task the same way, word for word — the
// ACK with the long Understanding, a long explanation, a Write of
// file.txt, the same closing lines — except for what it writes: T-2's
// first attempt writes the wrong content, so its retry repeats the earlier
// answer's lines exactly. T-4's answer is longer than the pane is high.
func fourTasksScript(dir *string) modelserver.Script {
	return func(turn modelserver.Turn) modelserver.Reply {
		p := turn.Prompt
		m := ackRequest.FindStringSubmatch(p)
		if m == nil {
			return modelserver.Reply{Text: "noted"}
		}
		id := m[1]
		content := "fixed " + id + "\n"
		if id == "T-2" && !strings.Contains(p, "<retry_context") {
			content = "attempt 1\n"
		}
		switch turn.Step {
		case 0:
			text := "[ACK] " + id + " - RECEIVED\nUnderstanding: " + longUnderstanding + "\n\n" +
				"I will read the repository first and then write file.txt; this explanation is long on purpose so that it wraps on the screen of the terminal it is drawn on, twice at least."
			if id == "T-4" {
				var b strings.Builder
				b.WriteString(text + "\n\nWhat I looked at:\n")
				for i := 1; i <= 70; i++ {
					fmt.Fprintf(&b, "- line %d of a long answer\n", i)
				}
				text = b.String()
			}
			return modelserver.Reply{Text: text, Tool: writeTool(filepath.Join(*dir, "file.txt"), content)}
		}
		return modelserver.Reply{Text: "Done: wrote file.txt.\nStatus: complete\nSummary: wrote the fix into file.txt"}
	}
}

func TestClaudeCodeTUIIsReadFromItsRecordThroughFourTasksInOneSession(t *testing.T) {
	t.Parallel()
	needTmux(t)
	claude := npmBin(t, "@anthropic-ai/claude-code", execadapter.PresetClaudeCode, "claude")
	var dir string
	model := modelserver.NewAnthropic(t, fourTasksScript(&dir))
	agent, _ := claudeTUIAgent(t, claude, model.URL())
	// A pane narrower than the Understanding and lower than the prompt.
	agent = strings.Replace(agent, "tmux: {width: 160, height: 50}", "tmux: {width: 120, height: 40}", 1)
	dir = newRepo(t, "agents:\n"+agent+checkStep)
	endTmux(t, dir)
	in := serveRepo(t, dir)
	wantAttempts := runFourTasks(t, in, dir)
	// Each delegation acknowledged once, with its whole Understanding; no
	// correction, no wrong id was ever sent.
	checkReadRight(t, in, dir, wantAttempts, longUnderstanding)
	// One Claude Code session served the four tasks.
	sessions := map[string]bool{}
	for _, r := range model.AgentRequests() {
		if md, ok := r.Body["metadata"].(map[string]any); ok {
			sessions[fmt.Sprint(md["user_id"])] = true
		}
	}
	if len(sessions) > 1 {
		t.Errorf("the tasks went through %d sessions", len(sessions))
	}
}

// runFourTasks submits the four tasks of fourTasksScript at once and waits
// for each to succeed at the attempt it should (T-2 at its retry); it
// returns those attempts.
func runFourTasks(t *testing.T, in *instance, dir string) map[string]int {
	t.Helper()
	criteria := []string{"first.txt holds the word first", "second.txt holds the word second", "third.txt holds the word third"}
	wantAttempts := map[string]int{"T-1": 1, "T-2": 2, "T-3": 1, "T-4": 1}
	for _, id := range []string{"T-1", "T-2", "T-3", "T-4"} {
		in.submit(map[string]any{"id": id, "description": "Write the fix into file.txt", "acceptance_criteria": criteria})
	}
	for _, id := range []string{"T-1", "T-2", "T-3", "T-4"} {
		got := in.waitTask(id, 5*time.Minute, "success", "escalated", "stuck", "failed")
		if got.State != "success" || got.Attempt != wantAttempts[id] {
			t.Fatalf("%s ended %s at attempt %d (want success at %d):\n%s\nthe agent's logs:\n%s", id, got.State, got.Attempt, wantAttempts[id], got, agentLogs(t, dir))
		}
	}
	return wantAttempts
}

// checkReadRight checks tasks an interactive agent worked (each to its
// number of attempts, every attempt a run of its own): each delegation
// acknowledged with the whole understanding; no correction, wrong id or
// ACK request ever sent; and no line of a prompt read as the agent's — not
// in a run's agent.log, not in its transcript's text, not in the task —
// with one ACK in each run.
func checkReadRight(t *testing.T, in *instance, dir string, attempts map[string]int, understanding string) {
	t.Helper()
	runsWanted := 0
	for id, want := range attempts {
		runsWanted += want
		var msgs struct{ Messages []message }
		in.must(200, in.call("GET", "/v1/messages?task="+id, adminToken, nil), &msgs)
		n := 0
		for _, m := range msgs.Messages {
			if m.Type != "task_delegation" {
				continue
			}
			n++
			if m.State != "acknowledged" || m.Understanding != understanding {
				t.Errorf("%s: the delegation %s is %s with the understanding %q", id, m.ID, m.State, m.Understanding)
			}
		}
		if n != want {
			t.Errorf("%s: %d delegations, want %d", id, n, want)
		}
		b, _ := json.Marshal(in.taskRaw(id))
		for _, p := range promptLines {
			if strings.Contains(string(b), strings.ReplaceAll(p, "<", `\u003c`)) && !strings.Contains(p, "## Task") {
				t.Errorf("%s: the task holds a line of the prompt %q", id, p)
			}
		}
	}
	evs, _ := in.events(0)
	for _, e := range evs {
		if d := string(e.Data); strings.Contains(d, `"kind":"correction"`) || strings.Contains(d, `"kind":"wrong_id"`) || strings.Contains(d, `"kind":"ack_request"`) {
			t.Errorf("wilco sent %s to the agent although it acknowledged each task right: %s", e.Type, d)
		}
	}
	runs, _ := filepath.Glob(filepath.Join(dir, ".wilco", "runs", "T-*"))
	if len(runs) != runsWanted {
		t.Fatalf("%d runs, want %d: %v", len(runs), runsWanted, runs)
	}
	for _, run := range runs {
		b, _ := os.ReadFile(filepath.Join(run, "agent.log"))
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "--- wilco") {
				continue
			}
			for _, p := range promptLines {
				if strings.Contains(l, p) {
					t.Errorf("%s: the agent's log holds a line of the prompt: %q", filepath.Base(run), l)
				}
			}
		}
		tr, _ := os.ReadFile(filepath.Join(run, "transcript.jsonl"))
		acks := 0
		for _, l := range strings.Split(strings.TrimSpace(string(tr)), "\n") {
			var e struct{ Kind, Text string }
			if err := json.Unmarshal([]byte(l), &e); err != nil {
				t.Fatalf("%s: transcript line %q: %v", run, l, err)
			}
			if e.Kind != "text" {
				continue
			}
			acks += strings.Count(e.Text, "[ACK] ")
			for _, p := range promptLines {
				if strings.Contains(e.Text, p) {
					t.Errorf("%s: the transcript's agent text holds a line of the prompt: %q", filepath.Base(run), e.Text)
				}
			}
		}
		if acks != 1 {
			t.Errorf("%s: the transcript holds %d ACKs, want 1 (one turn, its own)", filepath.Base(run), acks)
		}
	}
}
