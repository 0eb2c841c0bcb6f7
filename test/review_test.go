package test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wilco/test/blackbox"
)

// An editor consults a scout from inside its task (wilco ask): the
// question goes to the scout as a tracked message, the milestone says
// so, the answer reaches the editor, and both stay in the task's detail.
func TestAScoutIsConsultedAndItsAnswerReachesTheEditor(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+
		execAgent(t, "editor", "ask_scout.sh", []string{blackbox.WilcoBin, "scout-a"})+
		"  - {name: scout-a, adapter: exec, role: scout, command: [sh, "+blackbox.Quoted(blackbox.ScriptPath(t, "scout.sh"))+"], timeout: 1m}\n"+blackbox.CheckStep)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "S-1", "description": "Write the fix into file.txt"})
	got := in.WaitTask("S-1", 60*time.Second, "success", "escalated", "stuck")
	if got.State != "success" || got.Attempt != 1 {
		t.Fatalf("the task ended %s at attempt %d:\n%s\nserver:\n%s", got.State, got.Attempt, got, blackbox.Tail(in.Stderr.String(), 30))
	}
	cs := in.Consultations("S-1")
	if len(cs) != 1 || cs[0]["scout"] != "scout-a" || cs[0]["from"] != "editor" || cs[0]["state"] != "answered" ||
		cs[0]["question"] != "What should file.txt hold?" || cs[0]["answer"] != "fixed S-1" {
		t.Fatalf("the consultation: %v", cs)
	}
	blackbox.MustContain(t, "the milestones", blackbox.Milestones(t, in, "S-1"), "Querying Scout scout-a...")
	// The scout is a helper, never an editor.
	if got.Agent != "editor" {
		t.Fatalf("the task went to %s", got.Agent)
	}
}

// wilco status ID --detail shows the questions the task's agent asked a
// scout: who asked whom, when, the question and the answer.
func TestStatusDetailShowsTheScoutsQuestionsAndAnswers(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+
		execAgent(t, "editor", "ask_scout.sh", []string{blackbox.WilcoBin, "scout-a"})+
		"  - {name: scout-a, adapter: exec, role: scout, command: [sh, "+blackbox.Quoted(blackbox.ScriptPath(t, "scout.sh"))+"], timeout: 1m}\n"+blackbox.CheckStep)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "S-3", "description": "Write the fix into file.txt"})
	if got := in.WaitTask("S-3", 60*time.Second, "success", "escalated", "stuck"); got.State != "success" {
		t.Fatalf("the task ended %s:\n%s", got.State, got)
	}
	cs := in.Consultations("S-3")
	if len(cs) != 1 {
		t.Fatalf("the consultations: %v", cs)
	}
	out := in.Cli("status", "S-3", "--detail")
	blackbox.MustContain(t, "wilco status S-3 --detail", out,
		"scout    editor asked scout-a (attempt 1, "+cs[0]["id"].(string)+"): answered",
		"    asked:            ",
		"    question:         What should file.txt hold?\n",
		"    answered:         ",
		"    answer:           fixed S-3\n")
	blackbox.MustContain(t, "wilco status S-3", in.Cli("status", "S-3"), "scouts:               1 question(s) asked (--detail shows them)")
}

// A scout works in a copy of the working tree and must not change it: a
// scout that writes a file has its answer refused, the editor is told,
// and the repository is untouched by it.
func TestAScoutThatWritesAFileHasItsAnswerRefused(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+
		execAgent(t, "editor", "ask_scout.sh", []string{blackbox.WilcoBin, "scout-w"})+
		"  - {name: scout-w, adapter: exec, role: scout, command: [sh, "+blackbox.Quoted(blackbox.ScriptPath(t, "scout.sh"))+", write], timeout: 1m}\n"+blackbox.CheckStep+
		"policy:\n  loop: {hard_stop: 1}\n")
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "S-2", "description": "Write the fix into file.txt"})
	in.WaitTask("S-2", 60*time.Second, "stuck", "success", "escalated")
	cs := in.Consultations("S-2")
	if len(cs) != 1 || cs[0]["state"] != "failed" || !strings.Contains(cs[0]["error"].(string), "a scout is read-only") ||
		!strings.Contains(cs[0]["error"].(string), "file.txt") {
		t.Fatalf("the consultation: %v", cs)
	}
	if b := blackbox.ReadFile(t, filepath.Join(dir, "file.txt")); b != "no answer\n" {
		t.Fatalf("file.txt holds %q: the scout's write or its answer reached the repository", b)
	}
	blackbox.MustContain(t, "wilco status S-2 --detail", in.Cli("status", "S-2", "--detail"),
		"scout    editor asked scout-w (attempt 1, "+cs[0]["id"].(string)+"): failed", "    error:            ", "a scout is read-only")
}

// A reviewer rejects the first verified change with reasons (a failure of
// type architect_rejected, whose reasons reach the next attempt's prompt)
// and approves the second: the task succeeds at attempt 2.
func TestAReviewerRejectsOnceThenApproves(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "reviewed-once")
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "editor", "fix_when.sh", nil)+
		execAgent(t, "reviewer", "reviewer.sh", []string{state})+blackbox.CheckStep+
		"review: {agent: reviewer, timeout: 1m}\n")
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "R-1", "description": "Write the fix into file.txt", "acceptance_criteria": []string{"file.txt holds the fix"}})
	got := in.WaitTask("R-1", 60*time.Second, "success", "escalated", "stuck")
	if got.State != "success" || got.Attempt != 2 || len(got.Failures) != 1 || got.Failures[0].FailureType != "architect_rejected" {
		t.Fatalf("the task ended %s at attempt %d:\n%s\nserver:\n%s", got.State, got.Attempt, got, blackbox.Tail(in.Stderr.String(), 30))
	}
	if got.Agent != "editor" {
		t.Fatalf("the task went to %s", got.Agent)
	}
	var tr struct {
		Entries []struct{ Kind, Text string }
	}
	in.Must(200, in.Call("GET", "/v1/tasks/R-1/transcript?attempt=2", blackbox.AdminToken, nil), &tr)
	prompt := ""
	for _, e := range tr.Entries {
		if e.Kind == "prompt" {
			prompt += e.Text
		}
	}
	if !strings.Contains(prompt, "architect_rejected") || !strings.Contains(prompt, "REVIEWER-REASON-42") {
		t.Fatalf("the second attempt's prompt does not carry the reviewer's reasons:\n%s", prompt)
	}
	raw := in.TaskRaw("R-1")
	if rv, _ := raw["review"].(map[string]any); rv == nil || rv["verdict"] != "APPROVED" || rv["reviewer"] != "reviewer" {
		t.Fatalf("the task's review: %v", raw["review"])
	}
	blackbox.MustContain(t, "the milestones", blackbox.Milestones(t, in, "R-1"), "Waiting for the reviewer...", "The reviewer rejected the work, retrying...")
}

// The definition of done: a change to Go code without a test is flagged —
// with done.tests: block it is a failure naming the file, and the retry
// that adds the test succeeds.
func TestTheDefinitionOfDoneFlagsAChangeWithoutTests(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "editor", "dod.sh", nil)+blackbox.CheckStep+"done: {tests: block}\n")
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "D-1", "description": "Change calc.go and write the fix into file.txt"})
	got := in.WaitTask("D-1", 60*time.Second, "success", "escalated", "stuck")
	if got.State != "success" || got.Attempt != 2 || len(got.Failures) != 1 || got.Failures[0].FailureType != "architect_rejected" ||
		!strings.Contains(got.Failures[0].ExecutorOutput.Error, "calc/calc.go (Go: no _test.go changed in calc)") {
		t.Fatalf("the task ended %s at attempt %d:\n%s", got.State, got.Attempt, got)
	}
	// As a warning (the default), the summary says so and the task succeeds.
	dir = blackbox.NewRepo(t, "agents:\n"+execAgent(t, "editor", "dod.sh", nil)+blackbox.CheckStep)
	in = blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "D-2", "description": "Change calc.go and write the fix into file.txt"})
	got = in.WaitTask("D-2", 60*time.Second, "success", "escalated", "stuck")
	raw := in.TaskRaw("D-2")
	sum, _ := raw["summary"].(map[string]any)
	if got.State != "success" || got.Attempt != 1 || sum == nil || !strings.Contains(sum["text"].(string), "Warning: new or changed behaviour without tests: calc/calc.go") {
		t.Fatalf("as a warning: %s at attempt %d, summary %v", got.State, got.Attempt, sum)
	}
}

// A monorepo task is scoped to its package: its verify steps run there, a
// change to another package fails verification saying so, and the retry
// inside the package succeeds. A task that names two packages is refused.
func TestAMonorepoTaskFailsOnAChangeInTheWrongPackage(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "editor", "pkg.sh", nil)+
		"verify:\n  steps:\n    - {name: check, run: \"sh ../../check.sh\", timeout: 10s}\n    - {name: named, run: \"test -f {package}/file.txt\", timeout: 10s}\n"+
		"package: svc/a\n")
	if err := os.MkdirAll(filepath.Join(dir, "svc", "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "svc", "a", "file.txt"), []byte("broken\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "P-1", "description": "Write the fix into file.txt of the package"})
	got := in.WaitTask("P-1", 60*time.Second, "success", "escalated", "stuck")
	if got.State != "success" || got.Attempt != 2 || len(got.Failures) != 1 ||
		!strings.Contains(got.Failures[0].ExecutorOutput.Error, "files changed outside the task's package svc/a: svc/b/file.txt") {
		t.Fatalf("the task ended %s at attempt %d:\n%s\nserver:\n%s", got.State, got.Attempt, got, blackbox.Tail(in.Stderr.String(), 20))
	}
	if raw := in.TaskRaw("P-1"); raw["package"] != "svc/a" {
		t.Fatalf("the task's package: %v", raw["package"])
	}
	r := blackbox.WilcoCLI(t, dir, in.Url, 30*time.Second, "submit", "Two packages at once", "--package", "svc/a", "--package", "svc/b")
	if r.Code != 2 || !strings.Contains(r.Stderr, "split into tasks, one per package") {
		t.Fatalf("a task in two packages: exit %d\n%s", r.Code, r.Stderr)
	}
	resp := in.Call("POST", "/v1/tasks", blackbox.AdminToken, map[string]any{"description": "x", "package": "svc/a,svc/b"})
	if resp.Status != 400 || !strings.Contains(string(resp.Body), "split into tasks") {
		t.Fatalf("over the API: %d %s", resp.Status, resp.Body)
	}
}

// A plan's tasks are scoped to packages as tasks submitted alone are: the
// package a task names, else wilco.yaml's — over the API and from a plan
// file (wilco plan submit).
func TestAPlanTaskKeepsItsPackage(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n  - {name: m, adapter: mailbox}\npackage: svc/a\n")
	in := blackbox.ServeRepo(t, dir)
	in.Must(201, in.Call("POST", "/v1/plans", blackbox.AdminToken, map[string]any{"id": "01-01", "tasks": []any{
		map[string]any{"description": "Change package b", "package": "svc/b"},
		map[string]any{"description": "Change the default package"},
	}}))
	plan := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(plan, []byte("id: 01-02\ntasks:\n  - {description: Change package b, package: svc/b}\n  - {description: Change the default package}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in.Cli("plan", "submit", plan)
	for _, p := range []string{"01-01", "01-02"} {
		if got := in.TaskRaw(p + ":task-1")["package"]; got != "svc/b" {
			t.Errorf("plan %s: the task that names svc/b has package %v", p, got)
		}
		if got := in.TaskRaw(p + ":task-2")["package"]; got != "svc/a" {
			t.Errorf("plan %s: the task that names none has package %v, want wilco.yaml's svc/a", p, got)
		}
	}
	blackbox.MustContain(t, "wilco status", in.Cli("status", "01-02:task-1"), "package:              svc/b")
}

// A plan whose task names two packages is refused as a task submitted
// alone is (400, the same words), over the API and from a plan file, and
// none of its tasks exists.
func TestAPlanTaskInTwoPackagesIsRefused(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n  - {name: m, adapter: mailbox}\n")
	in := blackbox.ServeRepo(t, dir)
	var alone struct{ Error struct{ Message string } }
	in.Must(400, in.Call("POST", "/v1/tasks", blackbox.AdminToken, map[string]any{"description": "Change both", "package": "svc/a,svc/b"}), &alone)
	var inPlan struct{ Error struct{ Message string } }
	in.Must(400, in.Call("POST", "/v1/plans", blackbox.AdminToken, map[string]any{"id": "01-01", "tasks": []any{
		map[string]any{"description": "Change a", "package": "svc/a"},
		map[string]any{"description": "Change both", "package": "svc/a,svc/b"},
	}}), &inPlan)
	if inPlan.Error.Message != "tasks[1]: "+alone.Error.Message || !strings.Contains(alone.Error.Message, "split into tasks, one per package") {
		t.Fatalf("the plan: %s\nalone: %s", inPlan.Error.Message, alone.Error.Message)
	}
	for i, body := range []string{"package: svc/a,svc/b", "package: [svc/a, svc/b]"} {
		plan := filepath.Join(t.TempDir(), "plan.yaml")
		if err := os.WriteFile(plan, []byte("tasks:\n  - description: Change a\n    package: svc/a\n  - description: Change both\n    "+body+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := blackbox.WilcoCLI(t, dir, in.Url, 30*time.Second, "plan", "submit", plan, "--id", fmt.Sprintf("01-0%d", i+2))
		if r.Code != 1 || !strings.Contains(r.Stderr, "tasks[1]: "+alone.Error.Message) {
			t.Fatalf("wilco plan submit with %s: exit %d\n%s", body, r.Code, r.Stderr)
		}
	}
	for _, p := range []string{"01-01", "01-02", "01-03"} {
		in.Must(404, in.Call("GET", "/v1/plans/"+p, blackbox.AdminToken, nil))
		in.Must(404, in.Call("GET", "/v1/tasks/"+p+":task-1", blackbox.AdminToken, nil))
	}
}

// A context probe fills the agent's record (wilco agents show), and a task
// whose verify step needs a tool the agent's side lacks is refused up
// front, saying which.
func TestAProbeFillsTheAgentsContextAndATaskNeedingAMissingToolIsRefused(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "nogo", "probe.sh", nil)+
		"verify:\n  steps:\n    - {name: unit, run: \"go test ./...\", timeout: 1m}\nprobe: true\n")
	in := blackbox.ServeRepo(t, dir)
	in.Until("the probe's answer", 30*time.Second, func() bool {
		var a struct {
			Context *struct{ Tools map[string]string }
		}
		in.Must(200, in.Call("GET", "/v1/agents/nogo", blackbox.AdminToken, nil), &a)
		return a.Context != nil && a.Context.Tools["go"] == "missing"
	})
	show := in.Cli("agents", "show", "nogo")
	blackbox.MustContain(t, "wilco agents show", show, "os: TestOS 1", "cli: probe.sh 1.0", "tool go: missing", "tool git: 2.39")
	resp := in.Call("POST", "/v1/tasks", blackbox.AdminToken, map[string]any{"description": "Write the fix into file.txt"})
	if resp.Status != 409 || !strings.Contains(string(resp.Body), "nogo lacks go") {
		t.Fatalf("a task needing go: %d %s", resp.Status, resp.Body)
	}
}

// A plan whose tasks no agent can verify (its probe says it lacks a tool
// the verify steps run) is refused up front, as a task submitted alone
// is: 409, naming the agent and the tool, over the API and from a plan
// file, and none of its tasks exists.
func TestAPlanIsRefusedForAToolNoAgentHas(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "nogo", "probe.sh", nil)+
		"verify:\n  steps:\n    - {name: unit, run: \"go test ./...\", timeout: 1m}\nprobe: true\n")
	in := blackbox.ServeRepo(t, dir)
	in.Until("the probe's answer", 30*time.Second, func() bool {
		var a struct {
			Context *struct{ Tools map[string]string }
		}
		in.Must(200, in.Call("GET", "/v1/agents/nogo", blackbox.AdminToken, nil), &a)
		return a.Context != nil && a.Context.Tools["go"] == "missing"
	})
	var alone struct{ Error struct{ Message string } }
	in.Must(409, in.Call("POST", "/v1/tasks", blackbox.AdminToken, map[string]any{"description": "Write the fix into file.txt"}), &alone)
	var inPlan struct{ Error struct{ Message string } }
	in.Must(409, in.Call("POST", "/v1/plans", blackbox.AdminToken, map[string]any{"id": "01-01", "tasks": []any{
		map[string]any{"description": "Write the fix into file.txt"},
	}}), &inPlan)
	if inPlan.Error.Message != "tasks[0]: "+alone.Error.Message || !strings.Contains(alone.Error.Message, "nogo lacks go") {
		t.Fatalf("the plan: %s\nalone: %s", inPlan.Error.Message, alone.Error.Message)
	}
	plan := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(plan, []byte(`{"id": "01-02", "tasks": [{"description": "Write the fix into file.txt", "agent": "nogo"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := blackbox.WilcoCLI(t, dir, in.Url, 30*time.Second, "plan", "submit", plan); r.Code != 1 || !strings.Contains(r.Stderr, "agent nogo lacks go, which the verify steps need") {
		t.Fatalf("wilco plan submit: exit %d\n%s", r.Code, r.Stderr)
	}
	for _, p := range []string{"01-01", "01-02"} {
		in.Must(404, in.Call("GET", "/v1/plans/"+p, blackbox.AdminToken, nil))
		in.Must(404, in.Call("GET", "/v1/tasks/"+p+":task-1", blackbox.AdminToken, nil))
	}
}

// A verify step that checks a file with the shell's builtins (test, echo,
// exit) needs no program on the agent's side: an agent that answers its
// context probe truthfully is asked about neither the file nor the
// builtins, is given the task, and the task succeeds.
func TestAProbeAsksOnlyAboutTheProgramsAVerifyStepRuns(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "bot", "probe_honest.sh", nil)+
		"verify:\n  steps:\n    - {name: fixed, run: "+blackbox.Quoted(`test -f fixed.txt || { echo "fixed.txt is missing"; exit 1; }`)+", timeout: 10s}\n"+
		"probe: true\n")
	in := blackbox.ServeRepo(t, dir)
	var a struct {
		Context *struct{ Tools map[string]string }
	}
	in.Until("the probe's answer", 30*time.Second, func() bool {
		in.Must(200, in.Call("GET", "/v1/agents/bot", blackbox.AdminToken, nil), &a)
		return a.Context != nil
	})
	for _, word := range []string{"fixed.txt", "exit", "test", "echo"} {
		if v, asked := a.Context.Tools[word]; asked {
			t.Errorf("the probe asked about %q (answered %q): %v", word, v, a.Context.Tools)
		}
	}
	resp := in.Call("POST", "/v1/tasks", blackbox.AdminToken, map[string]any{"id": "F-1", "description": "Create fixed.txt"})
	if resp.Status != 201 {
		t.Fatalf("the task was refused: %d %s", resp.Status, resp.Body)
	}
	got := in.WaitTask("F-1", 60*time.Second, "success", "escalated", "stuck")
	if got.State != "success" || got.Agent != "bot" {
		t.Fatalf("the task ended %s with %s:\n%s", got.State, got.Agent, got)
	}
}

// A change to a file inside its task's boundaries fails verification
// whatever the steps would say, and they do not run: the agent is told
// which files, undoes them, and the next attempt's steps run and pass. The
// run's result.json holds the verdict beside the facts.
func TestAChangeInsideItsTaskBoundariesFailsWithoutRunningTheSteps(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "editor", "bounds.sh", nil)+
		"verify:\n  steps:\n    - {name: check, run: \"touch .wilco/steps-ran-$WILCO_ATTEMPT && sh check.sh\", timeout: 10s}\n")
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "B-1", "description": "Write the fix into file.txt", "boundaries": []string{"internal/auth"}})
	got := in.WaitTask("B-1", 60*time.Second, "success", "escalated", "stuck")
	if got.State != "success" || got.Attempt != 2 || len(got.Failures) != 1 {
		t.Fatalf("the task ended %s at attempt %d:\n%s\nserver:\n%s", got.State, got.Attempt, got, blackbox.Tail(in.Stderr.String(), 20))
	}
	f := got.Failures[0]
	if f.ExecutorOutput.Error != "files changed outside the task's boundaries: internal/auth/token.go" ||
		f.ExecutorOutput.Verification == nil || f.ExecutorOutput.Verification.Command != "boundary check" || f.FailureType != "verification_failed" {
		t.Fatalf("the failure: %+v", f)
	}
	runs := filepath.Join(dir, ".wilco", "runs")
	if _, err := os.Stat(filepath.Join(dir, ".wilco", "steps-ran-1")); err == nil {
		t.Error("the steps ran for a change inside the task's boundaries")
	}
	if _, err := os.Stat(filepath.Join(dir, ".wilco", "steps-ran-2")); err != nil {
		t.Error("the steps did not run for the change within them")
	}
	if b, err := os.ReadFile(filepath.Join(runs, "B-1-a1", "run.log")); err != nil || !strings.Contains(string(b), "==> boundaries: files changed outside the task's boundaries") {
		t.Errorf("run.log of the first attempt: %s %v", b, err)
	}
	var rf struct {
		Passed  *bool `json:"passed"`
		Failure *struct {
			FailureType string `json:"failure_type"`
		} `json:"failure"`
	}
	if b, err := os.ReadFile(filepath.Join(runs, "B-1-a1", "result.json")); err != nil || json.Unmarshal(b, &rf) != nil ||
		rf.Passed == nil || *rf.Passed || rf.Failure == nil || rf.Failure.FailureType != "verification_failed" {
		t.Errorf("result.json of the first attempt: %s %v", b, err)
	}
}
