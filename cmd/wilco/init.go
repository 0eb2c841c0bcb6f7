package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"wilco/config"
)

func lookPath(name string) (string, error) { return exec.LookPath(name) }

// knownAgents are the agent CLIs init looks for on PATH, with the exec
// preset that drives each.
var knownAgents = []struct{ program, name, preset string }{
	{"claude", "claude", "claude-code"},
	{"codex", "codex", "codex"},
	{"gemini", "gemini", "gemini"},
	{"aider", "aider", "aider"},
	{"opencode", "opencode", "opencode"},
}

// detectedAgent is an agent init writes into wilco.yaml.
type detectedAgent struct {
	name, preset, program string
}

// verifyStep is a verification command init detected.
type verifyStep struct {
	name, run string
}

// npmPlaceholderTest is the test script `npm init` writes: it is no test.
const npmPlaceholderTest = `echo "Error: no test specified" && exit 1`

// detectVerify returns the verification commands the repository at dir
// suggests: go.mod → go test ./..., package.json with a test script → npm
// test, Cargo.toml → cargo test, a pytest or pyproject configuration →
// pytest.
func detectVerify(dir string) []verifyStep {
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return err == nil
	}
	contains := func(name, s string) bool {
		b, err := os.ReadFile(filepath.Join(dir, name))
		return err == nil && strings.Contains(string(b), s)
	}
	var steps []verifyStep
	if exists("go.mod") {
		steps = append(steps, verifyStep{"go", "go test ./..."})
	}
	if b, err := os.ReadFile(filepath.Join(dir, "package.json")); err == nil {
		var pkg struct {
			Scripts map[string]string `json:"scripts"`
		}
		if json.Unmarshal(b, &pkg) == nil {
			if t := strings.TrimSpace(pkg.Scripts["test"]); t != "" && t != npmPlaceholderTest {
				steps = append(steps, verifyStep{"npm", "npm test"})
			}
		}
	}
	if exists("Cargo.toml") {
		steps = append(steps, verifyStep{"cargo", "cargo test"})
	}
	if exists("pytest.ini") || exists("pyproject.toml") || exists("conftest.py") ||
		contains("setup.cfg", "[tool:pytest]") || contains("tox.ini", "[pytest]") {
		steps = append(steps, verifyStep{"pytest", "pytest"})
	}
	return steps
}

// detectAgents returns the known agent CLIs found on PATH.
func (c *cli) detectAgents() []detectedAgent {
	var out []detectedAgent
	for _, k := range knownAgents {
		if _, err := c.lookPath(k.program); err == nil {
			out = append(out, detectedAgent{name: k.name, preset: k.preset, program: k.program})
		}
	}
	return out
}

// yamlString quotes s for YAML (a JSON string is a YAML double-quoted
// scalar).
func yamlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// renderConfig writes wilco.yaml: the detected agents and verify steps,
// every other key left to its default and shown commented.
func renderConfig(agents []detectedAgent, steps []verifyStep) []byte {
	var b strings.Builder
	b.WriteString(`# wilco configuration (written by "wilco init"). Every key but agents is
# optional; the commented values are the defaults. See docs/CONFIG.md.
version: 1
listen: 127.0.0.1:7777
# store: .wilco/wilco.db
# orchestrator: wilco

agents:
`)
	if len(agents) == 0 {
		b.WriteString(`  # No agent CLI (claude, codex, gemini, aider, opencode) was found on PATH.
  # A mailbox agent polls GET /v1/inbox with its own token; give it one with
  # "wilco agents token remote-1" once the server runs.
  - name: remote-1
    adapter: mailbox
`)
	}
	for _, a := range agents {
		fmt.Fprintf(&b, "  - name: %s\n    adapter: exec\n    preset: %s\n    command: [%s]\n", a.name, a.preset, yamlString(a.program))
	}
	b.WriteString("\n")
	if len(steps) == 0 {
		b.WriteString(`# No test command was detected: add the steps that prove a change works.
# verify:
#   steps:
#     - {name: unit, run: "make test", timeout: 10m}
`)
	} else {
		b.WriteString("verify:\n  steps:\n")
		for _, s := range steps {
			fmt.Fprintf(&b, "    - {name: %s, run: %s, timeout: 10m}\n", s.name, yamlString(s.run))
		}
	}
	b.WriteString(`
# policy:
#   ack:         {timeouts: [5m, 2m, 1m], backoff: {base: 30s, max: 2m}, on_unresponsive: reassign, max_corrections: 2, queued_followup: 15m}
#   instruction: {max_retries: 3}
#   loop:        {replan_after: 3, hard_stop: 12, max_replans: 3, escalate_after: 0}
#   operation:   {timeout: 120s, reminders: [30s, 60s, 90s], extension: 60s, proceed_on_timeout: true, quorum: all}
# logs: {retry_log_retention: 168h, retry_jsonl_retention: 720h}
# compat: {aimaestro: false}
`)
	return []byte(b.String())
}

// newToken returns a fresh admin token.
func newToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

func cmdInit(_ context.Context, c *cli, v *verb, args []string) int {
	fs := c.flags(v)
	force := fs.Bool("force", false, "overwrite an existing wilco.yaml")
	dir := fs.String("dir", ".", "the repository root")
	if _, _, code, ok := c.parse(v, fs, args, 0, 0); !ok {
		return code
	}
	root := *dir
	if !filepath.IsAbs(root) {
		root = filepath.Join(c.wd, root)
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return c.fail(fmt.Errorf("init: %s is not a directory", root))
	}

	cfgPath := filepath.Join(root, config.DefaultFile)
	_, statErr := os.Stat(cfgPath)
	exists := statErr == nil
	if exists && !*force {
		fmt.Fprintf(c.stderr, "wilco: %s already exists; keep it, or overwrite it with wilco init --force\n", config.DefaultFile)
		return exitFailure
	}
	agents := c.detectAgents()
	steps := detectVerify(root)
	data := renderConfig(agents, steps)
	if _, err := config.Parse(config.DefaultFile, data); err != nil {
		return c.fail(fmt.Errorf("init: the configuration written would not load: %w", err))
	}
	if err := os.WriteFile(cfgPath, data, 0o644); err != nil {
		return c.fail(fmt.Errorf("init: %w", err))
	}
	verb := "wrote"
	if exists {
		verb = "overwrote"
	}
	fmt.Fprintf(c.stdout, "%s %s\n", verb, config.DefaultFile)
	if len(agents) == 0 {
		fmt.Fprintln(c.stdout, "  agents: none found on PATH (claude, codex, gemini, aider, opencode); a mailbox agent remote-1 stands in")
	}
	for _, a := range agents {
		fmt.Fprintf(c.stdout, "  agent:  %s (exec, preset %s)\n", a.name, a.preset)
	}
	if len(steps) == 0 {
		fmt.Fprintln(c.stdout, "  verify: no test command detected; add one under verify.steps")
	}
	for _, s := range steps {
		fmt.Fprintf(c.stdout, "  verify: %s\n", s.run)
	}

	created, err := initStateDir(filepath.Join(root, ".wilco"))
	if err != nil {
		return c.fail(fmt.Errorf("init: %w", err))
	}
	if created {
		fmt.Fprintln(c.stdout, "created .wilco/ with the admin token in .wilco/token (mode 0600)")
	} else {
		fmt.Fprintln(c.stdout, ".wilco/token exists: kept")
	}
	fmt.Fprintln(c.stdout, `next: "wilco serve", then "wilco run \"<what to do>\""`)
	return exitOK
}

// initStateDir creates the state directory (mode 0700) with a .gitignore
// that keeps it out of git, and the admin token (mode 0600) unless one
// exists. It reports whether it made the token.
func initStateDir(dir string) (bool, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, err
	}
	ignore := filepath.Join(dir, ".gitignore")
	if _, err := os.Stat(ignore); errors.Is(err, os.ErrNotExist) {
		if err := os.WriteFile(ignore, []byte("# wilco's state (database, admin token, logs) stays out of git.\n*\n"), 0o644); err != nil {
			return false, err
		}
	}
	path := filepath.Join(dir, "token")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	tok, err := newToken()
	if err == nil {
		_, err = f.WriteString(tok + "\n")
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// The umask may have narrowed the mode; make it exactly 0600.
		err = os.Chmod(path, 0o600)
	}
	if err != nil {
		_ = os.Remove(path)
		return false, err
	}
	return true, nil
}
