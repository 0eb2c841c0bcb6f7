package blackbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	execadapter "wilco/adapter/exec"
	"wilco/modelserver"
)

// NpmBin returns the path of program bin of npm package pkg at the version
// wilco's preset is known to work with, installing it into a cache shared
// by test runs (and by .ci/run, which installs first) when it is missing.
// The test is skipped, saying why, only when npm or its registry cannot be
// reached.
func NpmBin(t testing.TB, pkg, preset, bin string) string {
	t.Helper()
	version := execadapter.PresetVersions[preset]
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "wilco-test", "npm", strings.ReplaceAll(strings.TrimPrefix(pkg, "@"), "/", "+")+"@"+version)
	path := filepath.Join(dir, "node_modules", ".bin", bin)
	if _, err := os.Stat(path); err == nil {
		return path
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skipf("%s %s is not installed and npm is not on the PATH (install Node.js and npm to run this test)", pkg, version)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// One install at a time per package, across test processes.
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err == nil {
		return path
	}
	cmd := exec.Command(npm, "install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel", "error", pkg+"@"+version)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if s := string(out); strings.Contains(s, "ENOTFOUND") || strings.Contains(s, "EAI_AGAIN") || strings.Contains(s, "ECONNREFUSED") ||
			strings.Contains(s, "ETIMEDOUT") || strings.Contains(s, "network") {
			t.Skipf("npm cannot reach its registry to install %s@%s: %s", pkg, version, FirstLines(out, 3))
		}
		t.Fatalf("npm install %s@%s: %v\n%s", pkg, version, err, out)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("npm installed %s@%s but %s is missing: %v", pkg, version, path, err)
	}
	return path
}

// WriteTool is the tool call that writes content into file (an absolute
// path), as Claude Code's Write tool takes it.
func WriteTool(file, content string) *modelserver.ToolUse {
	return &modelserver.ToolUse{Name: "Write", Input: map[string]any{"file_path": file, "content": content}}
}

// CodexHome is a private HOME whose .codex/config.toml names the scripted
// model provider (base_url, wire_api = "responses") and a model slug Codex
// knows, so that it offers its usual tools.
func CodexHome(t testing.TB, url string) string {
	t.Helper()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("model = \"gpt-5.5\"\nmodel_provider = \"scripted\"\n\n[model_providers.scripted]\nname = \"scripted\"\nbase_url = %q\nwire_api = \"responses\"\n", url)
	if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return home
}

// ShellTool is the tool call that runs a command, as Codex's exec_command
// takes it.
func ShellTool(cmd string) *modelserver.ToolUse {
	return &modelserver.ToolUse{Name: "exec_command", Input: map[string]any{"cmd": cmd}}
}

// RetryScript is the model's side of the scenario for a CLI whose tool
// call writes file.txt: ACK, a wrong fix, and on the retry the right one.
func RetryScript(handshake string, write func(content string) *modelserver.ToolUse) modelserver.Script {
	return func(turn modelserver.Turn) modelserver.Reply {
		retry := strings.Contains(turn.Prompt, `<retry_context attempt="2"`)
		ack := "[ACK] T-1 - RECEIVED\nUnderstanding: Will write the fix into file.txt\n\n"
		switch {
		case !strings.Contains(turn.Prompt, "T-1"):
			return modelserver.Reply{Text: "I do not know this task."}
		case handshake == "session" && strings.Contains(turn.Prompt, "for the acknowledgment only"):
			return modelserver.Reply{Text: ack}
		case turn.Step == 0 && !retry:
			return modelserver.Reply{Text: ack + "I will write a first guess.", Tool: write("attempt 1")}
		case turn.Step == 0:
			return modelserver.Reply{Text: ack + "The check says what it wants; writing it.", Tool: write("fixed T-1")}
		}
		return modelserver.Reply{Text: "Done: wrote file.txt."}
	}
}

// OpencodeHome is a private HOME for the real opencode whose
// .config/opencode/opencode.json defines a provider on
// @ai-sdk/openai-compatible with the scripted API's url as its baseURL,
// and makes its model the default.
func OpencodeHome(t testing.TB, url string) string {
	t.Helper()
	home := t.TempDir()
	dir := filepath.Join(home, ".config", "opencode")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`{"$schema": "https://opencode.ai/config.json",
 "provider": {"scripted": {"npm": "@ai-sdk/openai-compatible", "name": "scripted",
   "options": {"baseURL": %q, "apiKey": "scripted-key"}, "models": {"m1": {"name": "m1"}}}},
 "model": "scripted/m1"}`, url)
	if err := os.WriteFile(filepath.Join(dir, "opencode.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	// opencode installs its provider's package with npm, in the
	// background: its cache is one shared by the tests (npm's cache takes
	// concurrent writers), never in this HOME, which a write after the test
	// would keep from being removed.
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	npmrc := "cache=" + filepath.Join(cache, "wilco-test", "npm-cache") + "\n"
	if err := os.WriteFile(filepath.Join(home, ".npmrc"), []byte(npmrc), 0o644); err != nil {
		t.Fatal(err)
	}
	return home
}
