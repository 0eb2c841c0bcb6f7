package workspace

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"wilco/core"
)

// countGit puts a git on PATH that logs each command it runs (its first
// argument after -C DIR) before running the real one, and returns a
// function that reads and clears the log. Not parallel: it sets PATH.
func countGit(t *testing.T) func() []string {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	script := "#!/bin/sh\nfor a in \"$@\"; do case $a in -C|-c) skip=1; continue;; esac; [ -n \"$skip\" ] && { skip=; continue; }; case $a in -*) continue;; esac; echo \"$a\" >>" +
		log + "; break; done\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return func() []string {
		b, _ := os.ReadFile(log)
		_ = os.Remove(log)
		return strings.Fields(string(b))
	}
}

// A landing runs one at a time: every git command it runs is time the
// landings behind it wait. The merge of a branch with a target that moved
// runs only the commands it needs: the target's and the branch's heads,
// whether the target moved, the merge, the identity (one command), the
// commit and the worktree's reset — not the commits in between, which
// only a conflict names, nor the branch's message, which a merge does not
// keep.
func TestACombinationRunsOnlyTheGitCommandsItNeeds(t *testing.T) {
	b := setup(t)
	runGit(t, b.dir, "branch", "-M", "main")
	w1, d1, base1 := taskTree(t, b, "T-1")
	w2, d2, base2 := taskTree(t, b, "T-2")
	write(t, d1, "one.txt", "by T-1\n")
	write(t, d2, "two.txt", "by T-2\n")
	if _, err := w1.CommitAll(b.ctx, "T-1\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := w2.CommitAll(b.ctx, "T-2\n"); err != nil {
		t.Fatal(err)
	}
	comb, err := b.ws.Combine(b.ctx, d1, core.TaskBranch("T-1"), "main", base1, HowMerge)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.ws.Advance(b.ctx, "main", comb.Onto, comb.Commit, 0, func([]string) { t.Fatal("waited") }); err != nil {
		t.Fatal(err)
	}
	ran := countGit(t)
	comb, err = b.ws.Combine(b.ctx, d2, core.TaskBranch("T-2"), "main", base2, HowMerge)
	if err != nil || !comb.Moved || comb.Commit == "" {
		t.Fatalf("T-2 combined: %+v %v", comb, err)
	}
	// Beside the combination itself: whether the branch landed already
	// (merge-base), whether the worktree holds a combination not yet
	// verified (rev-parse of its note), and the note of the new one
	// (update-ref) — what a landing asked again after a restart needs.
	want := []string{"rev-parse", "rev-parse", "merge-base", "rev-parse", "merge-base", "merge-tree", "config", "commit-tree", "update-ref", "reset"}
	if got := ran(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("the combination ran git %v, want %v", got, want)
	}
}

// A branch combined on a combination not landed yet (that of a task
// landing ahead) leaves its branch at the task's own change: the worktree
// holds the combination detached, and goes back to the branch when the
// one ahead does not land.
func TestACombinationBehindOneNotLandedLeavesTheTaskBranchAsItWas(t *testing.T) {
	t.Parallel()
	b := setup(t)
	runGit(t, b.dir, "branch", "-M", "main")
	w1, d1, base1 := taskTree(t, b, "T-1")
	w2, d2, base2 := taskTree(t, b, "T-2")
	write(t, d1, "one.txt", "by T-1\n")
	write(t, d2, "two.txt", "by T-2\n")
	if _, err := w1.CommitAll(b.ctx, "T-1\n"); err != nil {
		t.Fatal(err)
	}
	own, err := w2.CommitAll(b.ctx, "T-2\n")
	if err != nil {
		t.Fatal(err)
	}
	// T-1's combination with a target that moved (a commit of the user's).
	write(t, b.dir, "c.txt", "the user's\n")
	runGit(t, b.dir, "commit", "-qam", "the user's")
	ahead, err := b.ws.Combine(b.ctx, d1, core.TaskBranch("T-1"), "main", base1, HowMerge)
	if err != nil || !ahead.Moved {
		t.Fatalf("T-1: %+v %v", ahead, err)
	}
	comb, err := b.ws.CombineOn(b.ctx, d2, core.TaskBranch("T-2"), "main", ahead.Commit, base2, HowMerge)
	if err != nil || !comb.Moved || comb.Onto != ahead.Commit || comb.Commit == "" {
		t.Fatalf("T-2 behind T-1: %+v %v", comb, err)
	}
	if read(t, d2, "one.txt") != "by T-1\n" || read(t, d2, "two.txt") != "by T-2\n" || strings.TrimSpace(runGit(t, d2, "rev-parse", "HEAD")) != comb.Commit {
		t.Fatal("the worktree does not hold the combination")
	}
	if got := strings.TrimSpace(runGit(t, b.dir, "rev-parse", "refs/heads/"+core.TaskBranch("T-2"))); got != own || !detached(d2) {
		t.Fatalf("T-2's branch is at %s, want its own change %s (detached %v)", got, own, detached(d2))
	}
	if err := Attach(b.ctx, d2, core.TaskBranch("T-2")); err != nil {
		t.Fatal(err)
	}
	if detached(d2) || strings.TrimSpace(runGit(t, d2, "rev-parse", "HEAD")) != own {
		t.Fatal("the worktree is not back on its branch")
	}
	if _, err := os.Stat(filepath.Join(d2, "one.txt")); !os.IsNotExist(err) {
		t.Fatalf("T-1's file is in T-2's worktree on its branch: %v", err)
	}
	if detached(d1) {
		t.Fatal("a worktree on its branch is taken as detached")
	}
}

// A task's worktree is opened for each of its checks and for its landing:
// it opens from its files, with no git command, at the same top level as
// Open finds; a directory that is no linked worktree opens as Open does.
func TestATaskWorktreeOpensWithoutRunningGit(t *testing.T) {
	b := setup(t)
	runGit(t, b.dir, "branch", "-M", "main")
	_, dir, _ := taskTree(t, b, "T-1")
	want, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ran := countGit(t)
	got, err := OpenWorktree(dir)
	if err != nil || got.Root() != want.Root() {
		t.Fatalf("opened %v %v, want %s", got, err, want.Root())
	}
	if cmds := ran(); len(cmds) != 0 {
		t.Fatalf("opening the worktree ran git %v", cmds)
	}
	if _, err := OpenWorktree(filepath.Join(b.dir, "dir")); err != nil {
		t.Fatalf("a directory of the checkout: %v", err)
	}
	if _, err := OpenWorktree(filepath.Join(b.dir, "missing")); err == nil {
		t.Fatal("a missing worktree opened")
	}
}
