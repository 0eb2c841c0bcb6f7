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
	// The step says where it ran outside the tree: the files are listed
	// while the steps run, so what a step writes may or may not be listed.
	where := filepath.Join(t.TempDir(), "where.txt")
	d, err := New(Options{Dir: dir, Steps: []verify.Step{{Name: "unit", Run: "pwd > '" + where + "'; grep -q task a.txt"}}})
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
	if got, _ := os.ReadFile(where); !strings.Contains(string(got), workspace.WorktreeName("T-1")) {
		t.Fatalf("the step ran in %q, not the worktree", got)
	}
	if !slices.Equal(r.Files, []string{"a.txt"}) {
		t.Fatalf("the files the task changed: %v", r.Files)
	}
	// Removed at its end.
	d.RemoveWorktree(ctx, core.RemoveWorktree{TaskID: "T-1", Dir: core.TaskWorktree("T-1"), Branch: core.TaskBranch("T-1")})
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Fatalf("the ended task's worktree is still there: %v", err)
	}
}

func TestAScoutOfAParallelTaskReadsACopyOfItsWorktree(t *testing.T) {
	t.Parallel()
	dir, d := repo(t, "a.txt")
	runGit(t, dir, "branch", "-M", "main")
	ctx := context.Background()
	p, _ := d.PrepareWorktree(ctx, core.PrepareWorktree{TaskID: "T-1", Branch: core.TaskBranch("T-1"), Dir: core.TaskWorktree("T-1"), From: "main"})
	if p.Error != "" {
		t.Fatal(p.Error)
	}
	wt := filepath.Join(dir, core.TaskWorktree("T-1"))
	write(t, wt, "a.txt", "the task's, not committed\n")
	scout, done, err := d.readOnly(ctx, "M-9", core.TaskWorktree("T-1"))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(scout, "a.txt")); string(b) != "the task's, not committed\n" {
		t.Fatalf("the scout reads %q, not the task's worktree", b)
	}
	write(t, scout, "b.txt", "the scout wrote\n")
	changed, err := done(ctx)
	if err != nil || !slices.Equal(changed, []string{"b.txt"}) {
		t.Fatalf("what the scout changed: %v %v", changed, err)
	}
	if _, err := os.Stat(scout); !os.IsNotExist(err) {
		t.Fatalf("the scout's copy is still there: %v", err)
	}
	// The task's own change list does not see the scout's copy.
	files, err := d.changedIn(ctx, core.TaskWorktree("T-1"), "T-1", false)
	if err != nil || len(files) != 1 || files[0].Path != "a.txt" {
		t.Fatalf("the task changed %+v (%v)", files, err)
	}
}

// A task that keeps its worktree keeps it at its end: only what its agent
// ran there is ended.
func TestAKeptWorktreeStaysWhenItsTaskEnds(t *testing.T) {
	t.Parallel()
	dir, d := repo(t, "a.txt")
	runGit(t, dir, "branch", "-M", "main")
	ctx := context.Background()
	e := core.PrepareWorktree{TaskID: "T-1", Branch: core.TaskBranch("T-1"), Dir: core.TaskWorktree("T-1"), From: "main"}
	if p, _ := d.PrepareWorktree(ctx, e); p.Error != "" {
		t.Fatal(p.Error)
	}
	d.RemoveWorktree(ctx, core.RemoveWorktree{TaskID: "T-1", Dir: e.Dir, Branch: e.Branch, Keep: true})
	if _, err := os.Stat(filepath.Join(dir, e.Dir, "a.txt")); err != nil {
		t.Fatalf("the kept worktree was removed: %v", err)
	}
	if got := strings.TrimSpace(runGit(t, dir, "branch", "--list", e.Branch)); got == "" {
		t.Fatal("the kept branch was deleted")
	}
}

func TestALandingAskedAgainAfterTheTargetMovedLandsOnce(t *testing.T) {
	t.Parallel()
	for _, how := range []string{core.LandMerge, core.LandSquash, core.LandRebase} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			dir, d := repo(t, "a.txt")
			runGit(t, dir, "branch", "-M", "main")
			ctx := context.Background()
			p, _ := d.PrepareWorktree(ctx, core.PrepareWorktree{TaskID: "T-1", Branch: core.TaskBranch("T-1"), Dir: core.TaskWorktree("T-1"), From: "main"})
			if p.Error != "" {
				t.Fatal(p.Error)
			}
			wt := filepath.Join(dir, core.TaskWorktree("T-1"))
			// The agent committed a part itself; wilco commits the rest.
			write(t, wt, "one.txt", "one\n")
			runGit(t, wt, "add", "one.txt")
			runGit(t, wt, "commit", "-qm", "the agent's own commit")
			write(t, wt, "two.txt", "two\n")
			land := core.LandTask{TaskID: "T-1", RunID: "T-1-a1", Attempt: 1, Agent: "claude", Branch: "main", Description: "Write one and two",
				Worktree: core.TaskWorktree("T-1"), TaskBranch: core.TaskBranch("T-1"), Base: p.Base, How: how}
			first, ok := d.LandTask(ctx, land)
			if !ok || first.Commit == "" || first.Error != "" {
				t.Fatalf("landed: %+v", first)
			}
			// Wilco was killed after the target moved, before the end was
			// recorded: asked again, it finds the landing made.
			again, ok := d.LandTask(ctx, land)
			if !ok || again.Commit != first.Commit || again.Combined != "" || again.Error != "" {
				t.Fatalf("asked again: %+v, first %s", again, first.Commit)
			}
			if n := strings.Count(runGit(t, dir, "log", "--format=%H", "--grep=^Wilco-Run: T-1-a1$", "main"), "\n"); n != 1 {
				t.Fatalf("%d commits of the run on main:\n%s", n, runGit(t, dir, "log", "--oneline", "--graph", "main"))
			}
		})
	}
}
