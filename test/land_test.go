package test

// Black-box tests of landing (land.how: commit): a verified task's own
// changes are committed in the checkout with their trailers, the user's
// other edits are left as they were, a git hook's refusal goes back to
// the agent, and a commit is made once across a SIGKILL.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"wilco/test/blackbox"

	"wilco/perform"
)

// landCommit is the land section that commits verified changes.
const landCommit = "land: {how: commit}\n"

// commitsOf lists the commits of HEAD's history, newest first.
func commitsOf(t *testing.T, dir string) []string {
	t.Helper()
	return strings.Fields(blackbox.GitRun(t, dir, "log", "--format=%H"))
}

// verifyTreeOf runs check.sh — the verify step — on a commit's tree
// alone, in a folder of its own, as task id, and fails the test when it
// does not pass.
func verifyTreeOf(t *testing.T, dir, commit, id string) {
	t.Helper()
	tree := t.TempDir()
	archive := exec.Command("git", "archive", commit)
	archive.Dir = dir
	tar := exec.Command("tar", "-x", "-C", tree)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	tar.Stdin = pipe
	if err := tar.Start(); err != nil {
		t.Fatal(err)
	}
	if err := archive.Run(); err != nil {
		t.Fatalf("git archive %s: %v", commit, err)
	}
	if err := tar.Wait(); err != nil {
		t.Fatal(err)
	}
	check := exec.Command("sh", "check.sh")
	check.Dir = tree
	check.Env = append(os.Environ(), "WILCO_TASK_ID="+id)
	if out, err := check.CombinedOutput(); err != nil {
		t.Fatalf("the verify step fails on the tree of %s (%s): %v\n%s", commit, id, err, out)
	}
}

func TestEachVerifiedTaskLandsAsOneCommitWithItsTrailersAndTheUsersOwnEditsStayUncommitted(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "fixer", "fix_when.sh", nil)+blackbox.CheckStep+landCommit)
	blackbox.GitRun(t, dir, "config", "user.name", "Repo User")
	blackbox.GitRun(t, dir, "config", "user.email", "repo@example.com")
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# project\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	blackbox.GitRun(t, dir, "add", "README.md")
	blackbox.GitRun(t, dir, "commit", "-qm", "a readme")
	branch := strings.TrimSpace(blackbox.GitRun(t, dir, "symbolic-ref", "--short", "HEAD"))
	before := commitsOf(t, dir)
	// The user's own work in progress: an unstaged edit, a staged new
	// file, an untracked file.
	for name, content := range map[string]string{"README.md": "# project\n\nmy notes, not done\n", "staged.txt": "staged by me\n", "scratch.txt": "scratch\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	blackbox.GitRun(t, dir, "add", "staged.txt")
	const userStatus = " M README.md\nA  staged.txt\n?? scratch.txt\n"

	in := blackbox.ServeRepo(t, dir)
	ids := []string{"L-1", "L-2", "L-3"}
	for _, id := range ids {
		if got := in.Submit(map[string]any{"id": id, "description": "Write the fix for " + id + " into file.txt\n\nThe check wants it."}); got.Land != "commit" {
			t.Fatalf("%s lands %q, want commit (land.how of wilco.yaml)", id, got.Land)
		}
	}
	tasks := map[string]blackbox.Task{}
	for _, id := range ids {
		tasks[id] = in.WaitTask(id, time.Minute, "success")
	}
	after := commitsOf(t, dir)
	if len(after) != len(before)+3 || after[3] != before[0] {
		t.Fatalf("%d commits after three tasks, %d before: want three more on top", len(after), len(before))
	}
	for i, id := range ids {
		commit := after[2-i] // oldest of the three first
		tk := tasks[id]
		short := commit[:7]
		if tk.LandedCommit != commit || tk.Summary == nil || !strings.Contains(tk.Summary.Text, "Landed as "+short+" on "+branch+".") {
			t.Fatalf("%s: landed_commit %q, want %s; summary:\n%v", id, tk.LandedCommit, commit, tk.Summary)
		}
		for key, want := range map[string]string{"Wilco-Task": id, "Wilco-Run": id + "-a1", "Wilco-Agent": "fixer"} {
			if got := blackbox.Trailer(t, dir, commit, key); got != want {
				t.Fatalf("%s: trailer %s is %q, want %q:\n%s", id, key, got, want, blackbox.GitRun(t, dir, "log", "-1", commit))
			}
		}
		if got := blackbox.GitRun(t, dir, "log", "-1", "--format=%s|%an <%ae>", commit); got != "Write the fix for "+id+" into file.txt|Repo User <repo@example.com>\n" {
			t.Fatalf("%s: subject and author %q", id, got)
		}
		if got := blackbox.GitRun(t, dir, "show", "--name-only", "--format=", commit); got != "file.txt\n" {
			t.Fatalf("%s: the commit holds %q, want file.txt alone", id, got)
		}
		verifyTreeOf(t, dir, commit, id)
	}
	if got := blackbox.GitRun(t, dir, "status", "--porcelain"); got != userStatus {
		t.Fatalf("the user's own edits after three commits:\n%s\nwant\n%s", got, userStatus)
	}
	if got := blackbox.ReadFile(t, filepath.Join(dir, "README.md")); got != "# project\n\nmy notes, not done\n" {
		t.Fatalf("README.md is %q", got)
	}
	blackbox.MustContain(t, "wilco status L-2", in.Cli("status", "L-2"), "landed commit:", after[1], "Landed as "+after[1][:7]+" on "+branch)
	blackbox.MustContain(t, "wilco stats", in.Cli("stats"), "| Landed as commits | 3 |")
	in.WatchFold("land")
}

func TestATaskSubmittedWithLandNoneLeavesItsChangeUncommittedWhereTheConfigurationCommits(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "fixer", "fix_when.sh", nil)+blackbox.CheckStep+landCommit)
	home := t.TempDir() // git's configuration names no user
	in := blackbox.ServeRepo(t, dir, "HOME="+home, "XDG_CONFIG_HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+filepath.Join(home, "none"), "EMAIL=")
	before := commitsOf(t, dir)

	r := blackbox.WilcoCLI(t, dir, in.Url, time.Minute, "submit", "--land", "none", "--id", "N-1", "Write the fix into file.txt")
	if r.Code != 0 {
		t.Fatalf("wilco submit --land none: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	got := in.WaitTask("N-1", time.Minute, "success")
	if got.Land != "none" || got.LandedCommit != "" || strings.Contains(got.Summary.Text, "Landed") {
		t.Fatalf("land %q, landed_commit %q:\n%s", got.Land, got.LandedCommit, got.Summary.Text)
	}
	if after := commitsOf(t, dir); len(after) != len(before) {
		t.Fatalf("%d commits, want %d: a task that lands as nothing committed", len(after), len(before))
	}
	if st := blackbox.GitRun(t, dir, "status", "--porcelain"); st != " M file.txt\n" {
		t.Fatalf("git status:\n%s", st)
	}

	// The ways that need tasks worked in parallel are refused with one
	// at a time, through the CLI and the API, with the reason.
	r = blackbox.WilcoCLI(t, dir, in.Url, time.Minute, "submit", "--land", "merge", "Write the fix into file.txt")
	if r.Code == 0 || !strings.Contains(r.Stderr, "merge needs each task in a worktree of its own (parallel > 1): use commit or none, or set parallel") {
		t.Fatalf("wilco submit --land merge: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	rep := in.Call("POST", "/v1/tasks", blackbox.AdminToken, map[string]any{"description": "x", "land": "squash"})
	if rep.Status != 400 || !strings.Contains(string(rep.Body), "squash needs each task in a worktree of its own") {
		t.Fatalf("land squash: %d %s", rep.Status, rep.Body)
	}
	rep = in.Call("POST", "/v1/plans", blackbox.AdminToken, map[string]any{"id": "p1", "tasks": []map[string]any{{"description": "a"}, {"description": "b", "land": "pr"}}})
	if rep.Status != 400 || !strings.Contains(string(rep.Body), "tasks[1]: land: pr needs") {
		t.Fatalf("a plan's task landing by pr: %d %s", rep.Status, rep.Body)
	}

	// A commit with no user in git's configuration is wilco's, for that
	// commit only; the change N-1 left is not part of it (it was there
	// before N-2 began), and stays.
	blackbox.GitRun(t, dir, "commit", "-qam", "the user commits N-1's change", "--author", "Someone <someone@example.com>")
	in.Submit(map[string]any{"id": "N-2", "description": "Write the fix into file.txt again"})
	got = in.WaitTask("N-2", time.Minute, "success")
	if got.LandedCommit == "" {
		t.Fatalf("N-2 did not land:\n%s", got)
	}
	if who := blackbox.GitRun(t, dir, "log", "-1", "--format=%an <%ae>|%cn <%ce>", got.LandedCommit); who != "wilco <wilco@localhost>|wilco <wilco@localhost>\n" {
		t.Fatalf("author and committer of a commit with no user configured: %q", who)
	}
	if _, err := exec.Command("git", "-C", dir, "config", "--local", "--get", "user.name").Output(); err == nil {
		t.Fatal("wilco wrote an identity into the repository's configuration")
	}
}

func TestATaskThatLandsAsACommitIsRefusedWhileTheCheckoutIsOnAnotherBranch(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "fixer", "fix_when.sh", nil)+blackbox.CheckStep+landCommit)
	branch := strings.TrimSpace(blackbox.GitRun(t, dir, "symbolic-ref", "--short", "HEAD"))
	in := blackbox.ServeRepo(t, dir)
	blackbox.GitRun(t, dir, "checkout", "-q", "-b", "feature")
	rep := in.Call("POST", "/v1/tasks", blackbox.AdminToken, map[string]any{"id": "B-1", "description": "Write the fix into file.txt"})
	want := "the checkout is on branch feature, not on " + branch + " (land.to)"
	if rep.Status != 409 || !strings.Contains(string(rep.Body), want) {
		t.Fatalf("a commit task off the target branch: %d %s\nwant 409 saying %q", rep.Status, rep.Body, want)
	}
	r := blackbox.WilcoCLI(t, dir, in.Url, time.Minute, "submit", "Write the fix into file.txt")
	if r.Code == 0 || !strings.Contains(r.Stderr, want) {
		t.Fatalf("wilco submit off the target branch: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if got := strings.TrimSpace(blackbox.GitRun(t, dir, "symbolic-ref", "--short", "HEAD")); got != "feature" {
		t.Fatalf("wilco switched the branch to %s", got)
	}
	// Back on the target branch, it is taken and lands there.
	blackbox.GitRun(t, dir, "checkout", "-q", branch)
	in.Submit(map[string]any{"id": "B-2", "description": "Write the fix into file.txt"})
	if got := in.WaitTask("B-2", time.Minute, "success"); got.LandedCommit == "" || commitsOf(t, dir)[0] != got.LandedCommit {
		t.Fatalf("B-2 on %s: landed %q", branch, got.LandedCommit)
	}
}

func TestAFileTheUserHadChangedBeforeTheTaskBeganIsNotCommittedWithTheTasksChange(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "fixer", "fix_when.sh", nil)+blackbox.CheckStep+landCommit)
	if err := os.WriteFile(filepath.Join(dir, "file.txt"), []byte("my own attempt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := commitsOf(t, dir)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "D-1", "description": "Write the fix into file.txt"})
	got := in.WaitTask("D-1", time.Minute, "success")
	blackbox.MustContain(t, "the summary", got.Summary.Text, "Nothing was committed on", "Left uncommitted: file.txt (they had uncommitted changes before the task began")
	if got.LandedCommit != "" || len(commitsOf(t, dir)) != len(before) {
		t.Fatalf("a file the user had changed was committed: %q", got.LandedCommit)
	}
	if len(got.Warnings) == 0 || !strings.HasPrefix(got.Warnings[len(got.Warnings)-1], "left uncommitted: file.txt") {
		t.Fatalf("warnings %q", got.Warnings)
	}
	if st := blackbox.GitRun(t, dir, "status", "--porcelain"); st != " M file.txt\n" || blackbox.ReadFile(t, filepath.Join(dir, "file.txt")) != "fixed D-1\n" {
		t.Fatalf("git status %q, file.txt %q", st, blackbox.ReadFile(t, filepath.Join(dir, "file.txt")))
	}
}

func TestAPreCommitHookRefusalGoesBackToTheAgentWithItsOutputUntilItPasses(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "fixer", "changelog.sh", nil)+blackbox.CheckStep+landCommit)
	hook := "#!/bin/sh\ngit diff --cached --name-only | grep -qx CHANGELOG || { echo 'pre-commit: CHANGELOG is missing: add a line for your change'; exit 1; }\n"
	if err := os.WriteFile(filepath.Join(dir, ".git", "hooks", "pre-commit"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	before := commitsOf(t, dir)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "H-1", "description": "Write the fix into file.txt"})
	got := in.WaitTask("H-1", time.Minute, "success")
	if got.Attempt != 2 || len(got.Failures) != 1 {
		t.Fatalf("attempt %d, failures %+v: want the hook's refusal, then a second attempt", got.Attempt, got.Failures)
	}
	f := got.Failures[0]
	if f.FailureType != "verification_failed" || f.ExecutorOutput.Verification == nil || f.ExecutorOutput.Verification.Command != "git commit" ||
		!strings.Contains(f.ExecutorOutput.Verification.OutputSummary, "CHANGELOG is missing") {
		t.Fatalf("the refusal's failure record: %+v", f)
	}
	after := commitsOf(t, dir)
	if len(after) != len(before)+1 || got.LandedCommit != after[0] {
		t.Fatalf("%d commits (want one more), landed %q", len(after)-len(before), got.LandedCommit)
	}
	if files := blackbox.GitRun(t, dir, "show", "--name-only", "--format=", after[0]); files != "CHANGELOG\nfile.txt\n" {
		t.Fatalf("the commit holds %q", files)
	}
	if run := blackbox.Trailer(t, dir, after[0], "Wilco-Run"); run != "H-1-a2" {
		t.Fatalf("Wilco-Run %q", run)
	}
	if st := blackbox.GitRun(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("git status after the commit:\n%s", st)
	}
}

// Killed after the verdict is recorded, before the commit (or after the
// commit, before its record), wilco commits once after its restart: one
// commit with the run's trailer, the task's landed_commit; a third start
// does nothing more.
func TestWilcoKilledBetweenAVerdictAndItsCommitCommitsOnceAfterARestart(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		kill         string
		committedYet bool
	}{{"LandTask", false}, {"report:Landed", true}} {
		t.Run(strings.ReplaceAll(c.kill, ":", "_"), func(t *testing.T) {
			t.Parallel()
			dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "fixer", "fix_when.sh", nil)+blackbox.CheckStep+landCommit)
			before := commitsOf(t, dir)
			in := blackbox.ServeRepo(t, dir, perform.EnvKillBefore+"="+c.kill)
			in.Submit(map[string]any{"id": "K-1", "description": "Write the fix into file.txt"})
			in.WaitKilled(2 * time.Minute)
			if n := len(commitsOf(t, dir)) - len(before); n != map[bool]int{false: 0, true: 1}[c.committedYet] {
				t.Fatalf("%d commits made before the kill", n)
			}

			again := blackbox.ServeRepo(t, dir)
			got := again.WaitTask("K-1", 2*time.Minute, "success")
			after := commitsOf(t, dir)
			if len(after) != len(before)+1 || got.LandedCommit != after[0] || got.Attempt != 1 {
				t.Fatalf("after the restart: %d commits more, landed %q, attempt %d:\n%s", len(after)-len(before), got.LandedCommit, got.Attempt, blackbox.Tail(again.Stderr.String(), 30))
			}
			if n := strings.Count(blackbox.GitRun(t, dir, "log", "--format=%H", "--grep=^Wilco-Run: K-1-a1$"), "\n"); n != 1 {
				t.Fatalf("%d commits of run K-1-a1", n)
			}
			again.Stop()

			third := blackbox.ServeRepo(t, dir)
			// Whatever this start asks for is performed and recorded before
			// what it did is checked.
			third.WaitEffectsPerformed(time.Minute)
			if n := len(third.EventsOf("task.landed")); n != 1 {
				t.Fatalf("the commit recorded %d times", n)
			}
			if n := len(commitsOf(t, dir)); n != len(after) {
				t.Fatalf("a third start made %d more commits", n-len(after))
			}
		})
	}
}

func TestALandingThisVersionDoesNotRunIsRefusedByConfigCheckAndAtStartWithItsLine(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ land, want string }{
		{"land:\n  to: main\n  how: merge\n", "wilco.yaml:5: land.how: merge needs each task in a worktree of its own (parallel > 1): use commit or none, or set parallel"},
		{"land:\n  how: fastforward\n", `wilco.yaml:4: land.how: must be one of merge, rebase, squash, commit, none, pr, got "fastforward"`},
		{"land: {order: random}\n", `wilco.yaml:3: land.order: must be one of verified, submission, got "random"`},
	} {
		dir := t.TempDir()
		yaml := "agents:\n  - {name: a, adapter: mailbox}\n" + c.land
		if err := os.WriteFile(filepath.Join(dir, "wilco.yaml"), []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		r := inRepo(t, dir, "config", "check")
		if r.Code != 1 || !strings.Contains(r.Stderr, c.want) {
			t.Fatalf("wilco config check of\n%s: exit %d\n%s%s\nwant %s", yaml, r.Code, r.Stdout, r.Stderr, c.want)
		}
		_, out, done := serveArgs(t, dir, nil, "--addr", "127.0.0.1:0")
		select {
		case err := <-done:
			done <- err
			if err == nil || !strings.Contains(out.String(), c.want) {
				t.Fatalf("wilco serve with\n%s: %v\n%s", yaml, err, out)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("wilco serve started with\n%s", yaml)
		}
	}
}

func TestThePageShowsTheCommitAVerifiedTaskLandedAs(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "fixer", "fix_when.sh", nil)+blackbox.CheckStep+landCommit)
	branch := strings.TrimSpace(blackbox.GitRun(t, dir, "symbolic-ref", "--short", "HEAD"))
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "W-1", "description": "Write the fix into file.txt"})
	got := in.WaitTask("W-1", time.Minute, "success")
	short := got.LandedCommit[:7]

	b := openBrowser(t)
	b.navigate(in.LoginLink())
	b.waitFor("the task list", `document.querySelector('#task-rows') !== null`, 30*time.Second)
	b.goTo("#/tasks/W-1")
	b.waitFor("W-1's summary", `document.getElementById('summary') !== null`, 10*time.Second)
	blackbox.MustContain(t, "W-1's summary", b.str(`document.getElementById('summary').textContent`), "Landed as "+short+" on "+branch+".")
	if shown := b.str(`(document.querySelector('#overview dd[data-key="landed"]') || {}).textContent || ''`); shown != short {
		t.Fatalf("the overview's Landed shows %q, want %s", shown, short)
	}
	byType := timelineLines(t, b, "task.landed")
	blackbox.MustContain(t, "the timeline", byType["task.landing"], "Committing the verified change on "+branch+".")
	blackbox.MustContain(t, "the timeline", byType["task.landed"], "Landed as "+short+" on "+branch+".")
	blackbox.MustContain(t, "the timeline", byType["task.state"], "the verified change is being committed")
}

func TestATaskWhoseCheckoutLeftTheTargetBranchIsEscalatedThenCommittedThereOnRetry(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "fixer", "switch_branch.sh", nil)+blackbox.CheckStep+landCommit)
	branch := strings.TrimSpace(blackbox.GitRun(t, dir, "symbolic-ref", "--short", "HEAD"))
	before := commitsOf(t, dir)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "S-1", "description": "Write the fix into file.txt"})
	got := in.WaitTask("S-1", time.Minute, "escalated")
	want := "the checkout is on branch side, not on " + branch + " (land.to); wilco does not switch branches"
	if got.Escalation == nil || !strings.Contains(got.Escalation.Reason, want) || !strings.Contains(got.Escalation.Reason, "Nothing was committed") {
		t.Fatalf("the escalation: %+v", got.Escalation)
	}
	if n := len(strings.Fields(blackbox.GitRun(t, dir, "log", "--format=%H", "--all"))); n != len(before) {
		t.Fatalf("%d commits in all, want %d", n, len(before))
	}
	blackbox.GitRun(t, dir, "checkout", "-q", branch)
	blackbox.MustContain(t, "wilco respond S-1 retry", in.Cli("respond", "S-1", "retry"), "S-1")
	got = in.WaitTask("S-1", time.Minute, "success")
	after := commitsOf(t, dir)
	if got.Attempt != 1 || len(after) != len(before)+1 || got.LandedCommit != after[0] {
		t.Fatalf("after the retry: attempt %d, %d commits more, landed %q", got.Attempt, len(after)-len(before), got.LandedCommit)
	}
	if run := blackbox.Trailer(t, dir, after[0], "Wilco-Run"); run != "S-1-a1" {
		t.Fatalf("Wilco-Run %q", run)
	}
}
