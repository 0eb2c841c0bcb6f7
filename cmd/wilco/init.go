package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"wilco/config"
	"wilco/detect"
)

func lookPath(name string) (string, error) { return exec.LookPath(name) }

// newToken returns a fresh admin token.
func newToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

func cmdInit(ctx context.Context, c *cli, v *verb, args []string) int {
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
	cfg := config.Default()
	cfg.Agents, cfg.Verify.Steps = detect.Agents(c.lookPath), detect.Steps(os.DirFS(root))
	data, err := cfg.EncodeStarter()
	if err == nil {
		_, err = config.Parse(config.DefaultFile, data)
	}
	if err != nil {
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
	c.printInitAgents(ctx, cfg.Agents)
	c.printInitSteps(cfg.Verify.Steps, detect.InGit(root))

	created, err := initStateDir(filepath.Join(root, ".wilco"))
	if err != nil {
		return c.fail(fmt.Errorf("init: %w", err))
	}
	if created {
		fmt.Fprintln(c.stdout, "created .wilco/ with the admin token in .wilco/token (mode 0600)")
	} else {
		fmt.Fprintln(c.stdout, ".wilco/token exists: kept")
	}
	if len(cfg.Agents) > 0 {
		fmt.Fprintln(c.stdout, `check that the agents answer: "wilco agents check" (one short turn each)`)
	}
	fmt.Fprintln(c.stdout, `next: "wilco serve", then "wilco run \"<what to do>\""`)
	return exitOK
}

// printInitAgents prints the agents init wrote, a note for each whose CLI
// is newer than its preset is known to work with, and a warning when there
// is none.
func (c *cli) printInitAgents(ctx context.Context, agents []config.Agent) {
	for _, a := range agents {
		fmt.Fprintf(c.stdout, "  agent:  %s (exec, preset %s)\n", a.Name, a.Preset)
		program := a.Command[0]
		path, err := c.lookPath(program)
		if err != nil {
			continue
		}
		if v, err := detect.Version(ctx, path); err == nil {
			if known, newer := detect.NewerThanPreset(a.Preset, v); newer {
				fmt.Fprintf(c.stderr, "note: %s %s is newer than %s, the newest version its preset is known to work with: "+
					"if its tasks fail to start, see docs/AGENTS.md for what the preset relies on\n", program, v, known)
			}
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
}

// printInitSteps prints the verify steps init wrote, with a warning when
// there is none, and a warning when the repository is not in git.
func (c *cli) printInitSteps(steps []config.Step, inGit bool) {
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
	if !inGit {
		fmt.Fprint(c.stderr, `
WARNING: not a git repository. wilco works in git: without it there are no
dry runs (wilco run --dry-run, diff, apply), no list of the files an attempt
changed, and no boundaries check. Run "git init" here (and commit) first.
`)
	}
	for _, s := range steps {
		fmt.Fprintf(c.stdout, "  verify: %s\n", s.Run)
	}
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
