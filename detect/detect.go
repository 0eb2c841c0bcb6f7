// Package detect finds what `wilco init` writes into wilco.yaml: the
// verify steps a project's files point to, one per ecosystem (Go, Node,
// Rust, Python), and the agent CLIs installed on PATH, each an exec agent
// with its preset; and what init warns of: an installed CLI newer than its
// preset is known to work with, a project outside git.
package detect

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os/exec"
	"strings"
	"time"

	execadapter "wilco/adapter/exec"
	"wilco/config"
)

// StepTimeout bounds each detected verify step.
const StepTimeout = 10 * time.Minute

// npmPlaceholderTest is the test script `npm init` writes: it is no test.
const npmPlaceholderTest = `echo "Error: no test specified" && exit 1`

// Steps returns the verify steps the project whose root is fsys suggests,
// in this order: go.mod → go test ./...; package.json with a test script
// (not npm's placeholder) → npm test; Cargo.toml → cargo test;
// pyproject.toml, pytest.ini, conftest.py, or a pytest section in
// setup.cfg or tox.ini → pytest.
func Steps(fsys fs.FS) []config.Step {
	exists := func(name string) bool {
		_, err := fs.Stat(fsys, name)
		return err == nil
	}
	contains := func(name, s string) bool {
		b, err := fs.ReadFile(fsys, name)
		return err == nil && strings.Contains(string(b), s)
	}
	var steps []config.Step
	step := func(name, run string) { steps = append(steps, config.Step{Name: name, Run: run, Timeout: StepTimeout}) }
	if exists("go.mod") {
		step("go", "go test ./...")
	}
	if b, err := fs.ReadFile(fsys, "package.json"); err == nil {
		var pkg struct {
			Scripts map[string]string `json:"scripts"`
		}
		if json.Unmarshal(b, &pkg) == nil {
			if t := strings.TrimSpace(pkg.Scripts["test"]); t != "" && t != npmPlaceholderTest {
				step("npm", "npm test")
			}
		}
	}
	if exists("Cargo.toml") {
		step("cargo", "cargo test")
	}
	if exists("pytest.ini") || exists("pyproject.toml") || exists("conftest.py") ||
		contains("setup.cfg", "[tool:pytest]") || contains("tox.ini", "[pytest]") {
		step("pytest", "pytest")
	}
	return steps
}

// Programs are the agent CLIs Agents looks for, in the order it lists
// them, with the exec preset that drives each (the agent is named after
// its program).
var Programs = []struct{ Program, Preset string }{
	{"claude", execadapter.PresetClaudeCode},
	{"codex", execadapter.PresetCodex},
	{"gemini", execadapter.PresetGemini},
	{"aider", execadapter.PresetAider},
	{"opencode", execadapter.PresetOpencode},
}

// Agents returns an exec agent for each known CLI that lookPath finds
// (exec.LookPath: on PATH): named after its program, with its preset, its
// program as its command.
func Agents(lookPath func(string) (string, error)) []config.Agent {
	var out []config.Agent
	for _, p := range Programs {
		if _, err := lookPath(p.Program); err == nil {
			out = append(out, config.Agent{Name: p.Program, Adapter: "exec", Preset: p.Preset, Command: []string{p.Program}})
		}
	}
	return out
}

// versionWait bounds a program's --version.
const versionWait = 5 * time.Second

// ErrNoVersion: the program printed no x.y.z for --version.
var ErrNoVersion = errors.New("detect: no version in the program's --version")

// Version runs program --version (for a few seconds at most) and returns
// the version it prints (the first x.y.z).
func Version(ctx context.Context, program string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, versionWait)
	defer cancel()
	out, err := exec.CommandContext(ctx, program, "--version").Output()
	if err != nil {
		return "", err
	}
	v, ok := execadapter.ParseVersion(string(out))
	if !ok {
		return "", ErrNoVersion
	}
	return v, nil
}

// NewerThanPreset reports whether version of preset's program is newer
// than the newest its preset is known to work with, and that version.
func NewerThanPreset(preset, version string) (known string, newer bool) {
	known = execadapter.PresetVersions[preset]
	return known, known != "" && execadapter.NewerVersion(version, known)
}

// InGit reports whether dir is inside a git work tree.
func InGit(dir string) bool {
	cmd := exec.Command("git", "rev-parse", "--is-inside-work-tree")
	cmd.Dir = dir
	out, err := cmd.Output()
	return err == nil && strings.TrimSpace(string(out)) == "true"
}
