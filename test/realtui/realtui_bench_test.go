package realtui

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
	"wilco/test/blackbox"

	execadapter "wilco/adapter/exec"
	"wilco/modelserver"
)

// BenchmarkClaudeCodeTUIFiftyTasks sends 50 tasks through one real Claude
// Code TUI session in tmux (the pinned version, against the scripted
// model): answers of every length — one line, an Understanding wider than
// the pane, an answer longer than the pane is high — and answers repeated
// word for word (every fifth task fails its check once and its retry
// answers exactly as the first attempt did). It reports how many tasks
// were misread (not verified at the attempt the script makes, a
// delegation acknowledged with another Understanding, or a correction,
// wrong id or ACK request sent: the goal is 0), and the time from the
// model's last answer of a task to the task's verdict (median, p90, max):
//
//	go test ./test/realtui -run '^$' -bench ClaudeCodeTUIFiftyTasks -benchtime 1x -timeout 30m
func BenchmarkClaudeCodeTUIFiftyTasks(b *testing.B) {
	blackbox.NeedTmux(b)
	claude := blackbox.NpmBin(b, "@anthropic-ai/claude-code", execadapter.PresetClaudeCode, "claude")
	const tasks = 50
	for i := 0; i < b.N; i++ {
		var dir string
		understanding := func(n int) string {
			if n%5 == 1 || n%5 == 3 {
				return longUnderstanding
			}
			return "Will write the fix into file.txt"
		}
		model := modelserver.NewAnthropic(b, func(turn modelserver.Turn) modelserver.Reply {
			m := ackRequest.FindStringSubmatch(turn.Prompt)
			if m == nil {
				return modelserver.Reply{Text: "noted"}
			}
			id := m[1]
			var n int
			fmt.Sscanf(id, "T-%d", &n)
			content := "fixed " + id + "\n"
			if n%5 == 3 && !strings.Contains(turn.Prompt, "<retry_context") {
				content = "attempt 1\n"
			}
			if turn.Step > 0 {
				return modelserver.Reply{Text: "Done: wrote file.txt.\nStatus: complete\nSummary: wrote the fix into file.txt"}
			}
			text := "[ACK] " + id + " - RECEIVED\nUnderstanding: " + understanding(n)
			switch n % 5 {
			case 2:
				var sb strings.Builder
				sb.WriteString(text + "\n\nWhat I looked at:\n")
				for k := 1; k <= 60; k++ {
					fmt.Fprintf(&sb, "- line %d of a long answer, long enough to be wrapped by a narrow pane at least once\n", k)
				}
				text = sb.String()
			case 4:
				text += "\n\nOne line."
			}
			return modelserver.Reply{Text: text, Tool: blackbox.WriteTool(filepath.Join(dir, "file.txt"), content)}
		})
		agent, _ := claudeTUIAgent(b, claude, model.URL())
		agent = strings.Replace(agent, "tmux: {width: 160, height: 50}", "tmux: {width: 120, height: 40}", 1)
		agent = strings.Replace(agent, "timeout: 4m", "timeout: 10m", 1)
		dir = blackbox.NewRepo(b, "agents:\n"+agent+blackbox.CheckStep)
		blackbox.EndTmux(b, dir)
		in := blackbox.ServeRepo(b, dir)
		criteria := []string{"first.txt holds the word first", "second.txt holds the word second", "third.txt holds the word third"}
		ids := make([]string, tasks)
		for n := 1; n <= tasks; n++ {
			ids[n-1] = fmt.Sprintf("T-%d", n)
			body := map[string]any{"id": ids[n-1], "description": "Write the fix into file.txt"}
			if understanding(n) == longUnderstanding {
				body["acceptance_criteria"] = criteria
			}
			in.Submit(body)
		}
		misread := 0
		var latency []time.Duration
		for n, id := range ids {
			n++
			want := 1
			if n%5 == 3 {
				want = 2
			}
			got := in.WaitTask(id, 10*time.Minute, "success", "escalated", "stuck", "failed")
			if got.State != "success" || got.Attempt != want {
				b.Logf("%s misread: ended %s at attempt %d, want success at %d", id, got.State, got.Attempt, want)
				misread++
				continue
			}
			var msgs struct{ Messages []blackbox.Message }
			in.Must(200, in.Call("GET", "/v1/messages?task="+id, blackbox.AdminToken, nil), &msgs)
			bad := false
			for _, m := range msgs.Messages {
				if m.Type == "task_delegation" && m.Understanding != understanding(n) {
					bad = true
				}
			}
			var evs struct{ Events []blackbox.Event }
			in.Must(200, in.Call("GET", "/v1/events?task="+id+"&follow=false&limit=1000", blackbox.AdminToken, nil), &evs)
			var verdict time.Time
			for _, e := range evs.Events {
				d := string(e.Data)
				if strings.Contains(d, `"kind":"correction"`) || strings.Contains(d, `"kind":"wrong_id"`) || strings.Contains(d, `"kind":"ack_request"`) {
					bad = true
				}
				if e.Type == "task.success" {
					verdict = e.Time
				}
			}
			if bad {
				b.Logf("%s misread: acknowledged with another understanding, or corrected", id)
				misread++
				continue
			}
			var answered time.Time
			for _, r := range model.AgentRequests() {
				if m := ackRequest.FindStringSubmatch(r.Turn.Prompt); m != nil && m[1] == id && r.Answered.After(answered) {
					answered = r.Answered
				}
			}
			latency = append(latency, verdict.Sub(answered))
		}
		sort.Slice(latency, func(i, j int) bool { return latency[i] < latency[j] })
		b.ReportMetric(float64(misread), "misread")
		if len(latency) > 0 {
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			b.ReportMetric(ms(latency[len(latency)/2]), "median-answer-to-verdict-ms")
			b.ReportMetric(ms(latency[len(latency)*9/10]), "p90-answer-to-verdict-ms")
			b.ReportMetric(ms(latency[len(latency)-1]), "max-answer-to-verdict-ms")
		}
		in.Stop()
	}
}
