package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// status is `git status --porcelain` of the work tree, the state
// directory left out.
func status(t *testing.T, dir string) string {
	t.Helper()
	return runGit(t, dir, "status", "--porcelain", "--untracked-files=all", "--", ".", ":(exclude).wilco")
}

func TestCommitRecordsExactlyItsPathsAndLeavesTheRestOfTheWorkTreeAndIndexAsTheyWere(t *testing.T) {
	t.Parallel()
	b := setup(t)
	write(t, b.dir, "d.txt", "to delete\n")
	runGit(t, b.dir, "add", "d.txt")
	runGit(t, b.dir, "commit", "-q", "-m", "d")
	runGit(t, b.dir, "config", "user.name", "Repo User")
	runGit(t, b.dir, "config", "user.email", "repo@example.com")
	before := runGit(t, b.dir, "rev-parse", "HEAD")
	// The user's own work: a staged edit, an unstaged edit, an untracked
	// file.
	write(t, b.dir, "a.txt", "one\ntwo\nthree\nfour\n")
	runGit(t, b.dir, "add", "a.txt")
	write(t, b.dir, "c.txt", "mine\n")
	write(t, b.dir, "notes.md", "my notes\n")
	// The task's: an edit, a new file in a new folder, a deletion, a name
	// git would read as a pattern.
	write(t, b.dir, "dir/b.go", "package dir\n\nfunc B() {}\n")
	write(t, b.dir, "new/x.go", "package new\n")
	write(t, b.dir, "*.go", "a star\n")
	if err := os.Remove(filepath.Join(b.dir, "d.txt")); err != nil {
		t.Fatal(err)
	}
	userStatus := "M  a.txt\n M c.txt\n?? notes.md\n"

	msg := "Fix b\n\nWhat changed:\n- dir/b.go\n\nWilco-Task: T-1\nWilco-Run: T-1-a1\n"
	h, err := b.ws.Commit(b.ctx, []string{"*.go", "d.txt", "dir/b.go", "new/x.go"}, msg)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(runGit(t, b.dir, "rev-parse", "HEAD")); got != h {
		t.Fatalf("Commit returned %s, HEAD is %s", h, got)
	}
	if got := strings.TrimSpace(runGit(t, b.dir, "rev-parse", "HEAD~1")); got != strings.TrimSpace(before) {
		t.Fatalf("the commit's parent is %s, not the HEAD before", got)
	}
	if got := runGit(t, b.dir, "show", "--name-status", "--format=", "HEAD"); got != "A\t*.go\nD\td.txt\nM\tdir/b.go\nA\tnew/x.go\n" {
		t.Fatalf("the commit holds:\n%s", got)
	}
	if got := runGit(t, b.dir, "log", "-1", "--format=%B%an <%ae>"); got != msg+"Repo User <repo@example.com>\n" {
		t.Fatalf("the commit's message and author:\n%q", got)
	}
	if got := status(t, b.dir); got != userStatus {
		t.Fatalf("after the commit the user's changes are:\n%s\nwant\n%s", got, userStatus)
	}
	if read(t, b.dir, "a.txt") != "one\ntwo\nthree\nfour\n" || read(t, b.dir, "c.txt") != "mine\n" || read(t, b.dir, "notes.md") != "my notes\n" {
		t.Fatal("the user's files changed")
	}

	// FindCommit finds it by its trailers, since the HEAD before, on the
	// branch; not for another run, nor since itself.
	found, files, err := b.ws.FindCommit(b.ctx, "main", strings.TrimSpace(before), map[string]string{"Wilco-Task": "T-1", "Wilco-Run": "T-1-a1"})
	if err != nil || found != h || !slices.Equal(files, []string{"*.go", "d.txt", "dir/b.go", "new/x.go"}) {
		t.Fatalf("FindCommit: %q %q %v", found, files, err)
	}
	for _, c := range []struct {
		branch, since string
		trailers      map[string]string
	}{
		{"main", "", map[string]string{"Wilco-Task": "T-1", "Wilco-Run": "T-1-a2"}},
		{"main", h, map[string]string{"Wilco-Run": "T-1-a1"}},
		{"other", "", map[string]string{"Wilco-Run": "T-1-a1"}},
		{"main", "", nil},
	} {
		if found, _, err := b.ws.FindCommit(b.ctx, c.branch, c.since, c.trailers); err != nil || found != "" {
			t.Fatalf("FindCommit(%s, %q, %v) found %q, %v", c.branch, c.since, c.trailers, found, err)
		}
	}
	if found, _, err := b.ws.FindCommit(b.ctx, "main", "", map[string]string{"wilco-run": "T-1-a1"}); err != nil || found != h {
		t.Fatalf("a trailer's key is case-insensitive, as git reads it: %q %v", found, err)
	}
}

func TestACommitAHookRefusesIsACommitErrorWithItsOutputAndTheIndexAsItWas(t *testing.T) {
	t.Parallel()
	b := setup(t)
	runGit(t, b.dir, "config", "user.name", "Repo User")
	runGit(t, b.dir, "config", "user.email", "repo@example.com")
	hook := filepath.Join(b.dir, ".git", "hooks", "pre-commit")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho 'pre-commit: CHANGELOG is missing'\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	head := runGit(t, b.dir, "rev-parse", "HEAD")
	write(t, b.dir, "new.txt", "new\n")
	write(t, b.dir, "a.txt", "changed\n")
	_, err := b.ws.Commit(b.ctx, []string{"a.txt", "new.txt"}, "x\n")
	var ce *CommitError
	if !errors.As(err, &ce) || !ce.Hook || ce.ExitCode != 1 || !strings.Contains(ce.Output, "pre-commit: CHANGELOG is missing") {
		t.Fatalf("a refused commit: %#v (%v)", ce, err)
	}
	if got := runGit(t, b.dir, "rev-parse", "HEAD"); got != head {
		t.Fatal("a commit was made")
	}
	if got := status(t, b.dir); got != " M a.txt\n?? new.txt\n" {
		t.Fatalf("after the refusal the index is not as it was:\n%s", got)
	}
	// Without a hook, git's own refusal is no hook's.
	if err := os.Remove(hook); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.dir, ".git", "index.lock"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = b.ws.Commit(b.ctx, []string{"a.txt"}, "x\n")
	if errors.As(err, &ce) && ce.Hook || err == nil || !strings.Contains(err.Error(), "index.lock") {
		t.Fatalf("a commit git refused: %v", err)
	}
}

func TestTheFirstCommitOfARepositoryIsMadeAndItsBranchIsNamed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	runGit(t, dir, "init", "-q")
	runGit(t, dir, "config", "user.name", "Repo User")
	runGit(t, dir, "config", "user.email", "repo@example.com")
	ws, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if br, err := ws.Branch(ctx); err != nil || br != "main" {
		t.Fatalf("the branch of a repository with no commit: %q %v", br, err)
	}
	write(t, dir, "a.txt", "a\n")
	write(t, dir, "mine.txt", "mine\n")
	h, err := ws.Commit(ctx, []string{"a.txt"}, "first\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := runGit(t, dir, "show", "--name-only", "--format=", h); got != "a.txt\n" {
		t.Fatalf("the first commit holds %q", got)
	}
	if got := status(t, dir); got != "?? mine.txt\n" {
		t.Fatalf("status after the first commit:\n%s", got)
	}
	runGit(t, dir, "checkout", "-q", "--detach")
	if br, err := ws.Branch(ctx); err != nil || br != "" {
		t.Fatalf("the branch of a detached HEAD: %q %v", br, err)
	}
}

// Not parallel: it changes the process's environment (git's configuration
// with no user in it).
func TestWithNoUserInGitsConfigurationWilcoCommitsAsItselfForThatCommitOnly(t *testing.T) {
	b := setup(t)
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, v := range []string{"EMAIL", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	write(t, b.dir, "a.txt", "changed\n")
	h, err := b.ws.Commit(b.ctx, []string{"a.txt"}, "x\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := runGit(t, b.dir, "log", "-1", "--format=%an <%ae>|%cn <%ce>", h); got != "wilco <wilco@localhost>|wilco <wilco@localhost>\n" {
		t.Fatalf("author and committer: %q", got)
	}
	if out, err := git(b.ctx, b.dir, nil, nil, "config", "--get", "user.name"); err == nil {
		t.Fatalf("the configuration was changed: user.name %q", out)
	}
}

// FuzzHasTrailers: the trailers git prints of a commit whose last
// paragraph names a task and its run are found by those values, and by no
// other; any output is read without a panic.
func FuzzHasTrailers(f *testing.F) {
	f.Add("Wilco-Task: T-1\nWilco-Run: T-1-a1\nWilco-Agent: claude\n", "T-1", "T-1-a1")
	f.Add("wilco-run:T-2-a3\nWilco-Task:   T-2  \n", "T-2", "T-2-a3")
	f.Add("Signed-off-by: A <a@b>\n", "T-1", "T-1-a1")
	f.Add(":\n::\nWilco-Run\n", "", "")
	f.Fuzz(func(t *testing.T, lines, task, run string) {
		want := map[string]string{"Wilco-Task": strings.TrimSpace(task), "Wilco-Run": strings.TrimSpace(run)}
		_ = hasTrailers(lines, want)
		if strings.ContainsAny(task+run, "\n\r:") {
			return
		}
		written := lines + "\nWilco-Task: " + want["Wilco-Task"] + "\nWilco-Run: " + want["Wilco-Run"] + "\n"
		if !hasTrailers(written, want) {
			t.Fatalf("trailers %q not found in\n%s", want, written)
		}
		other := map[string]string{"Wilco-Run": want["Wilco-Run"] + "x"}
		if hasTrailers("Wilco-Run: "+want["Wilco-Run"]+"\n", other) {
			t.Fatalf("%q found in a commit of run %q", other, want["Wilco-Run"])
		}
		if hasTrailers(written, nil) {
			t.Fatal("no trailer asked for matched a commit")
		}
	})
}
