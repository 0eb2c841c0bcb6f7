package dispatch

import (
	"context"
	"slices"
	"strings"
	"testing"

	"wilco/core"
)

// landing is the LandTask of task T-1's first attempt on main.
func landing() core.LandTask {
	return core.LandTask{TaskID: "T-1", RunID: "T-1-a1", Attempt: 1, Agent: "claude", Branch: "main",
		Description: "Fix the clean file", Why: "it was wrong", Command: "sh check.sh"}
}

func TestAVerifiedChangeLandsAsACommitOfOnlyTheFilesTheTaskChangedFromClean(t *testing.T) {
	t.Parallel()
	dir, d := repo(t, "kept.txt", "again.txt", "clean.txt", "gone.txt")
	runGit(t, dir, "config", "user.name", "Repo User")
	runGit(t, dir, "config", "user.email", "repo@example.com")
	ctx := context.Background()
	// The user's, before the task began.
	write(t, dir, "kept.txt", "the user's edit\n")
	write(t, dir, "again.txt", "the user's edit\n")
	write(t, dir, "untracked.txt", "the user's notes\n")
	if err := d.recordBaseline(ctx, "T-1"); err != nil {
		t.Fatal(err)
	}
	// The task's.
	write(t, dir, "again.txt", "the user's edit\nand the task's\n")
	write(t, dir, "clean.txt", "changed by the task\n")
	write(t, dir, "dir/new.txt", "made by the task\n")
	remove(t, dir, "gone.txt")

	r, ok := d.LandTask(ctx, landing())
	if !ok || r.Error != "" || r.Refused || r.Commit == "" || !slices.Equal(r.Files, []string{"clean.txt", "dir/new.txt", "gone.txt"}) ||
		!slices.Equal(r.Left, []string{"again.txt"}) || r.Branch != "main" {
		t.Fatalf("landed: %+v (%v)", r, ok)
	}
	if got := runGit(t, dir, "show", "--name-status", "--format=", r.Commit); got != "M\tclean.txt\nA\tdir/new.txt\nD\tgone.txt\n" {
		t.Fatalf("the commit holds:\n%s", got)
	}
	msg := runGit(t, dir, "log", "-1", "--format=%B", r.Commit)
	for _, want := range []string{"Fix the clean file\n\nWhat changed:\n- clean.txt\n- dir/new.txt\n- gone.txt\nWhy: it was wrong\n",
		"Left uncommitted: again.txt", "\n\nWilco-Task: T-1\nWilco-Run: T-1-a1\nWilco-Agent: claude\n"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("the message lacks %q:\n%s", want, msg)
		}
	}
	if got := runGit(t, dir, "status", "--porcelain", "--", ".", ":(exclude).wilco"); got != " M again.txt\n M kept.txt\n?? untracked.txt\n" {
		t.Fatalf("the user's changes after the commit:\n%s", got)
	}

	// Asked again (wilco stopped before its end was recorded): the commit
	// is found, not made twice.
	again, ok := d.LandTask(ctx, landing())
	if !ok || again.Commit != r.Commit || !slices.Equal(again.Files, r.Files) {
		t.Fatalf("landed again: %+v", again)
	}
	if n := strings.Count(runGit(t, dir, "log", "--format=%H"), "\n"); n != 2 {
		t.Fatalf("%d commits, want the first and the task's", n)
	}
}

func TestAChangeIsNotCommittedOffTheTargetBranchNorWithoutABaseline(t *testing.T) {
	t.Parallel()
	dir, d := repo(t, "a.txt")
	ctx := context.Background()
	write(t, dir, "a.txt", "changed\n")
	if r, ok := d.LandTask(ctx, landing()); !ok || r.Commit != "" || !strings.Contains(r.Error, "were not recorded") {
		t.Fatalf("without a baseline: %+v", r)
	}
	if err := d.recordBaseline(ctx, "T-1"); err != nil {
		t.Fatal(err)
	}
	runGit(t, dir, "checkout", "-q", "-b", "feature")
	if r, ok := d.LandTask(ctx, landing()); !ok || r.Commit != "" || !strings.Contains(r.Error, "the checkout is on branch feature, not on main (land.to); wilco does not switch branches") {
		t.Fatalf("off the branch: %+v", r)
	}
	if br, _ := d.Branch(ctx); br != "feature" {
		t.Fatalf("the branch changed: %q", br)
	}
	if n := strings.Count(runGit(t, dir, "log", "--format=%H", "--all"), "\n"); n != 1 {
		t.Fatalf("%d commits", n)
	}
}

func TestAChangeOfOnlyFilesTheUserHadChangedCommitsNothing(t *testing.T) {
	t.Parallel()
	dir, d := repo(t, "a.txt")
	ctx := context.Background()
	write(t, dir, "a.txt", "the user's\n")
	if err := d.recordBaseline(ctx, "T-1"); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "a.txt", "the user's and the task's\n")
	r, ok := d.LandTask(ctx, landing())
	if !ok || r.Error != "" || r.Commit != "" || !slices.Equal(r.Left, []string{"a.txt"}) {
		t.Fatalf("%+v", r)
	}
}
