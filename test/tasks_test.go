package test

// Black-box tests of the task lifecycle and of what the user sees (the
// config, the HTTP API, the task record, the CLI): each test makes a git
// repository of its own, configures exec agents that are small shell
// scripts (testdata/agents) and a verify step, starts the real binary and
// drives it over HTTP and through the CLI. Every wait polls with a
// deadline.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"wilco/test/blackbox"
)

// execAgent is one wilco.yaml agent entry: `sh <script> <args>…`, the prompt
// on stdin, handshake inline. env is KEY=VALUE pairs.
func execAgent(t testing.TB, name, script string, args []string, env ...string) string {
	t.Helper()
	cmd := []string{blackbox.Quoted("sh"), blackbox.Quoted(blackbox.ScriptPath(t, script))}
	for _, a := range args {
		cmd = append(cmd, blackbox.Quoted(a))
	}
	line := fmt.Sprintf("  - {name: %s, adapter: exec, command: [%s], prompt: stdin, handshake: inline, timeout: 2m", name, strings.Join(cmd, ", "))
	if len(env) > 0 {
		var kv []string
		for _, e := range env {
			k, v, _ := strings.Cut(e, "=")
			kv = append(kv, k+": "+blackbox.Quoted(v))
		}
		line += ", env: {" + strings.Join(kv, ", ") + "}"
	}
	return line + "}\n"
}

// waitFor polls cond until it holds, or fails after timeout.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	if !blackbox.Eventually(timeout, 10*time.Millisecond, cond) {
		t.Fatalf("timed out after %s waiting for %s", timeout, what)
	}
}

// alive reports whether a process is alive (a zombie is not).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !os.IsNotExist(err)
	}
	i := strings.LastIndexByte(string(stat), ')')
	f := strings.Fields(string(stat[i+1:]))
	return len(f) == 0 || (f[0] != "Z" && f[0] != "X")
}

// agentPids reads a sleeper's pid file: task id → the shell's and its
// child's pids.
func agentPids(t *testing.T, path string) map[string][]int {
	t.Helper()
	out := map[string][]int{}
	for _, line := range strings.Split(blackbox.ReadFile(t, path), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		a, err1 := strconv.Atoi(f[0])
		b, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil {
			t.Fatalf("pid file line %q", line)
		}
		out[f[2]] = []int{a, b}
	}
	return out
}

// killGroups kills what is left of the sleepers' process groups (the
// shell is its group's leader), so that no test leaves a process behind.
func killGroups(t *testing.T, pidFile string) {
	t.Cleanup(func() {
		for _, pids := range agentPids(t, pidFile) {
			if alive(pids[0]) {
				_ = syscall.Kill(-pids[0], syscall.SIGKILL)
			}
			if alive(pids[1]) {
				_ = syscall.Kill(pids[1], syscall.SIGKILL)
			}
		}
	})
}

// retryLogLine matches one line of the retry log format for a task.
func retryLogLine(task, rest string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^\[\d{4}-\d\d-\d\dT[0-9:.]+(Z|[+-]\d\d:\d\d)\] \[RETRY\] \[` + regexp.QuoteMeta(task) + `\] ` + rest + `$`)
}

// 1. A retry carries the failure: the agent fixes file.txt only when its
// prompt begins with <retry_context attempt="3"> and quotes the check's
// message; the task succeeds on attempt 3 with a summary naming the file
// and the run, the run log is served, and retry.log / retry.jsonl have
// the retry log's lines.
func TestTaskRetryContextCarriesFailureUntilSuccessOnThirdAttempt(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "fixer", "fix_when.sh", []string{`<retry_context attempt="3"`, `check: file.txt is not fixed: want "fixed T-1", got "attempt 2"`})+blackbox.CheckStep)
	in := blackbox.ServeRepo(t, dir)
	sub := in.Submit(map[string]any{"description": "Write the fix into file.txt", "constraints": []string{"Keep check.sh as it is"}})
	if sub.ID != "T-1" || sub.State == "" {
		t.Fatalf("submitted %s", sub)
	}
	got := in.WaitTask("T-1", 30*time.Second, "success")
	if got.Attempt != 3 || got.TotalVerifyLoops != 2 || len(got.Failures) != 2 {
		t.Fatalf("success after %d attempts, %d loops, %d failures:\n%s", got.Attempt, got.TotalVerifyLoops, len(got.Failures), got)
	}
	for i, f := range got.Failures {
		if f.Attempt != i+1 || f.FailureType != "verification_failed" || f.RunID != fmt.Sprintf("T-1-a%d", i+1) ||
			f.ExecutorOutput.Verification == nil || f.ExecutorOutput.Verification.Command != "sh check.sh" || f.ExecutorOutput.Verification.ExitCode != 1 ||
			!slices.Contains(f.ExecutorOutput.FilesModified, "file.txt") {
			t.Fatalf("failure %d:\n%s", i+1, got)
		}
	}

	// The prompts: the first is the task alone; each retry begins with
	// the retry context, which quotes every failure so far.
	p1, p2, p3 := in.Prompt("T-1-a1"), in.Prompt("T-1-a2"), in.Prompt("T-1-a3")
	if strings.Contains(p1, "<retry_context") {
		t.Fatalf("the first prompt has a retry context:\n%s", p1)
	}
	blackbox.MustContain(t, "the first prompt", p1, "## Task: T-1", "Write the fix into file.txt", "Keep check.sh as it is", "ACKNOWLEDGMENT REQUIRED: Reply with [ACK] T-1 - RECEIVED")
	if !strings.HasPrefix(p2, `<retry_context attempt="2" max_attempts="12">`) {
		t.Fatalf("the second prompt does not begin with the retry context:\n%s", p2)
	}
	if !strings.HasPrefix(p3, `<retry_context attempt="3" max_attempts="12">`) {
		t.Fatalf("the third prompt does not begin with the retry context:\n%s", p3)
	}
	blackbox.MustContain(t, "the third prompt", p3, `<failure attempt="1">`, `<failure attempt="2">`, "<type>verification_failed</type>",
		`check: file.txt is not fixed: want "fixed T-1", got "attempt 1"`, `check: file.txt is not fixed: want "fixed T-1", got "attempt 2"`,
		"This is retry attempt 3 of 12.", "## Task: T-1", "Keep check.sh as it is")
	if strings.Index(p3, "</retry_context>") > strings.Index(p3, "## Task: T-1") {
		t.Fatalf("the retry context is not before the task:\n%s", p3)
	}

	// Done: the summary says what changed and names the run.
	if got.Summary == nil || !slices.Equal(got.Summary.Files, []string{"file.txt"}) || got.Summary.RunID != "T-1-a3" {
		t.Fatalf("summary:\n%s", got)
	}
	blackbox.MustContain(t, "the summary", got.Summary.Text, "file.txt", "T-1-a3")
	if blackbox.ReadFile(t, filepath.Join(dir, "file.txt")) != "fixed T-1\n" {
		t.Fatalf("file.txt: %q", blackbox.ReadFile(t, filepath.Join(dir, "file.txt")))
	}

	// The run logs.
	r := in.Must(200, in.Call("GET", "/v1/runs/T-1-a3/log", blackbox.AdminToken, nil))
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("run log content type %q", r.Header.Get("Content-Type"))
	}
	blackbox.MustContain(t, "run log T-1-a3", string(r.Body), "sh check.sh", "passed")
	r = in.Must(200, in.Call("GET", "/v1/runs/T-1-a1/log", blackbox.AdminToken, nil))
	blackbox.MustContain(t, "run log T-1-a1", string(r.Body), `check: file.txt is not fixed: want "fixed T-1", got "attempt 1"`)
	if r := in.Call("GET", "/v1/runs/T-9-a1/log", blackbox.AdminToken, nil); r.Status != 404 {
		t.Fatalf("the log of a run that never was: %d %s", r.Status, r.Body)
	}

	// The events: a first attempt, two retries, two failures, and the
	// "Attempt n/12..." milestones.
	var kinds []string
	for _, ev := range in.TaskEvents("T-1", "task.attempt") {
		kinds = append(kinds, fmt.Sprint(blackbox.EventData(t, ev)["kind"]))
	}
	if !slices.Equal(kinds, []string{"first", "retry", "retry"}) {
		t.Fatalf("attempt kinds %v", kinds)
	}
	if n := len(in.TaskEvents("T-1", "task.failure")); n != 2 {
		t.Fatalf("%d task.failure events", n)
	}
	var milestones []string
	for _, ev := range in.TaskEvents("T-1", "task.state", "task.milestone") {
		d := blackbox.EventData(t, ev)
		for _, k := range []string{"milestone", "text"} {
			if s, _ := d[k].(string); s != "" {
				milestones = append(milestones, s)
			}
		}
	}
	for _, m := range []string{"Waiting for acknowledgment...", "Running verification...", "Verification failed, debugging...", "Attempt 2/12...", "Attempt 3/12..."} {
		if !slices.Contains(milestones, m) {
			t.Fatalf("no milestone %q in %q", m, milestones)
		}
	}

	// retry.log and retry.jsonl (the retry log format).
	logPath := filepath.Join(dir, ".wilco", "logs", "retry.log")
	want := []*regexp.Regexp{
		retryLogLine("T-1", `attempt=1 status=failed type=verification_failed`),
		retryLogLine("T-1", `error=".*got \\"attempt 1\\""`),
		retryLogLine("T-1", `injecting_feedback attempt=2( .*)?`),
		retryLogLine("T-1", `attempt=2 status=failed type=verification_failed`),
		retryLogLine("T-1", `injecting_feedback attempt=3( .*)?`),
		retryLogLine("T-1", `resolved status=success`),
	}
	waitFor(t, "retry.log to say resolved", 10*time.Second, func() bool { return want[len(want)-1].MatchString(blackbox.ReadFile(t, logPath)) })
	text := blackbox.ReadFile(t, logPath)
	last := -1
	for _, re := range want {
		loc := re.FindStringIndex(text)
		if loc == nil || loc[0] < last {
			t.Fatalf("retry.log has no line %s after the previous one:\n%s", re, text)
		}
		last = loc[0]
	}
	var records []map[string]any
	sc := bufio.NewScanner(strings.NewReader(blackbox.ReadFile(t, filepath.Join(dir, ".wilco", "logs", "retry.jsonl"))))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("retry.jsonl line %q: %v", sc.Text(), err)
		}
		if _, err := time.Parse(time.RFC3339, fmt.Sprint(m["timestamp"])); err != nil || m["task_id"] != "T-1" {
			t.Fatalf("retry.jsonl record %v", m)
		}
		records = append(records, m)
	}
	has := func(match func(m map[string]any) bool) bool { return slices.ContainsFunc(records, match) }
	if !has(func(m map[string]any) bool {
		return m["event"] == "attempt" && m["attempt"] == 1.0 && m["status"] == "failed" && m["failure_type"] == "verification_failed"
	}) || !has(func(m map[string]any) bool { return m["event"] == "feedback_injected" && m["attempt"] == 2.0 }) ||
		!has(func(m map[string]any) bool { return m["event"] == "resolved" && m["resolution"] == "success" }) {
		t.Fatalf("retry.jsonl lacks the retry log's records: %v", records)
	}

	// The CLI: status, logs, watch of a finished task.
	var st blackbox.Task
	if err := json.Unmarshal([]byte(in.Cli("status", "T-1", "--json")), &st); err != nil || st.State != "success" || st.Attempt != 3 {
		t.Fatalf("wilco status --json: %v %s", err, st)
	}
	blackbox.MustContain(t, "wilco status --detail", in.Cli("status", "T-1", "--detail"), "success", "verification_failed", "T-1-a3")
	blackbox.MustContain(t, "wilco logs", in.Cli("logs", "--task", "T-1"), "[T-1] attempt=1 status=failed type=verification_failed", "injecting_feedback attempt=2", "resolved status=success")
	blackbox.MustContain(t, "wilco watch", in.Cli("watch", "T-1"), "T-1", "success")
	in.WatchFold("retry")
}

// 2. The debug loop: a task that never passes is REPLANned after every 3
// consecutive failures (loops 3, 6, 9) with a prompt that carries every
// failure so far and the unchanged constraints, and stops at the hard
// stop (12) as stuck, with a stuck report; the next queued task starts;
// resume makes a new task seeded with the stuck report.
func TestTaskReplansEveryThreeFailuresAndHardStopsStuckAtTwelve(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "fixer", "fix_when.sh", nil)+execAgent(t, "noop", "noop.sh", nil)+blackbox.CheckStep)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"description": "Make the impossible check pass", "agent": "noop",
		"constraints": []string{"Keep check.sh as it is"}, "non_goals": []string{"Do not add dependencies"}})
	second := in.Submit(map[string]any{"description": "Write the fix into file.txt", "agent": "fixer"})
	if second.ID != "T-2" {
		t.Fatalf("second task %s", second)
	}

	got := in.WaitTask("T-1", 60*time.Second, "stuck")
	if got.TotalVerifyLoops != 12 || got.Attempt != 12 || got.Replans != 3 || len(got.Failures) != 12 {
		t.Fatalf("stuck after %d loops, %d attempts, %d replans, %d failures:\n%s", got.TotalVerifyLoops, got.Attempt, got.Replans, len(got.Failures), got)
	}
	if blackbox.Exists(filepath.Join(dir, ".wilco", "runs", "T-1-a13")) {
		t.Fatal("a 13th attempt ran past the hard stop")
	}

	// REPLAN at loops 3, 6 and 9: the event comes right after that
	// failure, and the next attempt is a replan.
	var failures, replans int
	var replanAt []int
	for _, ev := range in.TaskEvents("T-1", "task.failure", "task.replan", "task.attempt") {
		d := blackbox.EventData(t, ev)
		switch ev.Type {
		case "task.failure":
			failures++
		case "task.replan":
			replans++
			replanAt = append(replanAt, failures)
			if d["number"] != float64(replans) || d["failures"] != float64(failures) {
				t.Fatalf("task.replan %d after %d failures: %s", replans, failures, ev.Data)
			}
		case "task.attempt":
			n := int(d["attempt"].(float64))
			want := "retry"
			switch {
			case n == 1:
				want = "first"
			case n == 4 || n == 7 || n == 10:
				want = "replan"
			}
			if d["kind"] != want {
				t.Fatalf("attempt %d is a %v, want %s", n, d["kind"], want)
			}
		}
	}
	if !slices.Equal(replanAt, []int{3, 6, 9}) {
		t.Fatalf("replans after failures %v, want 3, 6, 9", replanAt)
	}
	for i, attempt := range []int{4, 7, 10} {
		p := in.Prompt(fmt.Sprintf("T-1-a%d", attempt))
		blackbox.MustContain(t, fmt.Sprintf("the REPLAN prompt of attempt %d", attempt), p,
			fmt.Sprintf(`<replan number="%d"`, i+1), "Make a fresh plan", "Keep check.sh as it is", "Do not add dependencies", "## Task: T-1")
		for f := 1; f < attempt; f++ {
			blackbox.MustContain(t, fmt.Sprintf("the REPLAN prompt of attempt %d", attempt), p, fmt.Sprintf(`<failure attempt="%d">`, f))
		}
	}
	if p := in.Prompt("T-1-a5"); strings.Contains(p, "<replan") || !strings.HasPrefix(p, `<retry_context attempt="5"`) {
		t.Fatalf("attempt 5 is a plain retry:\n%s", p)
	}

	// The stuck report: hypotheses and every run id, in the task and in
	// .wilco/stuck/T-1.md.
	var runs []string
	for i := 1; i <= 12; i++ {
		runs = append(runs, fmt.Sprintf("T-1-a%d", i))
	}
	sr := got.StuckReport
	if sr == nil || len(sr.Hypotheses) == 0 || !slices.Equal(sr.RunIDs, runs) || sr.Path != ".wilco/stuck/T-1.md" {
		t.Fatalf("stuck report:\n%s", got)
	}
	stuckFile := filepath.Join(dir, ".wilco", "stuck", "T-1.md")
	waitFor(t, "the stuck report file", 10*time.Second, func() bool { return blackbox.Exists(stuckFile) })
	md := blackbox.ReadFile(t, stuckFile)
	blackbox.MustContain(t, "stuck/T-1.md", md, append([]string{"Hypotheses", sr.Hypotheses[0]}, runs...)...)
	waitFor(t, "retry.log to say stuck", 10*time.Second, func() bool {
		return retryLogLine("T-1", `resolved status=stuck`).MatchString(blackbox.ReadFile(t, filepath.Join(dir, ".wilco", "logs", "retry.log")))
	})
	blackbox.MustContain(t, "retry.log", blackbox.ReadFile(t, filepath.Join(dir, ".wilco", "logs", "retry.log")), "[T-1] replanning number=1", "[T-1] replanning number=3")

	// The next queued task starts once T-1 is stuck.
	next := in.WaitTask("T-2", 30*time.Second, "success")
	if next.StartedAt == nil || got.FinishedAt == nil || next.StartedAt.Before(*got.FinishedAt) {
		t.Fatalf("T-2 started before T-1 ended:\n%s\n%s", got, next)
	}

	// Resume: a new task whose prompt carries the stuck report (not the
	// whole history).
	var resumed blackbox.Task
	in.Must(201, in.Call("POST", "/v1/tasks/T-1/resume", blackbox.AdminToken, nil), &resumed)
	if resumed.ID == "T-1" || resumed.ResumedFrom != "T-1" || resumed.Description != got.Description || !slices.Equal(resumed.Constraints, got.Constraints) {
		t.Fatalf("resumed:\n%s", resumed)
	}
	promptFile := filepath.Join(dir, ".wilco", "runs", resumed.ID+"-a1", "prompt.md")
	waitFor(t, "the resumed task's first prompt", 30*time.Second, func() bool {
		return strings.Contains(blackbox.ReadFile(t, promptFile), "ACKNOWLEDGMENT REQUIRED")
	})
	p := blackbox.ReadFile(t, promptFile)
	blackbox.MustContain(t, "the resumed prompt", p, "## Task: "+resumed.ID, "# Stuck report: T-1", sr.Hypotheses[0], "T-1-a12")
	if strings.HasPrefix(p, "<retry_context") {
		t.Fatalf("the resumed task starts with the old history:\n%s", p)
	}
	if r := in.Call("POST", "/v1/tasks/T-2/resume", blackbox.AdminToken, nil); r.Status != 409 || r.ErrorCode() != "conflict" {
		t.Fatalf("resuming a task that succeeded: %d %s", r.Status, r.Body)
	}
	in.Must(200, in.Call("POST", "/v1/tasks/"+resumed.ID+"/cancel", blackbox.AdminToken, nil))
	in.WatchFold("replan")
}

// 3a. escalate_after: 2 escalates with the escalation message; the user's fix
// goes first in the next prompt as a high-priority <user_intervention>,
// and the task succeeds.
func TestTaskEscalatesAfterTwoFailuresAndUserFixReachesAgent(t *testing.T) {
	t.Parallel()
	const fix = "Write fixed and the task id into file.txt"
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "fixer", "fix_when.sh", []string{"<user_intervention>", `<instruction priority="high">`, fix})+blackbox.CheckStep+
		"policy:\n  loop: {escalate_after: 2}\n")
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"description": "Write the fix into file.txt"})
	got := in.WaitTask("T-1", 30*time.Second, "escalated")
	if got.Attempt != 2 || len(got.Failures) != 2 || got.Escalation == nil {
		t.Fatalf("escalated:\n%s", got)
	}
	blackbox.MustContain(t, "the escalation message", got.Escalation.Message, "## Task Escalation Required", "**Task:** Write the fix into file.txt",
		"**Attempts:** 2 of 12", "### Failure Summary", "### Attempt History", "| 1 |", "| 2 |", "verification_failed",
		"### Last Error Details", `got "attempt 2"`, "### Suggested Actions", "**Your options:**",
		"`retry`", "`skip`", "`abort`", "`fix: <instruction>`")
	if n := len(in.TaskEvents("T-1", "task.escalated")); n != 1 {
		t.Fatalf("%d task.escalated events", n)
	}
	// Escalated holds the queue: a second task waits.
	if q := in.Submit(map[string]any{"description": "Wait your turn"}); q.State != "queued" || q.Position == nil || *q.Position != 1 {
		t.Fatalf("a task submitted while T-1 is escalated:\n%s", q)
	}
	if r := blackbox.WilcoCLI(t, dir, in.Url, 30*time.Second, "respond", "T-1", "fix"); r.Code != 2 {
		t.Fatalf("respond fix without an instruction: exit %d %s %s", r.Code, r.Stdout, r.Stderr)
	}
	in.Cli("respond", "T-1", "fix", fix)
	got = in.WaitTask("T-1", 30*time.Second, "success")
	if got.Attempt != 3 {
		t.Fatalf("success at attempt %d", got.Attempt)
	}
	p := in.Prompt("T-1-a3")
	if !strings.HasPrefix(p, `<retry_context attempt="3"`) {
		t.Fatalf("the fix prompt:\n%s", p)
	}
	blackbox.MustContain(t, "the fix prompt", p, "<user_intervention>", `<instruction priority="high">`, "User provided fix: "+fix, "Treat this as authoritative guidance.")
	if strings.Index(p, "<user_intervention>") > strings.Index(p, "<previous_failures>") {
		t.Fatalf("the user's fix is not first:\n%s", p)
	}
	logPath := filepath.Join(dir, ".wilco", "logs", "retry.log")
	waitFor(t, "retry.log to say resolved", 10*time.Second, func() bool { return strings.Contains(blackbox.ReadFile(t, logPath), "[T-1] resolved status=success") })
	text := blackbox.ReadFile(t, logPath)
	if !retryLogLine("T-1", `escalating reason=".*"`).MatchString(text) || !retryLogLine("T-1", `user_response="fix: `+regexp.QuoteMeta(fix)+`"`).MatchString(text) {
		t.Fatalf("retry.log:\n%s", text)
	}
	in.WaitTask("T-2", 30*time.Second, "escalated") // the waiting task ran next (and escalated: the agent waits for a fix)
	in.WatchFold("escalate")
}

// 3b. A check that says "Permission denied" escalates at once: no retry.
func TestTaskEscalatesAtOnceWhenCheckSaysPermissionDenied(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "fixer", "fix_when.sh", nil)+`verify:
  steps:
    - {name: secrets, run: `+blackbox.Quoted(`echo "cat: /etc/wilco-test/secret.env: Permission denied" >&2; exit 1`)+`, timeout: 10s}
`)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"description": "Write the fix into file.txt"})
	got := in.WaitTask("T-1", 30*time.Second, "escalated")
	if got.Attempt != 1 || len(got.Failures) != 1 || got.Escalation == nil || !strings.Contains(got.Escalation.Reason, "permission") {
		t.Fatalf("escalated:\n%s", got)
	}
	blackbox.MustContain(t, "the escalation message", got.Escalation.Message, "## Task Escalation Required", "Permission denied")
	if blackbox.Exists(filepath.Join(dir, ".wilco", "runs", "T-1-a2")) {
		t.Fatal("a permission denied was retried")
	}
	// abort: the task stops, the working tree keeps the partial state.
	var ab blackbox.Task
	in.Must(200, in.Call("POST", "/v1/tasks/T-1/respond", blackbox.AdminToken, map[string]any{"action": "abort"}), &ab)
	if got := in.WaitTask("T-1", 10*time.Second, "aborted"); got.Attempt != 1 {
		t.Fatalf("aborted:\n%s", got)
	}
	if blackbox.ReadFile(t, filepath.Join(dir, "file.txt")) != "fixed T-1\n" {
		t.Fatal("abort did not keep the partial state")
	}
	if r := in.Call("POST", "/v1/tasks/T-1/respond", blackbox.AdminToken, map[string]any{"action": "retry"}); r.Status != 409 {
		t.Fatalf("respond to an aborted task: %d %s", r.Status, r.Body)
	}
}

// 3c. In a plan, skip ends an escalated task and warns the tasks that
// depend on it, which run all the same.
func TestPlanSkipOfEscalatedTaskWarnsItsDependant(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "fixer", "fix_when.sh", nil)+execAgent(t, "noop", "noop.sh", nil)+blackbox.CheckStep+
		"policy:\n  loop: {escalate_after: 2}\n")
	in := blackbox.ServeRepo(t, dir)
	var p struct {
		ID    string
		State string
		Tasks []blackbox.Task
	}
	in.Must(201, in.Call("POST", "/v1/plans", blackbox.AdminToken, map[string]any{"id": "05-01", "tasks": []map[string]any{
		{"description": "Make the impossible check pass", "agent": "noop"},
		{"description": "Write the fix into file.txt", "agent": "fixer", "depends_on": []int{1}},
	}}), &p)
	if len(p.Tasks) != 2 || p.Tasks[0].ID != "05-01:task-1" || p.Tasks[1].ID != "05-01:task-2" || !slices.Equal(p.Tasks[1].DependsOn, []string{"05-01:task-1"}) {
		t.Fatalf("plan %+v", p)
	}
	in.WaitTask("05-01:task-1", 30*time.Second, "escalated")
	if st := in.Task("05-01:task-2"); st.State != "queued" {
		t.Fatalf("the dependant is %s while its dependency is escalated", st.State)
	}
	in.Cli("respond", "05-01:task-1", "skip")
	in.WaitTask("05-01:task-1", 10*time.Second, "skipped")
	dep := in.WaitTask("05-01:task-2", 30*time.Second, "success")
	if !slices.ContainsFunc(dep.Warnings, func(w string) bool { return strings.Contains(w, "05-01:task-1") && strings.Contains(w, "skipped") }) {
		t.Fatalf("the dependant has no warning about the skipped task:\n%s", dep)
	}
	if len(in.TaskEvents("05-01:task-2", "task.warning")) == 0 {
		t.Fatal("no task.warning event")
	}
	waitFor(t, "retry.log to say skipped", 10*time.Second, func() bool {
		return retryLogLine("05-01:task-1", `resolved status=skipped`).MatchString(blackbox.ReadFile(t, filepath.Join(dir, ".wilco", "logs", "retry.log")))
	})
	blackbox.MustContain(t, "retry.log", blackbox.ReadFile(t, filepath.Join(dir, ".wilco", "logs", "retry.log")), `[05-01:task-1] user_response="skip"`)
	in.WatchFold("plan")
}

// 3d. In a plan, abort stops the escalated task (partial state kept) and
// aborts the plan's queued tasks; the plan ends aborted.
func TestPlanAbortOfEscalatedTaskAbortsQueuedTasks(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "fixer", "fix_when.sh", nil)+execAgent(t, "guesser", "fix_when.sh", []string{"never in any prompt"})+blackbox.CheckStep+
		"policy:\n  loop: {escalate_after: 2}\n")
	in := blackbox.ServeRepo(t, dir)
	in.Must(201, in.Call("POST", "/v1/plans", blackbox.AdminToken, map[string]any{"id": "06-01", "tasks": []map[string]any{
		{"description": "Guess what goes into file.txt", "agent": "guesser"},
		{"description": "Write the fix into file.txt", "agent": "fixer"},
		{"description": "Write the fix into file.txt again", "agent": "fixer", "depends_on": []int{2}},
	}}))
	in.WaitTask("06-01:task-1", 30*time.Second, "escalated")
	in.Cli("respond", "06-01:task-1", "abort")
	in.WaitTask("06-01:task-1", 10*time.Second, "aborted")
	for _, id := range []string{"06-01:task-2", "06-01:task-3"} {
		if got := in.WaitTask(id, 10*time.Second, "aborted"); got.Attempt != 0 {
			t.Fatalf("%s ran:\n%s", id, got)
		}
	}
	if s := blackbox.ReadFile(t, filepath.Join(dir, "file.txt")); s != "attempt 2\n" {
		t.Fatalf("abort did not keep the partial state: file.txt %q", s)
	}
	var p struct{ State string }
	waitFor(t, "the plan to end aborted", 10*time.Second, func() bool {
		in.Must(200, in.Call("GET", "/v1/plans/06-01", blackbox.AdminToken, nil), &p)
		return p.State == "aborted"
	})
}

// 4. Clarification: the agent's CLARIFICATION_NEEDED puts the task in
// clarifying with its questions; the user's answers reach the agent as a
// task-clarification; its ACK RECEIVED lets the work begin.
func TestTaskClarificationQuestionsThenAnswersInNextPromptThenSuccess(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "asker", "clarify.sh", nil)+blackbox.CheckStep)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"description": "Write the fix into file.txt"})
	got := in.WaitTask("T-1", 30*time.Second, "clarifying")
	if !slices.Equal(got.Questions, []string{"Which line goes into file.txt?"}) {
		t.Fatalf("questions %q:\n%s", got.Questions, got)
	}
	blackbox.MustContain(t, "wilco status", in.Cli("status", "T-1"), "clarifying", "Which line goes into file.txt?")
	if r := in.Call("POST", "/v1/tasks/T-1/respond", blackbox.AdminToken, map[string]any{"action": "retry"}); r.Status != 409 {
		t.Fatalf("respond to a clarifying task: %d %s", r.Status, r.Body)
	}
	const answer = "The line is: fixed, a space, the task id"
	var after blackbox.Task
	in.Must(200, in.Call("POST", "/v1/tasks/T-1/clarify", blackbox.AdminToken, map[string]any{"answers": []string{answer}}), &after)
	got = in.WaitTask("T-1", 30*time.Second, "success")
	if got.Attempt != 1 || len(got.Failures) != 0 {
		t.Fatalf("success:\n%s", got)
	}
	p := in.Prompt("T-1-a1")
	blackbox.MustContain(t, "the prompt after the answers", p, "task-clarification", answer, "## Task: T-1")
	if r := in.Call("POST", "/v1/tasks/T-1/clarify", blackbox.AdminToken, map[string]any{"answers": []string{"again"}}); r.Status != 409 {
		t.Fatalf("clarify a finished task: %d %s", r.Status, r.Body)
	}
}

// 5. The queue: strict FIFO with positions; a cancelled queued task
// leaves no trace and the rest shift up; a cancelled running task has its
// agent's whole process group stopped, the working tree kept as it is, no
// artifact, and the next task starts.
func TestTaskQueueFIFOCancelQueuedLeavesNoTraceCancelRunningStopsProcessGroup(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pids")
	killGroups(t, pidFile)
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "fixer", "fix_when.sh", nil)+execAgent(t, "sleeper", "sleeper.sh", nil, "PID_FILE="+pidFile)+blackbox.CheckStep)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"description": "Write a partial change and sleep", "agent": "sleeper"})
	for i := 2; i <= 4; i++ {
		var q blackbox.Task
		if err := json.Unmarshal([]byte(in.Cli("submit", fmt.Sprintf("Write the fix into file.txt (%d)", i), "--agent", "fixer", "--json")), &q); err != nil ||
			q.ID != fmt.Sprintf("T-%d", i) || q.State != "queued" || q.Position == nil || *q.Position != i-1 {
			t.Fatalf("wilco submit: %v\n%s", err, q)
		}
	}
	waitFor(t, "the sleeper to start", 30*time.Second, func() bool { return len(agentPids(t, pidFile)["T-1"]) == 2 })
	if got := in.Task("T-1"); got.State != "running" {
		t.Fatalf("T-1 is %s", got.State)
	}

	type entry struct {
		ID       string `json:"id"`
		Position int    `json:"position"`
	}
	queue := func() []entry {
		var q struct{ Tasks []entry }
		in.Must(200, in.Call("GET", "/v1/queue", blackbox.AdminToken, nil), &q)
		var cq struct{ Tasks []entry }
		if err := json.Unmarshal([]byte(in.Cli("queue", "--json")), &cq); err != nil || !slices.Equal(q.Tasks, cq.Tasks) {
			t.Fatalf("wilco queue --json %+v (%v), the API %+v", cq, err, q)
		}
		return q.Tasks
	}
	if q := queue(); !slices.Equal(q, []entry{{"T-2", 1}, {"T-3", 2}, {"T-4", 3}}) {
		t.Fatalf("queue %+v", q)
	}
	blackbox.MustContain(t, "wilco queue", in.Cli("queue"), "T-2", "T-3", "T-4")

	// Cancel a queued task: 204, then 404; the rest shift up.
	r := in.Must(204, in.Call("POST", "/v1/tasks/T-3/cancel", blackbox.AdminToken, nil))
	if len(r.Body) != 0 {
		t.Fatalf("204 with a body: %s", r.Body)
	}
	if r := in.Call("GET", "/v1/tasks/T-3", blackbox.AdminToken, nil); r.Status != 404 || r.ErrorCode() != "not_found" {
		t.Fatalf("GET a cancelled queued task: %d %s", r.Status, r.Body)
	}
	if q := queue(); !slices.Equal(q, []entry{{"T-2", 1}, {"T-4", 2}}) {
		t.Fatalf("queue after the cancel %+v", q)
	}
	if p := in.Task("T-4").Position; p == nil || *p != 2 {
		t.Fatalf("T-4's position %v", p)
	}
	var list struct{ Tasks []blackbox.Task }
	in.Must(200, in.Call("GET", "/v1/tasks", blackbox.AdminToken, nil), &list)
	if slices.ContainsFunc(list.Tasks, func(x blackbox.Task) bool { return x.ID == "T-3" }) {
		t.Fatal("the cancelled queued task is still listed")
	}

	// Cancel the running task.
	pids := agentPids(t, pidFile)["T-1"]
	for _, pid := range pids {
		if !alive(pid) {
			t.Fatalf("the sleeper's process %d is not running before the cancel", pid)
		}
	}
	blackbox.MustContain(t, "wilco cancel", in.Cli("cancel", "T-1"), "T-1", "cancelled")
	got := in.Task("T-1")
	if got.State != "cancelled" {
		t.Fatalf("cancelled:\n%s", got)
	}
	waitFor(t, "the agent's process group to stop", 15*time.Second, func() bool { return !alive(pids[0]) && !alive(pids[1]) })
	if s := blackbox.ReadFile(t, filepath.Join(dir, "partial.txt")); s != "partial T-1\n" {
		t.Fatalf("the working tree lost the partial change: partial.txt %q", s)
	}
	if got.Summary != nil || got.StuckReport != nil || blackbox.Exists(filepath.Join(dir, ".wilco", "stuck", "T-1.md")) || blackbox.Exists(filepath.Join(dir, ".wilco", "runs", "T-1-a1", "result.json")) {
		t.Fatalf("a cancelled task left an artifact:\n%s", got)
	}

	// The next tasks run, in order; T-2's summary does not claim the
	// partial change T-1 left.
	t2 := in.WaitTask("T-2", 30*time.Second, "success")
	t4 := in.WaitTask("T-4", 30*time.Second, "success")
	if t2.StartedAt == nil || t4.StartedAt == nil || got.FinishedAt == nil || !t2.StartedAt.Before(*t4.StartedAt) || t2.StartedAt.Before(*got.FinishedAt) {
		t.Fatalf("order:\n%s\n%s", t2, t4)
	}
	if t2.Summary == nil || !slices.Equal(t2.Summary.Files, []string{"file.txt"}) {
		t.Fatalf("T-2's summary:\n%s", t2)
	}
	if r := in.Call("POST", "/v1/tasks/T-1/cancel", blackbox.AdminToken, nil); r.Status != 409 {
		t.Fatalf("cancel a cancelled task: %d %s", r.Status, r.Body)
	}
	in.WatchFold("queue")
}

// 6. A verify step that outlives its timeout fails with type timeout, and
// the task is retried.
func TestTaskVerifyStepTimeoutIsTimeoutFailureAndRetried(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "fixer", "fix_when.sh", []string{`<retry_context attempt="2"`, "<type>timeout</type>"})+`verify:
  steps:
    - {name: slow, run: `+blackbox.Quoted(`grep -qx "fixed $WILCO_TASK_ID" file.txt || sleep 30`)+`, timeout: 500ms}
`)
	in := blackbox.ServeRepo(t, dir)
	start := time.Now()
	in.Submit(map[string]any{"description": "Write the fix into file.txt"})
	got := in.WaitTask("T-1", 30*time.Second, "success")
	if took := time.Since(start); took > 20*time.Second {
		t.Fatalf("the 500ms timeout took %s", took)
	}
	if got.Attempt != 2 || len(got.Failures) != 1 || got.Failures[0].FailureType != "timeout" || got.Failures[0].RunID != "T-1-a1" {
		t.Fatalf("success:\n%s", got)
	}
	blackbox.MustContain(t, "retry.log", blackbox.ReadFile(t, filepath.Join(dir, ".wilco", "logs", "retry.log")), "[T-1] attempt=1 status=failed type=timeout")
}

// 7. A dry run works in a throw-away worktree: proposed, the working tree
// unchanged, the diff (new files too) over the API and the CLI; apply
// queues it, writes the diff, verifies, succeeds; a discarded dry run is
// cancelled and its worktree removed.
// (The repository does not list .wilco/ in its .gitignore: see the next
// test for one that does.)
func TestTaskDryRunProposesDiffThenApplyVerifiesOrDiscardCancels(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepoIgnoring(t, "agents:\n"+execAgent(t, "proposer", "propose.sh", nil)+blackbox.CheckStep, "")
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"description": "Write the fix into file.txt and add new.txt", "dry_run": true})
	got := in.WaitTask("T-1", 30*time.Second, "proposed")
	if !got.DryRun {
		t.Fatalf("proposed:\n%s", got)
	}
	if s := blackbox.ReadFile(t, filepath.Join(dir, "file.txt")); s != "broken\n" || blackbox.Exists(filepath.Join(dir, "new.txt")) {
		t.Fatalf("the dry run changed the working tree: file.txt %q", s)
	}
	if blackbox.Exists(filepath.Join(dir, ".wilco", "runs", "T-1-a1", "result.json")) {
		t.Fatal("a dry run was verified")
	}
	r := in.Must(200, in.Call("GET", "/v1/tasks/T-1/diff", blackbox.AdminToken, nil))
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "text/x-diff") {
		t.Fatalf("diff content type %q", r.Header.Get("Content-Type"))
	}
	diff := string(r.Body)
	blackbox.MustContain(t, "the diff", diff, "--- a/file.txt", "+++ b/file.txt", "-broken", "+fixed T-1", "+++ b/new.txt", "+a new file")
	if cd := in.Cli("diff", "T-1"); cd != diff {
		t.Fatalf("wilco diff differs from the API's:\n%s\n---\n%s", cd, diff)
	}
	// A proposed dry run does not hold the queue.
	if r := in.Call("POST", "/v1/tasks/T-1/respond", blackbox.AdminToken, map[string]any{"action": "retry"}); r.Status != 409 {
		t.Fatalf("respond to a proposed task: %d", r.Status)
	}

	in.Cli("apply", "T-1")
	got = in.WaitTask("T-1", 30*time.Second, "success")
	var states []string
	for _, ev := range in.TaskEvents("T-1", "task.state") {
		states = append(states, fmt.Sprint(blackbox.EventData(t, ev)["to"]))
	}
	if i := slices.Index(states, "proposed"); i < 0 || i+1 >= len(states) || states[i+1] != "queued" {
		t.Fatalf("apply did not go through queued: %v", states)
	}
	if s := blackbox.ReadFile(t, filepath.Join(dir, "file.txt")); s != "fixed T-1\n" || blackbox.ReadFile(t, filepath.Join(dir, "new.txt")) != "a new file\n" {
		t.Fatalf("apply did not write the diff: file.txt %q", s)
	}
	if got.Summary == nil || !slices.Contains(got.Summary.Files, "file.txt") || !slices.Contains(got.Summary.Files, "new.txt") {
		t.Fatalf("summary:\n%s", got)
	}
	if r := in.Call("GET", "/v1/tasks/T-1/diff", blackbox.AdminToken, nil); r.Status != 409 {
		t.Fatalf("the diff of an applied task: %d", r.Status)
	}

	blackbox.MustContain(t, "wilco submit --dry-run", in.Cli("submit", "Propose another change", "--dry-run"), "T-2")
	in.WaitTask("T-2", 30*time.Second, "proposed")
	wt := filepath.Join(dir, ".wilco", "worktrees", "T-2")
	if !blackbox.Exists(wt) {
		t.Fatalf("no worktree %s", wt)
	}
	blackbox.MustContain(t, "T-2's diff", in.Cli("diff", "T-2"), "+++ b/file.txt", "+fixed T-2")
	in.Cli("discard", "T-2")
	in.WaitTask("T-2", 10*time.Second, "cancelled")
	waitFor(t, "the discarded worktree to go", 10*time.Second, func() bool { return !blackbox.Exists(wt) })
	if s := blackbox.ReadFile(t, filepath.Join(dir, "file.txt")); s != "fixed T-1\n" {
		t.Fatalf("discard changed the working tree: file.txt %q", s)
	}
	if r := in.Call("POST", "/v1/tasks/T-2/apply", blackbox.AdminToken, nil); r.Status != 409 {
		t.Fatalf("apply a discarded dry run: %d", r.Status)
	}
	in.WatchFold("dryrun")
}

// 7b. A dry run in a repository whose .gitignore lists .wilco/ (as the
// demo's does, and as users write it) proposes its diff too.
func TestTaskDryRunWorksWhenGitignoreListsStateDir(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "proposer", "propose.sh", nil)+blackbox.CheckStep)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"description": "Write the fix into file.txt and add new.txt", "dry_run": true})
	in.WaitTask("T-1", 30*time.Second, "proposed")
	if p := in.Problems(); strings.Contains(p, "ignored by one of your .gitignore files") {
		t.Fatalf("the dry-run snapshot tripped over .gitignore:\n%s", p)
	}
	blackbox.MustContain(t, "the diff", in.Cli("diff", "T-1"), "+++ b/file.txt", "+++ b/new.txt")
}

// 8. The server dies (SIGKILL) while the agent works: after a restart the
// lost turn counts as an execution_error, the task is retried and
// succeeds, and the queued task behind it is intact and runs.
func TestTaskServerKilledMidTurnCountsExecutionErrorAndRetries(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pids")
	killGroups(t, pidFile)
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "fixer", "fix_when.sh", nil)+execAgent(t, "sleeper", "sleeper.sh", nil, "PID_FILE="+pidFile)+blackbox.CheckStep)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"description": "Sleep on the first attempt, fix on the next", "agent": "sleeper"})
	in.Submit(map[string]any{"description": "Write the fix into file.txt", "agent": "fixer"})
	waitFor(t, "the sleeper to start", 30*time.Second, func() bool { return len(agentPids(t, pidFile)["T-1"]) == 2 })
	if got := in.Task("T-1"); got.State != "running" || got.Attempt != 1 {
		t.Fatalf("before the kill:\n%s", got)
	}

	if q := in.Task("T-2"); q.State != "queued" || q.Position == nil || *q.Position != 1 {
		t.Fatalf("T-2 before the kill:\n%s", q)
	}
	lost := agentPids(t, pidFile)["T-1"]
	in.Kill()

	in2 := blackbox.ServeRepo(t, dir)
	got := in2.WaitTask("T-1", 30*time.Second, "success")
	if got.Attempt != 2 || len(got.Failures) != 1 || got.Failures[0].FailureType != "execution_error" || got.Failures[0].Attempt != 1 {
		t.Fatalf("after the restart:\n%s", got)
	}
	if !strings.HasPrefix(in2.Prompt("T-1-a2"), `<retry_context attempt="2"`) {
		t.Fatalf("the retry after the restart has no retry context:\n%s", in2.Prompt("T-1-a2"))
	}
	second := in2.WaitTask("T-2", 30*time.Second, "success")
	if second.Attempt != 1 || second.StartedAt == nil || got.FinishedAt == nil || second.StartedAt.Before(*got.FinishedAt) {
		t.Fatalf("T-2:\n%s", second)
	}
	blackbox.MustContain(t, "retry.log", blackbox.ReadFile(t, filepath.Join(dir, ".wilco", "logs", "retry.log")), "[T-1] attempt=1 status=failed type=execution_error")

	// The lost turn's agent must not outlive it: by the time its retry
	// has run and passed, nothing of attempt 1 may still be working in
	// the repository.
	if alive(lost[0]) || alive(lost[1]) {
		t.Fatalf("the agent process group of attempt 1 (pids %d, %d), lost with the killed server, still runs after the restart", lost[0], lost[1])
	}
}

// 9. `wilco run` with no server answering starts one in its own process,
// follows the task, and exits 0 on success, 1 on stuck or escalated.
func TestTaskRunWithoutServerExitsZeroOnSuccessOneOnStuckOrEscalated(t *testing.T) {
	t.Parallel()
	const nobody = "http://127.0.0.1:1" // no server answers there
	cases := []struct {
		name, agent, script, policy string
		code                        int
		say                         string
	}{
		{"success", "fixer", "fix_when.sh", "", 0, "How it was verified"},
		{"stuck", "noop", "noop.sh", "  loop: {hard_stop: 2, replan_after: 2}\n", 1, "stuck"},
		{"escalated", "noop", "noop.sh", "  loop: {escalate_after: 1}\n", 1, "escalat"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			yaml := "listen: 127.0.0.1:0\nagents:\n" + execAgent(t, c.agent, c.script, nil) + blackbox.CheckStep
			if c.policy != "" {
				yaml += "policy:\n" + c.policy
			}
			dir := blackbox.NewRepo(t, yaml)
			timeout := 30 * time.Second
			if c.name == "escalated" {
				timeout = 8 * time.Second // it escalates within a second
			}
			r := blackbox.WilcoCLI(t, dir, nobody, timeout, "run", "Write the fix into file.txt")
			if r.Code != c.code {
				t.Fatalf("wilco run: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.Code, c.code, r.Stdout, r.Stderr)
			}
			blackbox.MustContain(t, "wilco run's output", r.Stdout+r.Stderr, "T-1", c.say)
			if c.name == "success" && blackbox.ReadFile(t, filepath.Join(dir, "file.txt")) != "fixed T-1\n" {
				t.Fatal("the task did not run in the repository")
			}
		})
	}
}

// 10. A plan submitted from a file: dependencies, a warning for the task
// that depends on a skipped one, and the retry summary at the end (plan
// show); wilco stats and GET /v1/stats count first-attempt successes,
// retries, retry successes, escalations, skips and failure patterns.
func TestPlanFromFileRetrySummaryAndStats(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "fixer", "fix_when.sh", nil)+execAgent(t, "retrier", "fix_when.sh", []string{`<retry_context attempt="2"`})+
		execAgent(t, "noop", "noop.sh", nil)+blackbox.CheckStep+"policy:\n  loop: {escalate_after: 2}\n")
	in := blackbox.ServeRepo(t, dir)
	planFile := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(planFile, []byte(`id: "03-01"
tasks:
  - {description: "Write the fix into file.txt", agent: fixer}
  - {description: "Write the fix into file.txt after a wrong guess", agent: retrier, depends_on: [1]}
  - {description: "Make the impossible check pass", agent: noop}
  - {description: "Write the fix into file.txt after the impossible", agent: fixer, depends_on: [3]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	var sub struct {
		ID    string
		Tasks []blackbox.Task
	}
	if err := json.Unmarshal([]byte(in.Cli("plan", "submit", planFile, "--json")), &sub); err != nil || sub.ID != "03-01" || len(sub.Tasks) != 4 {
		t.Fatalf("plan submit: %v %+v", err, sub)
	}
	if !slices.Equal(sub.Tasks[3].DependsOn, []string{"03-01:task-3"}) || !slices.Equal(sub.Tasks[1].DependsOn, []string{"03-01:task-1"}) {
		t.Fatalf("dependencies %v %v", sub.Tasks[1].DependsOn, sub.Tasks[3].DependsOn)
	}
	in.WaitTask("03-01:task-3", 30*time.Second, "escalated")
	in.Cli("respond", "03-01:task-3", "skip")
	last := in.WaitTask("03-01:task-4", 30*time.Second, "success")
	if len(last.Warnings) == 0 || !strings.Contains(strings.Join(last.Warnings, "\n"), "03-01:task-3") {
		t.Fatalf("no warning about the skipped dependency:\n%s", last)
	}

	type summary struct {
		TotalTasks          int `json:"total_tasks"`
		FirstAttemptSuccess int `json:"first_attempt_success"`
		RetriedTasks        int `json:"retried_tasks"`
		RetrySuccess        int `json:"retry_success"`
		Escalations         int `json:"escalations"`
		Skipped             int `json:"skipped"`
		Details             []struct {
			Task     string `json:"task"`
			Attempts int    `json:"attempts"`
			Result   string `json:"result"`
		} `json:"details"`
		FailurePatterns []struct {
			Pattern     string `json:"pattern"`
			Occurrences int    `json:"occurrences"`
		} `json:"failure_patterns"`
		Text string `json:"text"`
	}
	type tally struct{ total, first, retried, retrySuccess, escalations, skipped int }
	want := tally{total: 4, first: 2, retried: 2, retrySuccess: 1, escalations: 1, skipped: 1}
	counts := func(s summary) tally {
		return tally{s.TotalTasks, s.FirstAttemptSuccess, s.RetriedTasks, s.RetrySuccess, s.Escalations, s.Skipped}
	}
	verificationFailed := func(s summary) int {
		for _, p := range s.FailurePatterns {
			if strings.Contains(p.Pattern, "verification_failed") {
				return p.Occurrences
			}
		}
		return 0
	}
	var plan struct {
		ID      string          `json:"id"`
		State   string          `json:"state"`
		Tasks   []blackbox.Task `json:"tasks"`
		Summary *summary        `json:"summary"`
	}
	waitFor(t, "the plan to end", 10*time.Second, func() bool {
		in.Must(200, in.Call("GET", "/v1/plans/03-01", blackbox.AdminToken, nil), &plan)
		return plan.State == "done" && plan.Summary != nil
	})
	if got := counts(*plan.Summary); got != want || verificationFailed(*plan.Summary) != 3 || len(plan.Summary.Details) != 4 {
		t.Fatalf("the plan's retry summary %+v, want %+v and 3 verification_failed", *plan.Summary, want)
	}
	for i, wantRes := range []struct {
		attempts int
		state    string
	}{{1, "success"}, {2, "success"}, {2, "skipped"}, {1, "success"}} {
		d := plan.Summary.Details[i]
		if d.Attempts != wantRes.attempts || !strings.HasPrefix(d.Result, wantRes.state) {
			t.Fatalf("summary row %d %+v, want %+v", i+1, d, wantRes)
		}
	}
	show := in.Cli("plan", "show", "03-01")
	blackbox.MustContain(t, "wilco plan show", show, "03-01", "done", "03-01:task-1", "03-01:task-2", "03-01:task-3", "03-01:task-4", "skipped", "retry summary")
	if strings.Index(show, "retry summary") < strings.Index(show, "03-01:task-4") {
		t.Fatalf("the retry summary is not at the end:\n%s", show)
	}

	var api struct {
		Summary summary `json:"summary"`
	}
	in.Must(200, in.Call("GET", "/v1/stats", blackbox.AdminToken, nil), &api)
	if got := counts(api.Summary); got != want || verificationFailed(api.Summary) != 3 {
		t.Fatalf("GET /v1/stats %+v, want %+v and 3 verification_failed", api.Summary, want)
	}
	// The CLI prints the server's summary as it is.
	var cli struct {
		Summary summary `json:"summary"`
	}
	if err := json.Unmarshal([]byte(in.Cli("stats", "--json")), &cli); err != nil {
		t.Fatal(err)
	}
	if got := counts(cli.Summary); got != want || verificationFailed(cli.Summary) != 3 {
		t.Fatalf("wilco stats --json %+v, want %+v", cli.Summary, want)
	}
	blackbox.MustContain(t, "wilco stats", in.Cli("stats"), "First-attempt success", "Retry success", "Escalations", "Skipped")
}
