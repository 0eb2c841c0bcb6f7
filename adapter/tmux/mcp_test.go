package tmux

import (
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Every preset whose CLI has an MCP client registers wilco's MCP server with
// its interactive program as the exec preset does with the same CLI —
// Claude Code's and Codex's by arguments, opencode's by its configuration
// variable, Gemini CLI's in a home of wilco's — and gives it the ids of the
// turn the program starts for. Aider's gets none; a variable the agent's
// env sets is the user's.
func TestEveryPresetRegistersWilcosMCPServerWithItsProgram(t *testing.T) {
	t.Parallel()
	runs := t.TempDir()
	a := &Adapter{opts: Options{MCP: []string{"/bin/wilco", "mcp"}}, runsDir: runs, log: slog.New(slog.DiscardHandler)}
	agentOf := func(preset string, env map[string]string) *agent {
		p := Presets[preset]
		ag := &agent{a: a, cfg: AgentConfig{Name: preset, Preset: preset, Env: env}, preset: &p}
		ag.queue = []*job{{msg: delegation("M-1", "T-3", 1, "Fix it")}}
		return ag
	}
	envOf := func(ag *agent) map[string]string {
		out := map[string]string{}
		for _, kv := range ag.env() {
			k, v, _ := strings.Cut(kv, "=")
			out[k] = v
		}
		return out
	}
	home := map[string]string{"HOME": t.TempDir()}
	ids := func(t *testing.T, env map[string]string) {
		t.Helper()
		if env["WILCO_TASK_ID"] != "T-3" || env["WILCO_MESSAGE_ID"] != "M-1" {
			t.Fatalf("the first turn's ids: %q %q", env["WILCO_TASK_ID"], env["WILCO_MESSAGE_ID"])
		}
	}

	claude := agentOf(PresetClaudeCode, home)
	argv, _ := claude.argv(false, "")
	i := slices.Index(argv, "--mcp-config")
	if i < 0 || !strings.Contains(argv[i+1], `"wilco":{"args":["mcp"],"command":"/bin/wilco","type":"stdio"}`) || !slices.Contains(argv, `{"permissions":{"allow":["mcp__wilco"]}}`) {
		t.Fatalf("Claude Code's command line: %q", argv)
	}
	ids(t, envOf(claude))

	codex := agentOf(PresetCodex, home)
	argv, _ = codex.argv(true, "0199-abc")
	if len(argv) < 6 || argv[1] != "resume" || argv[2] != "0199-abc" || argv[3] != "--no-daemon" || argv[4] != "-c" ||
		!strings.HasPrefix(argv[5], `mcp_servers.wilco={command="/bin/wilco",args=["mcp"],env_vars=["WILCO_URL","WILCO_AGENT_TOKEN","WILCO_TASK_ID","WILCO_MESSAGE_ID"`) {
		t.Fatalf("Codex's command line: %q", argv)
	}
	ids(t, envOf(codex))

	gemini := envOf(agentOf(PresetGemini, home))
	if gemini["GEMINI_CLI_HOME"] != filepath.Join(runs, "homes", PresetGemini) {
		t.Fatalf("Gemini CLI's home: %q", gemini["GEMINI_CLI_HOME"])
	}
	b, err := os.ReadFile(filepath.Join(gemini["GEMINI_CLI_HOME"], ".gemini", "settings.json"))
	var settings struct {
		MCPServers map[string]struct {
			Command string
			Args    []string
			Trust   bool
		} `json:"mcpServers"`
	}
	if err != nil || json.Unmarshal(b, &settings) != nil || settings.MCPServers["wilco"].Command != "/bin/wilco" || !settings.MCPServers["wilco"].Trust {
		t.Fatalf("Gemini CLI's settings (%v): %s", err, b)
	}
	ids(t, gemini)

	opencode := envOf(agentOf(PresetOpencode, home))
	if !strings.Contains(opencode["OPENCODE_CONFIG_CONTENT"], `"wilco":{"command":["/bin/wilco","mcp"],"enabled":true,"type":"local"}`) {
		t.Fatalf("opencode's configuration: %q", opencode["OPENCODE_CONFIG_CONTENT"])
	}
	ids(t, opencode)
	own := envOf(agentOf(PresetOpencode, map[string]string{"OPENCODE_CONFIG_CONTENT": `{"theme":"x"}`}))
	if own["OPENCODE_CONFIG_CONTENT"] != `{"theme":"x"}` {
		t.Fatalf("the agent's own opencode configuration was replaced: %q", own["OPENCODE_CONFIG_CONTENT"])
	}

	aider := agentOf(PresetAider, home)
	argv, _ = aider.argv(false, "")
	if env := envOf(aider); slices.ContainsFunc(argv, func(s string) bool { return strings.Contains(s, "wilco") }) || env["WILCO_TASK_ID"] != "" {
		t.Fatalf("Aider, which has no MCP client: %q %v", argv, env)
	}
}

// A preset's Unset leaves the program's environment, whatever wilco's own
// says (Gemini CLI runs headless under CI=true), unless the agent's env
// sets it; the shell around the program still writes its exit status.
func TestAPresetsUnsetVariablesLeaveTheProgramsEnvironment(t *testing.T) {
	t.Parallel()
	exitFile := filepath.Join(t.TempDir(), "exit")
	p := Preset{Name: "p", Unset: []string{"CI", "GITHUB_ACTIONS", "KEEP", "not a name"}}
	ag := &agent{cfg: AgentConfig{Name: "p", Env: map[string]string{"KEEP": "mine"}}, preset: &p}
	argv := ag.wrap([]string{"sh", "-c", `echo "CI=[${CI-unset}] GA=[${GITHUB_ACTIONS-unset}] KEEP=[$KEEP]"; exit 3`})
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "CI=true", "GITHUB_ACTIONS=true", "KEEP=mine", "WILCO_EXIT_FILE="+exitFile)
	out, err := cmd.Output()
	if got, want := strings.TrimSpace(string(out)), "CI=[unset] GA=[unset] KEEP=[mine]"; got != want {
		t.Fatalf("the program's environment: %q, want %q (%v)", got, want, err)
	}
	if b, _ := os.ReadFile(exitFile); strings.TrimSpace(string(b)) != "3" {
		t.Fatalf("exit status written: %q", b)
	}
	if g := Presets[PresetGemini]; !slices.Contains(g.Unset, "CI") {
		t.Fatalf("Gemini CLI's preset unsets %q", g.Unset)
	}
}
