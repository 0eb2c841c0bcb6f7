package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"wilco/client"
	"wilco/core"
	"wilco/daemon"
	"wilco/wire"
)

// Options configure a demo run.
type Options struct {
	// Self is the wilco binary, which the scripted agent runs as
	// `<Self> demo-agent`.
	Self string
	// Dir is where the sample repository is made; a temporary directory
	// (removed afterwards) when empty.
	Dir    string
	Stdout io.Writer
	// Timeout bounds the whole demo (default 2 minutes).
	Timeout time.Duration
	// Scout runs the second scenario: the editor consults a scout, and a
	// reviewer rejects the first verified change, then approves.
	Scout bool
}

const task = "Fix Add in calc.go so that go test ./... passes"

// Run makes the sample repository, starts wilco on it, submits the task and
// prints its milestones until it ends. It returns an error unless the task
// ends in success with a retry whose prompt carried the failure.
func Run(ctx context.Context, o Options) error {
	out := o.Stdout
	if out == nil {
		out = io.Discard
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	dir := o.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "wilco-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	start := time.Now()
	step := func(format string, args ...any) {
		fmt.Fprintf(out, "%6.1fs  %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
	}
	if err := makeRepo(ctx, dir, o.Self, o.Scout); err != nil {
		return fmt.Errorf("demo: sample repository: %w", err)
	}
	step("sample repository with a failing test: %s", dir)
	d, err := daemon.Start(ctx, daemon.Options{ConfigPath: filepath.Join(dir, "wilco.yaml"), Addr: "127.0.0.1:0", Token: "demo-" + fmt.Sprint(time.Now().UnixNano()),
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return fmt.Errorf("demo: start wilco: %w", err)
	}
	defer d.Close()
	if o.Scout {
		step("wilco serves at %s: an editor, a scout (read-only) and a reviewer, all scripted; the check `go test ./...`", d.URL)
	} else {
		step("wilco serves at %s with the scripted agent (exec, handshake inline) and the check `go test ./...`", d.URL)
	}

	c := client.New(d.URL, d.Token)
	t, err := c.Submit(ctx, wire.SubmitTask{Description: task, AcceptanceCriteria: []string{"go test ./... passes"}})
	if err != nil {
		return fmt.Errorf("demo: submit: %w", err)
	}
	step("submitted %s: %q", t.ID, task)
	var final string
	err = c.Follow(ctx, client.EventQuery{Task: t.ID}, func(ev wire.Event) error {
		line, end := eventLine(ev, t.ID)
		if line != "" {
			step("%s", line)
		}
		if end != "" {
			final = end
			return client.ErrStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, client.ErrStop) {
		return fmt.Errorf("demo: follow: %w", err)
	}
	got, err := c.Task(ctx, t.ID)
	if err != nil {
		return err
	}
	if final != "success" {
		return fmt.Errorf("demo: the task ended %s, not success", final)
	}
	if o.Scout {
		return endTeam(ctx, c, dir, t.ID, got, out, start)
	}
	prompt, err := os.ReadFile(filepath.Join(dir, ".wilco", "runs", t.ID+"-a2", "prompt.md"))
	if err != nil || !strings.Contains(string(prompt), "<retry_context") || !strings.Contains(string(prompt), "TestAdd") {
		return fmt.Errorf("demo: the retry prompt did not carry the failure (%v)", err)
	}
	step("the retry prompt (.wilco/runs/%s-a2/prompt.md) began with <retry_context attempt=\"2\"> naming TestAdd", t.ID)
	fmt.Fprintf(out, "\n%s succeeded after %d attempts in %.1fs.\n%s", t.ID, got.Attempt, time.Since(start).Seconds(), summaryText(got))
	return nil
}

// eventLine is what the demo prints of an event of task id ("": nothing),
// and the state the task ended in when the event ends it.
func eventLine(ev wire.Event, id string) (line, end string) {
	data, err := core.DecodeEventData(ev.Type, ev.Data)
	if err != nil {
		return "", ""
	}
	blank := fmt.Sprintf("%-13s ", "")
	switch d := data.(type) {
	case core.TaskStateChanged:
		if d.Milestone != "" {
			line = fmt.Sprintf("%-13s %s", d.To, d.Milestone)
		}
		if isTerminal(string(d.To)) {
			end = string(d.To)
		}
		return line, end
	case core.TaskMilestone:
		return blank + d.Text, ""
	case core.DeliveryAcknowledged:
		if d.By == "agent" {
			return fmt.Sprintf("%sacknowledged by %s: [ACK] %s - RECEIVED", blank, ev.Agent, id), ""
		}
	case core.TaskFailure:
		rec := d.Record
		what := rec.ExecutorOutput.Error
		if v := rec.ExecutorOutput.Verification; v != nil && v.OutputSummary != "" {
			what = v.OutputSummary
		}
		return fmt.Sprintf("%sattempt %d failed (%s): %s — root cause guess: %s", blank, rec.Attempt, rec.FailureType, what, rec.RootCauseGuess), ""
	case core.TaskAttempt:
		if d.Kind != "first" {
			return fmt.Sprintf("%sattempt %d sent with a <retry_context> carrying the failure", blank, d.Attempt), ""
		}
	case core.ScoutAsked:
		c := d.Consultation
		return fmt.Sprintf("%s%s asks scout %s: %q", blank, c.From, c.Scout, c.Question), ""
	case core.ScoutAnswered:
		return fmt.Sprintf("%sthe scout answers: %q", blank, d.Answer), ""
	case core.TaskReviewed:
		return fmt.Sprintf("%sthe reviewer's verdict: %s %s", blank, d.Verdict, strings.ReplaceAll(d.Reasons, "\n", " ")), ""
	}
	return "", ""
}

// summaryText is a task's success summary ("" before it succeeded).
func summaryText(t *wire.Task) string {
	if t.Summary == nil {
		return ""
	}
	return t.Summary.Text
}

func isTerminal(s string) bool {
	switch s {
	case "success", "cancelled", "stuck", "skipped", "aborted", "failed", "escalated", "blocked":
		return true
	}
	return false
}

func makeRepo(ctx context.Context, dir, self string, team bool) error {
	yaml := fmt.Sprintf(`version: 1
agents:
  - name: scripted
    adapter: exec
    command: [%q, demo-agent]
    prompt: stdin
    handshake: inline
    timeout: 1m
verify:
  steps:
    - {name: unit, run: "go test ./...", timeout: 2m}
`, self)
	if team {
		yaml = fmt.Sprintf(`version: 1
agents:
  - {name: editor, adapter: exec, command: [%[1]q, demo-agent, editor], prompt: stdin, handshake: inline, timeout: 1m}
  - {name: scout, adapter: exec, role: scout, command: [%[1]q, demo-agent, scout], prompt: stdin, timeout: 1m}
  - {name: reviewer, adapter: exec, command: [%[1]q, demo-agent, reviewer], prompt: stdin, timeout: 1m}
verify:
  steps:
    - {name: unit, run: "go test ./...", timeout: 2m}
review: {agent: reviewer, timeout: 2m}
done: {tests: warn}
`, self)
	}
	files := map[string]string{
		"go.mod": goMod, "calc.go": calcBug, "calc_test.go": calcTest,
		".gitignore": ".wilco/\n",
		"wilco.yaml": yaml,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=wilco demo", "-c", "user.email=demo@wilco.invalid", "commit", "-qm", "calc with a bug"}} {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, b)
		}
	}
	return nil
}

// endTeam checks and prints the end of the --scout scenario: the scout was
// consulted and answered, the reviewer rejected once with its reasons in
// the retry's prompt, and approved.
func endTeam(ctx context.Context, c *client.Client, dir, id string, got *wire.Task, out io.Writer, start time.Time) error {
	if len(got.Consultations) == 0 || got.Consultations[0].State != "answered" {
		return fmt.Errorf("demo: the scout was not consulted: %+v", got.Consultations)
	}
	if got.Review == nil || got.Review.Verdict != "APPROVED" || got.Attempt != 2 {
		return fmt.Errorf("demo: the reviewer's verdict: %+v at attempt %d", got.Review, got.Attempt)
	}
	prompt, err := os.ReadFile(filepath.Join(dir, ".wilco", "runs", id+"-a2", "prompt.md"))
	if err != nil || !strings.Contains(string(prompt), "architect_rejected") || !strings.Contains(string(prompt), "TestAddNegative") {
		return fmt.Errorf("demo: the retry prompt did not carry the reviewer's reasons (%v)", err)
	}
	fmt.Fprintf(out, "\n%s succeeded after %d attempts in %.1fs: the scout was consulted, the reviewer rejected the first change and approved the second.\n%s",
		id, got.Attempt, time.Since(start).Seconds(), summaryText(got))
	_ = ctx
	return nil
}
