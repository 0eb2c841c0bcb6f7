package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wilco/config"
)

// initCLI is a cli whose working directory is a fresh repository and
// whose PATH holds the named programs.
func initCLI(t *testing.T, programs ...string) (*cli, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	var out, errb bytes.Buffer
	c := &cli{
		stdout: &out, stderr: &errb, getenv: func(string) string { return "" }, wd: t.TempDir(),
		lookPath: func(name string) (string, error) {
			for _, p := range programs {
				if p == name {
					return filepath.Join("bin", name), nil
				}
			}
			return "", errors.New("not found")
		},
		now: time.Now, loc: time.UTC,
	}
	return c, &out, &errb
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestInitDetectsVerifyAndAgents(t *testing.T) {
	t.Parallel()
	c, out, errb := initCLI(t, "claude", "aider", "vim")
	write(t, c.wd, "go.mod", "module x\n")
	write(t, c.wd, "package.json", `{"scripts": {"test": "jest"}}`)
	write(t, c.wd, "Cargo.toml", "[package]\n")
	write(t, c.wd, "pyproject.toml", "[tool.pytest.ini_options]\n")
	if code := c.main(context.Background(), []string{"init"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	data, err := os.ReadFile(filepath.Join(c.wd, "wilco.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse("wilco.yaml", data)
	if err != nil {
		t.Fatalf("the written wilco.yaml does not load: %v\n%s", err, data)
	}
	var agents []string
	for _, a := range cfg.Agents {
		agents = append(agents, a.Name+":"+a.Adapter+":"+a.Preset+":"+strings.Join(a.Command, " "))
	}
	if got, want := strings.Join(agents, ","), "claude:exec:claude-code:claude,aider:exec:aider:aider"; got != want {
		t.Errorf("agents %s, want %s", got, want)
	}
	var steps []string
	for _, s := range cfg.Verify.Steps {
		steps = append(steps, s.Run)
	}
	if got, want := strings.Join(steps, ","), "go test ./...,npm test,cargo test,pytest"; got != want {
		t.Errorf("verify %s, want %s", got, want)
	}
	if !strings.Contains(out.String(), "verify: go test ./...") || !strings.Contains(out.String(), "agent:  claude (exec, preset claude-code)") {
		t.Errorf("printed %s", out)
	}
}

func TestInitTokenIsPrivate(t *testing.T) {
	t.Parallel()
	c, _, errb := initCLI(t)
	if code := c.main(context.Background(), []string{"init"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	path := filepath.Join(c.wd, ".wilco", "token")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("token mode %v, want 0600", fi.Mode().Perm())
	}
	dir, err := os.Stat(filepath.Join(c.wd, ".wilco"))
	if err != nil || dir.Mode().Perm() != 0o700 {
		t.Errorf(".wilco mode %v (%v), want 0700", dir.Mode().Perm(), err)
	}
	b, _ := os.ReadFile(path)
	tok := strings.TrimSpace(string(b))
	if raw, err := hex.DecodeString(tok); err != nil || len(raw) != 32 {
		t.Errorf("token %q is not 32 random bytes in hex", tok)
	}
	if ign, err := os.ReadFile(filepath.Join(c.wd, ".wilco", ".gitignore")); err != nil || !strings.Contains(string(ign), "*") {
		t.Errorf(".wilco/.gitignore: %q, %v", ign, err)
	}
}

func TestInitRefusesToOverwrite(t *testing.T) {
	t.Parallel()
	c, out, errb := initCLI(t)
	ctx := context.Background()
	if code := c.main(ctx, []string{"init"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	tokenPath := filepath.Join(c.wd, ".wilco", "token")
	token, _ := os.ReadFile(tokenPath)
	cfgPath := filepath.Join(c.wd, "wilco.yaml")
	write(t, c.wd, "wilco.yaml", "# mine\n")

	out.Reset()
	errb.Reset()
	if code := c.main(ctx, []string{"init"}); code != exitFailure {
		t.Errorf("second init: exit %d, want 1", code)
	}
	if !strings.Contains(errb.String(), "wilco.yaml already exists") || !strings.Contains(errb.String(), "--force") {
		t.Errorf("stderr %q", errb)
	}
	if b, _ := os.ReadFile(cfgPath); string(b) != "# mine\n" {
		t.Errorf("wilco.yaml was changed: %q", b)
	}

	out.Reset()
	if code := c.main(ctx, []string{"init", "--force"}); code != 0 {
		t.Fatalf("init --force: exit %d: %s", code, errb)
	}
	if b, _ := os.ReadFile(cfgPath); string(b) == "# mine\n" {
		t.Error("init --force did not overwrite wilco.yaml")
	}
	if !strings.Contains(out.String(), "overwrote wilco.yaml") || !strings.Contains(out.String(), ".wilco/token exists: kept") {
		t.Errorf("printed %s", out)
	}
	if b, _ := os.ReadFile(tokenPath); string(b) != string(token) {
		t.Error("init --force replaced the admin token")
	}
}

func TestInitWithoutAgentsOrTests(t *testing.T) {
	t.Parallel()
	c, out, errb := initCLI(t)
	write(t, c.wd, "package.json", `{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}`)
	if code := c.main(context.Background(), []string{"init"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	data, _ := os.ReadFile(filepath.Join(c.wd, "wilco.yaml"))
	cfg, err := config.Parse("wilco.yaml", data)
	if err != nil {
		t.Fatalf("does not load: %v\n%s", err, data)
	}
	// No mailbox agent nobody started: no agent at all, said loudly.
	if len(cfg.Agents) != 0 || len(cfg.Verify.Steps) != 0 {
		t.Errorf("agents %+v, steps %+v", cfg.Agents, cfg.Verify.Steps)
	}
	for _, want := range []string{"WARNING: no agent found", "WARNING: no check found", `end "unverified"`, "verify:\n    steps:"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb)
		}
	}
	if !strings.Contains(string(data), "#   - name: claude") {
		t.Errorf("wilco.yaml shows no example agent:\n%s", data)
	}
	if !strings.Contains(out.String(), "agents: none") {
		t.Errorf("printed %s", out)
	}
}
