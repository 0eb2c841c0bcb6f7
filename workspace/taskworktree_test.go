package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wilco/core"
)

func TestATaskWorktreeIsItsBranchFromTheTargetsHeadWithoutTheUsersEdits(t *testing.T) {
	t.Parallel()
	b := setup(t)
	runGit(t, b.dir, "branch", "-M", "main")
	head := strings.TrimSpace(runGit(t, b.dir, "rev-parse", "HEAD"))
	// The user's uncommitted edit stays in the checkout.
	write(t, b.dir, "a.txt", "mine\n")
	dir, branch := core.TaskWorktree("T-1"), core.TaskBranch("T-1")
	base, err := b.ws.TaskWorktree(b.ctx, "T-1", dir, branch, "main")
	if err != nil {
		t.Fatal(err)
	}
	if base != head {
		t.Fatalf("base %s, want main's head %s", base, head)
	}
	wt := filepath.Join(b.dir, dir)
	if got := read(t, wt, "a.txt"); got != "one\ntwo\nthree\n" {
		t.Fatalf("the worktree holds the user's edit: %q", got)
	}
	if got := strings.TrimSpace(runGit(t, wt, "rev-parse", "--abbrev-ref", "HEAD")); got != "wilco/T-1" {
		t.Fatalf("the worktree is on %q", got)
	}
	if got := read(t, b.dir, "a.txt"); got != "mine\n" {
		t.Fatalf("the checkout lost the user's edit: %q", got)
	}
	// Asked again (after a restart), it is the same worktree, work kept.
	write(t, wt, "new.go", "package x\n")
	again, err := b.ws.TaskWorktree(b.ctx, "T-1", dir, branch, "main")
	if err != nil || again != base {
		t.Fatalf("again: %s %v", again, err)
	}
	if _, err := os.Stat(filepath.Join(wt, "new.go")); err != nil {
		t.Fatalf("making it again lost the agent's work: %v", err)
	}
	// A remnant (no base recorded) is made again from the target's head.
	if err := os.Remove(b.ws.baseFile("T-1")); err != nil {
		t.Fatal(err)
	}
	if again, err := b.ws.TaskWorktree(b.ctx, "T-1", dir, branch, "main"); err != nil || again != base {
		t.Fatalf("a remnant: %s %v", again, err)
	}
	// Removed at the end: the worktree, and the branch once it landed.
	if err := b.ws.RemoveTaskWorktree(b.ctx, "T-1", branch, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Fatalf("the worktree is still there: %v", err)
	}
	if !strings.Contains(runGit(t, b.dir, "branch", "--list", branch), branch) {
		t.Fatal("the branch of a task that did not land was deleted")
	}
	if err := b.ws.RemoveTaskWorktree(b.ctx, "T-1", branch, true); err != nil {
		t.Fatal(err)
	}
	if runGit(t, b.dir, "branch", "--list", branch) != "" {
		t.Fatal("the landed task's branch is still there")
	}
	if _, err := b.ws.TaskWorktree(b.ctx, "T-2", core.TaskWorktree("T-2"), core.TaskBranch("T-2"), "nope"); err == nil || !strings.Contains(err.Error(), "nope names no commit") {
		t.Fatalf("a target that is no branch: %v", err)
	}
}
