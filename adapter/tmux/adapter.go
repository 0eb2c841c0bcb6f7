package tmux

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"wilco/adapter"
	"wilco/adapter/chatlog"
	"wilco/core"
)

// Defaults.
const (
	// DefaultPoll is how often a pane is read.
	DefaultPoll = 100 * time.Millisecond
	// DefaultSettle is how long a pane must show ready, after a prompt,
	// for the agent's turn to be over.
	DefaultSettle = 1500 * time.Millisecond
	// DefaultSubmitTries bounds the sends of the submit key for one
	// prompt.
	DefaultSubmitTries = 3
	// DefaultWidth and DefaultHeight are the size of a session wilco makes.
	DefaultWidth, DefaultHeight = 200, 50
	// landWait is how long a paste has to show in the input box before it
	// is pasted again; confirmWait how long a submit has to take the
	// prompt out of the input box before the key is sent again.
	landWait    = 2 * time.Second
	confirmWait = time.Second
	// stopWait bounds the wait for an interrupted agent to be ready.
	stopWait = 10 * time.Second
)

// PermissionAsked is one permission question of an agent, as the adapter
// reports it.
type PermissionAsked = adapter.PermissionAsked

// SubmitRecord is one prompt typed into a pane: when it was handed over,
// when the agent was seen working on it, and how many times its submit key
// was sent.
type SubmitRecord struct {
	Agent     string
	Message   string
	Queued    time.Time
	Pasted    time.Time
	Confirmed time.Time
	Submits   int
	Pastes    int
}

// Options configures an Adapter.
type Options struct {
	// Dir is the repository: where the sessions wilco makes run.
	Dir string
	// RunsDir is where run directories go (relative to Dir unless
	// absolute; default .wilco/runs).
	RunsDir string
	// StateDir holds wilco's own tmux server (its socket and
	// configuration); default .wilco in Dir.
	StateDir string
	// URL is wilco's address, given to agents as WILCO_URL.
	URL string
	// MCP is the command line of wilco's MCP server for agents (wilco
	// mcp), registered with the program of each preset that can take it,
	// as the exec adapter's presets do (see mcp.go); nil: none.
	MCP []string
	// Program is the tmux binary (default: tmux on the PATH).
	Program string
	// Report receives what the adapter learns. Required.
	Report adapter.Reporter
	Logger *slog.Logger
	// Poll is how often a pane is read (default DefaultPoll).
	Poll time.Duration
	// OnSubmit, when set, is told of every prompt confirmed (for
	// measurements).
	OnSubmit func(SubmitRecord)
	// ReadOnly, when set, gives a scout's question (by message id) of a
	// task worked in parallel a copy of the task's worktree (relative to
	// Dir) to be answered in, and the function that, once the answer is
	// read, lists the files the scout changed there and removes the copy
	// (the exec adapter's Options.ReadOnly). Without it the scout answers
	// in the worktree itself.
	ReadOnly func(ctx context.Context, messageID, worktree string) (dir string, done func(context.Context) ([]string, error), err error)
}

// AgentConfig is one tmux agent.
type AgentConfig struct {
	Name string
	// Preset is a known interactive program: claude-code, codex, gemini,
	// opencode or aider.
	Preset string
	// Command is what the pane runs; with a preset, the program and extra
	// arguments.
	Command []string
	Env     map[string]string
	// Timeout bounds one turn; IdleTimeout is how long a pane may show
	// nothing new during a turn before it counts as stalled. Zero: no
	// limit.
	Timeout, IdleTimeout time.Duration
	// Token is the agent's token (WILCO_AGENT_TOKEN).
	Token string
	// Session names an existing session to use (never killed by wilco);
	// empty: wilco makes one (wilco-<name>) on its own server. Socket is
	// the tmux server of Session (empty: the user's default server, or
	// wilco's own when Session is empty).
	Session, Socket string
	// Ready, Busy and Permission override the preset's patterns.
	Ready, Busy, Permission string
	// Submit, Interrupt, Clear, Approve and Deny override the preset's
	// keys (tmux key names).
	Submit                          string
	Interrupt, Clear, Approve, Deny []string
	// Allow lists the tools (patterns, matched against the tool and the
	// question) whose permission questions are answered yes; with a list,
	// every other question is answered no. Without one, questions wait
	// for the user.
	Allow []string
	// Width and Height size a session wilco makes.
	Width, Height int
	// Settle is how long the pane must show ready for a turn to be over
	// (default DefaultSettle).
	Settle time.Duration
	// SubmitTries bounds the sends of the submit key for one prompt
	// (default DefaultSubmitTries).
	SubmitTries int
}

// Adapter runs tmux agents: each one's interactive program in a tmux
// session, prompts pasted into its pane and its answers read from it.
type Adapter struct {
	opts    Options
	runsDir string
	log     *slog.Logger
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	private Server

	mu     sync.Mutex
	closed bool
	agents map[string]*agent
}

// New returns an adapter with no agents.
func New(opts Options) (*Adapter, error) {
	if opts.Report == nil {
		return nil, errors.New("tmux: Options.Report is required")
	}
	if opts.Dir == "" {
		opts.Dir = "."
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	opts.Dir = dir
	runs := opts.RunsDir
	if runs == "" {
		runs = filepath.Join(".wilco", "runs")
	}
	if !filepath.IsAbs(runs) {
		runs = filepath.Join(dir, runs)
	}
	if opts.StateDir == "" {
		opts.StateDir = filepath.Join(dir, ".wilco")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Poll <= 0 {
		opts.Poll = DefaultPoll
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &Adapter{opts: opts, runsDir: runs, log: opts.Logger.With("component", "tmux"), ctx: ctx, cancel: cancel, agents: map[string]*agent{}}
	return a, nil
}

// Available reports whether tmux can be run, and why not.
func Available(program string) error {
	if program == "" {
		program = "tmux"
	}
	_, err := lookPath(program)
	return err
}

// serverEnv is the environment of the tmux commands wilco runs: its own,
// without the admin token (a server wilco starts passes its environment
// on to every session) and without TMUX (wilco may itself run in tmux).
func serverEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "WILCO_TOKEN" || k == "TMUX" || k == "TMUX_PANE" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// Add registers a tmux agent, or replaces its configuration (a new token):
// a session already running keeps the environment it started with.
func (a *Adapter) Add(c AgentConfig) error {
	if c.Name == "" {
		return errors.New("tmux: an agent needs a name")
	}
	p, err := presetOf(c)
	if err != nil {
		return err
	}
	style, err := styleOf(c, p)
	if err != nil {
		return err
	}
	ag := &agent{a: a, cfg: c, preset: p, style: style, wake: make(chan struct{}, 1), gone: make(chan struct{}),
		dir: a.opts.Dir, files: pathSafe(c.Name)}
	ag.rec = newRecord(p)
	ag.conv = ag.savedConversation()
	for i, s := range c.Allow {
		r, err := regexp.Compile(s)
		if err != nil {
			return fmt.Errorf("tmux: agent %s: allow[%d]: %v", c.Name, i, err)
		}
		ag.allow = append(ag.allow, r)
	}
	ag.keys = keysFor(c, p)
	if err := a.placeSession(ag); err != nil {
		return err
	}
	a.mu.Lock()
	if old, ok := a.agents[c.Name]; ok {
		// Keep what runs; take the new configuration for what comes. The
		// adapter's lock is not held meanwhile: a loop may hold its opMu
		// while it reports, and a report may wait for the executor, which
		// hands messages over through Deliver (a.mu).
		every := append([]*agent{old}, slices.Collect(maps.Values(old.inst))...)
		a.mu.Unlock()
		for _, x := range every {
			x.opMu.Lock()
			x.mu.Lock() // instanceFor reads the agent's configuration under it
			x.cfg, x.preset, x.style, x.allow, x.keys = c, p, style, ag.allow, ag.keys
			if (x.rec == nil) != (ag.rec == nil) || x.rec != nil && x.rec.format.Name() != ag.rec.format.Name() {
				x.rec = newRecord(p)
			}
			x.mu.Unlock()
			x.opMu.Unlock()
		}
		return nil
	}
	defer a.mu.Unlock()
	a.agents[c.Name] = ag
	if a.closed {
		return nil
	}
	a.wg.Add(1)
	go ag.loop()
	return nil
}

// presetOf is the agent's preset (nil: none); without one it needs a
// command, or a session to attach to.
func presetOf(c AgentConfig) (*Preset, error) {
	if c.Preset != "" {
		p, ok := Presets[c.Preset]
		if !ok {
			return nil, fmt.Errorf("tmux: agent %s: unknown preset %q (want %s)", c.Name, c.Preset, strings.Join(PresetNames(), ", "))
		}
		return &p, nil
	}
	if len(c.Command) == 0 && c.Session == "" {
		return nil, fmt.Errorf("tmux: agent %s: command is required without a preset (or a session to attach to)", c.Name)
	}
	return nil, nil
}

// styleOf is how the agent's pane is read: the preset's style, its
// patterns replaced by those the config gives.
func styleOf(c AgentConfig, p *Preset) (Style, error) {
	style := Style{}
	if p != nil {
		style = p.Style
	}
	for _, re := range []struct {
		key, expr string
		to        **regexp.Regexp
	}{{"ready", c.Ready, &style.Ready}, {"busy", c.Busy, &style.Busy}, {"permission", c.Permission, &style.Permission}} {
		if re.expr == "" {
			continue
		}
		r, err := regexp.Compile(re.expr)
		if err != nil {
			return style, fmt.Errorf("tmux: agent %s: %s: %v", c.Name, re.key, err)
		}
		*re.to = r
		if re.key == "ready" {
			style.ReadyLastLine = true
		}
	}
	if style.Ready == nil {
		return style, fmt.Errorf("tmux: agent %s: ready is required without a preset: a pattern of the pane's last line when the program waits for input, such as '^>\\s*$'", c.Name)
	}
	return style, nil
}

// newRecord follows the record the preset's program keeps of its
// conversation (nil: none wilco reads).
func newRecord(p *Preset) *record {
	if p == nil {
		return nil
	}
	if f := chatlog.For(p.Name); f != nil {
		return &record{format: f}
	}
	return nil
}

// placeSession says where the agent's program runs: the session the config
// names (the user's, never killed), or a session of wilco's own, on the
// socket the config names or wilco's private tmux server.
func (a *Adapter) placeSession(ag *agent) error {
	c := ag.cfg
	if c.Session != "" {
		ag.session = c.Session
		ag.srv = Server{Program: a.opts.Program, Socket: c.Socket, Env: serverEnv()}
		return nil
	}
	ag.session = SessionName(c.Name)
	srv, private, err := a.ownServer(c)
	if err != nil {
		return err
	}
	ag.srv, ag.private, ag.own = srv, private, true
	return nil
}

// ownServer is the tmux server of the sessions wilco makes for an agent:
// the one of the socket the config names, else wilco's own (private).
func (a *Adapter) ownServer(c AgentConfig) (srv Server, private bool, err error) {
	if c.Socket != "" {
		return Server{Program: a.opts.Program, Socket: c.Socket, Env: serverEnv()}, false, nil
	}
	srv, err = a.privateServer()
	if err != nil {
		return Server{}, false, fmt.Errorf("tmux: agent %s: %w", c.Name, err)
	}
	return srv, true, nil
}

// sessionPrefix begins the name of every session wilco makes for an agent.
const sessionPrefix = "wilco-"

// SessionName is the session wilco makes for an agent: wilco-<agent>,
// with the characters tmux takes out of a session's name ('.' and ':')
// as tmux writes them ('_').
func SessionName(agent string) string {
	return sessionPrefix + strings.NewReplacer(".", "_", ":", "_").Replace(agent)
}

// instanceMark separates an agent's session name from the task an
// instance of it works on: no agent name holds it, so an instance's
// session is never another agent's.
const instanceMark = "@"

// InstanceSessionName is the session wilco makes for an instance of an
// agent working on a task worked in parallel, in the task's worktree:
// wilco-<agent>@<task>, the task's id as its worktree is named (every
// byte but letters, digits, '_' and '-' as %XX, '.' too: tmux takes it
// out of a session's name).
func InstanceSessionName(agent, taskID string) string {
	return SessionName(agent) + instanceMark + instanceKey(taskID)
}

// instanceKey names a task in an instance's session and files.
func instanceKey(taskID string) string {
	return strings.ReplaceAll(core.WorktreeName(taskID), ".", "%2E")
}

// privateServer is wilco's own tmux server for the repository.
func (a *Adapter) privateServer() (Server, error) {
	return PrivateServer(a.opts.Program, a.opts.StateDir, serverEnv())
}

// keys are an agent's keys: the preset's, overridden by its config.
type keys struct {
	submit                          string
	interrupt, clear, approve, deny []string
}

func keysFor(c AgentConfig, p *Preset) keys {
	k := keys{submit: "Enter", interrupt: []string{"C-c"}}
	if p != nil {
		k = keys{submit: p.Submit, interrupt: p.Interrupt, clear: p.Clear, approve: p.Approve, deny: p.Deny}
	}
	if c.Submit != "" {
		k.submit = c.Submit
	}
	for _, o := range []struct {
		from []string
		to   *[]string
	}{{c.Interrupt, &k.interrupt}, {c.Clear, &k.clear}, {c.Approve, &k.approve}, {c.Deny, &k.deny}} {
		if len(o.from) > 0 {
			*o.to = slices.Clone(o.from)
		}
	}
	if len(k.approve) == 0 {
		k.approve = []string{"y", "Enter"}
	}
	if len(k.deny) == 0 {
		k.deny = []string{"n", "Enter"}
	}
	return k
}

// Has reports whether agent is a tmux agent of this adapter.
func (a *Adapter) Has(agent string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.agents[agent]
	return ok
}

// agent is the agent named (its home session's), an error when the
// adapter has none.
func (a *Adapter) agent(name string) (*agent, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ag, ok := a.agents[name]
	if !ok {
		return nil, fmt.Errorf("tmux: no agent %q", name)
	}
	return ag, nil
}

// Deliver hands a message to a tmux agent. It never blocks: the prompt
// waits in the agent's queue until its pane is ready.
func (a *Adapter) Deliver(agent string, msg core.InboxMessage) {
	a.mu.Lock()
	ag, ok := a.agents[agent]
	closed := a.closed
	a.mu.Unlock()
	log := a.log.With("agent", agent, "message", msg.ID, "type", msg.Type, "task", msg.TaskID)
	if !ok || closed {
		log.Warn("message not delivered: no such tmux agent, or wilco is stopping")
		return
	}
	if forAsk(msg) {
		inst := a.askFor(ag, msg)
		if inst == nil {
			log.Info("not delivered: wilco is stopping")
			return
		}
		ag = inst
	} else if forInstance(msg) {
		inst := a.instanceFor(ag, msg.TaskID, msg.Worktree, msg.Type != string(core.SendCancel))
		if inst == nil {
			log.Info("not delivered: no session works on the task (a cancel of a task not started here), or wilco is stopping")
			return
		}
		ag = inst
	}
	ag.deliver(msg, log)
}

// forInstance reports whether a message is a task's own turn (or a later
// send of it) of a task worked in parallel: it goes to the session that
// works on the task, in its worktree. A scout's question and a review
// asked from such a task are answered in a session of their own (forAsk).
func forInstance(msg core.InboxMessage) bool {
	return msg.Worktree != "" && msg.TaskID != "" && !forAsk(msg)
}

// forAsk reports whether a message is a scout's question or a review of
// a task worked in parallel: it is answered where the task's work is, in
// a session of its own made for the message (askFor) and ended once its
// answer is read.
func forAsk(msg core.InboxMessage) bool {
	return msg.Worktree != "" && (msg.Type == string(core.TypeScoutQuery) || msg.Type == string(core.TypeReview))
}

// askMark separates, in the name of a session made for one message, the
// task's key from the message's (neither holds it).
const askMark = "~"

// AskSessionName is the session wilco makes for an agent to answer one
// message (a scout's question, a review) about a task worked in parallel:
// wilco-<agent>@<task>~<message>, each id as InstanceSessionName writes
// a task's.
func AskSessionName(agent, taskID, messageID string) string {
	return InstanceSessionName(agent, taskID) + askMark + instanceKey(messageID)
}

// askFor is the agent that answers msg, a scout's question or a review of
// a task worked in parallel (forAsk), in a session of its own on the
// agent's tmux server: a reviewer in the task's worktree, a scout in a
// copy of it (Options.ReadOnly, made when its program starts). A later
// send of the same message goes to the same one. It ends once the
// message is answered (endAsk). nil when wilco is stopping.
func (a *Adapter) askFor(home *agent, msg core.InboxMessage) *agent {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ag := home.asks[msg.ID]; ag != nil || a.closed || a.agents[home.cfg.Name] != home {
		return ag
	}
	srv, private, err := a.ownServer(home.cfg)
	if err != nil {
		home.logger().Error("no tmux server for the message's session", "message", msg.ID, "err", err)
		return nil
	}
	home.mu.Lock()
	c, p, style, allow, keys := home.cfg, home.preset, home.style, home.allow, home.keys
	home.mu.Unlock()
	key := instanceKey(msg.TaskID) + askMark + instanceKey(msg.ID)
	ag := &agent{a: a, cfg: c, preset: p, style: style, allow: allow, keys: keys, srv: srv, private: private, own: true,
		session: AskSessionName(c.Name, msg.TaskID, msg.ID), task: msg.TaskID, home: home, ask: msg.ID, worktree: msg.Worktree,
		scout: msg.Type == string(core.TypeScoutQuery) && a.opts.ReadOnly != nil,
		dir:   filepath.Join(a.opts.Dir, filepath.FromSlash(msg.Worktree)),
		files: pathSafe(c.Name) + instanceMark + key,
		wake:  make(chan struct{}, 1), gone: make(chan struct{}), rec: newRecord(p)}
	if home.asks == nil {
		home.asks = map[string]*agent{}
	}
	home.asks[msg.ID] = ag
	ag.logger().Info("a session of its own answers the message, where the task's work is", "message", msg.ID, "type", msg.Type, "session", ag.session)
	a.wg.Add(1)
	go ag.loop()
	return ag
}

// endAsk ends the session made to answer one message, once it is
// answered (or failed): its program and session end, and a scout's copy
// of the worktree is removed.
func (a *Adapter) endAsk(ctx context.Context, ag *agent) {
	a.mu.Lock()
	mine := ag.home.asks[ag.ask] == ag
	if mine {
		delete(ag.home.asks, ag.ask)
	}
	a.mu.Unlock()
	if !mine {
		return // ended by another (the agent's removal)
	}
	if err := ag.end(ctx); err != nil {
		ag.logger().Warn("ending the message's session failed", "err", err)
	}
}

// instanceFor is the instance of home that works on a task worked in
// parallel, in its worktree (relative to the repository): made, and its
// loop started, when there is none yet and create is set (nil otherwise,
// or when wilco is stopping). Its session is made on demand, as an
// agent's is: one that runs already (it outlived a wilco) is used as it
// is, its conversation resumed from what was kept.
func (a *Adapter) instanceFor(home *agent, taskID, worktree string, create bool) *agent {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ag := home.inst[taskID]; ag != nil || !create || a.closed || a.agents[home.cfg.Name] != home {
		return ag
	}
	srv, private, err := a.ownServer(home.cfg)
	if err != nil {
		home.logger().Error("no tmux server for the task's session", "task", taskID, "err", err)
		return nil
	}
	// The agent's configuration changes only in Add, under its mu too:
	// read here without its opMu, which its loop may hold while it
	// reports (a report may wait for the runtime, whose executor hands
	// messages over through Deliver).
	home.mu.Lock()
	c, p, style, allow, keys, hibernated := home.cfg, home.preset, home.style, home.allow, home.keys, home.hibernated
	home.mu.Unlock()
	ag := &agent{a: a, cfg: c, preset: p, style: style, allow: allow, keys: keys, srv: srv, private: private, own: true,
		session: InstanceSessionName(c.Name, taskID), task: taskID,
		dir:   filepath.Join(a.opts.Dir, filepath.FromSlash(worktree)),
		files: pathSafe(c.Name) + instanceMark + instanceKey(taskID),
		wake:  make(chan struct{}, 1), gone: make(chan struct{}), rec: newRecord(p)}
	ag.conv = ag.savedConversation()
	// A task that comes while the agent hibernates waits for its wake,
	// as the agent's own prompts do.
	ag.hibernated = hibernated
	if home.inst == nil {
		home.inst = map[string]*agent{}
	}
	home.inst[taskID] = ag
	ag.logger().Info("an instance of the agent works on the task, in its worktree", "dir", ag.dir)
	a.wg.Add(1)
	go ag.loop()
	return ag
}

// Adopt makes a task worked in parallel that was under way when wilco
// last stopped the task of its instance again: its session (which
// outlived wilco) is not a stray, and is used as it is when the task's
// next turn comes.
func (a *Adapter) Adopt(agent, taskID, worktree string) {
	if home, err := a.agent(agent); err == nil {
		a.instanceFor(home, taskID, worktree, true)
	}
}

// EndTask ends the instances that worked on a task worked in parallel,
// which ended: nothing more is typed, their sessions are ended (before
// the task's worktree, their folder, goes) and what was kept of their
// conversations is forgotten. A session wilco would have made for the
// task that runs with no instance (one a previous wilco left) is ended
// too. It returns an error only when a session that runs could not be
// ended.
func (a *Adapter) EndTask(ctx context.Context, taskID string) error {
	a.mu.Lock()
	var ended []*agent
	var homes []*agent
	for _, home := range a.agents {
		homes = append(homes, home)
		if ag := home.inst[taskID]; ag != nil {
			delete(home.inst, taskID)
			ended = append(ended, ag)
		}
		for id, ag := range home.asks {
			if ag.task == taskID {
				delete(home.asks, id)
				ended = append(ended, ag)
			}
		}
	}
	a.mu.Unlock()
	var errs []error
	for _, ag := range ended {
		errs = append(errs, ag.end(ctx))
	}
	for _, home := range homes {
		srv, _, err := a.ownServer(home.cfg)
		if err != nil {
			continue
		}
		if _, err := srv.EndSession(ctx, InstanceSessionName(home.cfg.Name, taskID)); err != nil {
			errs = append(errs, fmt.Errorf("tmux: end the session of task %s: %w", taskID, err))
		}
	}
	return errors.Join(errs...)
}

// end takes an agent out of service: nothing more is typed into its pane,
// what it worked on and what waited for it are dropped (the core has
// ended them), its loop stops, and a session wilco made is ended; an
// instance's kept conversation and exit status are removed. It returns an
// error only when a session that runs could not be ended.
func (ag *agent) end(ctx context.Context) error {
	close(ag.gone)
	ag.opMu.Lock()
	defer ag.opMu.Unlock()
	ag.mu.Lock()
	if ag.cur != nil {
		ag.cur.close()
		ag.cur = nil
	}
	for _, j := range ag.queue {
		j.close()
	}
	ag.queue, ag.hibernated = nil, true
	ag.mu.Unlock()
	if ag.task != "" {
		_ = os.Remove(ag.convFile())
		_ = os.Remove(ag.exitFile())
	}
	defer ag.releaseCopy(context.WithoutCancel(ctx))
	if !ag.own {
		return nil
	}
	ended, err := ag.srv.EndSession(ctx, ag.session)
	if err != nil {
		return fmt.Errorf("tmux: end the session %s of %s: %w", ag.session, ag.cfg.Name, err)
	}
	if ended {
		ag.logger().Info("ended the agent's session", "session", ag.session)
	}
	return nil
}

// every is the agent and its instances.
func (a *Adapter) every(home *agent) []*agent {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := []*agent{home}
	for _, k := range slices.Sorted(maps.Keys(home.inst)) {
		out = append(out, home.inst[k])
	}
	return out
}

// all is every agent of the adapter and every instance of them.
func (a *Adapter) all() []*agent {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []*agent
	for _, home := range a.agents {
		out = append(out, home)
		for _, ag := range home.inst {
			out = append(out, ag)
		}
		for _, ag := range home.asks {
			out = append(out, ag)
		}
	}
	return out
}

// StopTurn stops the agent working on a task: the prompt waiting is
// dropped, the turn running is interrupted. Nothing more is reported of it.
func (a *Adapter) StopTurn(taskID, reason string) {
	for _, ag := range a.all() {
		ag.stopTask(taskID, reason)
	}
}

// Close stops reading the panes. The sessions go on: their agents keep
// their conversation across a restart of wilco (a task's late report is
// taken when wilco runs again).
func (a *Adapter) Close() error {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	a.cancel()
	a.wg.Wait()
	return nil
}

// Remove takes an agent out of service (wilco agents remove): nothing
// more is typed into its pane, what it worked on and what waited for it
// are dropped (the core has ended them), its loop stops, and a session
// wilco made is ended; a user's session is left as it is. Adding the agent
// again starts afresh. An agent the adapter does not know (one that left
// wilco.yaml while wilco was down) has the session wilco would have made
// for it on its own tmux server ended, when one runs there and no agent of
// the adapter works in it. It returns an error only when a session that
// runs could not be ended.
func (a *Adapter) Remove(ctx context.Context, name string) error {
	a.mu.Lock()
	ag, ok := a.agents[name]
	delete(a.agents, name)
	var inst []*agent
	if ok {
		inst = slices.Collect(maps.Values(ag.inst))
		inst = append(inst, slices.Collect(maps.Values(ag.asks))...)
		ag.inst, ag.asks = nil, nil
	}
	a.mu.Unlock()
	if !ok {
		return a.endUnknown(ctx, name)
	}
	var errs []error
	for _, x := range append([]*agent{ag}, inst...) {
		errs = append(errs, x.end(ctx))
	}
	return errors.Join(errs...)
}

// endUnknown ends the sessions wilco made on its own tmux server for an
// agent it no longer has (see Remove): its own, and those of its
// instances.
func (a *Adapter) endUnknown(ctx context.Context, name string) error {
	session := SessionName(name)
	used := a.inUse()
	srv, err := a.privateServer()
	if err != nil {
		return fmt.Errorf("tmux: end the session of %s: %w", name, err)
	}
	sessions := []string{session}
	if all, err := srv.ListSessions(ctx); err == nil {
		for _, s := range all {
			if strings.HasPrefix(s, session+instanceMark) {
				sessions = append(sessions, s)
			}
		}
	}
	var errs []error
	for _, s := range sessions {
		if used[s] {
			continue
		}
		ended, err := srv.EndSession(ctx, s)
		if err != nil {
			errs = append(errs, fmt.Errorf("tmux: end the session %s of %s: %w", s, name, err))
		}
		if ended {
			a.log.Info("ended the session of an agent no longer configured", "agent", name, "session", s)
		}
	}
	return errors.Join(errs...)
}

// inUse names the sessions of wilco's own tmux server that the adapter's
// agents work in.
func (a *Adapter) inUse() map[string]bool {
	used := map[string]bool{}
	for _, ag := range a.all() {
		if ag.own && ag.private {
			used[ag.session] = true
		}
	}
	return used
}

// EndStrays ends the sessions on wilco's own tmux server that are named
// as wilco names its agents' (wilco-<agent>, and wilco-<agent>@<task> of
// their instances) and in which none of the adapter's agents works: those
// of agents that left the configuration (while wilco was down, or whose
// end a previous wilco recorded without it), and those of tasks that
// ended while wilco was down (Adopt the tasks under way first), whose
// programs would otherwise run on unsupervised. On the server of an
// agent that names a user's (its socket, or its session there), only the
// sessions wilco made there for the agent's tasks (wilco-<agent>@<task>)
// in which none works are ended. Every other session is left. Call it
// once every agent wilco runs is added. It returns the sessions it ended,
// and what kept others from being ended.
func (a *Adapter) EndStrays(ctx context.Context) ([]string, error) {
	srv, err := a.privateServer()
	if err != nil {
		return nil, fmt.Errorf("tmux: wilco's tmux server: %w", err)
	}
	sessions, err := srv.ListSessions(ctx)
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return nil, nil // no tmux: no session runs
		}
		return nil, fmt.Errorf("tmux: list the sessions of wilco's tmux server: %w", err)
	}
	ended, err := a.endStraysOn(ctx, srv, sessions, sessionPrefix, a.inUse())
	for _, home := range a.homes() {
		if home.private {
			continue
		}
		all, lerr := home.srv.ListSessions(ctx)
		if lerr != nil {
			continue // the user's server does not run: nothing of wilco's runs there
		}
		more, serr := a.endStraysOn(ctx, home.srv, all, SessionName(home.cfg.Name)+instanceMark, home.sessionsInUse())
		ended, err = append(ended, more...), errors.Join(err, serr)
	}
	return ended, err
}

// homes are the adapter's agents (not their instances).
func (a *Adapter) homes() []*agent {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Collect(maps.Values(a.agents))
}

// sessionsInUse names the sessions an agent and its instances work in.
func (home *agent) sessionsInUse() map[string]bool {
	home.a.mu.Lock()
	defer home.a.mu.Unlock()
	used := map[string]bool{home.session: true}
	for _, ag := range home.inst {
		used[ag.session] = true
	}
	for _, ag := range home.asks {
		used[ag.session] = true
	}
	return used
}

// endStraysOn ends the sessions of srv named with prefix that are not
// used.
func (a *Adapter) endStraysOn(ctx context.Context, srv Server, sessions []string, prefix string, used map[string]bool) ([]string, error) {
	var ended []string
	var errs []error
	for _, s := range sessions {
		if !strings.HasPrefix(s, prefix) || used[s] {
			continue
		}
		ok, err := srv.EndSession(ctx, s)
		if err != nil {
			errs = append(errs, fmt.Errorf("tmux: end session %s: %w", s, err))
		}
		if ok {
			ended = append(ended, s)
		}
	}
	return ended, errors.Join(errs...)
}

// KillSessions ends the sessions wilco made (tests; an agent taken out of
// service).
func (a *Adapter) KillSessions(ctx context.Context) {
	for _, ag := range a.all() {
		if ag.own {
			_ = ag.srv.KillSession(ctx, ag.session)
		}
	}
}

// AgentState is what `wilco agents` shows of a tmux agent.
type AgentState struct {
	// State is ready, busy, permission, dialog, typing, dead, not started
	// or hibernating.
	State string `json:"state"`
	// Session is the tmux session; Attach the command that opens it.
	Session string   `json:"session"`
	Attach  []string `json:"attach"`
	// Queued counts the prompts waiting for the pane to be ready.
	Queued int `json:"queued"`
	// Working is the message being worked on ("" for none).
	Working string `json:"working,omitempty"`
	// Conversation is the agent program's conversation id, when known.
	Conversation string `json:"conversation,omitempty"`
	// Task is the task an instance works on, in its worktree (Dir).
	Task string `json:"task,omitempty"`
	Dir  string `json:"dir,omitempty"`
	// Instances are the agent's instances working on tasks worked in
	// parallel, each in a session of its own, by task.
	Instances []AgentState `json:"instances,omitempty"`
}

// State says what a tmux agent's pane shows, and those of its instances.
func (a *Adapter) State(agent string) (AgentState, bool) {
	ag, err := a.agent(agent)
	if err != nil {
		return AgentState{}, false
	}
	every := a.every(ag)
	s := ag.snapshot()
	for _, x := range every[1:] {
		st := x.snapshot()
		st.Task, st.Dir = x.task, x.dir
		s.Instances = append(s.Instances, st)
	}
	return s, true
}

// RunDir returns the run directory of a task's attempt (the core's run
// id), as the exec adapter names it.
func (a *Adapter) RunDir(taskID string, attempt int) string {
	return filepath.Join(a.runsDir, pathSafe(taskID)+"-a"+strconv.Itoa(attempt))
}

func (a *Adapter) messageDir(msg core.InboxMessage) string {
	return filepath.Join(a.runsDir, "msg-"+pathSafe(msg.ID)+"-s"+strconv.Itoa(msg.Attempt))
}

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
