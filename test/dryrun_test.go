package test

// Black-box tests of dry runs as a user drives them: apply and discard
// answer every wrong order with a clear error, a dry run's worktree does
// not outlive it, and apply never destroys an edit of the user's.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wilco/test/blackbox"
)

// dryRun submits a dry run of propose.sh and waits for its diff.
func dryRun(t *testing.T, in *blackbox.Instance, id string) string {
	t.Helper()
	in.Submit(map[string]any{"id": id, "description": "Write the fix into file.txt and add new.txt", "dry_run": true})
	in.WaitTask(id, 30*time.Second, "proposed")
	wt := filepath.Join(in.Dir, ".wilco", "worktrees", id)
	if !blackbox.Exists(wt) {
		t.Fatalf("no worktree %s for the proposed dry run", wt)
	}
	return wt
}

// Apply and discard in the wrong order, twice, or of a task that is no
// dry run, are refused at once with 409 (the CLI says why and exits 1),
// never a hang or a 5xx.
func TestDryRunApplyAndDiscardRefuseWrongOrderWithAClearError(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "proposer", "propose.sh", nil)+blackbox.CheckStep)
	in := blackbox.ServeRepo(t, dir)
	dryRun(t, in, "D-1")
	blackbox.MustContain(t, "wilco apply D-1", in.Cli("apply", "D-1"), "D-1")
	in.WaitTask("D-1", 30*time.Second, "success")

	refused := func(verb, id, want string) {
		t.Helper()
		r := in.Call("POST", "/v1/tasks/"+id+"/"+verb, blackbox.AdminToken, nil)
		if r.Status != 409 || r.ErrorCode() != "conflict" || !strings.Contains(string(r.Body), want) {
			t.Fatalf("%s %s: %d %s, want 409 saying %q", verb, id, r.Status, r.Body, want)
		}
		start := time.Now()
		c := blackbox.WilcoCLI(t, dir, in.Url, 20*time.Second, verb, id)
		if c.Code != 1 || !strings.Contains(c.Stderr, want) {
			t.Fatalf("wilco %s %s: exit %d\nstdout:\n%s\nstderr:\n%s", verb, id, c.Code, c.Stdout, c.Stderr)
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("wilco %s %s took %s", verb, id, time.Since(start))
		}
	}
	refused("apply", "D-1", "already applied")
	refused("discard", "D-1", "already applied")

	dryRun(t, in, "D-2")
	in.Cli("discard", "D-2")
	in.WaitTask("D-2", 10*time.Second, "cancelled")
	refused("apply", "D-2", "discarded")
	refused("discard", "D-2", "discarded")

	in.Submit(map[string]any{"id": "N-1", "description": "Write the fix into file.txt"})
	in.WaitTask("N-1", 30*time.Second, "success")
	refused("apply", "N-1", "not a dry run")

	if r := in.Call("POST", "/v1/tasks/NOPE/apply", blackbox.AdminToken, nil); r.Status != 404 {
		t.Fatalf("apply of an unknown task: %d %s", r.Status, r.Body)
	}
}

// A dry run's worktree goes when it is applied, discarded or cancelled,
// and an orphaned one (its task gone) is removed when the server starts.
func TestDryRunWorktreeIsRemovedOnApplyDiscardCancelAndOrphansOnStart(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "proposer", "propose.sh", nil)+blackbox.CheckStep)
	in := blackbox.ServeRepo(t, dir)

	wt := dryRun(t, in, "W-1")
	in.Cli("apply", "W-1")
	in.WaitTask("W-1", 30*time.Second, "success")
	waitFor(t, "the applied dry run's worktree to go", 10*time.Second, func() bool { return !blackbox.Exists(wt) })

	wt = dryRun(t, in, "W-2")
	in.Cli("cancel", "W-2")
	in.WaitTask("W-2", 10*time.Second, "cancelled")
	waitFor(t, "the cancelled dry run's worktree to go", 10*time.Second, func() bool { return !blackbox.Exists(wt) })

	in.Stop()
	orphan := filepath.Join(dir, ".wilco", "worktrees", "GONE-1")
	git(t, dir, "worktree", "add", "--detach", "-q", orphan)
	in = blackbox.ServeRepo(t, dir)
	waitFor(t, "the orphaned worktree to be removed at start", 10*time.Second, func() bool { return !blackbox.Exists(orphan) })
	if out := gitOut(t, dir, "worktree", "list"); strings.Contains(out, "GONE-1") {
		t.Fatalf("git still lists the orphaned worktree:\n%s", out)
	}
	_ = in
}

// apply never overwrites an uncommitted edit of the user's: an edit where
// the diff applies is refused, naming the file, and kept; an edit
// elsewhere is kept and the diff applied.
func TestDryRunApplyRefusesToOverwriteTheUsersEdits(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "proposer", "propose.sh", nil)+blackbox.CheckStep)
	in := blackbox.ServeRepo(t, dir)
	dryRun(t, in, "U-1")

	const mine = "my own edit, not committed\n"
	if err := os.WriteFile(filepath.Join(dir, "file.txt"), []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	r := in.Call("POST", "/v1/tasks/U-1/apply", blackbox.AdminToken, nil)
	if r.Status != 409 || !strings.Contains(string(r.Body), "file.txt") {
		t.Fatalf("apply over an edit of file.txt: %d %s", r.Status, r.Body)
	}
	c := blackbox.WilcoCLI(t, dir, in.Url, 20*time.Second, "apply", "U-1")
	if c.Code != 1 || !strings.Contains(c.Stderr, "file.txt") {
		t.Fatalf("wilco apply: exit %d\n%s%s", c.Code, c.Stdout, c.Stderr)
	}
	if got := blackbox.ReadFile(t, filepath.Join(dir, "file.txt")); got != mine {
		t.Fatalf("the user's edit was destroyed: file.txt %q", got)
	}
	if got := in.Task("U-1"); got.State != "proposed" {
		t.Fatalf("the refused dry run is %s, want still proposed", got.State)
	}

	// The user puts file.txt back and edits another file: apply goes on.
	git(t, dir, "checkout", "--", "file.txt")
	if err := os.WriteFile(filepath.Join(dir, "notes.md"), []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	in.Cli("apply", "U-1")
	in.WaitTask("U-1", 30*time.Second, "success")
	if got := blackbox.ReadFile(t, filepath.Join(dir, "notes.md")); got != mine {
		t.Fatalf("the user's other edit was touched: %q", got)
	}
	if got := blackbox.ReadFile(t, filepath.Join(dir, "file.txt")); got != "fixed U-1\n" {
		t.Fatalf("the diff was not applied: %q", got)
	}
}

// gitOut runs git in dir and returns its output.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
