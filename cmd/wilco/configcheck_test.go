package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigCheckSaysWhatOfTheForgeIsWrong(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	check := func(yaml string) (int, string, string) {
		path := filepath.Join(dir, "wilco.yaml")
		if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"config", "check", "--config", path}, &out, &errb)
		return code, out.String(), errb.String()
	}
	agent := "agents: [{name: a, adapter: mailbox}]\n"

	code, _, stderr := check(agent + "forge:\n  kind: github\n  token: ghp_literal0123\n")
	if code != exitFailure || !strings.Contains(stderr, "wilco.yaml:4: forge.token: must name an environment variable, such as ${GITHUB_TOKEN}") ||
		strings.Contains(stderr, "ghp_literal0123") {
		t.Fatalf("a token in the file: exit %d\n%s", code, stderr)
	}
	code, _, stderr = check(agent + "parallel: 2\nland: {how: pr}\n")
	if code != exitFailure || !strings.Contains(stderr, "wilco.yaml:3: land.how: pr needs a forge section") {
		t.Fatalf("land.how pr without a forge: exit %d\n%s", code, stderr)
	}
	code, _, stderr = check(agent + "parallel: 2\nforge: {kind: github}\nland: {how: pr}\n")
	if code != exitOK {
		t.Fatalf("land.how pr with a forge: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr := check(agent + "forge: {kind: github}\nintake: {label: todo}\n")
	if code != exitOK || strings.Contains(stderr, "warning:") ||
		!strings.Contains(stdout, "token: ${GITHUB_TOKEN}") || !strings.Contains(stdout, "label: todo") {
		t.Fatalf("intake: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
