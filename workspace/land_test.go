package workspace

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"wilco/core"
)

// taskTree makes task id's worktree from main and returns it opened, its
// directory and its base.
func taskTree(t *testing.T, b *testBundle, id string) (*Workspace, string, string) {
	t.Helper()
	base, err := b.ws.TaskWorktree(b.ctx, id, core.TaskWorktree(id), core.TaskBranch(id), "main")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(b.dir, core.TaskWorktree(id))
	ws, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ws, dir, base
}

func TestATaskBranchLandsAsAFastForwardThenACombinationOnceTheTargetMoved(t *testing.T) {
	t.Parallel()
	b := setup(t)
	runGit(t, b.dir, "branch", "-M", "main")
	w1, d1, base1 := taskTree(t, b, "T-1")
	w2, d2, base2 := taskTree(t, b, "T-2")
	write(t, d1, "one.txt", "by T-1\n")
	write(t, d2, "two.txt", "by T-2\n")
	c1, err := w1.CommitAll(b.ctx, "T-1\n\nWilco-Task: T-1\n")
	if err != nil {
		t.Fatal(err)
	}
	if again, err := w1.CommitAll(b.ctx, "again"); err != nil || again != c1 {
		t.Fatalf("nothing more to commit: %s %v", again, err)
	}
	// The user edits a file of the checkout no landing touches.
	write(t, b.dir, "a.txt", "the user's\n")
	comb, err := b.ws.Combine(b.ctx, d1, core.TaskBranch("T-1"), "main", base1, HowMerge)
	if err != nil || comb.Moved || comb.Commit != c1 {
		t.Fatalf("T-1 on an unmoved target: %+v %v", comb, err)
	}
	files, err := b.ws.Advance(b.ctx, "main", comb.Onto, comb.Commit, time.Millisecond, func([]string) { t.Fatal("waited") })
	if err != nil || !slices.Equal(files, []string{"one.txt"}) {
		t.Fatalf("advance: %v %v", files, err)
	}
	if read(t, b.dir, "one.txt") != "by T-1\n" || read(t, b.dir, "a.txt") != "the user's\n" || status(t, b.dir) != " M a.txt\n" {
		t.Fatalf("the checkout after the fast-forward:\n%s", status(t, b.dir))
	}
	// T-2 started from the same base: main moved, so it is combined.
	if _, err := w2.CommitAll(b.ctx, "T-2\n\nWilco-Task: T-2\n"); err != nil {
		t.Fatal(err)
	}
	comb, err = b.ws.Combine(b.ctx, d2, core.TaskBranch("T-2"), "main", base2, HowRebase)
	if err != nil || !comb.Moved || comb.Commit == "" || len(comb.Between) != 0 {
		t.Fatalf("T-2 combined: %+v %v", comb, err)
	}
	if read(t, d2, "one.txt") != "by T-1\n" || strings.TrimSpace(runGit(t, d2, "rev-parse", "HEAD")) != comb.Commit {
		t.Fatal("the worktree does not hold the combination")
	}
	if got := runGit(t, b.dir, "log", "--format=%P%n%B", "-1", comb.Commit); !strings.HasPrefix(got, c1+"\nT-2\n") {
		t.Fatalf("the rebased commit: %q", got)
	}
	// The user now has a file the landing changes, uncommitted: it waits
	// until the user puts it away.
	write(t, b.dir, "two.txt", "the user's own two\n")
	waited := make(chan []string, 4)
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	_, err = b.ws.Advance(ctx, "main", comb.Onto, comb.Commit, 20*time.Millisecond, func(f []string) {
		waited <- f
		if err := os.Remove(filepath.Join(b.dir, "two.txt")); err != nil {
			t.Error(err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if f := <-waited; !slices.Equal(f, []string{"two.txt"}) {
		t.Fatalf("waited for %v", f)
	}
	if read(t, b.dir, "two.txt") != "by T-2\n" || strings.TrimSpace(runGit(t, b.dir, "rev-parse", "main")) != comb.Commit {
		t.Fatal("the landing did not go on once the file was clean")
	}
	// Advancing again (cut short after it moved) changes nothing; from a
	// head the target left, it is refused.
	if _, err := b.ws.Advance(b.ctx, "main", comb.Onto, comb.Commit, time.Millisecond, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.ws.Advance(b.ctx, "main", base1, c1, time.Millisecond, nil); !errors.Is(err, ErrTargetMoved) {
		t.Fatalf("from an old head: %v", err)
	}
}

func TestTwoBranchesOnTheSameLinesConflictAndNameTheCommitBetween(t *testing.T) {
	t.Parallel()
	b := setup(t)
	runGit(t, b.dir, "branch", "-M", "main")
	w1, d1, base1 := taskTree(t, b, "T-1")
	w2, d2, base2 := taskTree(t, b, "T-2")
	write(t, d1, "a.txt", "one\nTWO by T-1\nthree\n")
	write(t, d2, "a.txt", "one\ntwo by T-2\nthree\n")
	c1, _ := w1.CommitAll(b.ctx, "T-1 edits two\n")
	if _, err := w2.CommitAll(b.ctx, "T-2 edits two\n"); err != nil {
		t.Fatal(err)
	}
	comb, _ := b.ws.Combine(b.ctx, d1, core.TaskBranch("T-1"), "main", base1, HowMerge)
	if _, err := b.ws.Advance(b.ctx, "main", comb.Onto, comb.Commit, time.Millisecond, nil); err != nil {
		t.Fatal(err)
	}
	before := strings.TrimSpace(runGit(t, d2, "rev-parse", "HEAD"))
	comb, err := b.ws.Combine(b.ctx, d2, core.TaskBranch("T-2"), "main", base2, HowMerge)
	if err != nil || !slices.Equal(comb.Conflict, []string{"a.txt"}) || comb.Commit != "" || len(comb.Between) != 1 || !strings.HasPrefix(c1, comb.Between[0].Hash) || comb.Between[0].Subject != "T-1 edits two" {
		t.Fatalf("conflict: %+v %v", comb, err)
	}
	if strings.TrimSpace(runGit(t, d2, "rev-parse", "HEAD")) != before || status(t, d2) != "" {
		t.Fatal("a conflict changed the worktree")
	}
}

func TestAMergeTheAgentResolvedAndLeftUncommittedIsCommittedWhole(t *testing.T) {
	t.Parallel()
	b := setup(t)
	runGit(t, b.dir, "branch", "-M", "main")
	w1, d1, base1 := taskTree(t, b, "T-1")
	w2, d2, _ := taskTree(t, b, "T-2")
	write(t, d1, "a.txt", "one\nTWO by T-1\nthree\n")
	write(t, d2, "a.txt", "one\ntwo by T-2\nthree\n")
	if _, err := w1.CommitAll(b.ctx, "T-1\n"); err != nil {
		t.Fatal(err)
	}
	c2, _ := w2.CommitAll(b.ctx, "T-2\n")
	comb, _ := b.ws.Combine(b.ctx, d1, core.TaskBranch("T-1"), "main", base1, HowMerge)
	if _, err := b.ws.Advance(b.ctx, "main", comb.Onto, comb.Commit, time.Millisecond, nil); err != nil {
		t.Fatal(err)
	}
	// The agent merges main, in conflict, and resolves it without
	// committing.
	cmd := exec.Command("git", "-C", d2, "-c", "user.name=Agent", "-c", "user.email=agent@example.com", "merge", "main")
	cmd.Env = append(gitEnv(nil), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "CONFLICT") {
		t.Fatalf("the merge did not conflict: %v\n%s", err, out)
	}
	if _, err := w2.CommitAll(b.ctx, "T-2 merged\n"); err == nil || !strings.Contains(err.Error(), "a.txt") {
		t.Fatalf("a merge still in conflict was committed: %v", err)
	}
	write(t, d2, "a.txt", "one\nTWO by T-1\ntwo by T-2\nthree\n")
	h, err := w2.CommitAll(b.ctx, "T-2 merged\n\nWilco-Task: T-2\n")
	if err != nil {
		t.Fatal(err)
	}
	parents := strings.Fields(runGit(t, d2, "log", "-1", "--format=%P", h))
	if len(parents) != 2 || parents[0] != c2 || status(t, d2) != "" {
		t.Fatalf("the merge commit's parents %v (want %s and main's head); status %q", parents, c2, status(t, d2))
	}
}

// landed lands task id's branch (checked out in d) on main by how, from
// base: its combination when main moved, then main advanced to it.
func landed(t *testing.T, b *testBundle, id, d, base, how string) Combination {
	t.Helper()
	comb, err := b.ws.Combine(b.ctx, d, core.TaskBranch(id), "main", base, how)
	if err != nil || len(comb.Conflict) > 0 {
		t.Fatalf("%s by %s: %+v %v", id, how, comb, err)
	}
	if _, err := b.ws.Advance(b.ctx, "main", comb.Onto, comb.Commit, time.Millisecond, func([]string) { t.Fatal("waited") }); err != nil {
		t.Fatal(err)
	}
	return comb
}

// shape is the history main gained since onto, newest first: each
// commit's parent count, subject and author (when the agent's).
func shape(t *testing.T, dir, onto string) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(runGit(t, dir, "log", "--format=%p|%s|%an", onto+"..main")), "\n") {
		p := strings.SplitN(l, "|", 3)
		if p[2] != "Agent" {
			p[2] = "-" // made by wilco
		}
		out = append(out, strings.Join([]string{strings.Repeat("*", len(strings.Fields(p[0]))), p[1], p[2]}, " "))
	}
	return out
}

func TestARebaseReplaysEachOfTheTasksCommitsASquashLandsOneAndAMergeAMergeCommit(t *testing.T) {
	t.Parallel()
	for how, want := range map[string][]string{
		HowRebase: {"* second Agent", "* first Agent"},
		HowSquash: {"* second -"},
		HowMerge:  {"** Merge branch 'wilco/T-2' into main -", "* second Agent", "* first Agent"},
	} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			runGit(t, b.dir, "branch", "-M", "main")
			w1, d1, base1 := taskTree(t, b, "T-1")
			_, d2, base2 := taskTree(t, b, "T-2")
			write(t, d1, "one.txt", "by T-1\n")
			if _, err := w1.CommitAll(b.ctx, "T-1\n"); err != nil {
				t.Fatal(err)
			}
			// T-2's branch holds two commits of its agent's.
			write(t, d2, "two.txt", "first\n")
			runGit(t, d2, "add", "two.txt")
			runGit(t, d2, "-c", "user.name=Agent", "commit", "-qm", "first")
			write(t, d2, "three.txt", "second\n")
			runGit(t, d2, "add", "three.txt")
			runGit(t, d2, "-c", "user.name=Agent", "commit", "-qm", "second")
			landed(t, b, "T-1", d1, base1, how)
			onto := strings.TrimSpace(runGit(t, b.dir, "rev-parse", "main"))
			comb := landed(t, b, "T-2", d2, base2, how)
			if !comb.Moved {
				t.Fatal("main moved, and T-2 was not combined")
			}
			if got := shape(t, b.dir, onto); !slices.Equal(got, want) {
				t.Fatalf("main gained %q, want %q", got, want)
			}
			for _, f := range []string{"one.txt", "two.txt", "three.txt"} {
				if !exists(b.dir, f) {
					t.Fatalf("the checkout lacks %s", f)
				}
			}
		})
	}
}

func TestARebaseOfABranchThatResolvedAConflictByAMergeKeepsTheTargetLinear(t *testing.T) {
	t.Parallel()
	b := setup(t)
	runGit(t, b.dir, "branch", "-M", "main")
	w1, d1, base1 := taskTree(t, b, "T-1")
	w2, d2, base2 := taskTree(t, b, "T-2")
	w3, d3, base3 := taskTree(t, b, "T-3")
	write(t, d1, "a.txt", "one\nTWO by T-1\nthree\n")
	write(t, d2, "a.txt", "one\ntwo by T-2\nthree\n")
	write(t, d3, "other.txt", "by T-3\n")
	for _, w := range []*Workspace{w1, w2, w3} {
		if _, err := w.CommitAll(b.ctx, "the change of "+filepath.Base(w.Root())+"\n\nWilco-Task: "+filepath.Base(w.Root())+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	landed(t, b, "T-1", d1, base1, HowRebase)
	c, err := b.ws.Combine(b.ctx, d2, core.TaskBranch("T-2"), "main", base2, HowRebase)
	if err != nil || !slices.Equal(c.Conflict, []string{"a.txt"}) || len(c.Between) != 1 || c.Between[0].Task != "T-1" || c.Between[0].Subject != "the change of T-1" {
		t.Fatalf("T-2 on T-1: %+v %v", c, err)
	}
	// The agent merges main and resolves it: its branch holds its first
	// commit and the merge.
	cmd := exec.Command("git", "-C", d2, "-c", "user.name=Agent", "-c", "user.email=agent@example.com", "merge", "main")
	cmd.Env = append(gitEnv(nil), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
	_, _ = cmd.CombinedOutput()
	write(t, d2, "a.txt", "one\nTWO by T-1\ntwo by T-2\nthree\n")
	if _, err := w2.CommitAll(b.ctx, "T-2 resolved\n\nWilco-Task: T-2\n"); err != nil {
		t.Fatal(err)
	}
	// Meanwhile T-3 lands: T-2 is replayed on it.
	landed(t, b, "T-3", d3, base3, HowRebase)
	onto := strings.TrimSpace(runGit(t, b.dir, "rev-parse", "main"))
	landed(t, b, "T-2", d2, base2, HowRebase)
	if got := shape(t, b.dir, onto); !slices.Equal(got, []string{"* T-2 resolved -"}) {
		t.Fatalf("main gained %q: the first commit, in conflict alone, is folded into the merge that resolved it", got)
	}
	if read(t, b.dir, "a.txt") != "one\nTWO by T-1\ntwo by T-2\nthree\n" || read(t, b.dir, "other.txt") != "by T-3\n" {
		t.Fatalf("the checkout after T-2: %q", read(t, b.dir, "a.txt"))
	}
	if merges := runGit(t, b.dir, "log", "--merges", "--format=%h", "main"); merges != "" {
		t.Fatalf("main holds merge commits: %s", merges)
	}
	// Unmoved, a branch holding a merge is replayed too, to its own tree.
	b2 := setup(t)
	runGit(t, b2.dir, "branch", "-M", "main")
	v1, e1, f1 := taskTree(t, b2, "T-1")
	v2, e2, f2 := taskTree(t, b2, "T-2")
	write(t, e1, "a.txt", "one\nTWO by T-1\nthree\n")
	write(t, e2, "a.txt", "one\ntwo by T-2\nthree\n")
	_, _ = v1.CommitAll(b2.ctx, "T-1\n")
	_, _ = v2.CommitAll(b2.ctx, "T-2\n")
	landed(t, b2, "T-1", e1, f1, HowRebase)
	onto = strings.TrimSpace(runGit(t, b2.dir, "rev-parse", "main"))
	cmd = exec.Command("git", "-C", e2, "-c", "user.name=Agent", "-c", "user.email=agent@example.com", "merge", "main")
	cmd.Env = append(gitEnv(nil), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
	_, _ = cmd.CombinedOutput()
	write(t, e2, "a.txt", "one\nTWO by T-1\ntwo by T-2\nthree\n")
	head, err := v2.CommitAll(b2.ctx, "T-2 resolved\n")
	if err != nil {
		t.Fatal(err)
	}
	comb := landed(t, b2, "T-2", e2, f2, HowRebase)
	if comb.Moved || comb.Commit == head || strings.TrimSpace(runGit(t, b2.dir, "rev-parse", comb.Commit+"^{tree}")) != strings.TrimSpace(runGit(t, b2.dir, "rev-parse", head+"^{tree}")) {
		t.Fatalf("unmoved: %+v (head %s)", comb, head)
	}
	if got := shape(t, b2.dir, onto); !slices.Equal(got, []string{"* T-2 resolved -"}) {
		t.Fatalf("main gained %q", got)
	}
}

func TestALandingCutShortAroundTheTargetsMoveIsFinishedWithNothingHalfMerged(t *testing.T) {
	t.Parallel()
	for _, cut := range []string{StepUpdateRef, StepAfterUpdateRef} {
		t.Run(cut, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			runGit(t, b.dir, "branch", "-M", "main")
			w1, d1, base := taskTree(t, b, "T-1")
			write(t, d1, "a.txt", "one\ntwo by T-1\nthree\n")
			write(t, d1, "new.txt", "new by T-1\n")
			c1, err := w1.CommitAll(b.ctx, "T-1\n")
			if err != nil {
				t.Fatal(err)
			}
			// The user's own edit, in a file the landing does not touch.
			write(t, b.dir, "c.txt", "the user's\n")
			// Wilco was killed at the step: the checkout was updated
			// (and, after it, the target moved).
			runGit(t, b.dir, "read-tree", "-m", "-u", base, c1)
			if cut == StepAfterUpdateRef {
				runGit(t, b.dir, "update-ref", "refs/heads/main", c1, base)
			}
			// Started again, the landing goes on.
			var steps []string
			b.ws.OnLandStep(func(s string) { steps = append(steps, s) })
			if _, err := b.ws.Advance(b.ctx, "main", base, c1, time.Millisecond, func(f []string) { t.Fatalf("waited for %v, its own half-done landing", f) }); err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(runGit(t, b.dir, "rev-parse", "main")); got != c1 {
				t.Fatalf("main is at %s, want %s", got, c1)
			}
			if st := status(t, b.dir); st != " M c.txt\n" {
				t.Fatalf("the checkout after the landing:\n%s", st)
			}
			if read(t, b.dir, "a.txt") != "one\ntwo by T-1\nthree\n" || read(t, b.dir, "new.txt") != "new by T-1\n" || read(t, b.dir, "c.txt") != "the user's\n" {
				t.Fatal("the checkout's files are not main's and the user's")
			}
			want := []string{StepUpdateRef, StepAfterUpdateRef}
			if cut == StepAfterUpdateRef {
				want = nil
			}
			if !slices.Equal(steps, want) {
				t.Fatalf("steps %v, want %v", steps, want)
			}
		})
	}
	// The other way round: the target moved and the checkout was not
	// updated at all (a landing cut short by anything between the two).
	b := setup(t)
	runGit(t, b.dir, "branch", "-M", "main")
	w1, d1, base := taskTree(t, b, "T-1")
	write(t, d1, "a.txt", "one\ntwo by T-1\nthree\n")
	c1, err := w1.CommitAll(b.ctx, "T-1\n")
	if err != nil {
		t.Fatal(err)
	}
	runGit(t, b.dir, "update-ref", "refs/heads/main", c1, base)
	if _, err := b.ws.Advance(b.ctx, "main", base, c1, time.Millisecond, func(f []string) { t.Fatalf("waited for %v", f) }); err != nil {
		t.Fatal(err)
	}
	if st := status(t, b.dir); st != "" || read(t, b.dir, "a.txt") != "one\ntwo by T-1\nthree\n" {
		t.Fatalf("the checkout was left at the old target:\n%s", st)
	}
}

func FuzzParseTargetCommits(f *testing.F) {
	f.Add("1a2b3c4", "Fix the login timeout", "T-3", "8d9e0f1", "Merge branch 'wilco/T-2' into main", "")
	f.Add("abc", "", "T-1,T-2", "def", "subject\twith a tab", "k:task-1")
	f.Fuzz(func(t *testing.T, h1, s1, t1, h2, s2, t2 string) {
		// Whatever git writes, reading it never fails.
		_ = parseTargetCommits(h1 + s1 + t1 + h2 + s2 + t2)
		clean := func(s string) string {
			return strings.NewReplacer("\x1e", "", "\x1f", "", "\n", "").Replace(s)
		}
		want := []core.TargetCommit{}
		out := ""
		for _, c := range [][3]string{{h1, s1, t1}, {h2, s2, t2}} {
			h, s, task := clean(c[0]), clean(c[1]), strings.TrimSpace(clean(c[2]))
			if h == "" {
				continue
			}
			want = append(want, core.TargetCommit{Hash: h, Subject: s, Task: task})
			out += h + "\x1f" + s + "\x1f" + task + "\x1e\n"
		}
		if got := parseTargetCommits(out); !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Fatalf("read %q as %+v, want %+v", out, got, want)
		}
	})
}

func TestACombinationMadeBeforeWilcoStoppedIsReportedAgainNeverLandedUnverified(t *testing.T) {
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
	comb, err := b.ws.Combine(b.ctx, d1, core.TaskBranch("T-1"), "main", base1, HowMerge)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.ws.Advance(b.ctx, "main", comb.Onto, comb.Commit, time.Millisecond, nil); err != nil {
		t.Fatal(err)
	}
	for _, how := range []string{HowMerge, HowRebase, HowSquash} {
		if _, err := w2.CommitAll(b.ctx, "T-2\n"); err != nil {
			t.Fatal(err)
		}
		first, err := b.ws.Combine(b.ctx, d2, core.TaskBranch("T-2"), "main", base2, how)
		if err != nil || !first.Moved {
			t.Fatalf("%s: combined %+v %v", how, first, err)
		}
		// wilco stopped before the combination was reported: the landing
		// is asked again, with the worktree holding it.
		head, err := w2.CommitAll(b.ctx, "T-2\n")
		if err != nil || head != first.Commit {
			t.Fatalf("%s: the worktree's head %s %v, the combination %s", how, head, err, first.Commit)
		}
		again, err := b.ws.Combine(b.ctx, d2, core.TaskBranch("T-2"), "main", base2, how)
		if err != nil || !again.Moved || again.Commit != first.Commit || again.Onto != first.Onto {
			t.Fatalf("%s: asked again, the combination is %+v (%v), want it reported again to be verified, as %+v", how, again, err, first)
		}
		// Back to the task's own commit for the next way.
		runGit(t, d2, "reset", "--hard", "--quiet", base2)
		write(t, d2, "two.txt", "by T-2 ("+how+")\n")
	}
	if err := b.ws.RemoveTaskWorktree(b.ctx, "T-2", core.TaskBranch("T-2"), false); err != nil {
		t.Fatal(err)
	}
	if out := runGit(t, b.dir, "for-each-ref", "refs/wilco/"); out != "" {
		t.Fatalf("the combination's note outlives the worktree: %s", out)
	}
}

func TestABranchLandedBeforeWilcoStoppedIsNotLandedAgain(t *testing.T) {
	t.Parallel()
	for _, how := range []string{HowMerge, HowRebase, HowSquash} {
		for _, commits := range []int{1, 2} {
			b := setup(t)
			runGit(t, b.dir, "branch", "-M", "main")
			w1, d1, base := taskTree(t, b, "T-1")
			for i := range commits {
				write(t, d1, "one.txt", strings.Repeat("by T-1\n", i+1))
				if _, err := w1.CommitAll(b.ctx, "T-1\n"); err != nil {
					t.Fatal(err)
				}
			}
			comb, err := b.ws.Combine(b.ctx, d1, core.TaskBranch("T-1"), "main", base, how)
			if err != nil || comb.Moved {
				t.Fatalf("%s: %+v %v", how, comb, err)
			}
			if _, err := b.ws.Advance(b.ctx, "main", comb.Onto, comb.Commit, time.Millisecond, nil); err != nil {
				t.Fatal(err)
			}
			// wilco stopped before the landing was recorded: it is asked
			// again, and finds it done.
			if _, err := w1.CommitAll(b.ctx, "T-1\n"); err != nil {
				t.Fatal(err)
			}
			again, err := b.ws.Combine(b.ctx, d1, core.TaskBranch("T-1"), "main", base, how)
			if err != nil || again.Moved || !again.Landed || again.Commit != comb.Commit {
				t.Fatalf("%s of %d commits, asked again: %+v (%v), want the commit it landed as, %s", how, commits, again, err, comb.Commit)
			}
			// The user commits on main before it is asked once more.
			write(t, b.dir, "user.txt", "the user's\n")
			runGit(t, b.dir, "add", "user.txt")
			runGit(t, b.dir, "commit", "-q", "-m", "the user's")
			again, err = b.ws.Combine(b.ctx, d1, core.TaskBranch("T-1"), "main", base, how)
			if err != nil || again.Moved || !again.Landed || again.Commit != comb.Commit {
				t.Fatalf("%s of %d commits, asked again after the target moved on: %+v (%v), want the commit it landed as, %s", how, commits, again, err, comb.Commit)
			}
		}
	}
}
