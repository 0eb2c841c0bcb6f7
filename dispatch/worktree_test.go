package dispatch

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"wilco/core"
	"wilco/verify"
	"wilco/workspace"
)

func TestAParallelTasksStepsRunInItsWorktreeAndListWhatItChangedThere(t *testing.T) {
	t.Parallel()
	dir, _ := repo(t, "a.txt", "b.txt")
	runGit(t, dir, "branch", "-M", "main")
	d, err := New(Options{Dir: dir, Steps: []verify.Step{{Name: "unit", Run: "pwd > where.txt; grep -q task a.txt"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	ctx := context.Background()
	// The user's own edit in the checkout is not the task's.
	write(t, dir, "b.txt", "the user's\n")
	p, ok := d.PrepareWorktree(ctx, core.PrepareWorktree{TaskID: "T-1", Branch: core.TaskBranch("T-1"), Dir: core.TaskWorktree("T-1"), From: "main"})
	if !ok || p.Error != "" || p.Base == "" {
		t.Fatalf("prepared: %+v", p)
	}
	wt := filepath.Join(dir, core.TaskWorktree("T-1"))
	write(t, wt, "a.txt", "the task's\n")
	r, _, ok := d.RunVerify(ctx, core.RunVerify{TaskID: "T-1", Attempt: 1, RunID: "T-1-a1", Worktree: core.TaskWorktree("T-1")})
	if !ok || len(r.Steps) != 1 || r.Steps[0].ExitCode != 0 {
		t.Fatalf("verified: %+v", r)
	}
	if got, _ := os.ReadFile(filepath.Join(wt, "where.txt")); !strings.Contains(string(got), workspace.WorktreeName("T-1")) {
		t.Fatalf("the step ran in %q, not the worktree", got)
	}
	if !slices.Equal(r.Files, []string{"a.txt", "where.txt"}) {
		t.Fatalf("the files the task changed: %v", r.Files)
	}
	// Removed at its end.
	d.RemoveWorktree(ctx, core.RemoveWorktree{TaskID: "T-1", Dir: core.TaskWorktree("T-1"), Branch: core.TaskBranch("T-1")})
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Fatalf("the ended task's worktree is still there: %v", err)
	}
}
