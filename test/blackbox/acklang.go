package blackbox

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// delegation polls the agent's inbox until the delegation of task id
// arrives, and returns it.
func (in *Instance) Delegation(tok, id string) InboxMessage {
	in.T.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, m := range in.Inbox(tok, 2*time.Second) {
			if m.TaskID == id {
				return m
			}
		}
	}
	in.T.Fatalf("no message of task %s reached the agent in 30s:\n%s", id, in.Problems())
	return InboxMessage{}
}

// acceptTask takes task id's delegation from the inbox, acknowledges it
// and waits until the task runs.
func (in *Instance) AcceptTask(tok, id string) InboxMessage {
	in.T.Helper()
	m := in.Delegation(tok, id)
	got := in.ReplyAs(tok, map[string]any{"in_reply_to": m.ID, "text": "[ACK] " + id + " - RECEIVED\nUnderstanding: Will write the fix into file.txt"})
	if got["action"] != "acknowledged: work may begin" {
		in.T.Fatalf("the ACK of %s was taken as %v", id, got)
	}
	in.WaitTask(id, 30*time.Second, "running")
	return m
}

// fix writes what check.sh wants for task id into the repository.
func (in *Instance) Fix(id string) {
	in.T.Helper()
	if err := os.WriteFile(filepath.Join(in.Dir, "file.txt"), []byte("fixed "+id+"\n"), 0o644); err != nil {
		in.T.Fatal(err)
	}
}

// taskRaw is GET /v1/tasks/{id} as a map, for the fields the task type of
// the other tests does not decode.
func (in *Instance) TaskRaw(id string) map[string]any {
	in.T.Helper()
	var m map[string]any
	in.Must(200, in.Call("GET", "/v1/tasks/"+id, AdminToken, nil), &m)
	return m
}

// blockedReason checks that task id is blocked with a reason that says
// want, in the task and in the task.state event that blocked it.
func (in *Instance) BlockedReason(id, want string) {
	in.T.Helper()
	in.WaitTask(id, 30*time.Second, "blocked")
	if got, _ := in.TaskRaw(id)["blocked_by"].(string); !strings.Contains(got, want) {
		in.T.Fatalf("task %s is blocked by %q, want %q", id, got, want)
	}
	var reason string
	for _, ev := range in.TaskEvents(id, "task.state") {
		if d := EventData(in.T, ev); d["to"] == "blocked" {
			reason, _ = d["reason"].(string)
		}
	}
	if !strings.Contains(reason, want) {
		in.T.Fatalf("the task.state event that blocked %s gives the reason %q, want %q", id, reason, want)
	}
}

// verifyRuns counts the verification runs of a task.
func (in *Instance) VerifyRuns(id string) int {
	in.T.Helper()
	n := 0
	// The milestone is a task.milestone's text or a task.state's.
	for _, ev := range in.TaskEvents(id, "task.milestone", "task.state") {
		d := EventData(in.T, ev)
		text, _ := d["text"].(string)
		milestone, _ := d["milestone"].(string)
		if strings.HasPrefix(text+milestone, "Running verification") {
			n++
		}
	}
	return n
}

// agentCLI runs the CLI in the repository as the agent whose token is tok.
func (in *Instance) AgentCLI(tok string, args ...string) CliResult {
	in.T.Helper()
	cmd := exec.Command(WilcoBin, args...)
	cmd.Dir = in.Dir
	cmd.Env = append(os.Environ(), "WILCO_ADDR="+in.Url, "WILCO_AGENT_TOKEN="+tok, "WILCO_TOKEN=")
	var out, errb LockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := CliResult{Stdout: out.String(), Stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.Code = ee.ExitCode()
	default:
		in.T.Fatalf("wilco %s: %v", strings.Join(args, " "), err)
	}
	return r
}
