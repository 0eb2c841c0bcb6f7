package detect

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"wilco/config"
)

func runs(steps []config.Step) []string {
	var out []string
	for _, s := range steps {
		out = append(out, s.Name+": "+s.Run)
		if s.Timeout != StepTimeout {
			out = append(out, "timeout "+s.Timeout.String())
		}
	}
	return out
}

// TestTheVerifyStepsAreTheProjectsOwnTests: each project of testdata
// gets the test command of its ecosystem, one per ecosystem of its root,
// in the order Go, Node, Rust, Python.
func TestTheVerifyStepsAreTheProjectsOwnTests(t *testing.T) {
	t.Parallel()
	for project, want := range map[string][]string{
		"go":                    {"go: go test ./..."},
		"node":                  {"npm: npm test"},
		"node-npm-init":         nil, // npm's placeholder test script is no test
		"node-no-test":          nil,
		"node-broken":           nil, // a package.json that is no JSON
		"rust":                  {"cargo: cargo test"},
		"python-pyproject":      {"pytest: pytest"},
		"python-pytest-ini":     {"pytest: pytest"},
		"python-conftest":       {"pytest: pytest"},
		"python-setup-cfg":      {"pytest: pytest"},
		"python-setup-cfg-only": nil,
		"python-tox":            {"pytest: pytest"},
		"python-setup-py":       nil, // no sign of pytest
		"polyglot":              {"go: go test ./...", "npm: npm test", "cargo: cargo test", "pytest: pytest"},
		"nested":                nil, // the root's files only
		"none":                  nil,
	} {
		got := runs(Steps(os.DirFS(filepath.Join("testdata", "projects", project))))
		if !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", project, got, want)
		}
	}
}

func TestDetectVerifyPytest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ file, content string }{
		{"pytest.ini", "[pytest]\n"},
		{"conftest.py", ""},
		{"setup.cfg", "[tool:pytest]\n"},
		{"tox.ini", "[pytest]\n"},
	} {
		if got := Steps(fstest.MapFS{tc.file: {Data: []byte(tc.content)}}); len(got) != 1 || got[0].Run != "pytest" {
			t.Errorf("%s: %v", tc.file, got)
		}
	}
	if got := Steps(fstest.MapFS{"setup.cfg": {Data: []byte("[metadata]\n")}}); len(got) != 0 {
		t.Errorf("a setup.cfg without pytest: %v", got)
	}
}

// TestTheAgentsAreTheCLIsOnThePath: an exec agent per known CLI found,
// named after its program, with its preset; other programs are no agents.
func TestTheAgentsAreTheCLIsOnThePath(t *testing.T) {
	t.Parallel()
	onPath := []string{"vim", "aider", "claude", "opencode"}
	lookPath := func(name string) (string, error) {
		if slices.Contains(onPath, name) {
			return "/usr/bin/" + name, nil
		}
		return "", exec.ErrNotFound
	}
	var got []string
	for _, a := range Agents(lookPath) {
		got = append(got, a.Name+":"+a.Adapter+":"+a.Preset+":"+strings.Join(a.Command, " "))
	}
	want := []string{"claude:exec:claude-code:claude", "aider:exec:aider:aider", "opencode:exec:opencode:opencode"}
	if !slices.Equal(got, want) {
		t.Errorf("%q, want %q", got, want)
	}
	for _, p := range Programs {
		if !slices.Contains(config.Presets, p.Preset) {
			t.Errorf("%s's preset %s is not one the configuration accepts", p.Program, p.Preset)
		}
	}
	if len(Agents(func(string) (string, error) { return "", exec.ErrNotFound })) != 0 {
		t.Error("agents found on an empty PATH")
	}
}

// TestAnAgentWhosePresetKnowsNoVersionIsNeverNewer: a CLI is newer than
// its preset knows only when the preset knows a version (Aider's knows
// none).
func TestAnAgentWhosePresetKnowsNoVersionIsNeverNewer(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		preset, version, known string
		newer                  bool
	}{
		{"claude-code", "9.0.0", "2.1.331", true},
		{"claude-code", "2.1.331", "2.1.331", false},
		{"claude-code", "2.0.1", "2.1.331", false},
		{"aider", "1.2.3", "", false},
		{"unknown", "1.0.0", "", false},
	} {
		known, newer := NewerThanPreset(c.preset, c.version)
		if known != c.known || newer != c.newer {
			t.Errorf("%s %s: %q %v, want %q %v", c.preset, c.version, known, newer, c.known, c.newer)
		}
	}
}

// TestVersionIsWhatTheProgramPrints runs programs: one that prints its
// version among other words, one that prints none, one that fails.
func TestVersionIsWhatTheProgramPrints(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	ctx := context.Background()
	if v, err := Version(ctx, script("claude", `[ "$1" = --version ] && echo "2.1.4 (Claude Code)"`)); err != nil || v != "2.1.4" {
		t.Errorf("claude: %q %v", v, err)
	}
	if v, err := Version(ctx, script("mute", `echo "a program"`)); !errors.Is(err, ErrNoVersion) {
		t.Errorf("no version printed: %q %v", v, err)
	}
	if _, err := Version(ctx, script("broken", "exit 3")); err == nil {
		t.Error("a program that fails gave a version")
	}
	if _, err := Version(ctx, filepath.Join(dir, "absent")); err == nil {
		t.Error("a program that is not there gave a version")
	}
}

func TestInGit(t *testing.T) {
	t.Parallel()
	repo, plain := t.TempDir(), t.TempDir()
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	sub := filepath.Join(repo, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if !InGit(repo) || !InGit(sub) {
		t.Error("a git work tree (or a folder of one) is not in git")
	}
	if InGit(plain) {
		t.Error("a folder outside git is in git")
	}
}
