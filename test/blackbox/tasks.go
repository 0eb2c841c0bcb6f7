package blackbox

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// CheckScript is the repositories' verify step (sh check.sh): file.txt must
// say "fixed <task id>" (verify steps get WILCO_TASK_ID), so that one task's
// fix does not pass another's check.
const CheckScript = `want="fixed $WILCO_TASK_ID"
got=$(cat file.txt)
[ "$got" = "$want" ] || { echo "check: file.txt is not fixed: want \"$want\", got \"$got\""; exit 1; }
`

// CheckStep is the verify section that runs check.sh.
const CheckStep = `verify:
  steps:
    - {name: check, run: "sh check.sh", timeout: 10s}
`

// Quoted renders s as a YAML double-quoted scalar (JSON's quoting is a
// subset of YAML's).
func Quoted(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// ScriptPath is the absolute path of a scripted agent.
func ScriptPath(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(Testdata(t, "agents", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// NewRepo makes a git repository with file.txt ("broken"), check.sh,
// .gitignore (.wilco/, as a user would write it) and wilco.yaml, all
// committed, and returns its directory.
func NewRepo(t testing.TB, yaml string) string {
	t.Helper()
	return NewRepoIgnoring(t, yaml, ".wilco/\n")
}

// NewRepoIgnoring is newRepo with the given .gitignore ("": none).
func NewRepoIgnoring(t testing.TB, yaml, gitignore string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{"file.txt": "broken\n", "check.sh": CheckScript, "wilco.yaml": yaml}
	if gitignore != "" {
		files[".gitignore"] = gitignore
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=wilco test", "-c", "user.email=test@wilco.invalid", "commit", "-qm", "a broken file"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return dir
}

// ServeRepo starts `wilco serve` in a repository made by newRepo (again,
// after a stop or a kill: the store is kept), with env (KEY=VALUE) added
// to its environment.
func ServeRepo(t testing.TB, dir string, env ...string) *Instance {
	t.Helper()
	addrFile := filepath.Join(dir, ".wilco", "addr")
	_ = os.Remove(addrFile) // a killed server leaves its address behind
	in := &Instance{T: t, Dir: dir, Stderr: &LockedBuffer{}, Exited: make(chan error, 1)}
	in.Cmd = exec.Command(WilcoBin, "serve", "--addr", "127.0.0.1:0")
	in.Cmd.Dir = dir
	in.Cmd.Env = append(append(os.Environ(), "WILCO_CONFIG="+filepath.Join(dir, "wilco.yaml"), "WILCO_TOKEN="+AdminToken), env...)
	in.Cmd.Stderr = in.Stderr
	in.Cmd.Stdout = in.Stderr
	if err := in.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { in.Exited <- in.Cmd.Wait() }()
	t.Cleanup(in.Stop)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if data, err := os.ReadFile(addrFile); err == nil && strings.HasSuffix(string(data), "\n") {
			in.Url = strings.TrimSpace(string(data))
			// The OpenAPI document every answer is checked against is
			// read now, while the server is surely up: a test may kill it
			// (or have it killed) before its first answer is checked.
			in.Checker()
			return in
		}
		select {
		case err := <-in.Exited:
			in.Exited <- err
			t.Fatalf("wilco serve exited at start: %v\n%s", err, in.Stderr)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("wilco serve did not start in 30s:\n%s", in.Stderr)
		}
	}
}

// kill ends the server with SIGKILL: no shutdown of any kind.
func (in *Instance) Kill() {
	in.T.Helper()
	_ = in.Cmd.Process.Kill()
	select {
	case err := <-in.Exited:
		in.Exited <- err
	case <-time.After(30 * time.Second):
		in.T.Fatal("wilco serve did not die of SIGKILL in 30s")
	}
}

// CliResult is one run of the wilco CLI.
type CliResult struct {
	Code           int
	Stdout, Stderr string
}

// WilcoCLI runs the CLI in dir against the server at addr (WILCO_ADDR),
// with the admin token, for at most timeout.
func WilcoCLI(t testing.TB, dir, addr string, timeout time.Duration, args ...string) CliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, WilcoBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "WILCO_ADDR="+addr, "WILCO_TOKEN="+AdminToken, "WILCO_CONFIG="+filepath.Join(dir, "wilco.yaml"))
	var out, errb LockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := CliResult{Stdout: out.String(), Stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		r.Code = -1
	case err == nil:
	case errors.As(err, &ee):
		r.Code = ee.ExitCode()
	default:
		t.Fatalf("wilco %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// cli runs the CLI against this server and requires exit status 0.
func (in *Instance) Cli(args ...string) string {
	in.T.Helper()
	r := WilcoCLI(in.T, in.Dir, in.Url, 60*time.Second, args...)
	if r.Code != 0 {
		in.T.Fatalf("wilco %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
	}
	return r.Stdout
}

// TaskFailure is a failure record (docs/FAILURES.md).
type TaskFailure struct {
	Attempt        int    `json:"attempt"`
	FailureType    string `json:"failure_type"`
	RunID          string `json:"run_id"`
	ExecutorOutput struct {
		Status        string   `json:"status"`
		FilesModified []string `json:"files_modified"`
		Verification  *struct {
			Command       string `json:"command"`
			ExitCode      int    `json:"exit_code"`
			OutputSummary string `json:"output_summary"`
		} `json:"verification"`
		Error string `json:"error"`
	} `json:"executor_output"`
	RootCauseGuess string `json:"root_cause_guess"`
	SuggestedFix   string `json:"suggested_fix"`
	Details        string `json:"details"`
}

// Task is a Task (docs/API.md) with the extras these tests read.
type Task struct {
	ID                  string        `json:"id"`
	Description         string        `json:"description"`
	Constraints         []string      `json:"constraints"`
	AcceptanceCriteria  []string      `json:"acceptance_criteria"`
	Issue               int           `json:"issue"`
	State               string        `json:"state"`
	Phase               *string       `json:"phase"`
	DryRun              bool          `json:"dry_run"`
	Agent               string        `json:"agent"`
	Position            *int          `json:"position"`
	Attempt             int           `json:"attempt"`
	ConsecutiveFailures int           `json:"consecutive_failures"`
	TotalVerifyLoops    int           `json:"total_verify_loops"`
	Replans             int           `json:"replans"`
	Milestone           string        `json:"milestone"`
	Questions           []string      `json:"questions"`
	Failures            []TaskFailure `json:"failures"`
	Escalation          *struct {
		Reason  string `json:"reason"`
		Message string `json:"message"`
	} `json:"escalation"`
	Summary *struct {
		Files []string `json:"files"`
		Why   string   `json:"why"`
		RunID string   `json:"run_id"`
		Text  string   `json:"text"`
	} `json:"summary"`
	StuckReport *struct {
		Hypotheses []string `json:"hypotheses"`
		RunIDs     []string `json:"run_ids"`
		Path       string   `json:"path"`
		Markdown   string   `json:"markdown"`
	} `json:"stuck_report"`
	StartedAt   *time.Time `json:"started_at"`
	FinishedAt  *time.Time `json:"finished_at"`
	RunIDs      []string   `json:"run_ids"`
	Warnings    []string   `json:"warnings"`
	PlanID      string     `json:"plan_id"`
	DependsOn   []string   `json:"depends_on"`
	ResumedFrom string     `json:"resumed_from"`
	// Land is how its verified change lands; LandedCommit the commit it
	// landed as.
	Land         string `json:"land"`
	LandedCommit string `json:"landed_commit"`
	// Branch and Worktree are those of a task worked in parallel.
	Branch   string `json:"branch"`
	Worktree string `json:"worktree"`
}

func (t Task) String() string {
	b, _ := json.MarshalIndent(t, "", "  ")
	return string(b)
}

// submit posts a task and returns it.
func (in *Instance) Submit(body map[string]any) Task {
	in.T.Helper()
	var t Task
	in.Must(201, in.Call("POST", "/v1/tasks", AdminToken, body), &t)
	return t
}

func (in *Instance) Task(id string) Task {
	in.T.Helper()
	var t Task
	in.Must(200, in.Call("GET", "/v1/tasks/"+id, AdminToken, nil), &t)
	return t
}

// EndStates end a task.
var EndStates = []string{"success", "cancelled", "stuck", "skipped", "aborted", "failed"}

// waitTask polls the task until it is in one of states; a task that ends
// in another terminal state fails the test at once.
func (in *Instance) WaitTask(id string, timeout time.Duration, states ...string) Task {
	in.T.Helper()
	var t Task
	if !Eventually(timeout, 10*time.Millisecond, func() bool {
		t = in.Task(id)
		if !slices.Contains(states, t.State) && slices.Contains(EndStates, t.State) {
			in.T.Fatalf("task %s ended %s, waiting for %v:\n%s\nserver (warnings and errors):\n%s", id, t.State, states, t, in.Problems())
		}
		return slices.Contains(states, t.State)
	}) {
		in.T.Fatalf("task %s is still %s after %s, waiting for %v:\n%s\nserver (warnings and errors):\n%s", id, t.State, timeout, states, t, in.Problems())
	}
	return t
}

// problems are the server's log lines above INFO.
func (in *Instance) Problems() string {
	var out []string
	for _, l := range strings.Split(in.Stderr.String(), "\n") {
		if l != "" && !strings.Contains(l, "level=INFO") && !strings.Contains(l, "level=DEBUG") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// ReadFile returns a file's content ("" if it does not exist).
func ReadFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

func Exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// prompt is the prompt an attempt's agent got.
func (in *Instance) Prompt(runID string) string {
	in.T.Helper()
	p := filepath.Join(in.Dir, ".wilco", "runs", runID, "prompt.md")
	// The prompt is written as the attempt's turn starts, which may come
	// just after the task is seen to exist.
	if !Eventually(30*time.Second, 20*time.Millisecond, func() bool { return Exists(p) }) {
		in.T.Fatalf("no prompt %s", p)
	}
	return ReadFile(in.T, p)
}

// taskEvents are the stored events of one task, of the given types (all
// types when none).
func (in *Instance) TaskEvents(id string, types ...string) []Event {
	in.T.Helper()
	evs, _ := in.Events(0)
	var out []Event
	for _, ev := range evs {
		if ev.TaskID == id && (len(types) == 0 || slices.Contains(types, ev.Type)) {
			out = append(out, ev)
		}
	}
	return out
}

func EventData(t testing.TB, ev Event) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(ev.Data, &m); err != nil {
		t.Fatalf("event %d data %s: %v", ev.Seq, ev.Data, err)
	}
	return m
}

// MustContain fails unless s holds every want.
func MustContain(t *testing.T, what, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Fatalf("%s does not contain %q:\n%s", what, w, s)
		}
	}
}
