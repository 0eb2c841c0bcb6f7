package tmux

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"wilco/adapter"
	execadapter "wilco/adapter/exec"
	"wilco/atomicfile"
	"wilco/core"
)

// separator goes between a later send's text and the full prompt.
const separator = "\n\n---\n\n"

// stillFor is how long a ready pane must not change before a prompt is
// typed into it; startupStill the same for the first prompt after the
// program started (within startupWait).
const (
	dialogWait   = 3 * time.Second
	stillFor     = 300 * time.Millisecond
	startupStill = 2 * time.Second
	startupWait  = 30 * time.Second
)

// quietSettle is how long a pane must show ready, after a prompt of which
// it showed nothing, for the turn to be over.
const quietSettle = 10 * time.Second

// maxFull bounds the full prompts of delegations an agent keeps.
const maxFull = 64

// agent is one tmux agent: its session, its queue of prompts, and the
// prompt it works on. One goroutine (loop) reads its pane and types into
// it; operations (hibernate, wake, restart) take opMu, as each step of the
// loop does, so that they never act on the pane at the same time.
type agent struct {
	a     *Adapter
	opMu  sync.Mutex
	cfg   AgentConfig
	style Style
	// preset is nil for a program wilco knows only by its config.
	preset  *Preset
	allow   []*regexp.Regexp
	keys    keys
	srv     Server
	session string
	// own: wilco makes (and may end) the session; else the session is
	// the user's, and wilco only runs the program in it. private: the
	// session is on wilco's own tmux server.
	own, private bool
	// dir is the folder the program runs in: the repository, or the
	// worktree of the task an instance works on (task). files names the
	// files wilco keeps of it (its conversation id, its exit status).
	dir, task, files string
	// inst are the instances of the agent working on tasks worked in
	// parallel, by task (the agent's own, not an instance's; guarded by
	// the adapter's mu).
	inst map[string]*agent
	// asks are the agents answering one message each (a scout's question,
	// a review) of a task worked in parallel, by message id (the agent's
	// own; guarded by the adapter's mu). An asked agent has its home, the
	// message (ask) and the task's worktree; scout: it works in a copy of
	// the worktree, made when its program starts, which release lists
	// and removes. asked is set once the message is queued (guarded by
	// mu).
	asks     map[string]*agent
	home     *agent
	ask      string
	worktree string
	scout    bool
	release  func(context.Context) ([]string, error)
	asked    bool
	wake     chan struct{}
	// gone is closed when the agent is removed: its loop ends.
	gone chan struct{}

	mu         sync.Mutex
	queue      []*job
	cur        *job
	state      State
	started    bool // the program runs in the session (as far as wilco knows)
	hibernated bool
	conv       string // the program's conversation id, when known
	resume     bool   // the next start resumes conv
	full       map[string]string
	dialogAt   time.Time
	// startedAt is when wilco last started the program; lastScreen is the
	// pane's screen as last read, unchanged since screenSince (both are
	// the loop's own).
	startedAt   time.Time
	tookPrompt  bool // a prompt was confirmed since the program started
	deadSince   time.Time
	probed      bool // whether an existing session runs the program was looked at
	lastScreen  string
	screenSince time.Time
	// rec follows the program's record of its conversation (nil: it
	// keeps none wilco reads; the pane is read). progEnv is the
	// environment wilco last started the program with beyond its own (the
	// record is where that environment puts it).
	rec     *record
	progEnv map[string]string
}

type phase int

const (
	phasePaste phase = iota
	phaseLanding
	phaseConfirming
	phaseWorking
	phaseStopping
)

// job is one prompt for the agent: a task's turn or a message to answer.
type job struct {
	msg     core.InboxMessage
	task    bool // a task's turn: its end is reported with EndTurn
	wantAck bool
	prompt  string
	queued  time.Time
	// quiet: stopped, nothing more is reported. Set from other goroutines
	// than the agent's loop (a stop, a new delegation), read by the loop.
	quiet atomic.Bool
	// continued: the job was suspended (hibernate, restart) and its prompt
	// is now the note to go on. suspended: its agent is hibernated.
	continued, suspended bool
	// adopted: a turn that ran when wilco last stopped, followed again.
	adopted bool

	phase      phase
	log        *slog.Logger
	runDir     string
	logf       *os.File
	transcript *execadapter.Transcript
	reader     Reader
	scanner    *execadapter.Scanner
	text       []string
	pastes     int
	submits    int
	pastedAt   time.Time
	// pasteScreen is the screen just before the paste: a program whose
	// input box looks the same empty or full (Style.HiddenInput) shows
	// the paste landed by any change.
	pasteScreen string
	submittedAt time.Time
	confirmed   time.Time
	began       time.Time
	lastKey     string
	lastChange  time.Time
	readySince  time.Time
	busySeen    bool
	ackSent     bool
	question    question // the permission question the pane shows
	stopAt      time.Time
	activity    string
	lastScreen  Screen
	// source is where the turn's text is read from; held are the pane's
	// lines while that is not decided; recNext is the next entry of the
	// record to read, recEnded that the record says the turn is over.
	source   source
	held     []string
	recNext  int
	recEnded bool
}

// deliver queues a message (or acts on a cancel or a notice).
func (ag *agent) deliver(msg core.InboxMessage, log *slog.Logger) {
	ag.mu.Lock()
	defer ag.mu.Unlock()
	if ag.full == nil {
		ag.full = map[string]string{}
	}
	j := &job{msg: msg, queued: time.Now(), prompt: withSubject(msg)}
	switch msg.Type {
	case string(core.TypeDelegation), string(core.TypeTaskTurn), string(core.SendResend):
		if msg.TaskID == "" {
			break
		}
		j.task, j.wantAck = true, msg.Type != string(core.TypeTaskTurn)
		j.prompt = msg.Body
		ag.full[msg.ID] = msg.Body
		if len(ag.full) > maxFull {
			for k := range ag.full {
				if k != msg.ID {
					delete(ag.full, k)
					break
				}
			}
		}
		ag.dropTaskLocked(msg.TaskID, "a new delegation of the task")
	case string(core.SendAckRequest), string(core.SendCorrection), string(core.SendWrongID), string(core.SendClarification):
		if msg.TaskID == "" {
			break
		}
		j.task, j.wantAck = true, true
		if full := ag.full[msg.ID]; full != "" && !strings.Contains(j.prompt, full) {
			j.prompt += separator + full
		}
		ag.dropTaskLocked(msg.TaskID, "a later send of the delegation")
	case string(core.SendCancel):
		ag.dropDeliveryLocked(msg.ID, "cancelled")
		return
	case string(core.SendTimeoutNotice), string(core.SendOperationOutcome):
		// The request it ends may still wait for the pane: it is not
		// typed any more.
		before := len(ag.queue)
		ag.queue = slices.DeleteFunc(ag.queue, func(j *job) bool { return j.msg.ID == msg.ID })
		log.Info("notice for a tmux agent: not typed (it asks for no answer)", "subject", msg.Subject, "dropped", before-len(ag.queue))
		return
	case string(core.SendExtension):
		log.Info("notice for a tmux agent: not typed (it asks for no answer)", "subject", msg.Subject)
		return
	case string(core.SendFollowup):
		if c := ag.cur; c != nil && c.msg.ID == msg.ID {
			log.Info("follow-up while the agent works on it: not typed")
			return
		}
	}
	// A reminder replaces the earlier send of its message still waiting.
	for i, q := range ag.queue {
		if q.msg.ID == msg.ID && !q.task && !j.task {
			ag.queue[i] = j
			log.Info("a newer send replaces the one waiting for the pane")
			ag.signal()
			return
		}
	}
	ag.queue = append(ag.queue, j)
	ag.asked = true
	log.Info("prompt queued for the pane", "queued", len(ag.queue))
	ag.signal()
}

func (ag *agent) signal() {
	select {
	case ag.wake <- struct{}{}:
	default:
	}
}

// dropTaskLocked drops the prompts of a task waiting, and interrupts its
// turn running.
func (ag *agent) dropTaskLocked(taskID, why string) {
	ag.queue = slices.DeleteFunc(ag.queue, func(j *job) bool { return j.task && j.msg.TaskID == taskID })
	if c := ag.cur; c != nil && c.task && c.msg.TaskID == taskID && !c.quiet.Load() {
		c.quiet.Store(true)
		c.log.Info("the turn is stopped: " + why)
	}
}

func (ag *agent) dropDeliveryLocked(id, why string) {
	ag.queue = slices.DeleteFunc(ag.queue, func(j *job) bool { return j.msg.ID == id })
	if c := ag.cur; c != nil && c.msg.ID == id && !c.quiet.Load() {
		c.quiet.Store(true)
		c.log.Info("the turn is stopped: " + why)
	}
}

// stopTask stops a task's turn (core.StopTurn).
func (ag *agent) stopTask(taskID, reason string) {
	ag.mu.Lock()
	defer ag.mu.Unlock()
	ag.dropTaskLocked(taskID, reason)
	ag.signal()
}

func (ag *agent) snapshot() AgentState {
	ag.mu.Lock()
	defer ag.mu.Unlock()
	// Attaching needs no configuration file: the server is running.
	srv := ag.srv
	srv.Conf = ""
	s := AgentState{State: string(ag.state), Session: ag.session, Queued: len(ag.queue), Conversation: ag.conv,
		Attach: append([]string{srv.program()}, srv.Args("attach-session", "-t", "="+ag.session)...)}
	switch {
	case ag.hibernated:
		s.State = "hibernating"
	case !ag.started || ag.state == "":
		// Not started, or started and its pane not read yet.
		s.State = "not started"
	}
	if ag.cur != nil {
		s.Working = ag.cur.msg.ID
	}
	return s
}

// withSubject is a message's text as the agent gets it.
func withSubject(msg core.InboxMessage) string {
	if strings.TrimSpace(msg.Subject) == "" {
		return msg.Body
	}
	return msg.Subject + "\n\n" + msg.Body
}

// loop reads the pane and types into it until the adapter closes.
func (ag *agent) loop() {
	defer ag.a.wg.Done()
	t := time.NewTicker(ag.a.opts.Poll)
	defer t.Stop()
	for {
		select {
		case <-ag.a.ctx.Done():
			return
		case <-ag.gone:
			return
		case <-t.C:
		case <-ag.wake:
		}
		ag.opMu.Lock()
		ag.step(ag.a.ctx)
		ag.opMu.Unlock()
		if ag.answered() {
			ag.a.endAsk(ag.a.ctx, ag)
			return
		}
	}
}

// answered reports whether an agent made to answer one message has done
// with it: nothing waits and nothing is under way.
func (ag *agent) answered() bool {
	if ag.ask == "" {
		return false
	}
	ag.mu.Lock()
	defer ag.mu.Unlock()
	return ag.asked && ag.cur == nil && len(ag.queue) == 0
}

// readOnlyCopy makes a scout's copy of the task's worktree, where its
// program then runs.
func (ag *agent) readOnlyCopy(ctx context.Context) error {
	if !ag.scout || ag.release != nil {
		return nil
	}
	dir, done, err := ag.a.opts.ReadOnly(ctx, ag.ask, ag.worktree)
	if err != nil {
		return fmt.Errorf("wilco could not make the scout's read-only worktree: %w", err)
	}
	ag.dir, ag.release = dir, done
	return nil
}

// releaseCopy lists the files a scout changed in its copy of the
// worktree and removes it (none: no copy).
func (ag *agent) releaseCopy(ctx context.Context) ([]string, error) {
	done := ag.release
	ag.release = nil
	if done == nil {
		return nil, nil
	}
	return done(ctx)
}

func (ag *agent) logger() *slog.Logger {
	if ag.task != "" {
		return ag.a.log.With("agent", ag.cfg.Name, "instance", ag.task)
	}
	return ag.a.log.With("agent", ag.cfg.Name)
}

// step reads the pane once and does what comes next. Called with opMu
// held.
func (ag *agent) step(ctx context.Context) {
	ag.mu.Lock()
	hib, started, cur, waiting := ag.hibernated, ag.started, ag.cur, len(ag.queue) > 0
	ag.mu.Unlock()
	if hib || !started && !ag.startIfNeeded(ctx, cur != nil, waiting) {
		return
	}
	pane, ok := ag.capture(ctx)
	if !ok {
		return
	}
	state, dialog := ag.style.Classify(pane.Screen)
	if pane.Dead {
		state = Dead
	}
	now := time.Now()
	cur = ag.observe(pane, state, now)
	switch state {
	case Dead:
		ag.deadPane(ctx, pane, now)
	case Dialog:
		ag.answerDialog(ctx, dialog, now)
	default:
		if cur != nil {
			ag.work(ctx, cur, pane, state)
		}
	}
}

// startIfNeeded starts the agent's program when there is work for it, and
// says whether it runs. A session that runs the agent's program already
// (one wilco left running when it stopped, or the user's) is used as it
// is. A program that cannot start fails the prompt it was to take.
func (ag *agent) startIfNeeded(ctx context.Context, busy, waiting bool) bool {
	runs := false
	if !ag.probed || busy || waiting {
		ag.probed = true
		runs = ag.sessionRuns(ctx)
	}
	if !runs && !busy && !waiting {
		return false // started on demand
	}
	if ag.isStarted() {
		return true
	}
	err := ag.start(ctx)
	if err == nil {
		return true
	}
	ag.logger().Error("the agent's program could not start", "err", err)
	ag.failCurrent(ctx, -1, "could not start the agent's program in tmux: "+err.Error(), "")
	ag.mu.Lock()
	if ag.cur == nil && len(ag.queue) > 0 {
		// Nothing can be typed: the first prompt fails.
		ag.cur = ag.queue[0]
		ag.queue = ag.queue[1:]
		ag.mu.Unlock()
		ag.failCurrent(ctx, -1, "could not start the agent's program in tmux: "+err.Error(), "")
	} else {
		ag.mu.Unlock()
	}
	return false
}

// capture reads the pane; a session that is gone fails the turn it ran.
func (ag *agent) capture(ctx context.Context) (Pane, bool) {
	pane, err := ag.srv.Capture(ctx, ag.session)
	if err == nil {
		return pane, true
	}
	if errors.Is(err, ErrNoSession) {
		ag.logger().Warn("the agent's tmux session is gone", "session", ag.session)
		ag.mu.Lock()
		ag.started, ag.state = false, ""
		ag.mu.Unlock()
		ag.failCurrent(ctx, -1, "the agent's tmux session "+ag.session+" ended while it worked", "")
		return Pane{}, false
	}
	if ctx.Err() == nil {
		ag.logger().Warn("reading the pane failed", "err", err)
	}
	return Pane{}, false
}

// observe notes what the pane shows and since when, and returns the job
// under way: the next prompt waiting, once the pane has shown ready and
// still for a moment — longer after the program started, when it draws
// its input box before it takes input.
func (ag *agent) observe(pane Pane, state State, now time.Time) *job {
	if text := pane.Screen.Text(); text != ag.lastScreen {
		ag.lastScreen, ag.screenSince = text, now
	}
	still := stillFor
	if !ag.tookPrompt && now.Sub(ag.startedAt) < startupWait {
		still = startupStill
	}
	ag.mu.Lock()
	defer ag.mu.Unlock()
	ag.state = state
	cur := ag.cur
	if cur == nil && state == Ready && len(ag.queue) > 0 && now.Sub(ag.screenSince) >= still {
		cur = ag.queue[0]
		ag.queue = ag.queue[1:]
		ag.cur = cur
	}
	return cur
}

// deadPane reports a program that exited, once its exit status is known:
// tmux may see the pane's end before it reaps the program, and its exit
// status comes a moment later.
func (ag *agent) deadPane(ctx context.Context, pane Pane, now time.Time) {
	if pane.ExitStatus < 0 && pane.Signal == 0 {
		pane.ExitStatus = ag.exitStatus()
	}
	known := pane.ExitStatus >= 0 || pane.Signal > 0
	if !known && ag.deadSince.IsZero() {
		ag.deadSince = now
	}
	if !known && now.Sub(ag.deadSince) < 5*time.Second {
		return
	}
	ag.deadSince = time.Time{}
	ag.dead(ctx, pane)
}

// answerDialog answers a question of the program's own (not a permission
// question): once, and again only if it still shows a while later (keys
// sent twice could answer the question that follows it).
func (ag *agent) answerDialog(ctx context.Context, dialog *DialogRule, now time.Time) {
	ag.mu.Lock()
	due := time.Since(ag.dialogAt) > dialogWait
	if due {
		ag.dialogAt = time.Now()
	}
	ag.mu.Unlock()
	// The program goes on starting after its question: a prompt waits
	// as after a start.
	ag.startedAt, ag.tookPrompt = now, false
	if due {
		ag.logger().Info("answering the program's question", "question", dialog.Name, "keys", dialog.Keys)
		_ = ag.srv.SendKeys(ctx, ag.session, dialog.Keys...)
	}
}

// sessionRuns reports whether the session exists with a live program (a
// session left by an earlier wilco, or the user's): then it is used as it
// is.
func (ag *agent) sessionRuns(ctx context.Context) bool {
	if !ag.srv.HasSession(ctx, ag.session) {
		return false
	}
	dead, command, start, err := ag.srv.PaneProgram(ctx, ag.session)
	ours := strings.Contains(start, wrapperName) // started by a wilco: the shell around the program
	if err != nil || dead || shells[command] && !ours {
		return false // nothing, or only a shell, runs there: wilco starts the program
	}
	ag.logger().Info("the agent's session runs already: used as it is", "session", ag.session, "program", command)
	ag.mu.Lock()
	ag.started = true
	ag.mu.Unlock()
	return true
}

// wrapperName names the shell wilco runs an agent's program under (its
// $0): a pane started so runs an agent.
const wrapperName = "wilco-agent"

// shells are the programs a pane runs when no agent runs in it.
var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "fish": true, "dash": true, "ksh": true, "tcsh": true, "csh": true}

func (ag *agent) isStarted() bool {
	ag.mu.Lock()
	defer ag.mu.Unlock()
	return ag.started
}

// env is the program's environment beyond the server's: wilco's variables
// for the agent, the preset's, then the agent's env.
func (ag *agent) env() []string {
	set := map[string]string{
		"WILCO_AGENT":       ag.cfg.Name,
		"WILCO_URL":         ag.a.opts.URL,
		"WILCO_ADDR":        ag.a.opts.URL,
		"WILCO_AGENT_TOKEN": ag.cfg.Token,
		"PWD":               ag.dir,
	}
	if ag.preset != nil {
		for k, v := range ag.preset.Env {
			if _, ok := ag.cfg.Env[k]; !ok {
				set[k] = v
			}
		}
	}
	maps.Copy(set, ag.mcpEnv())
	maps.Copy(set, ag.cfg.Env)
	out := make([]string, 0, len(set))
	for _, k := range slices.Sorted(maps.Keys(set)) {
		out = append(out, k+"="+set[k])
	}
	return out
}

// wrap runs argv under a shell that writes its exit status to
// $WILCO_EXIT_FILE, without the variables the preset unsets.
func (ag *agent) wrap(argv []string) []string {
	script := `"$@"; s=$?; echo "$s" > "$WILCO_EXIT_FILE"; exit "$s"`
	if unset := ag.unset(); len(unset) > 0 {
		script = "unset " + strings.Join(unset, " ") + "; " + script
	}
	return append([]string{"sh", "-c", script, wrapperName}, argv...)
}

// unset are the variables the preset removes from the program's
// environment, less those the agent's env sets.
func (ag *agent) unset() []string {
	if ag.preset == nil {
		return nil
	}
	var out []string
	for _, k := range ag.preset.Unset {
		if _, ok := ag.cfg.Env[k]; !ok && shellName.MatchString(k) {
			out = append(out, k)
		}
	}
	return out
}

// shellName is a variable name a shell's unset takes.
var shellName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// argv is the program's command line: the preset's, with the conversation
// to start or resume.
func (ag *agent) argv(resume bool, conv string) (argv []string, newConv string) {
	if ag.preset == nil {
		return slices.Clone(ag.cfg.Command), ""
	}
	p := ag.preset
	prog, extra := p.Program, []string(nil)
	if len(ag.cfg.Command) > 0 {
		prog, extra = ag.cfg.Command[0], ag.cfg.Command[1:]
	}
	var sess []string
	switch {
	case resume && p.Resume != nil:
		sess, newConv = p.Resume(conv), conv
	case p.NewSession != nil:
		newConv = newSessionID()
		sess = p.NewSession(newConv)
	}
	argv = []string{prog}
	if p.ResumeFirst && resume {
		argv = append(argv, sess...)
		sess = nil
	}
	argv = append(argv, p.Args...)
	argv = append(argv, ag.mcpArgs()...)
	argv = append(argv, extra...)
	return append(argv, sess...), newConv
}

// start starts the program: in a new session wilco makes, or in the pane
// of the configured session (whose program exited, or was never started
// by wilco).
func (ag *agent) start(ctx context.Context) error {
	ag.mu.Lock()
	resume, conv := ag.resume, ag.conv
	ag.mu.Unlock()
	argv, newConv := ag.argv(resume, conv)
	if len(argv) == 0 {
		return errors.New("no command to run")
	}
	if err := ag.readOnlyCopy(ctx); err != nil {
		return err
	}
	if fi, err := os.Stat(ag.dir); ag.task != "" && (err != nil || !fi.IsDir()) {
		return fmt.Errorf("the task's worktree %s is missing", ag.dir)
	}
	w, h := ag.cfg.Width, ag.cfg.Height
	if w <= 0 {
		w = DefaultWidth
	}
	if h <= 0 {
		h = DefaultHeight
	}
	// The program runs under a shell that writes its exit status down:
	// tmux does not always tell it (#{pane_dead_status} may stay empty).
	exitFile := ag.exitFile()
	_ = os.MkdirAll(filepath.Dir(exitFile), 0o700)
	_ = os.Remove(exitFile)
	wrapped := ag.wrap(argv)
	env := append(ag.env(), "WILCO_EXIT_FILE="+exitFile)
	ag.progEnv = map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		ag.progEnv[k] = v
	}
	var err error
	if ag.srv.HasSession(ctx, ag.session) {
		err = ag.srv.Respawn(ctx, ag.session, ag.dir, env, wrapped, true)
	} else {
		err = ag.srv.NewSession(ctx, ag.session, ag.dir, env, wrapped, w, h)
	}
	if err != nil {
		return err
	}
	ag.logger().Info("the agent's program started in tmux", "session", ag.session, "dir", ag.dir, "command", argv, "resumed", resume)
	ag.startedAt, ag.tookPrompt = time.Now(), false
	ag.mu.Lock()
	ag.started, ag.resume = true, false
	if newConv != "" {
		ag.conv = newConv
	}
	conv = ag.conv
	ag.mu.Unlock()
	ag.saveConversation(conv)
	return nil
}

// exitFile is where the shell around the agent's program writes its exit
// status.
func (ag *agent) exitFile() string {
	return filepath.Join(ag.a.opts.StateDir, "tmux", ag.files+".exit")
}

// exitStatus is the program's exit status as its shell wrote it down (-1:
// not written).
func (ag *agent) exitStatus() int {
	b, err := os.ReadFile(ag.exitFile())
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return -1
	}
	return n
}

// convFile keeps the agent program's conversation id, for a wilco started
// again while the session runs (a hibernation then keeps it).
func (ag *agent) convFile() string {
	return filepath.Join(ag.a.opts.StateDir, "tmux", ag.files+".conversation")
}

// savedConversation is the conversation id kept in convFile ("" for
// none).
func (ag *agent) savedConversation() string {
	b, err := os.ReadFile(ag.convFile())
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func (ag *agent) saveConversation(conv string) {
	if conv == "" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(ag.convFile()), 0o700); err == nil {
		_ = os.WriteFile(ag.convFile(), []byte(conv+"\n"), 0o600)
	}
}

// dead ends the work of a pane whose program exited: the turn it worked
// on fails with the pane's last lines. The next prompt starts it again.
func (ag *agent) dead(ctx context.Context, pane Pane) {
	tail := pane.Screen.Tail(15)
	ag.mu.Lock()
	cur := ag.cur
	wasStarted := ag.started
	ag.started = false
	ag.mu.Unlock()
	ag.probed = true // the pane is dead: the next prompt starts the program
	if wasStarted {
		ag.logger().Warn("the agent's program exited", "status", pane.ExitStatus, "last_lines", tail)
	}
	if cur == nil {
		return
	}
	msg := fmt.Sprintf("the agent's program exited (status %d) in its tmux pane; its last lines:\n%s", pane.ExitStatus, tail)
	switch {
	case pane.Signal > 0:
		msg = fmt.Sprintf("the agent's program was killed by signal %d in its tmux pane; its last lines:\n%s", pane.Signal, tail)
	case pane.ExitStatus < 0:
		msg = "the agent's program ended in its tmux pane (tmux did not say how); its last lines:\n" + tail
	}
	code := pane.ExitStatus
	if code == 0 {
		code = -1 // an exit, even 0, in the middle of a turn is no success
	}
	ag.failCurrent(ctx, code, msg, tail)
}

// failCurrent ends the job being worked on with an error.
func (ag *agent) failCurrent(ctx context.Context, code int, msg, output string) {
	ag.mu.Lock()
	j := ag.cur
	ag.cur = nil
	ag.mu.Unlock()
	if j == nil {
		return
	}
	if j.log == nil {
		j.log = ag.logger().With("message", j.msg.ID, "task", j.msg.TaskID)
	}
	ag.appendLog(j, "--- wilco: "+msg)
	j.close()
	if j.quiet.Load() || !j.task {
		j.log.Warn("the prompt ended with an error", "err", msg)
		if !j.quiet.Load() && ag.ask != "" {
			ag.failed(ctx, j, msg)
		}
		return
	}
	r := core.TurnResult{TaskID: j.msg.TaskID, Attempt: j.msg.TaskAttempt, Delivery: j.msg.ID, ExitCode: code, Error: msg,
		Output: tailText(strings.Join(append(j.text, output), "\n"), 8000)}
	if !j.began.IsZero() {
		r.Duration = time.Since(j.began)
	}
	ag.report(ctx, j, r)
}

func (j *job) close() {
	if j.logf != nil {
		j.logf.Close()
		j.logf = nil
	}
	if j.transcript != nil {
		j.transcript.Close()
		j.transcript = nil
	}
}

func (ag *agent) report(ctx context.Context, j *job, r core.TurnResult) {
	if err := ag.a.opts.Report.Report(context.WithoutCancel(ctx), adapter.TurnEnded{Result: r}); err != nil {
		j.log.Warn("the end of the turn was refused", "err", err)
	}
}

// work does the next step of the job on the pane.
func (ag *agent) work(ctx context.Context, j *job, pane Pane, state State) {
	if j.quiet.Load() && j.phase != phaseStopping {
		ag.quieten(ctx, j)
		return
	}
	now := time.Now()
	if j.suspended {
		return
	}
	switch j.phase {
	case phasePaste:
		ag.paste(ctx, j, pane, state, now)
	case phaseLanding:
		ag.land(ctx, j, pane, state, now)
	case phaseConfirming:
		ag.confirm(ctx, j, pane, state, now)
	case phaseWorking:
		ag.watch(ctx, j, pane, state)
	case phaseStopping:
		ag.stopping(ctx, j, state, now)
	}
}

// quieten ends a turn the core no longer wants: a prompt not submitted is
// cleared from the input box, a turn under way is interrupted.
func (ag *agent) quieten(ctx context.Context, j *job) {
	if j.phase <= phaseLanding {
		// Nothing was submitted: empty the input box, and go on.
		_ = ag.srv.SendKeys(ctx, ag.session, ag.keys.clear...)
		ag.finishJob(j)
		return
	}
	j.log.Info("interrupting the agent")
	_ = ag.srv.SendKeys(ctx, ag.session, ag.keys.interrupt...)
	j.phase, j.stopAt = phaseStopping, time.Now()
}

// paste pastes the prompt into a ready pane (or, for a turn that outlived
// wilco, follows it from what shows now).
func (ag *agent) paste(ctx context.Context, j *job, pane Pane, state State, now time.Time) {
	if j.adopted {
		// A turn that outlived wilco: read on from what shows now.
		if err := ag.begin(j); err != nil {
			ag.failCurrent(ctx, -1, err.Error(), "")
			return
		}
		j.reader.Mark(ag.style.Content(pane.Screen), "")
		j.adopted = false
		j.phase, j.confirmed, j.lastChange = phaseWorking, now, now
		ag.appendLog(j, "--- wilco: started again while the agent worked: following its turn from here")
		return
	}
	if j.pastes == 0 && state != Ready {
		return // a prompt waits until the pane is ready
	}
	if j.pastes == 0 {
		if err := ag.begin(j); err != nil {
			ag.failCurrent(ctx, -1, err.Error(), "")
			return
		}
		j.reader.Mark(ag.style.Content(pane.Screen), j.prompt)
	}
	if (state != Ready || j.pastes > 0) && len(ag.keys.clear) > 0 {
		// Pasted again: the first paste, drawn late (a program slow under
		// load), would be typed twice.
		_ = ag.srv.SendKeys(ctx, ag.session, ag.keys.clear...)
	}
	j.pasteScreen = pane.Screen.Text()
	if err := ag.srv.Paste(ctx, ag.session, "wilco-"+ag.files, j.prompt); err != nil {
		j.log.Warn("pasting the prompt failed", "err", err)
		return
	}
	j.pastes++
	j.pastedAt = now
	j.phase = phaseLanding
}

// land submits the prompt once it shows in the input box, and pastes it
// again when it never does.
func (ag *agent) land(ctx context.Context, j *job, pane Pane, state State, now time.Time) {
	if state != Ready || ag.style.HiddenInput && pane.Screen.Text() != j.pasteScreen {
		// The prompt shows in the input box (the pane no longer looks
		// ready, or changed since the paste while it still does): submit
		// it, by its own key.
		if err := ag.srv.SendKeys(ctx, ag.session, ag.keys.submit); err != nil {
			j.log.Warn("sending the submit key failed", "err", err)
			return
		}
		j.submits++
		j.submittedAt = now
		j.phase = phaseConfirming
		return
	}
	if now.Sub(j.pastedAt) < landWait {
		return
	}
	if j.pastes < 3 {
		j.log.Warn("the paste did not show in the input box: pasting again", "pastes", j.pastes)
		j.phase = phasePaste
		return
	}
	ag.undelivered(ctx, j, fmt.Sprintf("the prompt never showed in the input box of %s (pasted %d times; the pane still matches the ready pattern)", ag.session, j.pastes))
}

// confirm waits for the agent to take the prompt out of its input box,
// sending the submit key again when it was lost.
func (ag *agent) confirm(ctx context.Context, j *job, pane Pane, state State, now time.Time) {
	switch state {
	case Busy, Permission, Ready:
		// The prompt left the input box: the agent took it.
		ag.took(ctx, j, pane, state, now)
		return
	}
	// The key is sent again after 1s, then 2s, then 4s…: a program
	// still busy starting takes it late.
	if now.Sub(j.submittedAt) < confirmWait<<min(j.submits-1, 4) {
		return
	}
	// A program that took the prompt may be slow to redraw its input box
	// (Gemini CLI starting under load): its record holding the prompt
	// says it took it. The key sent again would submit it a second time.
	if ag.recordHolds(j, ag.recordEntries(now)) {
		j.log.Info("the agent's record holds the prompt while its input box still shows it: taken; the submit key is not sent again", "submits", j.submits)
		ag.took(ctx, j, pane, state, now)
		return
	}
	if j.submits < ag.submitTries() {
		j.log.Warn("the prompt is still in the input box: the submit key was lost; sending it again", "submits", j.submits)
		_ = ag.srv.SendKeys(ctx, ag.session, ag.keys.submit)
		j.submits++
		j.submittedAt = now
		return
	}
	_ = ag.srv.SendKeys(ctx, ag.session, ag.keys.clear...)
	ag.undelivered(ctx, j, fmt.Sprintf("the prompt stayed in the input box of %s: the submit key (%s) was sent %d times and the agent never took it", ag.session, ag.keys.submit, j.submits))
}

// took: the agent took the job's prompt; its turn is watched.
func (ag *agent) took(ctx context.Context, j *job, pane Pane, state State, now time.Time) {
	j.confirmed = now
	ag.tookPrompt = true
	j.phase = phaseWorking
	j.lastChange = now
	if j.submits > 1 {
		j.log.Info("the prompt was submitted after the submit key was sent again", "submits", j.submits)
	}
	if f := ag.a.opts.OnSubmit; f != nil {
		f(SubmitRecord{Agent: ag.cfg.Name, Message: j.msg.ID, Queued: j.queued, Pasted: j.pastedAt, Confirmed: now, Submits: j.submits, Pastes: j.pastes})
	}
	ag.appendLog(j, fmt.Sprintf("--- wilco: prompt submitted (submit key sent %d time(s)) %s", j.submits, now.UTC().Format(time.RFC3339)))
	ag.watch(ctx, j, pane, state)
}

// stopping waits for an interrupted agent to be ready again.
func (ag *agent) stopping(ctx context.Context, j *job, state State, now time.Time) {
	switch {
	case state == Ready:
		ag.finishJob(j)
	case state == Typing && len(ag.keys.clear) > 0:
		// An interrupted prompt may be put back in the input box.
		_ = ag.srv.SendKeys(ctx, ag.session, ag.keys.clear...)
	case now.Sub(j.stopAt) > stopWait:
		j.log.Warn("the agent did not come back ready after the interrupt; going on", "state", state)
		ag.finishJob(j)
	}
}

func (ag *agent) submitTries() int {
	if ag.cfg.SubmitTries > 0 {
		return ag.cfg.SubmitTries
	}
	return DefaultSubmitTries
}

func (ag *agent) settle() time.Duration {
	if ag.cfg.Settle > 0 {
		return ag.cfg.Settle
	}
	return DefaultSettle
}

// finishJob forgets the job being worked on.
func (ag *agent) finishJob(j *job) {
	j.close()
	ag.mu.Lock()
	if ag.cur == j {
		ag.cur = nil
	}
	ag.mu.Unlock()
	ag.signal()
}

// undelivered ends a job whose prompt the agent never took: a task's turn
// ends (before its ACK: the core counts a failed delivery); a message is
// left to its policy, which sends it again.
func (ag *agent) undelivered(ctx context.Context, j *job, why string) {
	j.log.Error("the prompt was not delivered", "why", why)
	ag.appendLog(j, "--- wilco: "+why+"; the pane showed:\n"+ag.lastScreen)
	if j.task {
		ag.failCurrent(ctx, -1, why, "")
		return
	}
	ag.finishJob(j)
}

// begin prepares a job's run directory, log and transcript.
func (ag *agent) begin(j *job) error {
	j.log = ag.logger().With("message", j.msg.ID, "type", j.msg.Type, "task", j.msg.TaskID, "send", j.msg.Attempt)
	if j.began.IsZero() {
		j.began = time.Now()
	}
	if j.task {
		j.runDir = ag.a.RunDir(j.msg.TaskID, j.msg.TaskAttempt)
	} else {
		j.runDir = ag.a.messageDir(j.msg)
	}
	if err := os.MkdirAll(j.runDir, 0o755); err != nil {
		return fmt.Errorf("run directory: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(j.runDir, execadapter.PromptFileName), []byte(j.prompt), 0o644); err != nil {
		return fmt.Errorf("write the prompt: %w", err)
	}
	if j.task {
		if full := ag.fullPrompt(j.msg.ID); full != "" {
			_ = os.WriteFile(filepath.Join(j.runDir, execadapter.DelegationFileName), []byte(full), 0o644)
		}
	}
	f, err := os.OpenFile(filepath.Join(j.runDir, execadapter.LogFileName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("agent log: %w", err)
	}
	j.logf = f
	j.transcript = execadapter.OpenTranscript(filepath.Join(j.runDir, execadapter.TranscriptFileName))
	j.transcript.Add(execadapter.Entry{Kind: "prompt", Text: j.prompt})
	if j.scanner == nil {
		j.scanner = execadapter.NewScanner(j.wantAck)
	}
	ag.appendLog(j, fmt.Sprintf("--- wilco: %s for %s, send %d (%s), typed into tmux session %s, %s",
		firstOf(j.msg.TaskID, j.msg.ID), ag.cfg.Name, j.msg.Attempt, j.msg.Type, ag.session, time.Now().UTC().Format(time.RFC3339)))
	return nil
}

func (ag *agent) fullPrompt(id string) string {
	ag.mu.Lock()
	defer ag.mu.Unlock()
	return ag.full[id]
}

func (ag *agent) appendLog(j *job, line string) {
	if j.logf != nil {
		_, _ = j.logf.WriteString(line + "\n")
	}
}

// watch follows the agent working on a prompt: reads what it writes (the
// ACK, checkpoints, tool calls), answers its permission questions, and
// ends the turn when it is ready again, stalls, dies or runs out of time.
func (ag *agent) watch(ctx context.Context, j *job, pane Pane, state State) {
	now := time.Now()
	content := ag.style.Content(pane.Screen)
	key := contentKey(content)
	stable := key == j.lastKey
	if !stable {
		j.lastKey, j.lastChange = key, now
	}
	j.lastScreen = pane.Screen
	ag.readRecord(ctx, j, now, false)
	if j.quiet.Load() {
		return
	}
	if stable || state == Ready {
		ag.read(ctx, j, content)
		if j.quiet.Load() {
			return
		}
		if now.Sub(j.lastChange) >= time.Second {
			j.scanner.Settle()
			ag.sendAck(ctx, j)
			if j.quiet.Load() {
				return
			}
		}
	}
	if state != Permission {
		j.question.hidden(now)
	}
	switch state {
	case Busy:
		j.busySeen = true
		j.readySince = time.Time{}
	case Permission:
		j.readySince = time.Time{}
		ag.permission(ctx, j, pane)
	case Ready:
		if j.readySince.IsZero() {
			j.readySince = now
		}
		if j.source == sourceRecord && j.recEnded {
			// The record says the turn is over, and the pane takes input.
			ag.endTurn(ctx, j)
			return
		}
		settle := ag.settle()
		if !j.busySeen && len(j.text) == 0 || j.source == sourceRecord && ag.rec.endsTurns ||
			ag.rec != nil && j.source == sourceUndecided {
			// Nothing of the agent's work showed yet: some programs show
			// ready for a while after they took a prompt. Or the record,
			// which says when a turn ends, has not said it: the turn was
			// interrupted, or failed, or the pane shows ready too soon. Or
			// the record has not shown the prompt yet, whatever the pane
			// showed: Gemini CLI, busy with a prompt in its queue, shows
			// ready a moment between the queue and the turn.
			settle = max(settle, quietSettle)
		}
		if now.Sub(j.readySince) >= settle && stable && (j.source != sourceRecord || now.Sub(j.lastChange) >= settle) {
			ag.endTurn(ctx, j)
			return
		}
	default:
		j.readySince = time.Time{}
	}
	if idle := ag.cfg.IdleTimeout; idle > 0 && now.Sub(j.lastChange) > idle {
		ag.stall(ctx, j, fmt.Sprintf("the pane showed nothing new for %s (idle_timeout): the agent was stopped", idle))
		return
	}
	if to := ag.cfg.Timeout; to > 0 && now.Sub(j.confirmed) > to {
		ag.stall(ctx, j, fmt.Sprintf("the turn took more than %s (timeout): the agent was stopped", to))
	}
}

// contentKey is the conversation's text, to tell whether it changed.
func contentKey(content []Line) string {
	var b strings.Builder
	for _, l := range content {
		b.WriteString(l.Text)
		b.WriteByte('\n')
	}
	return b.String()
}

// read takes the turn's new lines: the agent log, the transcript, the
// scanner, the tool calls.
func (ag *agent) read(ctx context.Context, j *job, content []Line) {
	lines := j.reader.Next(content)
	switch {
	case len(lines) == 0:
	case j.source == sourceScreen || ag.rec == nil:
		ag.take(ctx, j, lines)
	case j.source == sourceUndecided:
		j.held = append(j.held, lines...)
	}
}

// take reads the turn's new lines from the pane.
func (ag *agent) take(ctx context.Context, j *job, lines []string) {
	if len(lines) == 0 {
		return
	}
	j.text = append(j.text, lines...)
	for _, l := range lines {
		ag.appendLog(j, l)
		j.scanner.Line(l)
	}
	j.transcript.Add(execadapter.Entry{Kind: "text", Text: strings.Join(lines, "\n")})
	// The ACK first: what the agent does is its task's milestone only once
	// the task runs.
	ag.sendAck(ctx, j)
	if j.task && ag.style.Tool != nil && !j.quiet.Load() {
		for _, l := range lines {
			l = strings.TrimSpace(l) // a blinking marker leaves its indent
			if m := toolCall.FindStringSubmatch(l); m != nil && ag.style.Tool.MatchString(ag.replyMarker()+l) {
				ag.activity(ctx, j, execadapter.DescribeTool(m[1], m[2]))
			}
		}
	}
}

// toolCall is a tool call as TUIs show it: "Write(/repo/file.txt)".
var toolCall = regexp.MustCompile(`^([A-Za-z][\w.-]*)\((.*)\)\s*$`)

func (ag *agent) replyMarker() string {
	if len(ag.style.ReplyMarkers) > 0 {
		return ag.style.ReplyMarkers[0]
	}
	return ""
}

// sendAck hands the core the turn's ACK and checkpoints. An ACK that does
// not let work begin stops the turn: the core sends what comes next.
func (ag *agent) sendAck(ctx context.Context, j *job) {
	ackText, progress := j.scanner.Take()
	for _, p := range progress {
		if j.task {
			if _, err := ag.a.opts.Report.Reply(context.WithoutCancel(ctx), core.ReplyInput{Agent: ag.cfg.Name, InReplyTo: j.msg.ID, Text: p}); err != nil {
				j.log.Warn("a checkpoint was refused", "err", err)
			}
		}
	}
	if ackText == "" || !j.task || j.ackSent {
		return
	}
	j.ackSent = true
	in, err := ag.a.opts.Report.Reply(context.WithoutCancel(ctx), core.ReplyInput{Agent: ag.cfg.Name, InReplyTo: j.msg.ID, Text: ackText})
	switch {
	case err != nil:
		j.log.Warn("the agent's acknowledgment was refused: the turn stops", "err", err)
	case !slices.Contains(in.Acknowledged, j.msg.ID):
		j.log.Info("the acknowledgment does not let work begin: the turn stops", "status", in.Status, "action", in.Action)
	default:
		j.log.Info("acknowledged", "status", in.Status)
		return
	}
	ag.mu.Lock()
	j.quiet.Store(true)
	ag.mu.Unlock()
}

// permission answers a permission question by the agent's allow list, or
// leaves it to the user; either way it is reported, once per question
// (see question for when).
func (ag *agent) permission(ctx context.Context, j *job, pane Pane) {
	text, above, now := ag.style.PermissionText(pane.Screen), ag.style.PermissionAbove(pane.Screen), time.Now()
	answerNow, again := j.question.show(text, above, pane.Screen.Text(), now)
	if again {
		j.log.Warn("the question is still asked, unchanged: its answer is sent again", "answer", j.question.answer)
		ag.appendLog(j, "--- wilco: the question is still asked, unchanged: answered again ("+j.question.answer+")")
		ag.sendAnswer(ctx, j.question.answer)
	}
	if !answerNow {
		return
	}
	tool := ag.style.ToolOf(pane.Screen)
	answer := ""
	if len(ag.allow) > 0 {
		answer = "denied"
		for _, re := range ag.allow {
			if ag.style.Allows(re, tool, text) {
				answer = "allowed"
				break
			}
		}
	}
	j.question.answeredAs(answer, above, pane.Screen.Text(), now)
	j.log.Info("the agent asks for permission", "tool", tool, "answer", answer)
	ag.appendLog(j, "--- wilco: permission asked ("+firstOf(answer, "waiting for the user")+"): "+firstLine(text))
	_ = ag.a.opts.Report.Report(context.WithoutCancel(ctx), adapter.PermissionAsked{Agent: ag.cfg.Name, TaskID: j.msg.TaskID, Attempt: j.msg.TaskAttempt, Tool: tool, Text: text, Answer: answer})
	ag.sendAnswer(ctx, answer)
}

// sendAnswer types the keys of an answer to a permission question (none
// for a question left to the user).
func (ag *agent) sendAnswer(ctx context.Context, answer string) {
	switch answer {
	case "allowed":
		_ = ag.srv.SendKeys(ctx, ag.session, ag.keys.approve...)
	case "denied":
		_ = ag.srv.SendKeys(ctx, ag.session, ag.keys.deny...)
	}
}

// stall stops a turn that stalled or ran out of time, and reports it.
func (ag *agent) stall(ctx context.Context, j *job, why string) {
	j.log.Warn("stopping the agent", "why", why)
	_ = ag.srv.SendKeys(ctx, ag.session, ag.keys.interrupt...)
	ag.appendLog(j, "--- wilco: "+why)
	if j.task && !j.quiet.Load() {
		r := core.TurnResult{TaskID: j.msg.TaskID, Attempt: j.msg.TaskAttempt, Delivery: j.msg.ID, ExitCode: -1, TimedOut: true,
			Error: why, Output: tailText(strings.Join(j.text, "\n"), 8000), Duration: time.Since(j.began)}
		ag.report(ctx, j, r)
	}
	ag.mu.Lock()
	j.quiet.Store(true)
	ag.mu.Unlock()
	j.phase, j.stopAt = phaseStopping, time.Now()
}

// endTurn reports a turn the agent finished: it is ready again.
func (ag *agent) endTurn(ctx context.Context, j *job) {
	if ag.rec != nil {
		ag.readRecord(ctx, j, time.Now(), true)
		if j.source == sourceUndecided {
			ag.fromScreen(ctx, j, "the agent's record does not show the prompt")
		}
	}
	if ag.rec == nil || j.source == sourceScreen {
		ag.take(ctx, j, j.reader.Final(ag.style.Content(j.lastScreen)))
	}
	j.scanner.Settle()
	ag.sendAck(ctx, j)
	text := strings.Join(j.text, "\n")
	if j.wantAck && !j.ackSent && !j.quiet.Load() {
		// What the pane showed says why no ACK was read.
		ag.appendLog(j, "--- wilco: the turn ended without an acknowledgment read from "+j.source.String()+"; the pane showed:\n"+
			strings.Join(j.lastScreen.History, "\n")+"\n"+j.lastScreen.Text())
	}
	ag.appendLog(j, fmt.Sprintf("--- wilco: the agent is ready again: turn over %s", time.Now().UTC().Format(time.RFC3339)))
	ag.finishJob(j)
	if j.quiet.Load() {
		return
	}
	if !j.task {
		if strings.TrimSpace(text) == "" {
			j.log.Warn("message not answered: the agent wrote nothing")
			return
		}
		if !ag.readOnlyKept(ctx, j) {
			return
		}
		if _, err := ag.a.opts.Report.Reply(context.WithoutCancel(ctx), core.ReplyInput{Agent: ag.cfg.Name, InReplyTo: j.msg.ID, Text: text}); err != nil {
			j.log.Warn("the agent's answer was refused", "err", err)
		}
		return
	}
	r := core.TurnResult{TaskID: j.msg.TaskID, Attempt: j.msg.TaskAttempt, Delivery: j.msg.ID, ExitCode: 0,
		Output: tailText(text, 8000), Summary: lastLines(text, 20), Duration: time.Since(j.began)}
	if c := execadapter.LastCompletion(text, j.msg.TaskID); c != nil {
		r.Status = c.Complete
		if c.Summary != "" {
			r.Summary = c.Summary
		}
		r.Reason, r.Error = c.Reason, c.Error
		r.Files = slices.Clone(c.FilesModified)
	}
	ag.report(ctx, j, r)
}

// readOnlyKept says whether a scout left its copy of the worktree as it
// was, removing the copy: a scout that changed files, or whose copy could
// not be checked, has its answer refused (the message failed), as the
// exec adapter does.
func (ag *agent) readOnlyKept(ctx context.Context, j *job) bool {
	changed, err := ag.releaseCopy(context.WithoutCancel(ctx))
	switch {
	case err != nil:
		j.log.Warn("the scout's worktree could not be checked: its answer is refused", "err", err)
		ag.failed(ctx, j, "wilco could not check what the scout changed: "+err.Error())
		return false
	case len(changed) > 0:
		j.log.Warn("the scout changed files: its answer is refused", "files", changed)
		ag.failed(ctx, j, "the scout changed files ("+strings.Join(changed, ", ")+"): a scout is read-only, so its answer is refused")
		return false
	}
	return true
}

// failed reports a message its agent could not answer.
func (ag *agent) failed(ctx context.Context, j *job, reason string) {
	if err := ag.a.opts.Report.Report(context.WithoutCancel(ctx), adapter.MessageFailed{Agent: ag.cfg.Name, MessageID: j.msg.ID, Reason: reason}); err != nil {
		j.log.Debug("the failed answer was not recorded", "err", err)
	}
}

func tailText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
