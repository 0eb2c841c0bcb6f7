package exec

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
)

// Prompt modes: how the prompt reaches the process.
const (
	PromptStdin = "stdin"
	PromptArg   = "arg"
	PromptFile  = "file"
)

// Handshakes.
const (
	HandshakeInline  = "inline"
	HandshakeSession = "session"
	HandshakeNone    = "none"
)

// Phases, as WILCO_PHASE names them. PhaseMessage is this package's own:
// the agent runs once to answer a message that is not a task turn.
const (
	PhaseAck     = "ack"
	PhaseWork    = "work"
	PhaseAckWork = "ack+work"
	PhaseMessage = "message"
)

// Presets, by the name wilco.yaml gives them.
const (
	PresetClaudeCode = "claude-code"
	PresetCodex      = "codex"
	PresetGemini     = "gemini"
	PresetAider      = "aider"
	PresetOpencode   = "opencode"
)

// preset is what wilco knows of one agent's command line: the program, the
// flags of its non-interactive mode, how each prompt mode is passed, how
// a session is resumed, and how its output reads.
type preset struct {
	program string
	// base are the flags right after the program; the extra arguments of
	// `command` come after them.
	base []string
	// prompt returns the arguments that pass the prompt in a mode, and
	// whether the prompt file is also given as standard input.
	prompt func(mode, prompt, file string) (args []string, stdin bool)
	// resume returns the arguments that resume a session, placed after the
	// extra arguments and before the prompt's; nil when the agent cannot
	// resume one.
	resume func(id string) []string
	// parser reads its output.
	parser func() outputParser
	// env are variables the agent needs to run headless in wilco's
	// worktrees, set unless wilco's environment or the agent's env sets
	// them.
	env map[string]string
	// mcp returns the arguments that register wilco's MCP server (its
	// command line) with the CLI and allow its tools; nil when the preset
	// does not.
	mcp func(command []string) []string
	// mcpEnv is mcp for a CLI that takes its configuration from the
	// environment: the variables that register wilco's MCP server.
	mcpEnv func(command []string) map[string]string
	// mcpHome is mcp for a CLI that reads MCP servers only from its
	// settings files: it prepares a directory of wilco's (dir) that holds
	// the user's configuration (from home, the HOME the agent runs with)
	// with wilco's server added; mcpHomeVar is the variable that points
	// the CLI at it (a user who set it keeps theirs).
	mcpHome    func(command []string, home, dir string) error
	mcpHomeVar string
}

// mcpVars are the variables wilco's MCP server reads, passed on by the CLIs
// that start their MCP servers with an environment of their own.
var mcpVars = []string{"WILCO_URL", "WILCO_AGENT_TOKEN", "WILCO_TASK_ID", "WILCO_MESSAGE_ID", "WILCO_AGENT", "WILCO_ATTEMPT"}

// tomlString quotes s as a TOML basic string (its escapes are JSON's for
// everything wilco passes: quotes, backslashes and control characters).
func tomlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// pointer is the prompt given as an argument when the real prompt is in a
// file the agent must read.
func pointer(file string) string {
	return fmt.Sprintf("Read the file %s and follow the instructions in it exactly.", file)
}

var presets = map[string]preset{
	PresetClaudeCode: {
		program: "claude",
		base:    []string{"-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits"},
		prompt: func(mode, prompt, file string) ([]string, bool) {
			switch mode {
			case PromptArg:
				return []string{prompt}, false
			case PromptFile:
				return []string{pointer(file)}, false
			}
			return nil, true
		},
		resume: func(id string) []string { return []string{"--resume", id} },
		parser: func() outputParser { return &claudeParser{} },
		// --mcp-config takes the servers as JSON; --settings allows their
		// tools (single-value flags: a variadic --allowedTools would take
		// the prompt argument for a tool).
		mcp: func(command []string) []string {
			server := map[string]any{"wilco": map[string]any{"type": "stdio", "command": command[0], "args": command[1:]}}
			cfg, _ := json.Marshal(map[string]any{"mcpServers": server})
			return []string{"--mcp-config", string(cfg), "--settings", `{"permissions":{"allow":["mcp__wilco"]}}`}
		},
	},
	PresetCodex: {
		program: "codex",
		// --full-auto is refused by current versions (exit 2); the
		// sandbox that lets it write the working tree is named instead.
		base: []string{"exec", "--sandbox", "workspace-write", "--json"},
		prompt: func(mode, prompt, file string) ([]string, bool) {
			switch mode {
			case PromptArg:
				return []string{prompt}, false
			case PromptFile:
				return []string{pointer(file)}, false
			}
			return []string{"-"}, true
		},
		resume: func(id string) []string { return []string{"resume", id} },
		parser: func() outputParser { return &codexParser{} },
		// -c takes one TOML value: an inline table for
		// [mcp_servers.wilco]. env_vars names the variables passed on to
		// the server (Codex starts it with a clean environment). Codex
		// lists the server's tools to the model as a deferred namespace
		// (mcp__wilco) that its tool_search loads.
		mcp: func(command []string) []string {
			args := make([]string, len(command)-1)
			for i, a := range command[1:] {
				args[i] = tomlString(a)
			}
			vars := make([]string, len(mcpVars))
			for i, v := range mcpVars {
				vars[i] = tomlString(v)
			}
			return []string{"-c", fmt.Sprintf("mcp_servers.wilco={command=%s,args=[%s],env_vars=[%s],default_tools_approval_mode=\"approve\"}",
				tomlString(command[0]), strings.Join(args, ","), strings.Join(vars, ","))}
		},
	},
	PresetGemini: {
		program: "gemini",
		base:    []string{"--output-format", "stream-json", "--approval-mode", "auto_edit"},
		prompt: func(mode, prompt, file string) ([]string, bool) {
			switch mode {
			case PromptArg:
				return []string{"-p", prompt}, false
			case PromptFile:
				return []string{"-p", pointer(file)}, false
			}
			// Gemini CLI puts what it reads on standard input before the
			// -p prompt.
			return []string{"-p", "Follow the instructions above exactly. They are also in the file " + file + "."}, true
		},
		resume: func(id string) []string { return []string{"--resume", id} },
		parser: func() outputParser { return &geminiParser{} },
		// Gemini CLI refuses to run in a folder it does not trust; wilco's
		// repositories and dry-run worktrees are trusted by the user who
		// runs wilco on them.
		env: map[string]string{"GEMINI_CLI_TRUST_WORKSPACE": "true"},
		// Gemini CLI takes MCP servers from its settings files only: the
		// user's settings with wilco's server added, in a home of wilco's
		// (see geminihome.go).
		mcpHome:    geminiHome,
		mcpHomeVar: "GEMINI_CLI_HOME",
	},
	PresetAider: {
		program: "aider",
		base:    []string{"--yes-always", "--no-auto-commits", "--no-pretty"},
		prompt: func(mode, prompt, file string) ([]string, bool) {
			if mode == PromptArg {
				return []string{"--message", prompt}, false
			}
			return []string{"--message-file", file}, mode == PromptStdin
		},
		parser: func() outputParser { return &plainParser{} },
	},
	PresetOpencode: {
		program: "opencode",
		base:    []string{"run", "--format", "json"},
		prompt: func(mode, prompt, file string) ([]string, bool) {
			if mode == PromptArg {
				return []string{prompt}, false
			}
			// opencode run takes its message as arguments; the file is
			// named there, and standard input carries the prompt too.
			return []string{pointer(file)}, mode == PromptStdin
		},
		resume: func(id string) []string { return []string{"--session", id} },
		parser: func() outputParser { return &opencodeParser{} },
		// OPENCODE_CONFIG_CONTENT is merged into its configuration; the
		// tools show as wilco_wilco_ack…
		mcpEnv: func(command []string) map[string]string {
			cfg, _ := json.Marshal(map[string]any{"mcp": map[string]any{"wilco": map[string]any{"type": "local", "command": command, "enabled": true}},
				"permission": map[string]any{"wilco_*": "allow"}})
			return map[string]string{"OPENCODE_CONFIG_CONTENT": string(cfg)}
		},
	},
}

// invocation is one process to start: its argv, whether the prompt file is
// its standard input, and how its output reads.
type invocation struct {
	argv   []string
	stdin  bool
	parser outputParser
}

// buildCommand returns the command line of one turn of agent c: the
// preset's (with `command` as the program and extra arguments) or
// `command` itself, with the prompt passed per c.Prompt, resuming session
// when it is not "" and the preset can.
func buildCommand(c AgentConfig, prompt, file, session string) (invocation, error) {
	mode := c.Prompt
	if mode == "" {
		mode = PromptStdin
	}
	if c.Preset == "" {
		if len(c.Command) == 0 {
			return invocation{}, fmt.Errorf("agent %s: no command and no preset", c.Name)
		}
		argv := slices.Clone(c.Command)
		stdin := false
		switch mode {
		case PromptArg:
			argv = append(argv, prompt)
		case PromptFile:
			argv = append(argv, file)
		default:
			stdin = true
		}
		return invocation{argv: argv, stdin: stdin, parser: &plainParser{}}, nil
	}
	p, ok := presets[c.Preset]
	if !ok {
		return invocation{}, fmt.Errorf("agent %s: unknown preset %q (want %s)", c.Name, c.Preset, presetNames())
	}
	argv := []string{p.program}
	if len(c.Command) > 0 {
		argv = []string{c.Command[0]}
	}
	argv = append(argv, p.base...)
	argv = append(argv, MCPArgs(c.Preset, c.MCP)...)
	if len(c.Command) > 1 {
		argv = append(argv, c.Command[1:]...)
	}
	if session != "" && p.resume != nil {
		argv = append(argv, p.resume(session)...)
	}
	args, stdin := p.prompt(mode, prompt, file)
	argv = append(argv, args...)
	return invocation{argv: argv, stdin: stdin, parser: p.parser()}, nil
}

// presetEnv returns the variables agent c's preset needs (nil for none),
// with those that register wilco's MCP server.
func presetEnv(c AgentConfig) map[string]string {
	p := presets[c.Preset]
	if p.mcpEnv == nil || len(c.MCP) == 0 {
		return p.env
	}
	out := maps.Clone(p.env)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, MCPEnv(c.Preset, c.MCP))
	return out
}

// MCPArgs returns the arguments that register wilco's MCP server (its
// command line) with the program of a preset and allow its tools, placed
// after the program's own flags; nil when the preset registers it
// otherwise, or not at all. The interactive programs of the same CLIs
// (the tmux adapter's presets) take the same arguments.
func MCPArgs(preset string, command []string) []string {
	p := presets[preset]
	if p.mcp == nil || len(command) == 0 {
		return nil
	}
	return p.mcp(command)
}

// MCPEnv returns the variables that register wilco's MCP server with the
// program of a preset that takes its configuration from the environment
// (opencode); nil for the others.
func MCPEnv(preset string, command []string) map[string]string {
	p := presets[preset]
	if p.mcpEnv == nil || len(command) == 0 {
		return nil
	}
	return p.mcpEnv(command)
}

// MCPHome registers wilco's MCP server with the program of a preset that
// reads MCP servers only from its settings files (Gemini CLI): it prepares
// dir, a home of wilco's that holds the user's configuration (from the
// HOME of env, the agent's variables, else wilco's) with the server
// added, and returns the variable that points the program at it. It
// returns nil for the other presets, and when env or wilco's environment
// sets that variable: the user's is kept.
func MCPHome(preset string, command []string, env map[string]string, dir string) (map[string]string, error) {
	p := presets[preset]
	if p.mcpHome == nil || len(command) == 0 {
		return nil, nil
	}
	if _, set := env[p.mcpHomeVar]; set {
		return nil, nil
	}
	if _, set := os.LookupEnv(p.mcpHomeVar); set {
		return nil, nil
	}
	home := env["HOME"]
	if home == "" {
		home = os.Getenv("HOME")
	}
	if err := p.mcpHome(command, home, dir); err != nil {
		return nil, err
	}
	return map[string]string{p.mcpHomeVar: dir}, nil
}

// canResume reports whether agent c's preset resumes sessions.
func canResume(c AgentConfig) bool {
	p, ok := presets[c.Preset]
	return ok && p.resume != nil
}

func presetNames() string {
	return PresetClaudeCode + ", " + PresetCodex + ", " + PresetGemini + ", " + PresetAider + " or " + PresetOpencode
}
