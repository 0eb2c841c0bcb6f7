package realagents

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"
	"wilco/test/blackbox"

	execadapter "wilco/adapter/exec"
	"wilco/modelserver"
)

// BenchmarkRealAgentScenario runs the end-to-end scenario of each real
// agent CLI (ACK, a wrong fix, a failed verification, a retry, success;
// inline handshake) b.N times and reports, per run: the wall time from
// submit to success, the agents' own time (their processes), the
// verification time, and wilco's overhead per run: from each turn's send
// to its end recorded, less the agent's own time (starting the process,
// reading its output, recording the end). The median and the max over the runs go in
// docs/BENCHMARKS.md:
//
//	go test ./test/realagents -run '^$' -bench RealAgentScenario -benchtime 5x
func BenchmarkRealAgentScenario(b *testing.B) {
	type cli struct {
		name  string
		setup func(t testing.TB) (agentYAML string, dir *string)
	}
	clis := []cli{
		{"claude-code", func(t testing.TB) (string, *string) {
			bin := blackbox.NpmBin(t, "@anthropic-ai/claude-code", execadapter.PresetClaudeCode, "claude")
			var dir string
			m := modelserver.NewAnthropic(t, blackbox.RetryScript("inline", func(c string) *modelserver.ToolUse { return blackbox.WriteTool(filepath.Join(dir, "file.txt"), c+"\n") }))
			return claudeAgent(t, bin, "inline", m.URL()), &dir
		}},
		{"codex", func(t testing.TB) (string, *string) {
			bin := blackbox.NpmBin(t, "@openai/codex", execadapter.PresetCodex, "codex")
			m := modelserver.NewResponses(t, blackbox.RetryScript("inline", func(c string) *modelserver.ToolUse {
				return blackbox.ShellTool("printf '%s\\n' '" + c + "' > file.txt")
			}))
			var dir string
			return codexAgent(t, bin, "inline", m.URL()), &dir
		}},
		{"gemini", func(t testing.TB) (string, *string) {
			bin := blackbox.NpmBin(t, "@google/gemini-cli", execadapter.PresetGemini, "gemini")
			var dir string
			m := modelserver.NewGemini(t, blackbox.RetryScript("inline", func(c string) *modelserver.ToolUse {
				return &modelserver.ToolUse{Name: "write_file", Input: map[string]any{"file_path": filepath.Join(dir, "file.txt"), "content": c + "\n"}}
			}))
			return geminiAgent(t, bin, "inline", m.URL()), &dir
		}},
		{"opencode", func(t testing.TB) (string, *string) {
			bin := blackbox.NpmBin(t, "opencode-ai", execadapter.PresetOpencode, "opencode")
			var dir string
			m := modelserver.NewChat(t, blackbox.RetryScript("inline", func(c string) *modelserver.ToolUse {
				return &modelserver.ToolUse{Name: "write", Input: map[string]any{"filePath": filepath.Join(dir, "file.txt"), "content": c + "\n"}}
			}))
			return opencodeAgent(t, bin, "inline", m.URL()), &dir
		}},
	}
	for _, c := range clis {
		b.Run(c.name, func(b *testing.B) {
			var wall, agent, verify, overhead []time.Duration
			for i := 0; i < b.N; i++ {
				agentYAML, dirp := c.setup(b)
				*dirp = blackbox.NewRepo(b, "agents:\n"+agentYAML+blackbox.CheckStep)
				in := blackbox.ServeRepo(b, *dirp)
				start := time.Now()
				in.Submit(map[string]any{"id": "T-1", "description": "Write the fix into file.txt"})
				got := in.WaitTask("T-1", 3*time.Minute, "success", "escalated", "stuck")
				if got.State != "success" {
					b.Fatalf("%s: the task ended %s", c.name, got.State)
				}
				wall = append(wall, time.Since(start))
				a, v, o := scenarioTimes(b, in, "T-1")
				agent, verify, overhead = append(agent, a), append(verify, v), append(overhead, o)
				in.Stop()
			}
			for _, m := range []struct {
				unit string
				ds   []time.Duration
			}{{"wall-ms", wall}, {"agent-ms", agent}, {"verify-ms", verify}, {"overhead-ms", overhead}} {
				med, mx := blackbox.MedianMax(m.ds)
				b.ReportMetric(float64(med.Microseconds())/1000, "median-"+m.unit)
				b.ReportMetric(float64(mx.Microseconds())/1000, "max-"+m.unit)
			}
		})
	}
}

// scenarioTimes reads a task's events: the agents' own time (the turns'
// durations), the verification time, and wilco's overhead around the
// turns.
func scenarioTimes(b *testing.B, in *blackbox.Instance, id string) (agent, verify, overhead time.Duration) {
	var evs struct{ Events []blackbox.Event }
	in.Must(200, in.Call("GET", "/v1/events?task="+id+"&follow=false&limit=1000", blackbox.AdminToken, nil), &evs)
	var sent, verifyStart time.Time
	for _, e := range evs.Events {
		var d struct {
			DurationMS int64  `json:"duration_ms"`
			Phase      string `json:"phase"`
			From       string `json:"from"`
			VerifyMS   int64  `json:"verify_ms"`
			Record     struct {
				DurationMS int64 `json:"duration_ms"`
			} `json:"record"`
		}
		_ = json.Unmarshal(e.Data, &d)
		switch {
		case e.Type == "delivery.sent":
			sent = e.Time
		case e.Type == "task.turn_ended":
			own := time.Duration(d.DurationMS) * time.Millisecond
			agent += own
			if !sent.IsZero() {
				// From the turn's send to its end recorded, less the agent's
				// own time: starting the process, reading its output,
				// recording the end.
				overhead += e.Time.Sub(sent) - own
			}
		case e.Type == "task.state" && d.Phase == "verifying":
			verifyStart = e.Time
		case (e.Type == "task.failure" || e.Type == "task.success") && !verifyStart.IsZero():
			verify += e.Time.Sub(verifyStart)
			verifyStart = time.Time{}
		}
	}
	return agent, verify, overhead
}
