package test

// Failures that retrying cannot fix, waits that must not be silent, and
// remote agents across a restart of the server.

import (
	"strings"
	"testing"
	"time"

	"wilco/test/blackbox"
)

// After kill -9 and a restart, a mailbox agent's running attempt stays
// running: the agent is still working, and its late report is accepted.
func TestRemoteAgentsAttemptSurvivesAServerKill(t *testing.T) {
	t.Parallel()
	in, tok := mailboxRepo(t)
	in.Submit(map[string]any{"id": "R-1", "description": "Write the fix into file.txt"})
	m := in.AcceptTask(tok, "R-1")
	in.Kill()

	in2 := blackbox.ServeRepo(t, in.Dir)
	// Give recovery time to run: the task must still be running on
	// attempt 1 once the server answers and has settled.
	in2.Until("recovery to settle", 30*time.Second, func() bool {
		for _, ev := range in2.TaskEvents("R-1", "task.milestone") {
			if text, _ := blackbox.EventData(t, ev)["text"].(string); strings.Contains(text, "restarted") {
				return true
			}
		}
		return in2.Task("R-1").State != "running"
	})
	if got := in2.Task("R-1"); got.State != "running" || got.Attempt != 1 || len(got.Failures) != 0 {
		t.Fatalf("after the restart the remote agent's attempt is no longer running:\n%s", got)
	}
	in2.Fix("R-1")
	got := in2.ReplyAs(tok, map[string]any{"in_reply_to": m.ID, "text": "I wrote the fix into file.txt.\n\nStatus: complete"})
	if got["kind"] != "complete" {
		t.Fatalf("the late report was taken as %v", got)
	}
	if done := in2.WaitTask("R-1", 30*time.Second, "success"); done.Attempt != 1 || len(done.Failures) != 0 {
		t.Fatalf("after the late report:\n%s", done)
	}
}

// An agent whose program is not installed escalates at once, naming the
// program and the PATH searched, and what to do; `wilco status` says so.
func TestMissingAgentProgramEscalatesAtOnce(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n  - {name: ghost, adapter: exec, command: [wilco-test-no-such-agent, -p], prompt: stdin}\n"+blackbox.CheckStep)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "E-1", "description": "Write the fix into file.txt"})
	in.EnvEscalation("E-1", `"wilco-test-no-such-agent"`, "PATH searched: ", "To fix: install")
	blackbox.MustContain(t, "wilco status E-1", in.Cli("status", "E-1"), "escalated", "wilco-test-no-such-agent")
}

// A verify step whose program is not installed escalates at once: no
// attempt of the agent's can install it.
func TestMissingVerifyProgramEscalatesAtOnce(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "fixer", "fix_when.sh", nil)+
		"verify:\n  steps:\n    - {name: lint, run: \"wilco-test-no-such-linter --all\", timeout: 10s}\n")
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "E-2", "description": "Write the fix into file.txt"})
	in.EnvEscalation("E-2", `"wilco-test-no-such-linter"`, "verify step lint", "PATH searched: ", "To fix: install")
}

// An agent that is not logged in (it prints an API-key error and exits 1)
// escalates at once with the error and what to do.
func TestAgentAuthenticationErrorEscalatesAtOnce(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "nokey", "env_apikey.sh", nil)+blackbox.CheckStep)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "E-3", "description": "Write the fix into file.txt"})
	got := in.EnvEscalation("E-3", "Please run /login", "API key")
	if !strings.Contains(got.Escalation.Message, "Invalid API key") {
		t.Fatalf("the escalation message does not show the agent's error:\n%s", got.Escalation.Message)
	}
}

// An exec agent whose process exits without an ACK has failed its
// delivery at once (its stderr in the failure record), not after the
// five-minute ACK timeout; the milestone of that failure is not a
// verification's.
func TestExecAgentExitingWithoutAckFailsAtOnce(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "silent", "env_silent.sh", nil)+blackbox.CheckStep+"policy:\n  loop: {escalate_after: 2}\n")
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "S-1", "description": "Write the fix into file.txt"})
	got := in.WaitTask("S-1", 60*time.Second, "escalated")
	if got.Attempt != 2 || len(got.Failures) != 2 || got.Failures[0].FailureType != "execution_error" {
		t.Fatalf("after two silent turns:\n%s", got)
	}
	fs, _ := in.TaskRaw("S-1")["failures"].([]any)
	first, _ := fs[0].(map[string]any)
	if d, _ := first["details"].(string); !strings.Contains(d, "warming up the model cache") {
		t.Fatalf("the failure record lacks the agent's stderr:\n%v", first)
	}
	for _, ev := range in.TaskEvents("S-1", "task.milestone", "task.state") {
		d := blackbox.EventData(t, ev)
		for _, k := range []string{"text", "milestone"} {
			if s, _ := d[k].(string); strings.Contains(s, "Verification failed") {
				t.Fatalf("no verification ran, yet a milestone says %q", s)
			}
		}
	}
}

// An exec agent that reports it is blocked before it acknowledged is
// blocked, with its reason.
func TestExecAgentBlockedWithoutAckIsBlockedWithItsReason(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "stopped", "env_blocked.sh", nil)+blackbox.CheckStep)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "B-1", "description": "Write the fix into file.txt"})
	in.BlockedReason("B-1", "the staging database is down")
}

// A task delegated to a mailbox agent that never polls its inbox says so
// (milestone, `wilco run`'s progress), and the wait ends as the ACK policy
// says: here, escalated, naming the agent nobody has seen.
func TestTaskWaitingForAnAgentNeverSeenSaysSoAndEnds(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n  - {name: remote, adapter: mailbox, capabilities: [go]}\n"+blackbox.CheckStep+
		"policy:\n  ack: {timeouts: [300ms, 300ms], backoff: {base: 100ms, max: 200ms}}\n")
	in := blackbox.ServeRepo(t, dir)
	r := blackbox.WilcoCLI(t, dir, in.Url, 60*time.Second, "run", "Write the fix into file.txt")
	if r.Code != 1 {
		t.Fatalf("wilco run: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	blackbox.MustContain(t, "wilco run", r.Stdout, "waiting for agent remote: never seen")
	id := strings.Fields(r.Stdout)[0]
	got := in.WaitTask(id, 30*time.Second, "escalated")
	if got.Escalation == nil || !strings.Contains(got.Escalation.Reason, "never seen") {
		t.Fatalf("the escalation does not say the agent was never seen:\n%s", got)
	}
	var milestones []string
	for _, ev := range in.TaskEvents(id, "task.state", "task.milestone") {
		d := blackbox.EventData(t, ev)
		for _, k := range []string{"text", "milestone"} {
			if s, _ := d[k].(string); s != "" {
				milestones = append(milestones, s)
			}
		}
	}
	blackbox.MustContain(t, "the task's milestones", strings.Join(milestones, "\n"), "Waiting for agent remote: never seen")
}

// An agent stopped by a permission prompt nobody will answer escalates at
// once, with the prompt and what to do.
func TestAgentPermissionPromptEscalatesAtOnce(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "asker", "env_approval.sh", nil)+blackbox.CheckStep)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "E-4", "description": "Write the fix into file.txt"})
	in.EnvEscalation("E-4", "requested permissions to use Bash", "To fix: grant the permission")
}

// An agent refused a permission that still exits 0 (as agent CLIs in print
// mode do) escalates at once when the check then fails: its refusal, not
// the work, is why.
func TestAgentRefusedPermissionExitingZeroEscalatesWhenTheCheckFails(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "refused", "env_refused_ok.sh", nil)+blackbox.CheckStep)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "E-5", "description": "Write the fix into file.txt"})
	in.EnvEscalation("E-5", "requested permissions to write to file.txt", "To fix: grant the permission")
}

// An agent whose model API refuses every request as invalid escalates at
// once with the API's own error, not after 12 processes and 3 replans.
func TestModelAPIInvalidRequestEscalatesAtOnceWithItsError(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "claude", "api_400.sh", nil)+blackbox.CheckStep)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "E-6", "description": "Write the fix into file.txt"})
	in.EnvEscalation("E-6", "invalid_request_error", "max_tokens: 999999 > 64000", "To fix:")
}

// An agent that fails the same way every time (a crash at start) escalates
// after three identical failures, naming the error, not after twelve.
func TestTheSameAgentFailureThreeTimesEscalates(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "codex", "crash_same.sh", nil)+blackbox.CheckStep)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "E-7", "description": "Write the fix into file.txt"})
	got := in.WaitTask("E-7", 60*time.Second, "escalated")
	if got.Attempt != 3 || got.Escalation == nil || !strings.Contains(got.Escalation.Reason, "the same way 3 times in a row") {
		t.Fatalf("after three identical failures:\n%s", got)
	}
	blackbox.MustContain(t, "wilco status E-7", in.Cli("status", "E-7"), "out of memory allocating heap arena map")
}

// A CLI that refuses a flag of its command line escalates at once, naming
// the fix: no attempt can do better.
func TestARefusedFlagEscalatesAtOnceNamingTheFix(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "codex", "refused_flag.sh", nil)+blackbox.CheckStep)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "E-8", "description": "Write the fix into file.txt"})
	in.EnvEscalation("E-8", "refuses a flag of its command line: error: unexpected argument '--full-auto' found", "remove or change the extra arguments")
}

// An agent whose model API is rate limited gets the same delegation again
// after a backoff: no attempt is spent, no verify loop counted, and the
// task succeeds at attempt 1.
func TestRateLimitedAgentIsRetriedAfterABackoffWithoutSpendingAnAttempt(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "busy", "rate_limited.sh", nil)+blackbox.CheckStep+
		"policy:\n  ack: {backoff: {base: 1s, max: 2s}}\n")
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "R-1", "description": "Write the fix into file.txt"})
	got := in.WaitTask("R-1", 60*time.Second, "success", "escalated", "stuck")
	if got.State != "success" || got.Attempt != 1 || len(got.Failures) != 0 || got.TotalVerifyLoops != 0 {
		t.Fatalf("after a rate-limited turn:\n%s", got)
	}
	blackbox.MustContain(t, "the milestones", blackbox.Milestones(t, in, "R-1"), "rate limited or overloaded: trying again in 1s")
}

// An agent whose model API becomes rate limited after it acknowledged goes
// on with the work after a backoff, in the same attempt: no attempt is
// spent, no verify loop counted, and the task succeeds at attempt 1.
func TestRateLimitedAfterTheAckTheWorkGoesOnAfterABackoffWithoutSpendingAnAttempt(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "busy", "rate_limited_after_ack.sh", nil)+blackbox.CheckStep+
		"policy:\n  ack: {backoff: {base: 1s, max: 2s}}\n")
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "R-1", "description": "Write the fix into file.txt"})
	got := in.WaitTask("R-1", 60*time.Second, "success", "escalated", "stuck")
	if got.State != "success" || got.Attempt != 1 || len(got.Failures) != 0 || got.TotalVerifyLoops != 0 {
		t.Fatalf("after a turn rate limited after its ACK:\n%s\nserver:\n%s", got, blackbox.Tail(in.Stderr.String(), 20))
	}
	blackbox.MustContain(t, "the milestones", blackbox.Milestones(t, in, "R-1"), "rate limited or overloaded: going on in 1s")
}
