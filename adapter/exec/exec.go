package exec

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"wilco/adapter"
	"wilco/core"
)

// Defaults.
const (
	// DefaultRunsDir is where turns keep their prompt and log, under the
	// repository.
	DefaultRunsDir = ".wilco/runs"
	// DefaultKillGrace is how long a stopped process group has between
	// SIGTERM and SIGKILL.
	DefaultKillGrace = 5 * time.Second
	// DefaultResultGrace is how long a program whose output said its turn
	// is over (Claude Code's result) has to exit by itself.
	DefaultResultGrace = 10 * time.Second
)

// Files of a run directory.
const (
	PromptFileName     = "prompt.md"     // the prompt of the running process
	DelegationFileName = "delegation.md" // the last full prompt of the task's delegation
	LogFileName        = "agent.log"     // everything the agent wrote, stdout and stderr
)

// Options configures an Adapter.
type Options struct {
	// Dir is the repository: the working directory of every turn but a
	// dry run's.
	Dir string
	// RunsDir is where run directories go, relative to Dir unless absolute
	// (default DefaultRunsDir).
	RunsDir string
	// URL is wilco's address, given to agents as WILCO_URL (and
	// WILCO_ADDR, for the wilco CLI).
	URL string
	// Worktree returns the working directory of a dry run's task (the
	// throw-away worktree). It is called at the start of each of the
	// task's turns, so it must return the same worktree when called again.
	Worktree func(ctx context.Context, taskID string) (string, error)
	// Report receives replies, ends of turns and the rest of what the
	// adapter learns. Required.
	Report adapter.Reporter
	// Logger (default slog.Default()).
	Logger *slog.Logger
	// MCP is the command line of wilco's MCP server for agents
	// (wilco mcp), which the presets that can register it with their CLI
	// do; nil: none is registered.
	MCP []string
	// KillGrace is the time between SIGTERM and SIGKILL (default
	// DefaultKillGrace).
	KillGrace time.Duration
	// ResultGrace is how long a program whose output said its turn is
	// over has to exit by itself before what still runs of it is stopped
	// and the turn ends as its output said (default DefaultResultGrace):
	// Claude Code writes its result and then waits for the shells it left
	// running in the background, which may never end (a dev server).
	ResultGrace time.Duration
	// ReadOnly, when set, gives a scout's question (by message id) a copy
	// of the working tree to work in — the checkout's, or the worktree's
	// (relative to Dir) of the task worked in parallel that asks — and the
	// function that, once the scout's turn is over, lists the files it
	// changed there and removes the copy.
	ReadOnly func(ctx context.Context, messageID, worktree string) (dir string, done func(context.Context) ([]string, error), err error)
	// RateLimitWait is how long to wait before the n-th (1-based) time a
	// turn's work, cut short by a rate-limited model API, goes on
	// (default: 30s doubling up to 2m, the ack policy's default backoff).
	RateLimitWait func(n int) time.Duration
}

// AgentConfig is one exec agent.
type AgentConfig struct {
	Name string
	// Preset builds the command line of a known agent: claude-code,
	// codex, gemini, aider or opencode.
	Preset string
	// Command is the argv; with a preset, the program and extra arguments.
	Command []string
	// Prompt is how the prompt is passed: stdin (default), arg or file.
	Prompt string
	// Handshake is inline (default), session or none.
	Handshake string
	Env       map[string]string
	// Timeout bounds one process; IdleTimeout is how long without output
	// counts as stalled. Zero: no limit.
	Timeout     time.Duration
	IdleTimeout time.Duration
	// Token is the agent's token, given as WILCO_AGENT_TOKEN.
	Token string
	// MCP is the command line of wilco's MCP server, registered with the
	// CLI by its preset (the adapter's Options.MCP when not set).
	MCP []string
}

// Adapter runs exec agents: one process per turn.
type Adapter struct {
	opts    Options
	runsDir string
	log     *slog.Logger
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	mu      sync.Mutex
	closed  bool
	agents  map[string]AgentConfig
	tasks   map[string]*turn     // the turn of each task
	msgs    map[string]*turn     // the answer to each message being made
	prompts map[string]delegated // the last full prompt of each delegation
}

// maxPrompts bounds the full prompts kept in memory; one that is dropped
// is read back from the run directory's delegation.md.
const maxPrompts = 256

// delegated is the full prompt of a delegation.
type delegated struct {
	task   string
	prompt string
}

// New returns an adapter with no agents.
func New(opts Options) (*Adapter, error) {
	if opts.Report == nil {
		return nil, errors.New("exec: Options.Report is required")
	}
	if opts.Dir == "" {
		opts.Dir = "."
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("exec: repository %s: %w", opts.Dir, err)
	}
	opts.Dir = dir
	runs := opts.RunsDir
	if runs == "" {
		runs = DefaultRunsDir
	}
	if !filepath.IsAbs(runs) {
		runs = filepath.Join(dir, runs)
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.KillGrace <= 0 {
		opts.KillGrace = DefaultKillGrace
	}
	if opts.ResultGrace <= 0 {
		opts.ResultGrace = DefaultResultGrace
	}
	if opts.RateLimitWait == nil {
		opts.RateLimitWait = func(n int) time.Duration {
			return min(30*time.Second<<(n-1), 2*time.Minute)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Adapter{
		opts: opts, runsDir: runs, log: opts.Logger.With("component", "exec"), ctx: ctx, cancel: cancel,
		agents: map[string]AgentConfig{}, tasks: map[string]*turn{}, msgs: map[string]*turn{}, prompts: map[string]delegated{},
	}, nil
}

// Add registers an exec agent, or replaces its configuration (a new token,
// say); turns already running keep the one they started with.
func (a *Adapter) Add(c AgentConfig) error {
	if c.Name == "" {
		return errors.New("exec: an agent needs a name")
	}
	if c.Preset != "" {
		if _, ok := presets[c.Preset]; !ok {
			return fmt.Errorf("exec: agent %s: unknown preset %q (want %s)", c.Name, c.Preset, presetNames())
		}
	} else if len(c.Command) == 0 {
		return fmt.Errorf("exec: agent %s: command is required without a preset", c.Name)
	}
	if c.MCP == nil {
		c.MCP = a.opts.MCP
	}
	switch c.Prompt {
	case "":
		c.Prompt = PromptStdin
	case PromptStdin, PromptArg, PromptFile:
	default:
		return fmt.Errorf("exec: agent %s: prompt %q: want stdin, arg or file", c.Name, c.Prompt)
	}
	switch c.Handshake {
	case "":
		c.Handshake = HandshakeInline
	case HandshakeInline, HandshakeSession, HandshakeNone:
	default:
		return fmt.Errorf("exec: agent %s: handshake %q: want inline, session or none", c.Name, c.Handshake)
	}
	if c.Timeout < 0 || c.IdleTimeout < 0 {
		return fmt.Errorf("exec: agent %s: timeouts must not be negative", c.Name)
	}
	c.Command = slices.Clone(c.Command)
	c.Env = maps.Clone(c.Env)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.agents[c.Name] = c
	return nil
}

// Config returns an exec agent's configuration.
func (a *Adapter) Config(agent string) (AgentConfig, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c, ok := a.agents[agent]
	return c, ok
}

// Has reports whether agent is an exec agent of this adapter.
func (a *Adapter) Has(agent string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.agents[agent]
	return ok
}

// sendKind sorts the message types Deliver sees.
type sendKind int

const (
	sendTaskFirst sendKind = iota // a delegation's or a turn's full prompt
	sendTaskAgain                 // a later send of a delegation: start the turn again
	sendCancel
	sendNotice  // asks for no answer
	sendMessage // run the agent once, send back its output
)

func classify(msgType string) sendKind {
	switch msgType {
	case string(core.TypeDelegation), string(core.TypeTaskTurn), string(core.SendResend):
		return sendTaskFirst
	case string(core.SendAckRequest), string(core.SendCorrection), string(core.SendWrongID), string(core.SendClarification):
		return sendTaskAgain
	case string(core.SendCancel):
		return sendCancel
	case string(core.SendTimeoutNotice), string(core.SendExtension), string(core.SendOperationOutcome):
		return sendNotice
	}
	return sendMessage
}

// Deliver hands a message to an exec agent. It never blocks: the work is
// done in the background.
//
//   - A task delegation, a task turn (handshake none) or a resend starts
//     the task's turn with the message's full prompt.
//   - An ack_request, correction, wrong_id or task_clarification stops the
//     task's running turn and starts it again with the message followed by
//     the delegation's last full prompt.
//   - A cancel stops the turn of that delivery; nothing more is reported.
//   - Notices that ask for no answer (timeout_notice, extension_granted,
//     operation_outcome) are logged.
//   - Anything else — a conversation, a pre-operation request, a reminder,
//     a follow-up — runs the agent once with the message as its prompt and
//     replies with its output.
func (a *Adapter) Deliver(agent string, msg core.InboxMessage) {
	a.mu.Lock()
	defer a.mu.Unlock()
	log := a.log.With("agent", agent, "message", msg.ID, "type", msg.Type, "task", msg.TaskID)
	if a.closed {
		log.Warn("message not delivered: the exec adapter is closed")
		return
	}
	cfg, ok := a.agents[agent]
	if !ok {
		log.Warn("message not delivered: no such exec agent")
		return
	}
	kind := classify(msg.Type)
	if (kind == sendTaskFirst || kind == sendTaskAgain) && msg.TaskID == "" {
		log.Warn("a task message without a task id is answered as a message")
		kind = sendMessage
	}
	switch kind {
	case sendTaskFirst:
		for id, d := range a.prompts {
			if d.task == msg.TaskID && id != msg.ID || len(a.prompts) > maxPrompts {
				delete(a.prompts, id)
			}
		}
		a.prompts[msg.ID] = delegated{task: msg.TaskID, prompt: msg.Body}
		a.startTurn(cfg, msg, msg.Body, "")
	case sendTaskAgain:
		a.startTurn(cfg, msg, "", withSubject(msg))
	case sendCancel:
		if t := a.tasks[msg.TaskID]; t != nil && t.msg.ID == msg.ID {
			log.Info("stopping the turn: cancelled")
			t.stopLocked()
		}
	case sendNotice:
		log.Info("notice for an exec agent: nothing to run", "subject", msg.Subject)
	case sendMessage:
		if t := a.tasks[msg.TaskID]; msg.Type == string(core.SendFollowup) && t != nil && t.msg.ID == msg.ID {
			log.Info("follow-up while the turn runs: the agent is working")
			return
		}
		if t := a.msgs[msg.ID]; t != nil {
			log.Info("the agent is still answering this message; this send is not run again")
			return
		}
		t := a.newTurn(cfg, msg)
		t.prompt = withSubject(msg)
		a.msgs[msg.ID] = t
		a.wg.Add(1)
		go a.answer(t)
	}
}

// withSubject is a message's text as an agent gets it: its subject, when
// it has one, above its body.
func withSubject(msg core.InboxMessage) string {
	if strings.TrimSpace(msg.Subject) == "" {
		return msg.Body
	}
	return msg.Subject + "\n\n" + msg.Body
}

// startTurn starts a task's turn in place of the one running, if any.
// prompt is the full prompt of a first send; a later send gives its text
// in preface, to go before the delegation's last full prompt. Called with
// a.mu held.
func (a *Adapter) startTurn(cfg AgentConfig, msg core.InboxMessage, prompt, preface string) {
	t := a.newTurn(cfg, msg)
	t.prompt, t.preface = prompt, preface
	if d, ok := a.prompts[msg.ID]; ok {
		t.full = d.prompt
	}
	if prev := a.tasks[msg.TaskID]; prev != nil {
		prev.stopLocked()
		t.prev = prev
	}
	a.tasks[msg.TaskID] = t
	a.wg.Add(1)
	go a.runTurn(t)
}

// StopTurn stops the agent working on a task (core.StopTurn): its whole
// process group. Nothing more is reported of that turn.
func (a *Adapter) StopTurn(taskID, reason string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if t := a.tasks[taskID]; t != nil {
		a.log.Info("stopping the turn", "task", taskID, "agent", t.agent.Name, "reason", reason)
		t.stopLocked()
	}
}

// Close stops every running process group, waits for them to be gone and
// starts no more. What was running is reported by nobody: the core counts
// a turn that died with wilco as lost when it starts again.
func (a *Adapter) Close() error {
	a.mu.Lock()
	a.closed = true
	for _, t := range a.tasks {
		t.stopLocked()
	}
	for _, t := range a.msgs {
		t.stopLocked()
	}
	a.mu.Unlock()
	a.cancel()
	a.wg.Wait()
	return nil
}

// turn is one start of an agent on a message: a task's turn (one process,
// or two for a session handshake) or the answer to a message.
type turn struct {
	a     *Adapter
	agent AgentConfig
	msg   core.InboxMessage
	log   *slog.Logger

	prompt  string // the full prompt of a first send (or the message)
	preface string // a later send's text, before the delegation's prompt
	full    string // the delegation's last full prompt known at start

	prev *turn // the turn this one replaces: it must be gone first
	// transcript is the run's conversation file while the turn runs.
	transcript *transcript
	// spentBefore is what the turn's ended processes spent.
	spentBefore core.Usage
	stop        chan struct{}
	done        chan struct{}
	quiet       bool // guarded by a.mu: stopped; report nothing
	ended       bool // guarded by a.mu: reported
	stopMu      sync.Once
}

func (a *Adapter) newTurn(cfg AgentConfig, msg core.InboxMessage) *turn {
	return &turn{
		a: a, agent: cfg, msg: msg,
		log:  a.log.With("agent", cfg.Name, "task", msg.TaskID, "message", msg.ID, "type", msg.Type, "send", msg.Attempt),
		stop: make(chan struct{}), done: make(chan struct{}),
	}
}

// stopLocked stops the turn: it reports nothing from now on. Called with
// a.mu held.
func (t *turn) stopLocked() {
	t.quiet = true
	t.stopMu.Do(func() { close(t.stop) })
}

// claim reports whether the turn may report its end, and makes sure it
// does so once.
func (t *turn) claim() bool {
	t.a.mu.Lock()
	defer t.a.mu.Unlock()
	if t.quiet || t.ended {
		return false
	}
	t.ended = true
	return true
}

func (t *turn) isQuiet() bool {
	t.a.mu.Lock()
	defer t.a.mu.Unlock()
	return t.quiet
}

// forget removes the turn from the adapter once it is over.
func (t *turn) forget() {
	t.a.mu.Lock()
	defer t.a.mu.Unlock()
	if t.a.tasks[t.msg.TaskID] == t {
		delete(t.a.tasks, t.msg.TaskID)
	}
	if t.a.msgs[t.msg.ID] == t {
		delete(t.a.msgs, t.msg.ID)
	}
}

// pathSafe turns an id into a file name: what is not A-Z a-z 0-9 . _ -
// becomes '_' (":" in a plan's task ids, as the core's run ids do).
func pathSafe(id string) string {
	b := []byte(id)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}

// RunDir returns the run directory of a task's attempt:
// <RunsDir>/<task>-a<attempt>, the core's run id.
func (a *Adapter) RunDir(taskID string, attempt int) string {
	return filepath.Join(a.runsDir, pathSafe(taskID)+"-a"+strconv.Itoa(attempt))
}

// messageDir returns the run directory of a message's send.
func (a *Adapter) messageDir(msg core.InboxMessage) string {
	return filepath.Join(a.runsDir, "msg-"+pathSafe(msg.ID)+"-s"+strconv.Itoa(msg.Attempt))
}

// envFor builds a process's environment: base (the parent's) without the
// admin token and without the variables set here, then the WILCO_*
// variables, then the agent's env.
func envFor(base []string, set map[string]string, extra map[string]string) []string {
	out := make([]string, 0, len(base)+len(set)+len(extra))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; ok || k == "WILCO_TOKEN" {
			continue
		}
		if _, ok := extra[k]; ok {
			continue
		}
		out = append(out, kv)
	}
	for _, k := range slices.Sorted(maps.Keys(set)) {
		out = append(out, k+"="+set[k])
	}
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		out = append(out, k+"="+extra[k])
	}
	return out
}

// env returns the environment of one process of the turn.
func (t *turn) env(phase, promptFile, runDir string) []string {
	set := map[string]string{
		"WILCO_PHASE":       phase,
		"WILCO_PROMPT_FILE": promptFile,
		"WILCO_AGENT":       t.agent.Name,
		"WILCO_URL":         t.a.opts.URL,
		"WILCO_AGENT_TOKEN": t.agent.Token,
		"WILCO_MESSAGE_ID":  t.msg.ID,
		"WILCO_RUN_DIR":     runDir,
		"WILCO_TASK_ID":     t.msg.TaskID,
		"WILCO_ATTEMPT":     "",
	}
	if t.msg.TaskAttempt > 0 {
		set["WILCO_ATTEMPT"] = strconv.Itoa(t.msg.TaskAttempt)
	}
	if t.a.opts.URL != "" {
		set["WILCO_ADDR"] = t.a.opts.URL
	}
	extra := withPresetEnv(t.agent)
	maps.Copy(extra, t.a.mcpHome(t.agent))
	return envFor(os.Environ(), set, extra)
}

// mcpHome returns the variables that point agent c's CLI at a home of
// wilco's where its MCP server is registered (for a preset that reads MCP
// servers only from its settings files), nil when there is none. A user who
// set the variable keeps theirs.
func (a *Adapter) mcpHome(c AgentConfig) map[string]string {
	vars, err := MCPHome(c.Preset, c.MCP, c.Env, filepath.Join(a.runsDir, "homes", c.Name))
	if err != nil {
		a.log.Warn("wilco's MCP server is not registered with the agent", "agent", c.Name, "err", err)
	}
	return vars
}
