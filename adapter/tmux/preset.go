package tmux

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
)

// Preset names: the interactive programs of the agents the exec adapter
// runs in their non-interactive mode.
const (
	PresetClaudeCode = "claude-code"
	PresetCodex      = "codex"
	PresetGemini     = "gemini"
	PresetOpencode   = "opencode"
	PresetAider      = "aider"
)

// Preset is how to run one agent's interactive program in a pane and read
// it: its command line, how it shows ready, busy and a permission
// question, its own startup questions, and its keys.
type Preset struct {
	Name    string
	Program string
	// Args are the arguments before the user's extra ones.
	Args []string
	// NewSession gives the arguments that start a new conversation whose
	// id is id, when the program takes one (nil: it makes its own).
	NewSession func(id string) []string
	// Resume gives the arguments that resume the conversation id ("" :
	// the most recent one); nil when the program cannot resume.
	Resume func(id string) []string
	// ResumeFirst: the resume arguments go before the extra ones (a
	// subcommand).
	ResumeFirst bool
	Style       Style
	// Submit is the key that submits the input; Interrupt stops a turn;
	// Clear empties the input box; Approve and Deny answer a permission
	// question.
	Submit    string
	Interrupt []string
	Clear     []string
	Approve   []string
	Deny      []string
	// Env is set for the program unless the agent's env sets it.
	Env map[string]string
	// Unset are variables removed from the program's environment unless
	// the agent's env sets them: in a pane the program is interactive,
	// whatever wilco's own environment says (Gemini CLI runs headless,
	// reading its prompt from stdin, when CI=true).
	Unset []string
	// Skills and Plugins say where the agent loads skills and plugins
	// from, given the program's environment (HOME, its config directory
	// variable); nil when it has none.
	Skills  func(env map[string]string) string
	Plugins func(env map[string]string) string
	// PluginManifest is the file a plugin directory must hold.
	PluginManifest string
}

func mustRE(s string) *regexp.Regexp { return regexp.MustCompile(s) }

// home is the agent's home directory: its env's HOME, else wilco's.
func home(env map[string]string) string {
	if h := env["HOME"]; h != "" {
		return h
	}
	return userHome
}

// userHome is wilco's own home directory (a variable for the tests).
var userHome = func() string {
	h, _ := os.UserHomeDir()
	return h
}()

// dirOr is env[key] when set, else the default directory.
func dirOr(env map[string]string, key, def string) string {
	if v := env[key]; v != "" {
		return v
	}
	return def
}

// spinner lines of Claude Code's turn ("✻ Flummoxing… (6s · ↓ 20 tokens)",
// "✻ Crunched for 10s · done 10:18 AM"), read from its screen.
var claudeDrop = []*regexp.Regexp{
	mustRE(`^\s*[·✢✳✶✻✽*]\s+\S+…`),
	mustRE(`^\s*✻\s+\S+ for \d`),
	mustRE(`^\s{16,}\S`), // right-aligned hints: "◐ medium · /effort", "ctrl+g to edit in Vim", "tmux focus-events off"
	mustRE(`^\s*tmux focus-events off`),
	// The banner: its logo, version, model and billing line.
	mustRE(`^\s*[▐▛▜▝▘▗▖▙▟█▀▄▌]`), mustRE(`^\s*Claude Code v\d`), mustRE(`· API Usage Billing|· Claude (Pro|Max|Team|Enterprise)`),
}

// Presets are the interactive programs wilco knows. Each one's screen was
// read from the real program (the versions of the exec presets): its
// input box, its busy line, its permission and startup questions.
var Presets = map[string]Preset{
	// Claude Code: "❯ " opens its input box between two rules ("─"), its
	// status line says "esc to interrupt" while it works, its messages
	// begin with "● ", a tool's result with "⎿". Once a file changed it may
	// show a side panel of the diff, right of a vertical rule ("│"). A permission question
	// ("Do you want to create file.txt?") lists "❯ 1. Yes", "2. Yes, and
	// always allow…", "3. No" (Esc cancels). At its first start in a folder
	// it asks whether to trust it (default "No, exit") and whether to use
	// the API key of its environment (default "No"): both are answered
	// yes, since the agent was configured with them.
	//
	// Skills: <config dir>/skills/<name>/SKILL.md, the config dir being
	// $CLAUDE_CONFIG_DIR or ~/.claude. Plugins: a plugin directory (with
	// .claude-plugin/plugin.json) in that same skills directory loads at
	// the next start as <name>@skills-dir (Claude Code's `claude plugin
	// --help`, 2.1.331: "Scaffold a new plugin at ~/.claude/skills/<name>/
	// (auto-loads next session as <name>@skills-dir)").
	PresetClaudeCode: {
		Name: PresetClaudeCode, Program: "claude", Args: []string{"--permission-mode", "acceptEdits"},
		NewSession: func(id string) []string { return []string{"--session-id", id} },
		Resume: func(id string) []string {
			if id == "" {
				return []string{"--continue"}
			}
			return []string{"--resume", id}
		},
		Style: Style{
			// Busy: its status line says "esc to interrupt" — but not yet
			// while a turn starts, when only its spinner ("✶ Whirring…")
			// shows.
			Ready: mustRE(`(?m)^❯\s*$`), Busy: mustRE(`esc to interrupt|(?m)^\s*[·✢✳✶✻✽*] \S+…`),
			Permission: mustRE(`(?s)Do you want to [^\n]*\?.*❯ 1\. Yes`),
			Dialogs: []DialogRule{
				{Name: "trust the folder", Match: mustRE(`❯ No, exit`), Keys: []string{"Down", "Enter"}},
				{Name: "trust the folder", Match: mustRE(`❯ Yes, I trust this folder`), Keys: []string{"Enter"}},
				{Name: "use the API key", Match: mustRE(`(?s)Do you want to use this API key\?.*❯ No`), Keys: []string{"Up", "Enter"}},
				{Name: "use the API key", Match: mustRE(`(?s)Do you want to use this API key\?.*❯ Yes`), Keys: []string{"Enter"}},
			},
			LiveRule: '─', Drop: claudeDrop, SidePanel: true,
			DropBlock:   []*regexp.Regexp{mustRE(`^\s*⎿\s+Tip: `)},
			EchoMarkers: []string{"❯ "}, ReplyMarkers: []string{"● ", "⏺ ", "⎿ "},
			Tool: mustRE(`(?m)^[●⏺]\s*([A-Za-z][\w.-]*)\(`),
		},
		Submit: "Enter", Interrupt: []string{"Escape"}, Clear: []string{"C-u"},
		Approve: []string{"1"}, Deny: []string{"Escape"},
		Skills: func(env map[string]string) string {
			return filepath.Join(dirOr(env, "CLAUDE_CONFIG_DIR", filepath.Join(home(env), ".claude")), "skills")
		},
		Plugins: func(env map[string]string) string {
			return filepath.Join(dirOr(env, "CLAUDE_CONFIG_DIR", filepath.Join(home(env), ".claude")), "skills")
		},
		PluginManifest: filepath.Join(".claude-plugin", "plugin.json"),
	},
	// Codex: "› " opens its input box (an empty one shows a faint
	// placeholder), "• Working (1s • esc to interrupt)" while it works,
	// its messages begin with "• ". It is ready once its status line
	// shows the model under the input box ("GPT-5.5 default · <folder>"):
	// at its first start it draws its input box a moment before it asks
	// to trust the folder, and takes no prompt then. It asks once to trust
	// the folder ("› 1. Trust and continue") and may offer a newer model
	// ("› 1. Try new model", "2. Use existing model"): the existing one is
	// kept by its key "2", which chooses it whatever is highlighted (Enter
	// or Escape take the highlighted choice, the new model at first).
	//
	// Its approvals ask "Would you like to run the following command?"
	// (or to make edits, grant permissions), then give the model's reason
	// and the command ("$ go test ./...", a long one wrapped, each line of
	// a multi-line one on a row), and "› 1. Yes, proceed (y)" … "No, and
	// tell Codex what to do differently (esc)": Enter says yes; Escape
	// says no, and Codex stops its turn. The command is the question's
	// tool, and all the allow list is matched against (codexAsks).
	//
	// It runs with --no-daemon: Codex 0.169.0 otherwise starts an
	// app-server under $CODEX_HOME that runs its conversations and
	// outlives it (and the agent's session); this way the agent's whole
	// program is in its pane, and ends with it.
	//
	// Skills: $CODEX_HOME/skills/<name>/SKILL.md ($CODEX_HOME defaults to
	// ~/.codex); it has no plugin directory.
	PresetCodex: {
		Name: PresetCodex, Program: "codex", Args: []string{"--no-daemon"},
		Resume: func(id string) []string {
			if id == "" {
				return []string{"resume", "--last"}
			}
			return []string{"resume", id}
		},
		ResumeFirst: true,
		Style: Style{
			Ready: mustRE(`(?m)^›[ \t]*\n(?:[ \t]*\n)*[ \t]+\S.* · `), Busy: mustRE(`esc to interrupt`),
			Permission: mustRE(`(?s)Would you like to (?:run|make|grant|send)[^\n]*\?.*\n(?:› |  )1\. Yes.*Press enter to confirm or esc to cancel`),
			Dialogs: []DialogRule{
				{Name: "trust the folder", Match: mustRE(`(?s)Trust this folder\?.*› 1\. Trust and continue`), Keys: []string{"Enter"}},
				{Name: "keep the model", Match: mustRE(`(?:^|\n)(?:› |  )1\. Try new model\s*\n(?:› |  )2\. Use existing model`), Keys: []string{"2"}},
			},
			LiveFrom:    mustRE(`^›( |$)`),
			Drop:        []*regexp.Regexp{mustRE(`^\s*Worked for \d`), mustRE(`^\s*• Working \(`), mustRE(`^\s{24,}\S`)},
			EchoMarkers: []string{"› "}, ReplyMarkers: []string{"• "},
			PermissionBelow: true,
			Asks:            codexAsks,
		},
		Submit: "Enter", Interrupt: []string{"Escape"}, Clear: []string{"C-u"},
		Approve: []string{"Enter"}, Deny: []string{"Escape"},
		Skills: func(env map[string]string) string {
			return filepath.Join(dirOr(env, "CODEX_HOME", filepath.Join(home(env), ".codex")), "skills")
		},
	},
	// Gemini CLI: " > " opens its input box (an empty one shows "Type your
	// message or @path/to/file"), "(esc to cancel, 2s)" while it works,
	// its messages begin with "✦ ". --skip-trust trusts the folder for the
	// session. Its confirmations are a box below the conversation, headed
	// by the tool it asks for ("? Shell  rm -f keep.txt", "? WriteFile
	// Writing to file.txt"), asking "Allow execution of [Shell]?" or
	// "Apply this change?" with "● 1. Allow once" chosen (Enter) and "No,
	// suggest changes (esc)" last: Escape cancels the request. A prompt
	// submitted while it starts (its MCP servers not ready yet) waits in
	// its queue ("Queued (press ↑ to edit):" above the input box, the box
	// empty): it has the prompt, and runs it once it is ready.
	//
	// Skills: ~/.gemini/skills/<name>/SKILL.md; plugins are its extensions:
	// ~/.gemini/extensions/<name>/gemini-extension.json.
	PresetGemini: {
		Name: PresetGemini, Program: "gemini", Args: []string{"--skip-trust"},
		NewSession: func(id string) []string { return []string{"--session-id", id} },
		Resume: func(id string) []string {
			if id == "" {
				id = "latest"
			}
			return []string{"--resume", id}
		},
		Style: Style{
			Ready:      mustRE(`(?m)^\s?>\s+(Type your message or @path/to/file)?\s*$`),
			Busy:       mustRE(`esc to cancel|(?m)^\s*Queued \(press ↑ to edit\):`),
			Permission: mustRE(`Allow execution of|Apply this change\?`),
			Dialogs: []DialogRule{
				{Name: "trust the folder", Match: mustRE(`(?s)Do you trust the files in this folder\?.*● 1\. Trust folder`), Keys: []string{"Enter"}},
			},
			LiveRule: '─', Drop: []*regexp.Regexp{mustRE(`^\s{24,}\S`), mustRE(`^\s*Press (Ctrl\+O to expand pasted text|Esc again to rewind)`)},
			// The queue: its prompts, each flattened on a line under it.
			DropBlock:   []*regexp.Regexp{mustRE(`^\s*Queued \(press ↑ to edit\):`)},
			EchoMarkers: []string{"> "}, ReplyMarkers: []string{"✦ "},
			// The header of a confirmation's box ("│ ? Shell  rm…"): a tool
			// done or cancelled shows "✓" or "-" in place of "?".
			Tool: mustRE(`(?m)^│ \? ([A-Za-z][\w.-]*)\s`),
		},
		Submit: "Enter", Interrupt: []string{"Escape"}, Clear: []string{"C-u"},
		Approve: []string{"Enter"}, Deny: []string{"Escape"},
		Env: map[string]string{"GEMINI_CLI_TRUST_WORKSPACE": "true"},
		// isHeadlessMode (packages/core/src/utils/headless.ts, 0.61.0):
		// CI=true or GITHUB_ACTIONS=true means headless unless
		// GEMINI_CLI_INTEGRATION_TEST=true.
		Unset: []string{"CI", "GITHUB_ACTIONS"},
		Skills: func(env map[string]string) string {
			return filepath.Join(home(env), ".gemini", "skills")
		},
		Plugins: func(env map[string]string) string {
			return filepath.Join(home(env), ".gemini", "extensions")
		},
		PluginManifest: "gemini-extension.json",
	},
	// opencode: a full-screen interface with a side panel (context,
	// tokens, LSP) on the right of a screen wider than 120 columns
	// (opencodePanel); "esc interrupt" while it works. Its markdown
	// rendering was once seen to drop the brackets of "[ACK]". Its input
	// box looks the same empty or holding a prompt.
	//
	// Its permission question is a box at the bottom of the screen (at
	// most 15 rows): "△ Permission required", what it asks ("# Shell
	// command" and "$ <command>", or a title: "→ Edit file.txt"…), then
	// "Allow once   Allow always   Reject" with "Allow once" highlighted:
	// Enter says yes once; Escape rejects, and opencode ends its turn (its
	// record then says nothing of the turn's end: the pane does). What it
	// asks is the question's tool, and all an allow list is matched
	// against (opencodeAsks); a command of more than six rows may be cut
	// off by the box, and reads as none. By default it asks only to reach
	// outside the folder it runs in and to read .env files; its
	// configuration's "permission" makes it ask for more ("bash": "ask").
	//
	// Skills: $XDG_CONFIG_HOME/opencode/skills/<name>/SKILL.md
	// (~/.config by default); plugins: …/opencode/plugins/.
	PresetOpencode: {
		Name: PresetOpencode, Program: "opencode",
		Resume: func(id string) []string {
			if id == "" {
				return []string{"--continue"}
			}
			return []string{"--session", id}
		},
		Style: Style{
			Ready: mustRE(`(?m)^\s*┃\s+Build · `), Busy: mustRE(`esc interrupt`),
			Permission:      mustRE(`(?s)△ Permission required[^\n]*\n.*\n[^\n]*\bAllow once +Allow always +Reject\b`),
			Drop:            []*regexp.Regexp{mustRE(`^\s*▣\s`), mustRE(`^\s*⬝`)},
			Panel:           opencodePanel,
			HiddenInput:     true,
			EchoMarkers:     []string{"┃ "},
			PermissionBelow: true,
			Asks:            opencodeAsks,
			AskRows:         12,
		},
		Submit: "Enter", Interrupt: []string{"Escape"}, Clear: []string{"C-u"},
		Approve: []string{"Enter"}, Deny: []string{"Escape"},
		Skills: func(env map[string]string) string {
			return filepath.Join(dirOr(env, "XDG_CONFIG_HOME", filepath.Join(home(env), ".config")), "opencode", "skills")
		},
		Plugins: func(env map[string]string) string {
			return filepath.Join(dirOr(env, "XDG_CONFIG_HOME", filepath.Join(home(env), ".config")), "opencode", "plugins")
		},
	},
	// Aider: its prompt is "> " (with its mode before it, "architect> "),
	// and it asks its questions as "(Y)es/(N)o". It cannot resume a
	// conversation by id: --restore-chat-history reloads the last one. It
	// has no skills or plugins.
	PresetAider: {
		Name: PresetAider, Program: "aider", Args: []string{"--no-pretty", "--no-fancy-input"},
		Resume: func(string) []string { return []string{"--restore-chat-history"} },
		Style: Style{
			Ready: mustRE(`^(\w+)?> ?$`), ReadyLastLine: true,
			Permission: mustRE(`\(Y\)es/\(N\)o`),
		},
		Submit: "Enter", Interrupt: []string{"C-c"},
		Approve: []string{"y", "Enter"}, Deny: []string{"n", "Enter"},
	},
}

// PresetNames lists the presets, sorted.
func PresetNames() []string {
	var out []string
	for n := range Presets {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// newSessionID is a random UUID (version 4).
func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// opencodePanel is the column opencode's side panel begins at: on a
// screen wider than 120 columns it shows it, 42 columns wide, at the
// right (read in the conversation view of the TUI bundled in opencode-ai
// 1.18.33: the panel shows when the screen is wider than 120, and the
// conversation is then 42 + 4 columns narrower than the screen).
func opencodePanel(width int) int {
	if width > 120 {
		return width - 42
	}
	return 0
}

// opencodeAsks reads what opencode's permission question asks (its text
// from the question down, each row without the box's edge and trimmed):
// for a shell command ("# Shell command"), the rows from the one that
// begins with "$ " to the choices, a long command wrapped on several and a
// multi-line one on a row each; for another question, its title (after its
// icon: "→ Edit file.txt", "← Access external directory /srv", "⚙ Call
// tool wilco_wilco_ack", "# General Task"). Read in the program bundled
// in opencode-ai 1.18.33 (its TUI's permission prompt) and seen on its
// screen.
var opencodeAsks = mustRE(`(?s)^△ Permission required\n(?:# Shell command\n\$ (.+)\nAllow once |# ([^\n]+ Task)\n|[→←✱%◈⟳⚙] ([^\n]+))`)

// codexAsks reads the command of Codex's approval question (its text from
// the question down, each row trimmed): the rows from the one that begins
// with "$ " to the choices. The model's reason comes above the command and
// may wrap, and a command's own lines are drawn as they are: a question
// with two rows that begin with "$ " cannot be read whole, and reads as
// none — an allow list answers it no.
var codexAsks = mustRE(`(?s)^Would you like[^\n]*\n(?:[^$\n][^\n]*\n|\$[^ \n][^\n]*\n)*\$ ((?:[^\n]|\n[^$\n]|\n\$[^ \n])*?)\n(?:› )?1\. Yes`)
