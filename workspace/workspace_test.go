package workspace

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"wilco/core"
)

type testBundle struct {
	dir string
	ws  *Workspace
	ctx context.Context
}

// setup makes a repository with one commit:
//
//	a.txt (3 lines), c.txt, dir/b.go, .gitignore (ignored/, *.log)
func setup(t *testing.T) *testBundle {
	t.Helper()
	dir := t.TempDir()
	runGit(t, dir, "init", "-q")
	write(t, dir, "a.txt", "one\ntwo\nthree\n")
	write(t, dir, "c.txt", "gone soon\n")
	write(t, dir, "dir/b.go", "package dir\n")
	write(t, dir, ".gitignore", "ignored/\n*.log\n")
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", "initial")
	ws, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &testBundle{dir: ws.Root(), ws: ws, ctx: context.Background()}
}

// runGit runs git for the test itself, isolated from the machine's config.
func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=Test", "-c", "user.email=test@example.com",
		"-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Env = append(gitEnv(nil), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func exists(dir, name string) bool {
	_, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(name)))
	return err == nil
}

func TestOpenNotAGitWorkTree(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := Open(dir)
	if err == nil || !strings.Contains(err.Error(), "not a git work tree") {
		t.Fatalf("Open(plain dir) = %v, want a 'not a git work tree' error", err)
	}
	if _, err := Open(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("Open(missing dir) succeeded")
	}
	write(t, dir, "file", "x")
	if _, err := Open(filepath.Join(dir, "file")); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("Open(file) = %v", err)
	}
}

func TestOpenSubdirectoryIsTheWholeWorkTree(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ws, err := Open(filepath.Join(b.dir, "dir"))
	if err != nil {
		t.Fatal(err)
	}
	if !sameDir(ws.Root(), b.dir) {
		t.Fatalf("Root = %s, want %s", ws.Root(), b.dir)
	}
}

func TestChangedIncludesUntrackedNotIgnored(t *testing.T) {
	t.Parallel()
	b := setup(t)
	write(t, b.dir, "a.txt", "one\nTWO\nthree\nfour\n") // -1 +2
	if err := os.Remove(filepath.Join(b.dir, "c.txt")); err != nil {
		t.Fatal(err)
	}
	write(t, b.dir, "new.txt", "x\ny\nz") // no final newline: 3 lines
	write(t, b.dir, "staged.go", "package x\n")
	runGit(t, b.dir, "add", "staged.go")
	write(t, b.dir, "bin.dat", "\x00\x01\x02")
	write(t, b.dir, "ignored/out.txt", "build output\n")
	write(t, b.dir, "debug.log", "noise\n")
	write(t, b.dir, ".wilco/runs/r1/run.log", "wilco's own\n")
	if err := os.Symlink("a.txt", filepath.Join(b.dir, "link")); err != nil {
		t.Fatal(err)
	}

	got, err := b.ws.Changed(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []core.FileState{
		{Path: "a.txt", Status: StatusModified, LinesChanged: 3},
		{Path: "bin.dat", Status: StatusAdded, LinesChanged: 0},
		{Path: "c.txt", Status: StatusDeleted, LinesChanged: 1},
		{Path: "link", Status: StatusAdded, LinesChanged: 1},
		{Path: "new.txt", Status: StatusAdded, LinesChanged: 3},
		{Path: "staged.go", Status: StatusAdded, LinesChanged: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Changed =\n%+v\nwant\n%+v", got, want)
	}
	if p := Paths(got); !slices.Equal(p, []string{"a.txt", "bin.dat", "c.txt", "link", "new.txt", "staged.go"}) {
		t.Fatalf("Paths = %v", p)
	}
}

// ChangedBetween is what a branch's commits changed since it forked, as
// its pull request shows it: a file changed by one commit and put back by
// a later one is not in it, nor is what is not committed.
func TestChangedBetweenListsWhatTheCommitsInBetweenChanged(t *testing.T) {
	t.Parallel()
	b := setup(t)
	base := strings.TrimSpace(runGit(t, b.dir, "rev-parse", "HEAD"))
	write(t, b.dir, "a.txt", "one\nTWO\nthree\n")
	write(t, b.dir, "dir/b.go", "package dir // for a while\n")
	runGit(t, b.dir, "commit", "-q", "-am", "first attempt")
	write(t, b.dir, "dir/b.go", "package dir\n")
	write(t, b.dir, "new.txt", "new\n")
	runGit(t, b.dir, "rm", "-q", "c.txt")
	runGit(t, b.dir, "add", "-A")
	runGit(t, b.dir, "commit", "-q", "-m", "second attempt")
	head := strings.TrimSpace(runGit(t, b.dir, "rev-parse", "HEAD"))
	write(t, b.dir, "uncommitted.txt", "not yet\n")
	got, err := b.ws.ChangedBetween(b.ctx, base, head)
	if err != nil || !slices.Equal(got, []string{"a.txt", "c.txt", "new.txt"}) {
		t.Fatalf("ChangedBetween = %q, %v; want a.txt c.txt new.txt", got, err)
	}
	if _, err := b.ws.ChangedBetween(b.ctx, "no-such-commit", head); err == nil {
		t.Fatal("ChangedBetween from no commit succeeded")
	}
}

func TestChangedCleanTreeIsEmpty(t *testing.T) {
	t.Parallel()
	b := setup(t)
	got, err := b.ws.Changed(b.ctx)
	if err != nil || len(got) != 0 {
		t.Fatalf("Changed = %v, %v; want nothing", got, err)
	}
}

func TestChangedBeforeTheFirstCommit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	runGit(t, dir, "init", "-q")
	write(t, dir, "tracked.txt", "a\n")
	runGit(t, dir, "add", "tracked.txt")
	write(t, dir, "untracked.txt", "b\nc\n")
	ws, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ws.Changed(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []core.FileState{
		{Path: "tracked.txt", Status: StatusAdded, LinesChanged: 1},
		{Path: "untracked.txt", Status: StatusAdded, LinesChanged: 2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Changed = %+v, want %+v", got, want)
	}
}

func TestWorktreeName(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]string{
		"T-3":          "T-3",
		"03-01:task-3": "03-01%3Atask-3",
		"a.b_c":        "a.b_c",
		".":            "%2E",
		"..":           "%2E.",
		"a/../b":       "a%2F..%2Fb",
		"a%3Ab":        "a%253Ab",
		"sp ace":       "sp%20ace",
	} {
		if got := WorktreeName(id); got != want {
			t.Errorf("WorktreeName(%q) = %q, want %q", id, got, want)
		}
	}
	seen := map[string]string{}
	for _, id := range []string{"a:b", "a_b", "a%3Ab", "a-b", "a.b", ".ab", "%2Eab"} {
		n := WorktreeName(id)
		if other, dup := seen[n]; dup {
			t.Errorf("WorktreeName(%q) = WorktreeName(%q) = %q", id, other, n)
		}
		seen[n] = id
	}
}

// TestDryRunWorktreeIsTheWorkingTreeAsItIs is the dry-run rule: "the
// agent works in a throw-away git worktree made from the current working
// tree".
func TestDryRunWorktreeIsTheWorkingTreeAsItIs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	write(t, b.dir, "a.txt", "one\ntwo (uncommitted)\nthree\n")
	write(t, b.dir, "dir/b.go", "package dir // staged\n")
	runGit(t, b.dir, "add", "dir/b.go")
	write(t, b.dir, "untracked/new.txt", "new\n")
	write(t, b.dir, "ignored/big.bin", "not carried\n")
	if err := os.Remove(filepath.Join(b.dir, "c.txt")); err != nil {
		t.Fatal(err)
	}
	statusBefore := runGit(t, b.dir, "status", "--porcelain")
	stagedBefore := runGit(t, b.dir, "diff", "--cached", "--name-status")

	wt, err := b.ws.Worktree(b.ctx, "03-01:task-3")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(wt) != "03-01%3Atask-3" || !strings.HasPrefix(wt, filepath.Join(b.dir, ".wilco", "worktrees")) {
		t.Fatalf("worktree at %s", wt)
	}
	for name, want := range map[string]string{
		"a.txt":             "one\ntwo (uncommitted)\nthree\n",
		"dir/b.go":          "package dir // staged\n",
		"untracked/new.txt": "new\n",
		".gitignore":        "ignored/\n*.log\n",
	} {
		if got := read(t, wt, name); got != want {
			t.Errorf("worktree %s = %q, want %q", name, got, want)
		}
	}
	if exists(wt, "c.txt") {
		t.Error("a file deleted in the working tree is in the worktree")
	}
	if exists(wt, "ignored/big.bin") {
		t.Error("an ignored file was carried into the worktree")
	}
	// The worktree starts clean: its HEAD is the base.
	if st := runGit(t, wt, "status", "--porcelain"); st != "" {
		t.Errorf("worktree not clean at its base:\n%s", st)
	}
	// The real working tree and index are as they were.
	if got := runGit(t, b.dir, "status", "--porcelain"); got != statusBefore {
		t.Errorf("status changed:\n%s\nwas\n%s", got, statusBefore)
	}
	if got := runGit(t, b.dir, "diff", "--cached", "--name-status"); got != stagedBefore {
		t.Errorf("index changed:\n%s\nwas\n%s", got, stagedBefore)
	}
	// And the worktree is not a change of the repository.
	changed, err := b.ws.Changed(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range changed {
		if strings.HasPrefix(f.Path, ".wilco") {
			t.Errorf("Changed lists wilco's state: %s", f.Path)
		}
	}
}

func TestWorktreeIsIdempotent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	wt, err := b.ws.Worktree(b.ctx, "T-1")
	if err != nil {
		t.Fatal(err)
	}
	write(t, wt, "work.txt", "the agent's work\n")
	again, err := b.ws.Worktree(b.ctx, "T-1")
	if err != nil {
		t.Fatal(err)
	}
	if again != wt || read(t, wt, "work.txt") != "the agent's work\n" {
		t.Fatalf("second Worktree = %s, work kept: %v", again, exists(wt, "work.txt"))
	}
}

func TestWorktreeRemnantIsRebuilt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	dir := b.ws.WorktreeDir("T-1")
	write(t, dir, "junk", "a half-made worktree\n") // no base, not a worktree
	wt, err := b.ws.Worktree(b.ctx, "T-1")
	if err != nil {
		t.Fatal(err)
	}
	if exists(wt, "junk") || !exists(wt, "a.txt") {
		t.Fatal("the remnant was not replaced by a worktree")
	}
}

func TestWorktreeBeforeTheFirstCommit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	runGit(t, dir, "init", "-q")
	write(t, dir, "f.txt", "hello\n")
	ws, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := ws.Worktree(context.Background(), "T-1")
	if err != nil {
		t.Fatal(err)
	}
	write(t, wt, "f.txt", "hello, world\n")
	diff, files, err := ws.Diff(context.Background(), "T-1")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(files, []string{"f.txt"}) || !bytes.Contains(diff, []byte("+hello, world")) {
		t.Fatalf("Diff = %v\n%s", files, diff)
	}
}

func TestWorktreesOfSeveralTasksAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = b.ws.Worktree(b.ctx, "T-"+string(rune('a'+i)))
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestDryRunDiffIsExactAndIncludesNewFiles: the diff holds what the agent
// did — edits, new files, deletions, binary files, commits — and nothing
// that was in the working tree before.
func TestDryRunDiffIsExactAndIncludesNewFiles(t *testing.T) {
	t.Parallel()
	b := setup(t)
	write(t, b.dir, "a.txt", "one\ntwo (mine, uncommitted)\nthree\n")
	write(t, b.dir, "mine.txt", "my untracked file\n")

	wt, err := b.ws.Worktree(b.ctx, "T-7")
	if err != nil {
		t.Fatal(err)
	}
	write(t, wt, "a.txt", "one\ntwo (mine, uncommitted)\nthree\nfour (agent)\n")
	write(t, wt, "mine.txt", "my untracked file\nedited by the agent\n")
	write(t, wt, "pkg/new.go", "package pkg\n")
	write(t, wt, "logo.png", "\x89PNG\x00\x01\x02\x03")
	write(t, wt, "build.log", "ignored\n")
	if err := os.Remove(filepath.Join(wt, "c.txt")); err != nil {
		t.Fatal(err)
	}
	// A commit in the worktree is part of the work too.
	write(t, wt, "committed.txt", "committed by the agent\n")
	runGit(t, wt, "add", "committed.txt")
	runGit(t, wt, "commit", "-q", "-m", "agent commit")

	diff, files, err := b.ws.Diff(b.ctx, "T-7")
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := []string{"a.txt", "c.txt", "committed.txt", "logo.png", "mine.txt", "pkg/new.go"}
	if !slices.Equal(files, wantFiles) {
		t.Fatalf("files = %v, want %v", files, wantFiles)
	}
	d := string(diff)
	for _, s := range []string{"+four (agent)", "+edited by the agent", "new file mode", "+package pkg", "deleted file mode", "GIT binary patch", "--- a/a.txt", "+++ b/a.txt"} {
		if !strings.Contains(d, s) {
			t.Errorf("diff lacks %q:\n%s", s, d)
		}
	}
	if strings.Contains(d, "-two\n") || strings.Contains(d, "+two (mine") || strings.Contains(d, "build.log") {
		t.Errorf("diff holds what was there before the dry run, or an ignored file:\n%s", d)
	}

	// The diff applies to the working tree it was made from.
	applied, err := b.ws.Apply(b.ctx, diff)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(applied)
	if !slices.Equal(applied, wantFiles) {
		t.Fatalf("Apply files = %v, want %v", applied, wantFiles)
	}
	for _, name := range []string{"a.txt", "mine.txt", "pkg/new.go", "logo.png", "committed.txt"} {
		if read(t, b.dir, name) != read(t, wt, name) {
			t.Errorf("%s after Apply differs from the worktree", name)
		}
	}
	if exists(b.dir, "c.txt") {
		t.Error("c.txt was not deleted")
	}
	if got := runGit(t, b.dir, "diff", "--cached", "--name-only"); got != "" {
		t.Errorf("Apply staged files: %s", got)
	}
}

func TestDiffOfAnUntouchedWorktreeIsEmpty(t *testing.T) {
	t.Parallel()
	b := setup(t)
	write(t, b.dir, "a.txt", "dirty\n")
	if _, err := b.ws.Worktree(b.ctx, "T-1"); err != nil {
		t.Fatal(err)
	}
	diff, files, err := b.ws.Diff(b.ctx, "T-1")
	if err != nil || len(diff) != 0 || len(files) != 0 {
		t.Fatalf("Diff = %q, %v, %v; want nothing", diff, files, err)
	}
	if files, err := b.ws.Apply(b.ctx, diff); err != nil || files != nil {
		t.Fatalf("Apply(empty) = %v, %v", files, err)
	}
}

func TestDiffWithoutWorktree(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if _, _, err := b.ws.Diff(b.ctx, "T-404"); !errors.Is(err, ErrNoWorktree) {
		t.Fatalf("Diff = %v, want ErrNoWorktree", err)
	}
}

func TestDiscard(t *testing.T) {
	t.Parallel()
	b := setup(t)
	wt, err := b.ws.Worktree(b.ctx, "03-01:task-1")
	if err != nil {
		t.Fatal(err)
	}
	write(t, wt, "x.txt", "work\n")
	if err := b.ws.Discard(b.ctx, "03-01:task-1"); err != nil {
		t.Fatal(err)
	}
	if exists(wt, "") {
		t.Fatal("the worktree directory is still there")
	}
	if list := runGit(t, b.dir, "worktree", "list", "--porcelain"); strings.Contains(list, "task-1") {
		t.Fatalf("git still lists the worktree:\n%s", list)
	}
	if _, _, err := b.ws.Diff(b.ctx, "03-01:task-1"); !errors.Is(err, ErrNoWorktree) {
		t.Fatalf("Diff after Discard = %v", err)
	}
	if err := b.ws.Discard(b.ctx, "03-01:task-1"); err != nil {
		t.Fatalf("second Discard: %v", err)
	}
	// A new dry run of the same task starts afresh.
	wt, err = b.ws.Worktree(b.ctx, "03-01:task-1")
	if err != nil || exists(wt, "x.txt") {
		t.Fatalf("Worktree after Discard = %v, old work there: %v", err, exists(wt, "x.txt"))
	}
}

// diffOf makes a diff of a change to the committed state in a scratch
// worktree.
func diffOf(t *testing.T, b *testBundle, task string, change func(dir string)) []byte {
	t.Helper()
	wt, err := b.ws.Worktree(b.ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	change(wt)
	d, _, err := b.ws.Diff(b.ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

const twenty = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n"

func TestApplyChecksFirstSoAFailedApplyChangesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	diff := diffOf(t, b, "T-1", func(wt string) {
		write(t, wt, "a.txt", "one\ntwo\nthree\nfour\n")
		write(t, wt, "dir/b.go", "package dir\n\nfunc F() {}\n")
	})
	// dir/b.go no longer is what the diff expects, in a way no merge can fix.
	write(t, b.dir, "dir/b.go", "package other\n\nfunc F() int { return 1 }\n")
	before := read(t, b.dir, "a.txt")
	_, err := b.ws.Apply(b.ctx, diff)
	var ae *ApplyError
	if !errors.As(err, &ae) || ae.File != "dir/b.go" || !strings.Contains(err.Error(), "dir/b.go") {
		t.Fatalf("Apply = %v, want an *ApplyError naming dir/b.go", err)
	}
	if read(t, b.dir, "a.txt") != before {
		t.Fatal("a.txt was changed by a failed apply")
	}
}

func TestApplyNewFileThatExists(t *testing.T) {
	t.Parallel()
	b := setup(t)
	diff := diffOf(t, b, "T-1", func(wt string) { write(t, wt, "new.txt", "from the dry run\n") })
	write(t, b.dir, "new.txt", "made meanwhile\n")
	_, err := b.ws.Apply(b.ctx, diff)
	var ae *ApplyError
	if !errors.As(err, &ae) || ae.File != "new.txt" {
		t.Fatalf("Apply = %v, want an *ApplyError naming new.txt", err)
	}
	if read(t, b.dir, "new.txt") != "made meanwhile\n" {
		t.Fatal("new.txt was overwritten")
	}
}

func TestApplyFallsBackToThreeWayMerge(t *testing.T) {
	t.Parallel()
	b := setup(t)
	write(t, b.dir, "n.txt", twenty)
	runGit(t, b.dir, "add", "n.txt")
	runGit(t, b.dir, "commit", "-q", "-m", "numbers")
	diff := diffOf(t, b, "T-1", func(wt string) {
		write(t, wt, "n.txt", strings.Replace(twenty, "\n5\n", "\nfive\n", 1))
	})
	// Line 2 is in the diff's context: a plain apply fails, a merge does not.
	write(t, b.dir, "n.txt", strings.Replace(twenty, "\n2\n", "\ntwo\n", 1))
	files, err := b.ws.Apply(b.ctx, diff)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(strings.Replace(twenty, "\n2\n", "\ntwo\n", 1), "\n5\n", "\nfive\n", 1)
	if got := read(t, b.dir, "n.txt"); got != want || !slices.Equal(files, []string{"n.txt"}) {
		t.Fatalf("n.txt = %q (files %v), want %q", got, files, want)
	}
	if got := runGit(t, b.dir, "diff", "--cached", "--name-only"); got != "" {
		t.Errorf("the merge staged files: %s", got)
	}
}

func TestApplyConflictChangesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	write(t, b.dir, "n.txt", twenty)
	runGit(t, b.dir, "add", "n.txt")
	runGit(t, b.dir, "commit", "-q", "-m", "numbers")
	diff := diffOf(t, b, "T-1", func(wt string) {
		write(t, wt, "n.txt", strings.Replace(twenty, "\n5\n", "\nfive\n", 1))
	})
	mine := strings.Replace(twenty, "\n5\n", "\nFIVE\n", 1)
	write(t, b.dir, "n.txt", mine)
	_, err := b.ws.Apply(b.ctx, diff)
	var ae *ApplyError
	if !errors.As(err, &ae) || ae.File != "n.txt" || !strings.Contains(ae.Reason, "three-way") {
		t.Fatalf("Apply = %v, want an *ApplyError naming n.txt", err)
	}
	if read(t, b.dir, "n.txt") != mine {
		t.Fatal("a conflicting apply changed the file")
	}
	if st := runGit(t, b.dir, "status", "--porcelain"); st != " M n.txt\n" {
		t.Fatalf("status after a failed apply:\n%s", st)
	}
}

func TestApplyGarbage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.ws.Apply(b.ctx, []byte("this is not a diff\n"))
	if err == nil {
		t.Fatal("Apply(garbage) succeeded")
	}
	_, err = b.ws.Apply(b.ctx, []byte("diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n"))
	var ae *ApplyError
	if !errors.As(err, &ae) || ae.Reason == "" {
		t.Fatalf("Apply(corrupt) = %v", err)
	}
}

func TestApplyErrorParsing(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ stderr, file, reason string }{
		{"error: patch failed: src/x.go:12\nerror: src/x.go: patch does not apply\n", "src/x.go", "patch failed at line 12"},
		{"error: new.txt: already exists in working directory\n", "new.txt", "already exists in working directory"},
		{"error: gone.txt: No such file or directory\n", "gone.txt", "No such file or directory"},
		{"error: corrupt patch at line 6\n", "", "corrupt patch at line 6"},
		{"error: No valid patches in input (allow with \"--allow-empty\")\n", "", "No valid patches in input"},
	} {
		e := applyError(c.stderr)
		if e.File != c.file || !strings.HasPrefix(e.Reason, c.reason) {
			t.Errorf("applyError(%q) = %q, %q; want %q, %q…", c.stderr, e.File, e.Reason, c.file, c.reason)
		}
	}
}

func TestChangedPathsAgreesWithChanged(t *testing.T) {
	t.Parallel()
	b := setup(t)
	write(t, b.dir, "tracked.txt", "one\n")
	write(t, b.dir, "gone.txt", "bye\n")
	runGit(t, b.dir, "add", "-A")
	runGit(t, b.dir, "commit", "-qm", "more")
	write(t, b.dir, "tracked.txt", "two\n")
	write(t, b.dir, "new/file.txt", "new\n")
	if err := os.Remove(filepath.Join(b.dir, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	write(t, b.dir, ".wilco/state", "x")
	full, err := b.ws.Changed(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	fast, err := b.ws.ChangedPaths(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(full) != len(fast) || len(fast) == 0 {
		t.Fatalf("full %+v fast %+v", full, fast)
	}
	for i := range full {
		if full[i].Path != fast[i].Path || full[i].Status != fast[i].Status {
			t.Fatalf("full %+v fast %+v", full[i], fast[i])
		}
	}
}

func TestWorktreeAndDiffWhenGitignoreListsTheStateDir(t *testing.T) {
	t.Parallel()
	b := setup(t)
	write(t, b.dir, ".gitignore", ".wilco/\n")
	runGit(t, b.dir, "add", "-A")
	runGit(t, b.dir, "commit", "-qm", "ignore state")
	write(t, b.dir, ".wilco/state", "x")
	write(t, b.dir, "dirty.txt", "uncommitted\n")
	wt, err := b.ws.Worktree(b.ctx, "T-1")
	if err != nil {
		t.Fatal(err)
	}
	write(t, wt, "new.txt", "new\n")
	_, files, err := b.ws.Diff(b.ctx, "T-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0] != "new.txt" {
		t.Fatalf("files %v", files)
	}
}
