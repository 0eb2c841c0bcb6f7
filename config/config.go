package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"wilco/core"
	"wilco/shellcmd"
)

// Defaults that are not delivery policies (those are core's).
const (
	// DefaultFile is the configuration file read when neither --config nor
	// WILCO_CONFIG names one.
	DefaultFile = "wilco.yaml"
	// EnvConfig names the environment variable that points to another file.
	EnvConfig = "WILCO_CONFIG"
	// DefaultListen is where the server listens: loopback only.
	DefaultListen = "127.0.0.1:7777"
	// DefaultVersion is the only version of the file there is.
	DefaultVersion = 1

	// DefaultRetryLogRetention and DefaultRetryJSONLRetention are how long
	// retry.log and retry.jsonl keep their lines: 7 days and 30 days.
	DefaultRetryLogRetention   = 7 * 24 * time.Hour
	DefaultRetryJSONLRetention = 30 * 24 * time.Hour

	// DefaultNotifyTimeout bounds one attempt of a notification: a hook
	// that has not answered in 10 s failed that attempt.
	DefaultNotifyTimeout = 10 * time.Second
	// DesktopHook is the name of the desktop notifications' hook.
	DesktopHook = core.DesktopHook
)

// Adapters, presets and modes the configuration accepts.
var (
	// Checks are what a definition-of-done check may do.
	Checks     = []string{string(core.CheckWarn), string(core.CheckBlock), string(core.CheckOff)}
	Adapters   = []string{"exec", "mailbox", "tmux"}
	Presets    = []string{"claude-code", "codex", "gemini", "aider", "opencode"}
	Prompts    = []string{"stdin", "arg", "file"}
	Handshakes = []string{"inline", "session", "none"}
	// WebhookFormats are the bodies a webhook may get: wilco's JSON, or
	// Slack's {"text": …}.
	WebhookFormats = []string{"json", "slack"}
)

// Config is the whole of wilco.yaml.
type Config struct {
	Version int
	// Listen is the server's address (host:port).
	Listen string
	// Store is the database file; "" means wilco.db in the state directory
	// (.wilco/wilco.db).
	Store string
	// Orchestrator is the name wilco signs its messages with and agents
	// write to.
	Orchestrator string
	Agents       []Agent
	Verify       Verify
	Policy       Policy
	Logs         Logs
	Compat       Compat
	// Notify says who hears of what wilco needs (docs/NOTIFY.md).
	Notify Notify
	// Prices give the cost of the turns whose CLI reports none, by model
	// name or agent name.
	Prices map[string]core.Price
	// Done is the definition of done's checks; Review names the reviewer.
	Done   core.DonePolicy
	Review core.ReviewPolicy
	// Package scopes every task to one package of a monorepo (a folder of
	// the repository), unless a task names its own.
	Package string
	// Probe asks each agent, when it registers, for its context: OS, CLI
	// version, the tools the verify steps need and the toolchains.
	Probe bool
	// Transport is the NATS server (nats://…) that carries the mailbox
	// agents' messages; "" for HTTP only.
	Transport string
	// Land is where and how verified changes land.
	Land Land
	// Forge is the forge the repository lives on (nil: none).
	Forge *Forge
	// Intake is which issues become tasks (nil: none).
	Intake *Intake
	// Parallel is how many tasks are worked at once (1: in the checkout
	// itself; more: each in a worktree and branch of its own).
	Parallel int
	// Warnings are what is valid but likely not meant, one sentence each
	// with the file, line and key (wilco serve logs them, wilco config
	// check prints them).
	Warnings []string
}

// Land is the land section: the target branch ("" for the branch checked
// out when wilco starts), how a verified change lands (commit, none), and
// in what order; for pull requests (how: pr), whether wilco merges them
// and how long it waits for CI.
type Land struct {
	To, How, Order string
	Merge          string
	// MergeMethod is how wilco merges a pull request (merge, squash,
	// rebase), with land.merge auto.
	MergeMethod string
	CITimeout   time.Duration
	// Poll is how often the pull requests are looked at on the forge.
	Poll time.Duration
}

// Default land section values.
const (
	DefaultLandHow   = core.LandNone
	DefaultLandOrder = core.DefaultLandOrder
)

// Agent is one agent of the agents list.
type Agent struct {
	Name    string
	Adapter string // exec | mailbox | tmux
	// Preset (exec only) builds the real command line of a known agent.
	Preset string
	// Command is the argv of an exec agent (with a preset: the program and
	// extra arguments), or what a tmux pane runs.
	Command []string
	// Prompt (exec only) is how the prompt reaches the process.
	Prompt string
	// Handshake (exec only) is how the ACK is asked for.
	Handshake    string
	Env          map[string]string
	Capabilities []string
	// Timeout bounds one agent turn; IdleTimeout is how long without output
	// counts as stalled. Zero: no limit.
	Timeout     time.Duration
	IdleTimeout time.Duration
	// Instances is how many tasks the agent works at once when tasks are
	// worked in parallel (0: one).
	Instances int
	// Role is "" for an agent that takes tasks, or "scout": a read-only
	// helper the agents working on tasks consult (wilco ask).
	Role string
	// Tmux holds a tmux agent's settings (nil: the preset's, or none).
	Tmux *Tmux
}

// Tmux is the tmux block of a tmux agent: its session, how its pane shows
// its state, and its keys.
type Tmux struct {
	// Session is an existing session to use (never killed by wilco);
	// Socket its tmux server's socket.
	Session string
	Socket  string
	// Ready, Busy and Permission are regular expressions (RE2) on the pane.
	Ready, Busy, Permission string
	// Submit is the key that submits; Interrupt, Clear, Approve and Deny
	// are key sequences (tmux key names).
	Submit                          string
	Interrupt, Clear, Approve, Deny []string
	// Allow lists the tools whose permission questions are answered yes
	// (the others no).
	Allow []string
	// Width and Height size a session wilco makes.
	Width, Height int
	// Settle is how long the pane must show ready for a turn to be over.
	Settle time.Duration
	// SubmitTries bounds the sends of the submit key for one prompt.
	SubmitTries int
}

// Roles an agent may have.
var Roles = []string{core.RoleScout}

// Spec is what the core registers of the agent.
func (a Agent) Spec() core.AgentSpec {
	spec := core.AgentSpec{Name: a.Name, Adapter: a.Adapter, Capabilities: slices.Clone(a.Capabilities), Settings: a.Settings(), FromConfig: true, Role: a.Role, Instances: a.Instances}
	if a.Adapter == "exec" {
		spec.Handshake = a.Handshake
	}
	return spec
}

// Verify lists the verification steps run after an agent's turn.
type Verify struct {
	Steps []Step
}

// Step is one verification command.
type Step struct {
	Name string
	Run  string
	// Timeout bounds the step; zero leaves it to the verify engine.
	Timeout time.Duration
}

// Policy holds the delivery policies and the debug loop's limits.
type Policy struct {
	Ack         core.AckPolicy
	Instruction Instruction
	Loop        core.LoopPolicy
	Operation   core.OperationPolicy
	Budget      core.BudgetPolicy
}

// Instruction is the cycles policy of instructions.
type Instruction struct {
	MaxRetries int
}

// Logs says how long the retry logs keep their lines.
type Logs struct {
	RetryLogRetention   time.Duration
	RetryJSONLRetention time.Duration
}

// Compat switches compatibility surfaces on.
type Compat struct {
	// AIMaestro serves AI Maestro's /api/messages (loopback only).
	AIMaestro bool
}

// Notify is the notify section: webhooks, desktop notifications, and how
// hard wilco tries.
type Notify struct {
	Webhooks []Webhook
	// Desktop shows notifications on this machine's desktop with
	// notify-send.
	Desktop bool
	// BaseURL is what the links to the page in notifications start with;
	// "": the server's own address.
	BaseURL string
	Retry   NotifyRetry
}

// Webhook is one HTTP endpoint notifications are POSTed to. URL and Secret
// are as written: ${NAME} in them stands for the environment variable
// (see Resolve).
type Webhook struct {
	// Name identifies the hook in the records; default: the URL's host.
	Name   string
	URL    string
	Secret string
	// Events are what the hook hears of; default core.DefaultNotifyEvents.
	Events []core.NotifyEvent
	// Format is json (wilco's body, signed) or slack ({"text": …}).
	Format string
}

// NotifyRetry is the notifications' retry policy.
type NotifyRetry struct {
	MaxAttempts int
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// Timeout bounds one attempt.
	Timeout time.Duration
}

// Hooks are the hooks the core notifies, by name: the webhooks, and the
// desktop when it is on.
func (n Notify) Hooks() []core.NotifyHook {
	var out []core.NotifyHook
	for _, w := range n.Webhooks {
		out = append(out, core.NotifyHook{Name: w.Name, Events: slices.Clone(w.Events)})
	}
	if n.Desktop {
		out = append(out, core.NotifyHook{Name: DesktopHook, Events: core.DefaultNotifyEvents()})
	}
	return out
}

// Default is the configuration with every default and no agent: what
// `wilco init` starts from.
func Default() *Config {
	return &Config{
		Version:      DefaultVersion,
		Listen:       DefaultListen,
		Orchestrator: core.Orchestrator,
		Policy: Policy{
			Ack:         core.DefaultAckPolicy(),
			Instruction: Instruction{MaxRetries: core.DefaultMaxRetries},
			Loop:        core.DefaultLoopPolicy(),
			Operation:   core.DefaultOperationPolicy(),
		},
		Done:     core.DonePolicy{Size: core.CheckWarn, Tests: core.CheckWarn},
		Land:     Land{How: DefaultLandHow, Order: DefaultLandOrder, Merge: DefaultLandMerge, MergeMethod: DefaultLandMergeMethod, CITimeout: DefaultLandCITimeout, Poll: DefaultLandPoll},
		Parallel: 1,
		Logs:     Logs{RetryLogRetention: DefaultRetryLogRetention, RetryJSONLRetention: DefaultRetryJSONLRetention},
		Notify: Notify{Retry: NotifyRetry{
			MaxAttempts: core.DefaultNotifyMaxAttempts, BackoffBase: core.DefaultNotifyBackoffBase,
			BackoffMax: core.DefaultNotifyBackoffMax, Timeout: DefaultNotifyTimeout,
		}},
	}
}

// Policies is what the core decides with (core.State.Configure).
func (c *Config) Policies() core.Policies {
	p := core.Policies{Ack: c.Policy.Ack, MaxRetries: c.Policy.Instruction.MaxRetries, Operation: c.Policy.Operation, Loop: c.Policy.Loop, Budget: c.Policy.Budget,
		Done: c.Done, Review: c.Review, Package: c.Package, Land: core.LandPolicy{To: c.Land.To, How: c.Land.How, Order: c.Land.Order,
			Merge: c.Land.Merge, CITimeout: c.Land.CITimeout, Forge: c.Forge != nil}}
	if c.Parallel > 1 {
		p.Parallel = c.Parallel
	}
	p.Probe.OnRegister = c.Probe
	p.Probe.Needed = c.Verify.Programs()
	p.Probe.Tools = probeTools(p.Probe.Needed)
	if len(c.Prices) > 0 {
		p.Prices = maps.Clone(c.Prices)
	}
	p.Ack.Timeouts = slices.Clone(p.Ack.Timeouts)
	p.Operation.Reminders = slices.Clone(p.Operation.Reminders)
	p.Notify = core.NotifyPolicy{Hooks: c.Notify.Hooks(), MaxAttempts: c.Notify.Retry.MaxAttempts,
		BackoffBase: c.Notify.Retry.BackoffBase, BackoffMax: c.Notify.Retry.BackoffMax}
	return p
}

// Agent returns the named agent.
func (c *Config) Agent(name string) (Agent, bool) {
	for _, a := range c.Agents {
		if a.Name == name {
			return a, true
		}
	}
	return Agent{}, false
}

// Path is the configuration file to read: flag when given, else
// $WILCO_CONFIG, else wilco.yaml.
func Path(flag string) string {
	if flag != "" {
		return flag
	}
	if p := os.Getenv(EnvConfig); p != "" {
		return p
	}
	return DefaultFile
}

// agentSettings is what an exec or tmux agent created through the API keeps
// in the store (core.Agent.Settings), so that it runs again after a
// restart.
type agentSettings struct {
	Preset      string            `json:"preset,omitempty"`
	Command     []string          `json:"command,omitempty"`
	Prompt      string            `json:"prompt,omitempty"`
	Handshake   string            `json:"handshake,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	Timeout     string            `json:"timeout,omitempty"`
	IdleTimeout string            `json:"idle_timeout,omitempty"`
	Tmux        *tmuxSettings     `json:"tmux,omitempty"`
}

type tmuxSettings struct {
	Session     string   `json:"session,omitempty"`
	Socket      string   `json:"socket,omitempty"`
	Ready       string   `json:"ready,omitempty"`
	Busy        string   `json:"busy,omitempty"`
	Permission  string   `json:"permission,omitempty"`
	Submit      string   `json:"submit,omitempty"`
	Interrupt   []string `json:"interrupt,omitempty"`
	Clear       []string `json:"clear,omitempty"`
	Approve     []string `json:"approve,omitempty"`
	Deny        []string `json:"deny,omitempty"`
	Allow       []string `json:"allow,omitempty"`
	Width       int      `json:"width,omitempty"`
	Height      int      `json:"height,omitempty"`
	Settle      string   `json:"settle,omitempty"`
	SubmitTries int      `json:"submit_tries,omitempty"`
}

// Settings encodes the agent's adapter settings (exec and tmux agents; nil
// for others).
func (a Agent) Settings() []byte {
	if a.Adapter != "exec" && a.Adapter != "tmux" {
		return nil
	}
	s := agentSettings{Preset: a.Preset, Command: a.Command, Prompt: a.Prompt, Handshake: a.Handshake, Env: a.Env}
	if a.Timeout > 0 {
		s.Timeout = a.Timeout.String()
	}
	if a.IdleTimeout > 0 {
		s.IdleTimeout = a.IdleTimeout.String()
	}
	if t := a.Tmux; t != nil {
		s.Tmux = &tmuxSettings{Session: t.Session, Socket: t.Socket, Ready: t.Ready, Busy: t.Busy, Permission: t.Permission,
			Submit: t.Submit, Interrupt: t.Interrupt, Clear: t.Clear, Approve: t.Approve, Deny: t.Deny, Allow: t.Allow,
			Width: t.Width, Height: t.Height, SubmitTries: t.SubmitTries}
		if t.Settle > 0 {
			s.Tmux.Settle = t.Settle.String()
		}
	}
	b, _ := json.Marshal(s)
	return b
}

// AgentFromSettings rebuilds an agent created through the API from what
// the store kept.
func AgentFromSettings(name, adapter string, capabilities []string, settings []byte) (Agent, error) {
	a := Agent{Name: name, Adapter: adapter, Capabilities: slices.Clone(capabilities)}
	if len(settings) == 0 {
		return a, nil
	}
	var s agentSettings
	if err := json.Unmarshal(settings, &s); err != nil {
		return a, fmt.Errorf("agent %s: settings: %w", name, err)
	}
	a.Preset, a.Command, a.Prompt, a.Handshake, a.Env = s.Preset, s.Command, s.Prompt, s.Handshake, s.Env
	var err error
	if s.Timeout != "" {
		if a.Timeout, err = time.ParseDuration(s.Timeout); err != nil {
			return a, fmt.Errorf("agent %s: timeout: %w", name, err)
		}
	}
	if s.IdleTimeout != "" {
		if a.IdleTimeout, err = time.ParseDuration(s.IdleTimeout); err != nil {
			return a, fmt.Errorf("agent %s: idle_timeout: %w", name, err)
		}
	}
	if t := s.Tmux; t != nil {
		a.Tmux = &Tmux{Session: t.Session, Socket: t.Socket, Ready: t.Ready, Busy: t.Busy, Permission: t.Permission,
			Submit: t.Submit, Interrupt: t.Interrupt, Clear: t.Clear, Approve: t.Approve, Deny: t.Deny, Allow: t.Allow,
			Width: t.Width, Height: t.Height, SubmitTries: t.SubmitTries}
		if t.Settle != "" {
			if a.Tmux.Settle, err = time.ParseDuration(t.Settle); err != nil {
				return a, fmt.Errorf("agent %s: tmux.settle: %w", name, err)
			}
		}
	}
	return a, nil
}

// toolchains are the language toolchains a context probe asks about.
var toolchains = []string{"git", "go", "node", "npm", "python3", "cargo"}

// probeTools are the tools a context probe asks about: git, the verify
// steps' programs, the toolchains.
func probeTools(needed []string) []string {
	out := slices.Clone(needed)
	for _, t := range toolchains {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// Programs are the programs the verify steps run, each once, as a context
// probe asks about them: the commands each step's line runs as sh reads
// it (shellcmd.Programs), not the shell's builtins (test, echo, exit…),
// variable assignments, or the repository's own scripts.
func (v Verify) Programs() []string {
	var out []string
	for _, s := range v.Steps {
		for _, p := range shellcmd.Programs(s.Run) {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// CheckTransport says what is wrong with a transport: it must be NATS
// servers' URLs (nats:// or tls://), separated by commas.
func CheckTransport(transport string) error {
	for _, u := range strings.Split(transport, ",") {
		scheme, host, ok := strings.Cut(strings.TrimSpace(u), "://")
		if !ok || scheme != "nats" && scheme != "tls" || host == "" {
			return fmt.Errorf("must be a NATS server URL such as nats://127.0.0.1:4222 (several separated by commas), got %q", transport)
		}
	}
	return nil
}
