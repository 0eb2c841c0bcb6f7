package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wilco/test/blackbox"
)

// The forge, intake and pull-request landing keys are checked with their
// lines by `wilco config check` and at start; a token written in the file
// is refused without being shown; landing by pull request needs a forge.
func TestTheForgeSectionIsCheckedAndLandingByPullRequestNeedsAForgeAtStart(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ keys, want string }{
		{"forge:\n  kind: github\n  token: ghp_0123456789abcdef\n", "wilco.yaml:5: forge.token: must name an environment variable, such as ${GITHUB_TOKEN}"},
		{"parallel: 2\nland: {how: pr, merge: auto}\n", "wilco.yaml:4: land.how: pr needs a forge section"},
		{"intake: {label: wilco}\n", "wilco.yaml:3: intake: needs a forge section"},
		{"forge: {kind: gitea}\n", "wilco.yaml:3: forge.api: required for gitea"},
	} {
		dir := t.TempDir()
		yaml := "agents:\n  - {name: a, adapter: mailbox}\n" + c.keys
		if err := os.WriteFile(filepath.Join(dir, "wilco.yaml"), []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		r := inRepo(t, dir, "config", "check")
		if r.Code != 1 || !strings.Contains(r.Stderr, c.want) || strings.Contains(r.Stderr, "0123456789abcdef") {
			t.Fatalf("wilco config check of\n%s: exit %d\n%s%s\nwant %s", yaml, r.Code, r.Stdout, r.Stderr, c.want)
		}
		_, out, done := serveArgs(t, dir, nil, "--addr", "127.0.0.1:0")
		select {
		case err := <-done:
			done <- err
			if err == nil || !strings.Contains(out.String(), c.want) || strings.Contains(out.String(), "0123456789abcdef") {
				t.Fatalf("wilco serve with\n%s: %v\n%s", yaml, err, out)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("wilco serve started with\n%s", yaml)
		}
	}
}

// An intake section is run: wilco config check warns of nothing, and
// wilco serve refuses to start without the forge's token, naming its
// variable (never a value).
func TestIntakeWithoutTheForgesTokenRefusesToStart(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n  - {name: a, adapter: mailbox}\nforge: {kind: github, repo: acme/widget}\nintake: {label: todo, poll: 2m}\n")
	r := inRepo(t, dir, "config", "check")
	if r.Code != 0 || strings.Contains(r.Stderr, "warning:") || !strings.Contains(r.Stdout, "label: todo") || !strings.Contains(r.Stdout, "token: ${GITHUB_TOKEN}") {
		t.Fatalf("wilco config check: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	_, out, done := serveArgs(t, dir, []string{"GITHUB_TOKEN="}, "--addr", "127.0.0.1:0")
	select {
	case err := <-done:
		done <- err
		if err == nil || !strings.Contains(out.String(), "forge.token: the environment variable GITHUB_TOKEN is not set (intake needs the forge)") {
			t.Fatalf("wilco serve: %v\n%s", err, out)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("wilco serve started without the forge's token")
	}
}
