package forgetest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"wilco/forge/forgetest"
)

// git runs git in dir, never asking for a credential.
func git(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=",
		"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.invalid",
		"GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func mustGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := git(t, dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return out
}

func TestAPushOverHTTPNeedsTheToken(t *testing.T) {
	s := forgetest.New(t, forgetest.Options{})
	dir := t.TempDir()
	if out, err := git(t, dir, "clone", "-q", s.GitURL(), "anon"); err == nil {
		t.Fatalf("a clone without the token worked: %s", out)
	}
	mustGit(t, dir, "clone", "-q", s.AuthGitURL(), "work")
	work := filepath.Join(dir, "work")
	mustGit(t, work, "switch", "-q", "-c", "feature")
	os.WriteFile(filepath.Join(work, "a.txt"), []byte("a\n"), 0o644)
	mustGit(t, work, "add", ".")
	mustGit(t, work, "commit", "-q", "-m", "a")
	sha := mustGit(t, work, "rev-parse", "HEAD")

	if out, err := git(t, work, "push", "-q", s.GitURL(), "feature"); err == nil {
		t.Fatalf("a push without the token worked: %s", out)
	}
	if s.Head("feature") != "" {
		t.Fatal("the push without the token made the branch")
	}
	if out, err := git(t, work, "push", "-q", strings.Replace(s.AuthGitURL(), s.Token, "wrong", 1), "feature"); err == nil {
		t.Fatalf("a push with a wrong token worked: %s", out)
	}
	mustGit(t, work, "push", "-q", "origin", "feature")
	if got := s.Head("feature"); got != sha {
		t.Fatalf("after the push the forge's feature is %q, want %s", got, sha)
	}
	// The bare repository holds the commit for real.
	if out := mustGit(t, s.Bare, "cat-file", "-t", sha); out != "commit" {
		t.Fatalf("cat-file: %s", out)
	}
	// The token as a header, as a CI job sends it, is taken too.
	for _, scheme := range []string{"Bearer", "token"} {
		branch := "by-" + strings.ToLower(scheme)
		mustGit(t, work, "-c", "http.extraHeader=Authorization: "+scheme+" "+s.Token, "push", "-q", s.GitURL(), "feature:"+branch)
		if s.Head(branch) != sha {
			t.Fatalf("the push with Authorization: %s did not land", scheme)
		}
	}
	var sawRefused, sawPush bool
	for _, r := range s.Requests() {
		if strings.HasSuffix(r.Path, "/git-receive-pack") || strings.Contains(r.Query, "git-receive-pack") {
			if r.Auth == "" && r.Status == 401 {
				sawRefused = true
			}
			if r.Auth == "basic" && r.Status == 200 {
				sawPush = true
			}
		}
	}
	if !sawRefused || !sawPush {
		t.Fatalf("requests: refused %v, pushed %v: %+v", sawRefused, sawPush, s.Requests())
	}
}
