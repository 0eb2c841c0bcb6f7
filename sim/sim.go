package sim

import (
	"context"
	"fmt"
	"hash"
	"hash/fnv"
	"math/rand/v2"
	"path/filepath"
	rtdebug "runtime/debug"
	"slices"
	"strings"
	"time"

	"wilco/clock"
	"wilco/core"
	"wilco/runtime"
	"wilco/store"
	"wilco/store/sqlite"
)

// Epoch is the virtual time every simulation starts at.
var Epoch = time.Date(2026, 1, 26, 14, 0, 0, 0, time.UTC)

// Config says what to simulate.
type Config struct {
	// Seed decides everything: the agents, their behaviour, the caller's
	// commands, the policies, the crashes.
	Seed uint64
	// Steps is how many steps to run (default 300).
	Steps int
	// Dir is where the SQLite file is kept (a test's TempDir).
	Dir string
	// RestartRate is the chance that a step restarts wilco: a crash (the
	// runtime dropped without Close) or a clean Close (default 0.01).
	RestartRate float64
	// FaultRate is the chance that a step plants a crash in the next commit,
	// before or after the batch is durable (default 0.01).
	FaultRate float64
	// CheckEvery is how often (in steps) the live state is compared with
	// the replayed log (default 10); ReplayEvery, how often the whole log is
	// read back from the store and replayed into a fresh core (default 100,
	// and at every restart).
	CheckEvery  int
	ReplayEvery int
	// CheckpointShare is the runtime's CheckpointShare: 0 for a random one
	// of 1 to 64 per seed, which spreads checkpoints over many turns; -1 for
	// one so large that a checkpoint is written whole in the turn that
	// begins it.
	CheckpointShare int
	// Trace, when set, receives a line for every step and sub-step.
	Trace func(string)
	// Notify configures hooks that hear of unresponsive agents and
	// operations, with a webhook that answers at random (2xx, 5xx, an
	// error, late), so that notifications are made, retried, failed, and
	// made again after the crashes. Its choices come from a random stream
	// of their own: with Notify off, a seed runs as it always did.
	Notify bool
	// Parallel: 0 lets the run's random stream decide whether tasks are worked in
	// parallel (parallel > 1, exec agents with several instances, a
	// simulated repository where they land); 1 always, -1 never. Its
	// choices come from a random stream of their own: a seed without it
	// runs as it always did.
	Parallel int

	// failAt makes the run fail at that step (tests of the report).
	failAt int
	// breakWorld makes the simulated world misbehave (tests of the
	// rules): "land_unverified" lands a combination without asking for
	// its verification; "lose_landing" loses the end of every landing.
	breakWorld string
}

func (c *Config) defaults() {
	if c.Steps <= 0 {
		c.Steps = 300
	}
	if c.RestartRate == 0 {
		c.RestartRate = 0.01
	}
	if c.FaultRate == 0 {
		c.FaultRate = 0.01
	}
	if c.CheckEvery <= 0 {
		c.CheckEvery = 10
	}
	if c.ReplayEvery <= 0 {
		c.ReplayEvery = 100
	}
}

// Report is what a run did.
type Report struct {
	Seed     uint64
	Steps    int
	Events   uint64 // events in the log at the end
	Restarts int
	// Acks is how many acknowledgments were answered "ok" to their caller
	// (every one checked after each restart).
	Acks int
	// Paths counts how often each path of the policies was reached.
	Paths map[string]int
	// Digest sums up every event of the log: two runs of one seed give the
	// same digest.
	Digest uint64
	// End is the virtual time at the end.
	End time.Time
}

// Failure is a broken invariant, with what is needed to reproduce it.
type Failure struct {
	Seed uint64
	Step int
	Msg  string
	// Parallel is the run's Config.Parallel.
	Parallel int
	Last     []string // the last events of the log, oldest first
	Trace    []string // the last steps of the driver
}

func (f *Failure) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed=%d step=%d: %s\n", f.Seed, f.Step, f.Msg)
	if len(f.Trace) > 0 {
		b.WriteString("last steps:\n")
		for _, l := range f.Trace {
			b.WriteString("  " + l + "\n")
		}
	}
	b.WriteString("last events:\n")
	for _, l := range f.Last {
		b.WriteString("  " + l + "\n")
	}
	fmt.Fprintf(&b, "reproduce: go test ./sim -run 'TestSimulation$' -sim.seed=%d -sim.steps=%d", f.Seed, f.Step)
	if f.Parallel != 0 {
		fmt.Fprintf(&b, " -sim.parallel=%d", f.Parallel)
	}
	b.WriteString(" -v")
	return b.String()
}

// Run runs one seeded simulation and checks the invariants after every
// step. It returns a *Failure when one breaks.
func Run(cfg Config) (rep Report, err error) {
	cfg.defaults()
	w := newWorld(cfg)
	defer w.close()
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(*Failure)
			if !ok {
				f = w.failure(fmt.Sprintf("panic: %v\n%s", r, rtdebug.Stack()))
			}
			err = f
		}
	}()
	w.open()
	w.setup()
	w.setupTasks()
	for w.step = 1; w.step <= cfg.Steps; w.step++ {
		if w.step == cfg.failAt {
			w.failf("deliberate failure (failAt)")
		}
		w.oneStep()
		if w.st.crashed != noFault {
			if w.st.inCheckpoint {
				w.hit("restart.fault_in_checkpoint")
			}
			w.restart(w.st.crashed.String())
		}
		w.checkStep()
	}
	w.step = cfg.Steps
	// The end: one last crash, and everything must still be there.
	w.restart("crash")
	return w.report(), nil
}

// world is one simulation: wilco (runtime, core, store), the agents, the
// caller, and what the checks remember.
type world struct {
	cfg   Config
	rng   *rand.Rand
	path  string
	ctx   context.Context
	clock *clock.Fake
	st    *faultStore
	rt    *runtime.Runtime
	live  *core.State
	step  int

	ckptEvery    int
	ckptInterval time.Duration
	ckptShare    int

	agents   []*agent
	byName   map[string]*agent
	tasks    []*task
	taskByID map[string]*task
	ops      []string // operations whose start is durable
	agenda   []action
	agendaN  int
	nTask    int
	nInstr   int
	nConv    int

	// Checks.
	shadow     *core.State // every durable event replayed, from seq 1
	terminal   map[string]core.DeliveryState
	acked      map[string]uint64 // delivery → seq of its acknowledgment, answered ok
	ackedIDs   []string
	extended   map[string]int // delivery → extensions granted
	current    string         // the command being run ("" for timers)
	stepEvents []core.Event   // events committed by the current command
	recent     []string       // the last events, formatted
	trace      []string       // the last driver steps
	paths      map[string]int
	digest     hash.Hash64
	restarts   int

	// nrng decides what the webhook does (Notify); inflight counts the
	// attempts handed to it and not yet reported, by "id#attempt".
	nrng     *rand.Rand
	inflight map[string]int

	// tw is the part of the run that works tasks in parallel.
	tw *taskWorld
}

func newWorld(cfg Config) *world {
	return &world{
		cfg:      cfg,
		rng:      rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		path:     filepath.Join(cfg.Dir, fmt.Sprintf("sim-%d.db", cfg.Seed)),
		ctx:      context.Background(),
		clock:    clock.NewFake(Epoch),
		byName:   map[string]*agent{},
		taskByID: map[string]*task{},
		shadow:   core.New(),
		terminal: map[string]core.DeliveryState{},
		acked:    map[string]uint64{},
		extended: map[string]int{},
		paths:    map[string]int{},
		digest:   fnv.New64a(),
		nrng:     rand.New(rand.NewPCG(cfg.Seed^0x6e6f74696679, cfg.Seed)),
		inflight: map[string]int{},
		tw:       newTaskWorld(cfg),
	}
}

func (w *world) close() {
	if w.st != nil {
		_ = w.st.Store.Close()
	}
}

// --- randomness -------------------------------------------------------------

func (w *world) chance(p float64) bool { return w.rng.Float64() < p }

// pick returns an index drawn with the given weights.
func (w *world) pick(weights ...int) int {
	total := 0
	for _, x := range weights {
		total += x
	}
	n := w.rng.IntN(total)
	for i, x := range weights {
		if n < x {
			return i
		}
		n -= x
	}
	return len(weights) - 1
}

// between returns a duration in [lo, hi], to the millisecond.
func (w *world) between(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	ms := int64((hi - lo) / time.Millisecond)
	return lo + time.Duration(w.rng.Int64N(ms+1))*time.Millisecond
}

func oneOf[T any](w *world, xs []T) T { return xs[w.rng.IntN(len(xs))] }

// --- failure reports ---------------------------------------------------------

func (w *world) failure(msg string) *Failure {
	return &Failure{Seed: w.cfg.Seed, Step: w.step, Msg: msg, Parallel: w.cfg.Parallel, Last: slices.Clone(w.recent), Trace: slices.Clone(w.trace)}
}

// failf stops the run: the invariant is broken.
func (w *world) failf(format string, args ...any) {
	panic(w.failure(fmt.Sprintf(format, args...)))
}

func (w *world) tracef(format string, args ...any) {
	line := fmt.Sprintf("step %d %s: ", w.step, w.clock.Now().Sub(Epoch)) + fmt.Sprintf(format, args...)
	w.trace = append(w.trace, line)
	if len(w.trace) > 20 {
		w.trace = w.trace[len(w.trace)-20:]
	}
	if w.cfg.Trace != nil {
		w.cfg.Trace(line)
	}
}

func (w *world) hit(path string) { w.paths[path]++ }

// --- wilco: open, commands, restart -----------------------------------------

// open opens the store and a runtime on it, driven by hand.
func (w *world) open() {
	s, err := sqlite.Open(w.path)
	if err != nil {
		w.failf("open store: %v", err)
	}
	last, err := s.LastSeq(w.ctx)
	if err != nil {
		w.failf("last seq: %v", err)
	}
	// How often a checkpoint writes a pack or deletes a record depends on
	// the order it copies entities in, which is a map's: the store's paths
	// are only marked reached, not counted, so that a run's paths are
	// the same on every run.
	w.st = &faultStore{Store: s, last: last, hit: func(path string) { w.paths[path] = 1 }}
	if w.ckptEvery == 0 {
		w.ckptEvery = 1 + w.rng.IntN(200)
		w.ckptInterval = w.between(time.Second, 10*time.Minute)
		switch w.ckptShare = w.cfg.CheckpointShare; {
		case w.ckptShare == 0:
			w.ckptShare = 1 + w.rng.IntN(64)
		case w.ckptShare < 0:
			w.ckptShare = 1 << 30
		}
	}
	rt, err := runtime.Open(w.ctx, runtime.Config{
		Store: w.st, Clock: w.clock, Observe: w.observe,
		CheckpointEvery: w.ckptEvery, CheckpointInterval: w.ckptInterval, CheckpointShare: w.ckptShare,
	})
	if err != nil {
		w.failf("open runtime: %v", err)
	}
	w.rt = rt
	if err := rt.Read(func(c *core.State) { w.live = c }); err != nil {
		w.failf("read the runtime's core: %v", err)
	}
}

// result is what one command did.
type result struct {
	name          string
	before, after uint64 // the core's seq around the command
	committed     uint64 // the durable seq before it
	v             any
	err           error
	answered      bool
}

// do runs one command through the runtime, drains it, and checks that a
// refused command changed nothing and that an answer came only after the
// command's events were durable.
func (w *world) do(name string, fn func(c *core.State, now time.Time) (any, error)) *result {
	r := &result{name: name, committed: w.st.last}
	w.current = name
	w.stepEvents = w.stepEvents[:0]
	w.rt.Submit(func(c *core.State, now time.Time) (any, error) {
		r.before = c.Seq()
		v, err := fn(c, now)
		r.after = c.Seq()
		if err != nil && r.after != r.before {
			w.failf("%s was refused (%v) yet emitted events %d..%d", name, err, r.before+1, r.after)
		}
		return v, err
	}, func(v any, err error) {
		if w.st.dead() {
			return // the process died: nobody hears the answer
		}
		r.answered, r.v, r.err = true, v, err
		if err == nil && w.st.last < r.after {
			w.failf("%s answered ok with seq %d durable, its events reach %d", name, w.st.last, r.after)
		}
	})
	w.drain()
	w.current = ""
	// A fault in a later commit of checkpoint copies alone struck after
	// the command was durable and answered.
	struck := !w.st.inCheckpoint
	switch {
	case struck && w.st.crashed == failCommit:
		if !r.answered || r.err == nil {
			w.failf("%s: the commit failed, yet the caller was answered %v (%v)", name, r.answered, r.err)
		}
		if w.st.last != r.committed {
			w.failf("%s: the commit failed, yet the durable seq moved %d → %d", name, r.committed, w.st.last)
		}
	case struck && w.st.dead():
		if r.answered {
			w.failf("%s: answered after the process died", name)
		}
	case !r.answered:
		w.failf("%s: never answered", name)
	case r.err != nil:
		code := core.CodeOf(r.err)
		if code == "" {
			w.failf("%s: refused with an error that has no code: %v", name, r.err)
		}
		w.hit("refused." + string(code))
		if w.st.last != r.committed {
			w.failf("%s was refused (%v) yet the durable seq moved %d → %d", name, r.err, r.committed, w.st.last)
		}
	default:
		if w.st.last != r.after || r.before != r.committed {
			w.failf("%s: durable seq %d → %d, the command's events %d..%d", name, r.committed, w.st.last, r.before+1, r.after)
		}
	}
	return r
}

// events returns the events of a command that was answered ok.
func (w *world) events(r *result) []core.Event {
	var out []core.Event
	for _, ev := range w.stepEvents {
		if ev.Seq > r.before && ev.Seq <= r.after {
			out = append(out, ev)
		}
	}
	if uint64(len(out)) != r.after-r.before {
		w.failf("%s: emitted %d events, %d were committed", r.name, r.after-r.before, len(out))
	}
	return out
}

// checkAcks checks that a command answered ok produced exactly one
// delivery.acknowledged per delivery it says it acknowledged, and no other,
// and remembers them for the checks after a restart.
func (w *world) checkAcks(r *result, ids []string) {
	if !r.answered || r.err != nil {
		return
	}
	count := map[string]int{}
	seqOf := map[string]uint64{}
	n := 0
	for _, ev := range w.events(r) {
		if a, ok := ev.Data.(core.DeliveryAcknowledged); ok {
			count[a.ID]++
			seqOf[a.ID] = ev.Seq
			n++
		}
	}
	for _, id := range ids {
		if count[id] != 1 {
			w.failf("%s acknowledged %s: %d delivery.acknowledged events, want exactly 1", r.name, id, count[id])
		}
		if _, dup := w.acked[id]; dup {
			w.failf("%s: %s was acknowledged a second time", r.name, id)
		}
		w.acked[id] = seqOf[id]
		w.ackedIDs = append(w.ackedIDs, id)
	}
	if n != len(ids) {
		w.failf("%s said it acknowledged %v but emitted %d delivery.acknowledged events", r.name, ids, n)
	}
}

// advanceTo moves the clock to end: every timer fires at its exact time,
// and every agent action scheduled on the way runs at its time.
func (w *world) advanceTo(end time.Time) {
	for w.st.crashed == noFault {
		at, ok := w.nextDue()
		if !ok || at.After(end) {
			break
		}
		w.moment(at)
	}
	if w.st.crashed == noFault && end.After(w.clock.Now()) {
		w.clock.Set(end)
		w.drainTimers()
	}
}

// nextDue is the time of the next timer or agent action.
func (w *world) nextDue() (time.Time, bool) {
	next, ok := w.rt.NextTimer()
	if len(w.agenda) > 0 && (!ok || w.agenda[0].at.Before(next)) {
		return w.agenda[0].at, true
	}
	return next, ok
}

// moment runs everything due at t: the timers, then the agents' actions.
func (w *world) moment(t time.Time) {
	if t.Before(w.clock.Now()) {
		t = w.clock.Now()
	}
	w.clock.Set(t)
	w.drainTimers()
	for w.st.crashed == noFault && len(w.agenda) > 0 && !w.agenda[0].at.After(t) {
		a := w.agenda[0]
		w.agenda = w.agenda[1:]
		w.perform(a)
	}
}

// drainTimers fires the timers due now and checks that each fired at its
// exact time.
func (w *world) drainTimers() {
	now := w.clock.Now()
	if next, ok := w.rt.NextTimer(); !ok || next.After(now) {
		return // nothing due: the heap holds every timer of the core
	}
	due := 0
	for _, t := range w.live.Timers() {
		if t.At.After(now) {
			break
		}
		if !t.At.Equal(now) {
			w.failf("timer %s armed for %s is due late, at %s", t.Key, t.At.Sub(Epoch), now.Sub(Epoch))
		}
		due++
	}
	w.current = ""
	w.stepEvents = w.stepEvents[:0]
	committed := w.st.last
	w.drain()
	if due > 0 {
		w.hit("timers.fired")
		w.tracef("%d timers fired (seq %d → %d)", due, committed, w.st.last)
	}
	if due == 0 && w.st.last != committed {
		w.failf("events %d..%d committed with no timer due", committed+1, w.st.last)
	}
	w.checkTimers()
}

// checkTimers checks that no timer was skipped: every timer of the core is
// in the future and armed in the runtime.
func (w *world) checkTimers() {
	if w.st.crashed != noFault {
		return
	}
	now := w.clock.Now()
	ts := w.live.Timers()
	for _, t := range ts {
		if !t.At.After(now) {
			d, _ := w.live.Delivery(t.Key)
			w.failf("timer %s armed for +%s was skipped: it is +%s and it is still armed (delivery %s, policy %s)", t.Key, t.At.Sub(Epoch), now.Sub(Epoch), d.State, d.Policy)
		}
	}
	// The runtime's heap may hold stale entries (they fire as nothing), but
	// never lacks one of the core's timers: its earliest is no later.
	next, ok := w.rt.NextTimer()
	if len(ts) > 0 && (!ok || next.After(ts[0].At)) {
		w.failf("the runtime's next timer is %v (%v), the core's %s at +%s: it would be skipped", next, ok, ts[0].Key, ts[0].At.Sub(Epoch))
	}
}

// restart drops wilco and opens it again from the store, then checks that
// the recovered state is the replayed log and every acknowledgment
// answered ok is still there.
func (w *world) restart(how string) {
	w.restarts++
	w.hit("restart." + how)
	w.tracef("restart (%s)", how)
	old := w.live
	oldTimers := old.Timers()
	whole := w.st.crashed == noFault // the old core holds nothing that is not durable
	if how == "clean" {
		w.st.armed = noFault
		if err := w.rt.Close(); err != nil {
			w.failf("close: %v", err)
		}
	}
	if err := w.st.Store.Close(); err != nil {
		w.failf("close store: %v", err)
	}
	w.rt, w.live = nil, nil
	w.open()
	if diff := stateDiff(w.shadow, w.live); diff != "" {
		w.failf("after the restart (%s) the recovered state (snapshot + tail) differs from the replayed log: %s", how, diff)
	}
	if whole {
		if diff := stateDiff(old, w.live); diff != "" {
			w.failf("after the restart (%s) the recovered state differs from the live state before it: %s", how, diff)
		}
		if !slices.Equal(oldTimers, w.live.Timers()) {
			w.failf("after the restart (%s) the timers are %v, before it %v", how, w.live.Timers(), oldTimers)
		}
	}
	if n := w.rt.RecoveredTimers(); n != len(w.live.Timers()) {
		w.failf("recovered %d timers, the core has %d", n, len(w.live.Timers()))
	} else if n > 0 {
		w.hit("restart.timers_recovered")
	}
	w.replayAll()
	// A timer that fired in a batch that never became durable is due again,
	// now: the clock has not moved since, so it fires at its exact time.
	w.drainTimers()
	w.restartTasks()
	if w.cfg.Notify {
		// The resends are made with the first turn, as a started runtime
		// makes it at once: the notifications' attempts under way are made
		// again now (only with Notify, so that other seeds run as always).
		w.drain()
	}
	w.checkTimers()
	// A command that was running when wilco stopped: its fate is unknown;
	// the shell decides (here: it reports an end).
	for _, id := range w.live.RunningOperations() {
		w.hit("restart.operation_running")
		w.schedule(action{at: w.clock.Now().Add(w.between(0, 10*time.Second)), kind: actFinish, id: id, exit: oneOf(w, []int{0, 1, 137})})
	}
}

// replayAll reads the whole log back from the store, replays it into a
// fresh core and compares it with the live one; it also checks that every
// acknowledgment answered ok is in the log and in the state.
func (w *world) replayAll() {
	fresh := core.New()
	want := map[uint64]string{}
	for _, id := range w.ackedIDs {
		want[w.acked[id]] = id
	}
	found := 0
	err := w.st.Scan(w.ctx, 0, func(se store.Event) error {
		data, err := core.DecodeEventData(se.Type, se.Data)
		if err != nil {
			return fmt.Errorf("event %d: %w", se.Seq, err)
		}
		if id, ok := want[se.Seq]; ok {
			a, isAck := data.(core.DeliveryAcknowledged)
			if !isAck || a.ID != id {
				return fmt.Errorf("event %d should be the acknowledgment of %s, it is %s %+v", se.Seq, id, se.Type, data)
			}
			found++
		}
		return fresh.Replay(core.Event{Seq: se.Seq, Time: se.Time, Type: se.Type, TaskID: se.TaskID, Agent: se.Agent, Data: data})
	})
	if err != nil {
		w.failf("replay the stored log: %v", err)
	}
	if found != len(want) {
		w.failf("%d acknowledgments answered ok, %d found in the stored log", len(want), found)
	}
	if diff := stateDiff(w.live, fresh); diff != "" {
		w.failf("replaying the stored log from seq 1 does not give the live state: %s", diff)
	}
	if !slices.Equal(w.live.Timers(), fresh.Timers()) {
		w.failf("replaying the stored log gives timers %v, live %v", fresh.Timers(), w.live.Timers())
	}
	for _, id := range w.ackedIDs {
		if d, ok := w.live.Delivery(id); !ok || d.State != core.Acknowledged {
			w.failf("%s was acknowledged (answered ok, seq %d) but is now %q", id, w.acked[id], d.State)
		}
	}
	w.hit("check.replay_all")
}

// checkStep runs the checks of the end of a step.
func (w *world) checkStep() {
	w.checkTimers()
	w.checkNotifications()
	w.checkTasks()
	if w.step%w.cfg.CheckEvery == 0 {
		if diff := stateDiff(w.live, w.shadow); diff != "" {
			w.failf("the live state differs from the replayed log: %s", diff)
		}
		w.shadow.TakeDirty()
		w.checkHolds()
	}
	if w.step%w.cfg.ReplayEvery == 0 {
		w.replayAll()
	}
}

// checkHolds checks that no task is held by two deliveries.
func (w *world) checkHolds() {
	held := map[string]string{}
	for _, d := range w.live.Deliveries(func(d *core.Delivery) bool { return d.Holds }) {
		if other, ok := held[d.TaskID]; ok {
			w.failf("task %s is held by both %s and %s", d.TaskID, other, d.ID)
		}
		held[d.TaskID] = d.ID
		if d.State != core.Acknowledged {
			w.failf("%s holds task %s but is %s", d.ID, d.TaskID, d.State)
		}
	}
}

func (w *world) report() Report {
	return Report{
		Seed: w.cfg.Seed, Steps: w.cfg.Steps, Events: w.st.last, Restarts: w.restarts,
		Acks: len(w.ackedIDs), Paths: w.paths, Digest: w.digest.Sum64(), End: w.clock.Now(),
	}
}

// drain runs the loop by hand and performs the effects it committed, as
// wilco's executor does: messages handed to push agents, operation
// commands run, notifications' attempts made.
func (w *world) drain() {
	w.rt.Drain()
	for _, x := range w.rt.TakeEffects() {
		switch x := x.(type) {
		case core.Deliver:
			w.deliver(x.Agent, x.Message)
		case core.RunOperation:
			w.runOperation(x.ID, x.Command)
		case core.Notify:
			w.notified(x)
		case core.PrepareWorktree, core.RemoveWorktree, core.RunVerify, core.LandTask, core.StopTurn:
			w.taskEffect(x)
		}
	}
}

func (w *world) deliver(name string, m core.InboxMessage) {
	if w.st.dead() {
		w.hit("effect.lost_in_crash")
		return
	}
	if w.st.last != w.live.Seq() {
		w.failf("message %s handed to %s with seq %d durable, the core is at %d", m.ID, name, w.st.last, w.live.Seq())
	}
	if ta := w.tw.byName[name]; ta != nil {
		w.taskMessage(ta, m)
		return
	}
	a := w.byName[name]
	if a != nil && w.tw.on && strings.HasPrefix(m.TaskID, "P-") && !a.pull && a.adapter != "tmux" {
		// An exec agent works a task worked in parallel as the task
		// agents do: its turn starts in the task's worktree.
		w.taskMessage(w.tw.guest(name), m)
		return
	}
	if a == nil {
		w.failf("message %s handed to unknown agent %s", m.ID, name)
	}
	if a.pull {
		w.failf("message %s handed to %s, a pull agent", m.ID, name)
	}
	w.receive(a, m)
}

func (w *world) runOperation(id string, _ []string) {
	if w.st.dead() {
		w.hit("effect.lost_in_crash")
		return
	}
	if w.st.last != w.live.Seq() {
		w.failf("operation %s run with seq %d durable, the core is at %d", id, w.st.last, w.live.Seq())
	}
	w.hit("op.run")
	if w.chance(0.1) {
		return // the command hangs
	}
	w.schedule(action{at: w.clock.Now().Add(w.between(0, 30*time.Second)), kind: actFinish, id: id, exit: oneOf(w, []int{0, 0, 1, 2})})
}

// stateDiff is core.StateDiff, with the entities only one side has.
func stateDiff(a, b *core.State) string {
	diff := core.StateDiff(a, b)
	if diff == "" {
		return ""
	}
	in := func(s *core.State) map[core.EntityRef]bool {
		m := map[core.EntityRef]bool{}
		for _, r := range s.Entities() {
			m[r] = true
		}
		return m
	}
	ia, ib := in(a), in(b)
	var onlyA, onlyB []string
	for _, r := range a.Entities() {
		if !ib[r] {
			onlyA = append(onlyA, string(r.Kind)+" "+r.ID)
		}
	}
	for _, r := range b.Entities() {
		if !ia[r] {
			onlyB = append(onlyB, string(r.Kind)+" "+r.ID)
		}
	}
	if len(onlyA) > 0 || len(onlyB) > 0 {
		diff += fmt.Sprintf(" (only in the first: %v; only in the second: %v)", onlyA, onlyB)
	}
	return diff
}
