package blackbox

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// PromptLines are lines of wilco's prompts that are never the agent's.
var PromptLines = []string{
	"Include: Understanding: {1-line summary of what you will do}",
	"Status options: RECEIVED, CLARIFICATION_NEEDED, REJECTED, QUEUED",
	"How to acknowledge. Before you do any work on task",
	"<retry_context", "This is retry attempt", "## Task: T-",
}

// CheckReadRight checks tasks an interactive agent worked (each to its
// number of attempts, every attempt a run of its own): each delegation
// acknowledged with the whole understanding; no correction, wrong id or
// ACK request ever sent; and no line of a prompt read as the agent's — not
// in a run's agent.log, not in its transcript's text, not in the task —
// with one ACK in each run.
func CheckReadRight(t *testing.T, in *Instance, dir string, attempts map[string]int, understanding string) {
	t.Helper()
	runsWanted := 0
	for id, want := range attempts {
		runsWanted += want
		var msgs struct{ Messages []Message }
		in.Must(200, in.Call("GET", "/v1/messages?task="+id, AdminToken, nil), &msgs)
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
		b, _ := json.Marshal(in.TaskRaw(id))
		for _, p := range PromptLines {
			if strings.Contains(string(b), strings.ReplaceAll(p, "<", `\u003c`)) && !strings.Contains(p, "## Task") {
				t.Errorf("%s: the task holds a line of the prompt %q", id, p)
			}
		}
	}
	evs, _ := in.Events(0)
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
			for _, p := range PromptLines {
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
			for _, p := range PromptLines {
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
