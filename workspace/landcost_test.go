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
	want := []string{"rev-parse", "rev-parse", "merge-base", "merge-tree", "config", "commit-tree", "reset"}
	if got := ran(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("the combination ran git %v, want %v", got, want)
	}
}
