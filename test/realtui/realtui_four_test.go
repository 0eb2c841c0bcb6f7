package realtui

// The real Claude Code TUI in tmux through four tasks in one session, the
// way a first use goes wrong when the agent is read from its screen: it
// draws on the alternate screen (no scrollback), a long prompt pushes the
// earlier lines away, it wraps its own lines, and a model may repeat its
// last answer word for word.

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"wilco/test/blackbox"

	execadapter "wilco/adapter/exec"
	"wilco/modelserver"
)

// longUnderstanding is wider than the pane: the TUI wraps it; the part
// after the wrap names the criteria.
const longUnderstanding = "Will write the fix into file.txt, and make sure that first.txt holds the word first, " +
	"that second.txt holds the word second, and that third.txt holds the word third, exactly as the acceptance criteria say"

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
			return modelserver.Reply{Text: text, Tool: blackbox.WriteTool(filepath.Join(*dir, "file.txt"), content)}
		}
		return modelserver.Reply{Text: "Done: wrote file.txt.\nStatus: complete\nSummary: wrote the fix into file.txt"}
	}
}

func TestClaudeCodeTUIIsReadFromItsRecordThroughFourTasksInOneSession(t *testing.T) {
	t.Parallel()
	blackbox.NeedTmux(t)
	claude := blackbox.NpmBin(t, "@anthropic-ai/claude-code", execadapter.PresetClaudeCode, "claude")
	var dir string
	model := modelserver.NewAnthropic(t, fourTasksScript(&dir))
	agent, _ := claudeTUIAgent(t, claude, model.URL())
	// A pane narrower than the Understanding and lower than the prompt.
	agent = strings.Replace(agent, "tmux: {width: 160, height: 50}", "tmux: {width: 120, height: 40}", 1)
	dir = blackbox.NewRepo(t, "agents:\n"+agent+blackbox.CheckStep)
	blackbox.EndTmux(t, dir)
	in := blackbox.ServeRepo(t, dir)
	wantAttempts := runFourTasks(t, in, dir)
	// Each delegation acknowledged once, with its whole Understanding; no
	// correction, no wrong id was ever sent.
	blackbox.CheckReadRight(t, in, dir, wantAttempts, longUnderstanding)
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
func runFourTasks(t *testing.T, in *blackbox.Instance, dir string) map[string]int {
	t.Helper()
	criteria := []string{"first.txt holds the word first", "second.txt holds the word second", "third.txt holds the word third"}
	wantAttempts := map[string]int{"T-1": 1, "T-2": 2, "T-3": 1, "T-4": 1}
	for _, id := range []string{"T-1", "T-2", "T-3", "T-4"} {
		in.Submit(map[string]any{"id": id, "description": "Write the fix into file.txt", "acceptance_criteria": criteria})
	}
	for _, id := range []string{"T-1", "T-2", "T-3", "T-4"} {
		got := in.WaitTask(id, 5*time.Minute, "success", "escalated", "stuck", "failed")
		if got.State != "success" || got.Attempt != wantAttempts[id] {
			t.Fatalf("%s ended %s at attempt %d (want success at %d):\n%s\nthe agent's logs:\n%s", id, got.State, got.Attempt, wantAttempts[id], got, blackbox.AgentLogs(t, dir))
		}
	}
	return wantAttempts
}
