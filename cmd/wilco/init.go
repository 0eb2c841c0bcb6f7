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
	"time"

	execadapter "wilco/adapter/exec"
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

`)
	if len(agents) == 0 {
		b.WriteString(`# No agent CLI (claude, codex, gemini, aider, opencode) was found on PATH:
# every task is refused until you add an agent. Replace [] with a list of
# agents, such as these (see docs/AGENTS.md):
agents: []
# Examples:
#   - name: claude                    # Claude Code, run headless per turn
#     adapter: exec
#     preset: claude-code             # or codex, gemini, opencode, aider
#     command: [claude]
#   - name: mine                      # any program: the prompt on stdin
#     adapter: exec
#     command: [./my-agent.sh]
#     prompt: stdin
#   - name: remote-1                  # an agent that polls GET /v1/inbox with
#     adapter: mailbox                # its own token (wilco agents token remote-1)
`)
	} else {
		b.WriteString("agents:\n")
	}
	for _, a := range agents {
		fmt.Fprintf(&b, "  - name: %s\n    adapter: exec\n    preset: %s\n    command: [%s]\n", a.name, a.preset, yamlString(a.program))
	}
	b.WriteString("\n")
	if len(steps) == 0 {
		b.WriteString(`# No test command was detected. Until you add the steps that prove a change
# works, no task can succeed: each ends "unverified" (wilco run exits 3).
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
#   budget:      {task: {max_cost_usd: 0, max_tokens: 0}, day: {max_cost_usd: 0, max_tokens: 0}}   # 0: no limit
# logs: {retry_log_retention: 168h, retry_jsonl_retention: 720h}
# compat: {aimaestro: false}

# To hear when you are needed (an escalation, a question, a blocked or stuck
# task…): webhooks and desktop notifications, see docs/NOTIFY.md.
# notify:
#   desktop: false
#   retry: {max_attempts: 10, backoff: {base: 1s, max: 5m}, timeout: 10s}
# Examples:
#   webhooks:
#     - url: https://hooks.example.com/wilco
#       secret: "${WILCO_HOOK_SECRET}"  # HMAC-SHA256 key, from the environment
#       events: [escalated, stuck, clarification, blocked, unresponsive, operation, failed]
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
	for _, a := range agents {
		fmt.Fprintf(c.stdout, "  agent:  %s (exec, preset %s)\n", a.name, a.preset)
		if v, ok := c.agentVersion(a.program); ok && execadapter.NewerVersion(v, execadapter.PresetVersions[a.preset]) {
			fmt.Fprintf(c.stderr, "note: %s %s is newer than %s, the newest version its preset is known to work with: "+
				"if its tasks fail to start, see docs/AGENTS.md for what the preset relies on\n", a.program, v, execadapter.PresetVersions[a.preset])
		}
	}
	if len(agents) == 0 {
		fmt.Fprintf(c.stdout, "  agents: none\n")
		fmt.Fprint(c.stderr, `
WARNING: no agent found. None of claude, codex, gemini, aider, opencode is on
the PATH, so wilco.yaml lists no agent (agents: []) and every task will be
refused until you add one. Install an agent CLI and run "wilco init --force",
or uncomment an example under agents: in wilco.yaml (see docs/AGENTS.md).
`)
	}
	if len(steps) == 0 {
		fmt.Fprintf(c.stdout, "  verify: none\n")
		fmt.Fprint(c.stderr, `
WARNING: no check found. wilco found no test command (go.mod, package.json
with a test script, Cargo.toml, pytest), so nothing will verify the agents'
work: tasks will end "unverified", never "success", and wilco run exits 3.
Add the command that proves a change works to wilco.yaml:

  verify:
    steps:
      - {name: test, run: "make test", timeout: 10m}

`)
	}
	if !insideGit(root) {
		fmt.Fprint(c.stderr, `
WARNING: not a git repository. wilco works in git: without it there are no
dry runs (wilco run --dry-run, diff, apply), no list of the files an attempt
changed, and no boundaries check. Run "git init" here (and commit) first.
`)
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
	if len(agents) > 0 {
		fmt.Fprintln(c.stdout, `check that the agents answer: "wilco agents check" (one short turn each)`)
	}
	fmt.Fprintln(c.stdout, `next: "wilco serve", then "wilco run \"<what to do>\""`)
	return exitOK
}

// agentVersion runs "program --version" (for a few seconds at most) and
// returns the version it prints.
func (c *cli) agentVersion(program string) (string, bool) {
	path, err := c.lookPath(program)
	if err != nil {
		return "", false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return "", false
	}
	return execadapter.ParseVersion(string(out))
}

// insideGit reports whether dir is inside a git working tree.
func insideGit(dir string) bool {
	cmd := exec.Command("git", "rev-parse", "--is-inside-work-tree")
	cmd.Dir = dir
	out, err := cmd.Output()
	return err == nil && strings.TrimSpace(string(out)) == "true"
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
