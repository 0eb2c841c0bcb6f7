package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	goruntime "runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"wilco/clock"
	"wilco/core"
	"wilco/store"
)

// Clock is what the runtime needs of time.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// Config configures a runtime.
type Config struct {
	Store  store.Store
	Clock  Clock // default: the wall clock
	Logger *slog.Logger
	// MaxBatch bounds how many commands one turn of the loop runs, and how
	// many due timers it fires (default 128 of each): short turns keep the
	// answer to an agent's acknowledgment quick while a backlog of other
	// commands, or a wave of timeouts, waits for the next turns.
	MaxBatch int
	// MaxCommitEvents bounds how many events the committer writes in one
	// transaction when it gathers several turns (default 256).
	MaxCommitEvents int
	// CheckpointEvery and CheckpointInterval say how often a checkpoint of
	// the changed entities begins (default every 50 000 events or 10 s,
	// whichever comes first). Recovery replays the log's tail after the
	// last complete checkpoint.
	CheckpointEvery    int
	CheckpointInterval time.Duration
	// CheckpointShare is the least number of entities one turn copies of
	// a checkpoint in progress (default 64); busy turns copy more, in
	// proportion to their events, so that a checkpoint ends within half the
	// interval without a burst.
	CheckpointShare int
	// The copies are written after their turns' events, in transactions of
	// their own of at most CheckpointChunk rows (default 128; a pack of
	// ended deliveries counts a row per 512 bytes), when no turn is waiting
	// to be committed: an acknowledgment never waits behind them. When
	// more than CheckpointBacklog rows (default 16 384) are waiting,
	// because turns are always waiting, the excess is written after every
	// commit so that the checkpoint still ends.
	CheckpointChunk   int
	CheckpointBacklog int
	// SubscriberBuffer is each subscriber's channel size (default 4096).
	SubscriberBuffer int
	// Observe, when set, is called on the loop with every committed batch
	// of events (metrics). It must be quick.
	Observe func([]store.Event)
}

// Func is a step run on the loop with the core and the current time. Its
// result is handed to the caller once its events are durable. A Func must
// leave the core unchanged when it returns an error (the core's commands
// do).
type Func func(c *core.State, now time.Time) (any, error)

// Errors.
var (
	ErrClosed = errors.New("runtime: closed")
	// ErrStopped is what a runtime answers every command and read with
	// once a failure stopped its loop (a commit the store refused: the
	// core moved past what the store holds), wrapping that failure. Only a
	// restart serves again.
	ErrStopped = errors.New("runtime: the loop stopped after a failure")
	ErrSlow    = errors.New("runtime: subscriber fell behind and was dropped; resume from the last event seen")
)

type request struct {
	fn   Func
	done func(any, error)
}

// Runtime is the loop around the core.
type Runtime struct {
	cfg   Config
	core  *core.State
	clock Clock
	log   *slog.Logger

	mu      sync.Mutex
	queue   []request
	urgent  []request
	closed  bool
	failure error
	wake    chan struct{}
	stopped chan struct{}
	started bool

	timers         timers
	armedFor       time.Time
	armedC         <-chan time.Time
	sinceCkpt      int
	lastCkpt       time.Time
	ckpt           []core.EntityRef // entities still to write for checkpoint ckptAt
	ckptAt         uint64
	ckptRate       float64   // entities written per event of a turn
	lastPack       uint64    // number of the newest pack of ended deliveries
	pend           ckptQueue // checkpoint copies of committed turns; the committer's alone
	encodes        chan *batch
	commits        chan *batch
	committerDone  chan struct{}
	committedSeq   uint64
	committedMu    sync.RWMutex
	subsMu         sync.Mutex
	subs           map[*Subscription]struct{}
	inboxMu        sync.Mutex
	inboxWake      map[string]chan struct{}
	recoveredTimer int
	// resends are performed with the first turn after a restart.
	resends []core.Effect
	// outbox holds the committed effects, in order, until the executor
	// takes them (Effects); outWake tells it there are some.
	outMu   sync.Mutex
	outbox  []core.Effect
	outWake chan struct{}
	// pending counts the effects put in the outbox and not yet
	// Performed: waiting there or being performed.
	pending atomic.Int64
	// standby is set for a runtime that only reads (OpenStandby).
	standby *standby
}

// batch is what one turn of the loop produced, on its way to the store.
type batch struct {
	events []core.Event
	// A share of a checkpoint: records of their own, packs of ended
	// deliveries, and records to delete.
	entities  []core.Entity
	packs     []pack
	deletes   []store.Key
	watermark uint64
	effects   []core.Effect
	reqs      []request
	results   []result
	// Filled by encode, off the loop.
	stored  []store.Event
	records []store.Record
	err     error
}

// Open rebuilds the core from the store — the checkpointed entities, then
// the events after the checkpoint — and arms every timer. Call Start to run
// the loop in the background, or Drain to drive it by hand.
func Open(ctx context.Context, cfg Config) (*Runtime, error) {
	if cfg.Store == nil {
		return nil, errors.New("runtime: no store")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = 128
	}
	if cfg.MaxCommitEvents <= 0 {
		cfg.MaxCommitEvents = 256
	}
	if cfg.CheckpointEvery <= 0 {
		cfg.CheckpointEvery = 50000
	}
	if cfg.CheckpointInterval <= 0 {
		cfg.CheckpointInterval = 10 * time.Second
	}
	if cfg.CheckpointShare <= 0 {
		cfg.CheckpointShare = 64
	}
	if cfg.CheckpointChunk <= 0 {
		cfg.CheckpointChunk = 128
	}
	if cfg.CheckpointBacklog <= 0 {
		cfg.CheckpointBacklog = 16384
	}
	if cfg.SubscriberBuffer <= 0 {
		cfg.SubscriberBuffer = 4096
	}
	r := &Runtime{
		cfg: cfg, clock: cfg.Clock, log: cfg.Logger, core: core.New(),
		wake: make(chan struct{}, 1), stopped: make(chan struct{}),
		subs: map[*Subscription]struct{}{}, inboxWake: map[string]chan struct{}{},
		encodes: make(chan *batch), commits: make(chan *batch), committerDone: make(chan struct{}),
		outWake: make(chan struct{}, 1),
	}
	if err := r.recover(ctx); err != nil {
		return nil, err
	}
	r.lastCkpt = r.clock.Now()
	return r, nil
}

func (r *Runtime) recover(ctx context.Context) error {
	w, err := r.load(ctx)
	if err != nil {
		return fmt.Errorf("runtime: load state: %w", err)
	}
	replayed, resend, err := r.replay(ctx, w)
	if err != nil {
		return err
	}
	r.core.EachTimer(r.timers.add)
	r.timers.init()
	r.recoveredTimer = r.timers.Len()
	for _, d := range r.core.Resends(resend) {
		r.resends = append(r.resends, d)
	}
	// Notifications under way when wilco stopped may not have reached
	// their hooks: their attempts are made again (at least once).
	for _, n := range r.core.NotificationResends() {
		r.resends = append(r.resends, n)
	}
	r.sinceCkpt = replayed
	r.committedSeq = r.core.Seq()
	r.log.Info("recovered", "seq", r.core.Seq(), "checkpoint", w, "replayed", replayed, "timers", r.timers.Len())
	return nil
}

// replay applies the log after the checkpoint's watermark w to the core.
// The store reads and the events' data are decoded on one goroutine while
// the core applies on this one. It returns how many events it applied and
// the deliveries sent in them, first send first: a send in the tail may
// not have left (see Resends).
func (r *Runtime) replay(ctx context.Context, w uint64) (replayed int, resend []string, err error) {
	const chunk = 256
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	decoded := make(chan []core.Event, 4)
	read := make(chan error, 1)
	go func() {
		defer close(decoded)
		buf := make([]core.Event, 0, chunk)
		err := r.cfg.Store.Scan(ctx, w, func(ev store.Event) error {
			data, err := core.DecodeEventData(ev.Type, ev.Data)
			if err != nil {
				return fmt.Errorf("event %d: %w", ev.Seq, err)
			}
			buf = append(buf, core.Event{Seq: ev.Seq, Time: ev.Time, Type: ev.Type, TaskID: ev.TaskID, Agent: ev.Agent, Data: data})
			if len(buf) == chunk {
				select {
				case decoded <- buf:
				case <-ctx.Done():
					return ctx.Err()
				}
				buf = make([]core.Event, 0, chunk)
			}
			return nil
		})
		if err == nil && len(buf) > 0 {
			decoded <- buf
		}
		read <- err
	}()
	sent := map[string]bool{}
	for evs := range decoded {
		for _, ev := range evs {
			if err != nil {
				break // drain, so that the reader ends
			}
			replayed++
			var id string
			switch e := ev.Data.(type) {
			case core.DeliverySent:
				id = e.ID
			case core.DeliveryRetried:
				id = e.ID
			case core.DeliveryNotice:
				id = e.ID
			}
			if id != "" && !sent[id] {
				sent[id] = true
				resend = append(resend, id)
			}
			err = r.core.Replay(ev)
		}
		if err != nil {
			cancel()
		}
	}
	if rerr := <-read; err == nil && rerr != nil {
		err = rerr
	}
	if err != nil {
		return 0, nil, fmt.Errorf("runtime: replay log after %d: %w", w, err)
	}
	return replayed, resend, nil
}

// load reads the checkpoint into the core, decoding on every core while
// the store reads: a million entities are the difference between a restart
// of seconds and of tens of seconds.
func (r *Runtime) load(ctx context.Context) (uint64, error) {
	// The heap grows from nothing to the whole state: collecting garbage
	// all along the way only slows the restart.
	defer debug.SetGCPercent(debug.SetGCPercent(200))
	const chunk = 512
	if c, ok := r.cfg.Store.(store.RecordCounter); ok {
		if n, err := c.RecordCount(ctx); err == nil {
			r.core.Reserve(n)
		} // else Load meets the same error and says so
	}
	workers := max(goruntime.GOMAXPROCS(0), 1)
	raw := make(chan []store.Record, workers*2)
	decoded := make(chan []core.Decoded, workers*2)
	errs := make(chan error, workers+1)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dc := core.NewDecoder()
			for recs := range raw {
				out := make([]core.Decoded, 0, len(recs))
				for _, rec := range recs {
					var err error
					if out, err = dc.DecodeRecord(core.EntityKind(rec.Kind), rec.Data, out); err != nil {
						select { // the first error is the one reported
						case errs <- fmt.Errorf("runtime: load %s %s: %w", rec.Kind, rec.ID, err):
						default:
						}
					}
				}
				decoded <- out
			}
		}()
	}
	inserted := make(chan struct{})
	go func() {
		defer close(inserted)
		for ds := range decoded {
			for _, d := range ds {
				r.core.Insert(d)
			}
		}
	}()
	var buf []store.Record
	w, err := r.cfg.Store.Load(ctx, func(rec store.Record) error {
		if rec.Kind == string(core.KindDeliveryPack) {
			r.lastPack = max(r.lastPack, packNum(rec.ID))
		}
		buf = append(buf, rec)
		if len(buf) == chunk {
			raw <- buf
			buf = make([]store.Record, 0, chunk)
		}
		return nil
	})
	if len(buf) > 0 {
		raw <- buf
	}
	close(raw)
	wg.Wait()
	close(decoded)
	<-inserted
	if err != nil {
		return 0, err
	}
	select {
	case err := <-errs:
		return 0, err
	default:
	}
	r.core.Restored(w)
	return w, nil
}

// Timers is how many timers are armed; the error is Read's.
func (r *Runtime) Timers() (int, error) {
	var n int
	err := r.Read(func(*core.State) { n = r.timers.Len() })
	return n, err
}

// Start runs the loop in the background until Close.
func (r *Runtime) Start() {
	if r.standby != nil {
		return // a standby runs no loop: CatchUp moves it on
	}
	r.mu.Lock()
	if r.started {
		r.mu.Unlock()
		return
	}
	r.started = true
	r.mu.Unlock()
	// Whether sends are to be handed over again is read before the loop
	// runs: its first turn takes them (and clears the list).
	resend := len(r.resends) > 0
	go r.encodeLoop()
	go r.commitLoop()
	go r.run()
	if resend {
		// The sends a restart hands over again go with the first turn: now,
		// not when a command next comes.
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}
}

// Submit queues fn; done (which may be nil) is called with its result once
// its events are durable, from the loop's goroutine: it must not block.
func (r *Runtime) Submit(fn Func, done func(any, error)) { r.submit(fn, done, false) }

// SubmitUrgent is Submit for what must not wait behind a backlog: an
// agent's answer (its acknowledgment's latency is what the sender waits
// for). Urgent commands run first in the next turn.
func (r *Runtime) SubmitUrgent(fn Func, done func(any, error)) { r.submit(fn, done, true) }

func (r *Runtime) submit(fn Func, done func(any, error), urgent bool) {
	if r.standby != nil {
		if done != nil {
			done(nil, ErrStandby)
		}
		return
	}
	r.mu.Lock()
	if r.closed || r.failure != nil {
		err := ErrClosed
		if r.failure != nil {
			err = stopped(r.failure)
		}
		r.mu.Unlock()
		if done != nil {
			done(nil, err)
		}
		return
	}
	if urgent {
		r.urgent = append(r.urgent, request{fn: fn, done: done})
	} else {
		r.queue = append(r.queue, request{fn: fn, done: done})
	}
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Do runs fn on the loop and waits until its events are durable. If ctx
// ends first, Do returns ctx's error; fn may still take effect.
func (r *Runtime) Do(ctx context.Context, fn Func) (any, error) { return r.do(ctx, fn, false) }

// DoUrgent is Do for an agent's answer (see SubmitUrgent).
func (r *Runtime) DoUrgent(ctx context.Context, fn Func) (any, error) { return r.do(ctx, fn, true) }

func (r *Runtime) do(ctx context.Context, fn Func, urgent bool) (any, error) {
	ch := make(chan result, 1)
	r.submit(fn, func(v any, err error) { ch <- result{v, err} }, urgent)
	select {
	case res := <-ch:
		return res.v, res.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Read runs fn on the loop (or, when the loop is not running, right away
// under the lock of a manual driver) for a consistent read of the core.
// The core must not be changed by fn. Reads through Do instead see only
// durable state.
//
// When the loop cannot run fn — it was closed (ErrClosed) or stopped by a
// failure (ErrStopped) — Read returns that error and fn does not run: what
// fn would have found is unknown, not empty, and the caller must say so.
// Read also returns ErrStopped when the turn that ran fn failed to commit.
func (r *Runtime) Read(fn func(*core.State)) error {
	if sb := r.standby; sb != nil {
		sb.mu.RLock()
		defer sb.mu.RUnlock()
		fn(r.core)
		return nil
	}
	r.mu.Lock()
	started := r.started
	r.mu.Unlock()
	if !started {
		fn(r.core)
		return nil
	}
	_, err := r.Do(context.Background(), func(c *core.State, _ time.Time) (any, error) {
		fn(c)
		return nil, nil
	})
	return err
}

// Close stops the loop after the queued work, completes a checkpoint of
// the whole state (so the next start replays nothing) and returns. It does not
// close the store.
func (r *Runtime) Close() error {
	if r.standby != nil {
		return r.closeStandby()
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	started := r.started
	r.mu.Unlock()
	if started {
		select {
		case r.wake <- struct{}{}:
		default:
		}
		<-r.stopped
		close(r.encodes)
		<-r.committerDone
	} else {
		r.Drain()
	}
	r.subsMu.Lock()
	for s := range r.subs {
		s.end(ErrClosed)
	}
	r.subsMu.Unlock()
	if r.failure != nil {
		return r.failure
	}
	return r.checkpointAll()
}

// Err is the failure that stopped the loop, if any.
func (r *Runtime) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failure
}

func (r *Runtime) checkpointAll() error {
	b := store.Batch{Watermark: r.core.Seq()}
	if b.Watermark == 0 {
		return nil
	}
	// Every entity the store lacks the current state of is dirty or still
	// to copy for the checkpoint in progress: writing those completes a
	// checkpoint of the whole state at the last seq.
	share := batch{}
	r.copies(&share, append(r.core.TakeDirty(), r.ckpt...))
	r.ckpt = nil
	if encode(&share); share.err != nil {
		return share.err
	}
	b.Records, b.Deletes = share.records, share.deletes
	return r.cfg.Store.Commit(context.Background(), b)
}

func (r *Runtime) run() {
	defer close(r.stopped)
	for {
		r.mu.Lock()
		closing := r.closed && len(r.queue) == 0 && len(r.urgent) == 0
		r.mu.Unlock()
		if closing || r.Err() != nil {
			return
		}
		select {
		case <-r.wake:
		case <-r.timerC():
		}
		if b := r.produce(); b != nil {
			r.encodes <- b
		}
	}
}

// encodeLoop encodes what the loop produced, between the loop and the
// committer, so that neither spends its time in JSON.
func (r *Runtime) encodeLoop() {
	defer close(r.commits)
	for b := range r.encodes {
		encode(b)
		r.commits <- b
	}
}

// encode turns a batch's events and checkpoint share into what the store
// keeps.
func encode(b *batch) {
	b.stored = make([]store.Event, len(b.events))
	for i, ev := range b.events {
		data, err := json.Marshal(ev.Data)
		if err != nil {
			b.err = fmt.Errorf("runtime: encode event %d (%s): %w", ev.Seq, ev.Type, err)
			return
		}
		b.stored[i] = store.Event{Seq: ev.Seq, Time: ev.Time, Type: ev.Type, TaskID: ev.TaskID, Agent: ev.Agent, Data: data}
	}
	for _, ent := range b.entities {
		rec, err := record(ent)
		if err != nil {
			b.err = err
			return
		}
		b.records = append(b.records, rec)
	}
	for _, p := range b.packs {
		b.records = append(b.records, store.Record{Kind: string(core.KindDeliveryPack), ID: p.id, Data: core.EncodePack(p.parts)})
	}
}

// commitLoop commits what the loop produced, several turns at once when it
// is behind (group commit), then performs the effects and answers. In the
// moments when no turn is waiting it writes the checkpoint's copies.
func (r *Runtime) commitLoop() {
	defer close(r.committerDone)
	for {
		var b *batch
		var ok bool
		select {
		case b, ok = <-r.commits:
		default:
			if !r.pend.empty() && r.Err() == nil {
				r.writeCheckpoint(r.cfg.CheckpointChunk)
				continue
			}
			b, ok = <-r.commits
		}
		if !ok {
			break
		}
		group := []*batch{b}
		events := len(b.events)
	more:
		for len(group) < 64 && events < r.cfg.MaxCommitEvents {
			select {
			case b, ok := <-r.commits:
				if !ok {
					break more
				}
				group = append(group, b)
				events += len(b.events)
			default:
				break more
			}
		}
		r.commit(group)
		if over := r.pend.rows - r.cfg.CheckpointBacklog; over > 0 && r.Err() == nil {
			r.writeCheckpoint(over)
		}
	}
	// Close writes a whole checkpoint next; the deletes waiting here must
	// reach the store before it.
	r.flushCheckpoint()
}

// writeCheckpoint writes up to max rows of the waiting checkpoint copies
// in one transaction.
func (r *Runtime) writeCheckpoint(max int) {
	var sb store.Batch
	r.pend.take(&sb, max)
	if err := r.cfg.Store.Commit(context.Background(), sb); err != nil {
		r.fail(fmt.Errorf("runtime: commit checkpoint: %w", err), nil)
	}
}

// flushCheckpoint writes every waiting copy.
func (r *Runtime) flushCheckpoint() {
	for !r.pend.empty() && r.Err() == nil {
		r.writeCheckpoint(math.MaxInt)
	}
}

// timerC is a channel that fires when the earliest timer is due.
func (r *Runtime) timerC() <-chan time.Time {
	at, ok := r.timers.peek()
	if !ok {
		return nil
	}
	if r.armedC == nil || !at.Equal(r.armedFor) {
		r.armedFor = at
		r.armedC = r.clock.After(at.Sub(r.clock.Now()))
	}
	return r.armedC
}

// Drain runs the loop by hand until nothing is queued and no timer is due
// at the clock's current time. It returns how many commands ran. Drain is
// for a runtime that was not started.
func (r *Runtime) Drain() int {
	n := 0
	for r.Err() == nil {
		b := r.produce()
		if b == nil {
			return n
		}
		n += len(b.reqs)
		encode(b)
		r.commit([]*batch{b})
		r.flushCheckpoint()
	}
	return n
}

// NextTimer is when the earliest timer is due (it may be one no longer
// armed, which fires as nothing).
func (r *Runtime) NextTimer() (time.Time, bool) {
	return r.timers.peek()
}

// produce runs one turn of the loop: the queued commands and the due
// timers. It returns nil when there was nothing to do.
func (r *Runtime) produce() *batch {
	r.mu.Lock()
	n := min(len(r.urgent), r.cfg.MaxBatch)
	reqs := append([]request(nil), r.urgent[:n]...)
	r.urgent = r.urgent[n:]
	m := min(len(r.queue), max(r.cfg.MaxBatch-n, 0))
	reqs = append(reqs, r.queue[:m]...)
	r.queue = r.queue[m:]
	if len(r.urgent) == 0 {
		r.urgent = nil
	}
	if len(r.queue) == 0 {
		r.queue = nil
	}
	if len(r.queue) > 0 || len(r.urgent) > 0 {
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}
	r.mu.Unlock()

	now := r.clock.Now()
	b := &batch{reqs: reqs, results: make([]result, len(reqs))}
	for i, req := range reqs {
		v, err := req.fn(r.core, now)
		b.results[i] = result{v, err}
	}
	// Timers due now fire, at most MaxBatch of them: a wave of timeouts
	// (thousands, when a burst of sends times out together) is spread over
	// turns, with the acknowledgments that arrive meanwhile answered between
	// them. The rest stay due, and the next turn comes at once.
	fired := 0
	seen := len(r.core.PeekEffects())
	r.armTimers(r.core.PeekEffects())
	for fired < r.cfg.MaxBatch {
		key, ok := r.timers.popDue(now)
		if !ok {
			break
		}
		fired++
		r.armedC = nil
		_ = r.core.Fire(now, key)
		effects := r.core.PeekEffects()
		r.armTimers(effects[seen:])
		seen = len(effects)
	}
	if len(reqs) == 0 && fired == 0 && !r.core.HasReady() && len(r.resends) == 0 {
		return nil
	}
	ready := r.core.TakeReady()
	b.events = ready.Events
	b.effects, r.resends = r.resends, nil
	for _, e := range ready.Effects {
		if _, ok := e.(core.ArmTimer); !ok {
			b.effects = append(b.effects, e)
		}
	}
	r.checkpoint(b, now)
	return b
}

// checkpoint copies the current state of changed entities a little at a
// time, with the turns, so that no turn stalls behind a large copy; the
// committer writes the copies after the turns' events (see ckptQueue). A checkpoint begins with the set of entities changed up to seq W;
// each turn copies a share of them (their state then, which may be newer
// than W: the core's per-entity versions make that safe to replay over);
// the turn that copies the last one declares watermark W.
func (r *Runtime) checkpoint(b *batch, now time.Time) {
	r.sinceCkpt += len(b.events)
	if r.ckpt == nil && r.sinceCkpt > 0 && (r.sinceCkpt >= r.cfg.CheckpointEvery || now.Sub(r.lastCkpt) >= r.cfg.CheckpointInterval) {
		r.ckpt = r.core.TakeDirty()
		r.ckptAt = r.core.Seq()
		r.sinceCkpt, r.lastCkpt = 0, now
		// Spread the writes evenly over half the events until the next
		// checkpoint is due: steady small shares, not a burst.
		r.ckptRate = 2 * float64(len(r.ckpt)) / float64(r.cfg.CheckpointEvery)
	}
	if r.ckpt == nil {
		return
	}
	n := min(len(r.ckpt), max(r.cfg.CheckpointShare, int(math.Ceil(r.ckptRate*float64(len(b.events))))))
	r.copies(b, r.ckpt[:n])
	r.ckpt = r.ckpt[n:]
	if len(r.ckpt) == 0 {
		b.watermark, r.ckpt = r.ckptAt, nil
	}
}

// copies puts into b the checkpoint copies of the entities refs names:
// records of their own, packs of ended deliveries, and the keys of records
// to delete.
func (r *Runtime) copies(b *batch, refs []core.EntityRef) {
	c := r.core.Copies(refs)
	b.entities = c.Entities
	for _, ref := range c.Gone {
		b.deletes = append(b.deletes, store.Key{Kind: string(ref.Kind), ID: ref.ID})
	}
	parts := c.Packed
	for len(parts) > 0 {
		n, size := 1, len(parts[0])
		for n < len(parts) && size+len(parts[n]) <= packBytes {
			size += len(parts[n])
			n++
		}
		r.lastPack++
		b.packs = append(b.packs, pack{id: packID(r.lastPack), parts: parts[:n:n]})
		parts = parts[n:]
	}
}

// packBytes is about how large a pack of ended deliveries grows: a few
// pages, written in sequence.
const packBytes = 16 << 10

// pack is one record of ended deliveries' stored forms.
type pack struct {
	id    string
	parts [][]byte
}

// packID names the nth pack. Packs are never rewritten, so every one has
// a number of its own, counted on from the highest in the store.
func packID(n uint64) string { return "P-" + strconv.FormatUint(n, 10) }

// packNum is the number of a pack's id; 0 for another id.
func packNum(id string) uint64 {
	num, ok := strings.CutPrefix(id, "P-")
	if !ok {
		return 0
	}
	n, _ := strconv.ParseUint(num, 10, 64)
	return n
}

// armTimers pushes the timers the core asked for. Effects are looked at as
// soon as a command or a timer produced them, so that a timer due in the
// same instant fires in the same turn.
func (r *Runtime) armTimers(effects []core.Effect) {
	for _, e := range effects {
		if t, ok := e.(core.ArmTimer); ok && !t.At.IsZero() {
			r.timers.arm(t.Key, t.At)
			r.armedC = nil
		}
	}
}

// commit writes a group of turns in one transaction, then publishes their
// events, performs their effects and answers their callers, in order.
func (r *Runtime) commit(group []*batch) {
	if err := r.Err(); err != nil {
		r.fail(err, group)
		return
	}
	var sb store.Batch
	for _, b := range group {
		if b.err != nil {
			r.fail(b.err, group)
			return
		}
		sb.Events = append(sb.Events, b.stored...)
	}
	if len(sb.Events) > 0 {
		if err := r.cfg.Store.Commit(context.Background(), sb); err != nil {
			r.fail(fmt.Errorf("runtime: commit: %w", err), group)
			return
		}
	}
	for _, b := range group {
		r.pend.push(b.records, b.deletes, b.watermark)
	}
	if n := len(sb.Events); n > 0 {
		r.committedMu.Lock()
		r.committedSeq = sb.Events[n-1].Seq
		r.committedMu.Unlock()
		if r.cfg.Observe != nil {
			r.cfg.Observe(sb.Events)
		}
		r.publish(sb.Events)
	}
	for _, b := range group {
		r.perform(b.effects)
		for i, req := range b.reqs {
			if req.done != nil {
				req.done(b.results[i].v, b.results[i].err)
			}
		}
	}
}

type result struct {
	v   any
	err error
}

func record(ent core.Entity) (store.Record, error) {
	data, err := core.EncodeEntity(ent)
	if err != nil {
		return store.Record{}, fmt.Errorf("runtime: encode %s %s: %w", ent.Kind, ent.ID, err)
	}
	return store.Record{Kind: string(ent.Kind), ID: ent.ID, State: ent.State, Agent: ent.Agent, TaskID: ent.TaskID, Data: data}, nil
}

// fail stops the runtime for good: the core has moved past what the store
// holds, so nothing more may be answered "ok".
func (r *Runtime) fail(err error, group []*batch) {
	r.log.Error("runtime stopped", "err", err)
	r.mu.Lock()
	if r.failure == nil {
		r.failure = err
	}
	rest := append(r.urgent, r.queue...)
	r.queue, r.urgent = nil, nil
	r.mu.Unlock()
	answer := stopped(err)
	for _, b := range group {
		for _, req := range b.reqs {
			if req.done != nil {
				req.done(nil, answer)
			}
		}
	}
	for _, req := range rest {
		if req.done != nil {
			req.done(nil, answer)
		}
	}
	r.subsMu.Lock()
	for s := range r.subs {
		s.end(answer)
	}
	r.subsMu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// stopped is the answer of a runtime that failure stopped: ErrStopped,
// and the failure itself (store.ErrLeaseLost, say) for errors.Is.
func stopped(failure error) error { return fmt.Errorf("%w: %w", ErrStopped, failure) }

// perform hands committed effects on: a Wake is the runtime's own (it
// ends the long polls of the agent's inbox), the others go to the outbox,
// in order, for the executor.
func (r *Runtime) perform(effects []core.Effect) {
	var out []core.Effect
	for _, e := range effects {
		if w, ok := e.(core.Wake); ok {
			r.inboxMu.Lock()
			if ch, ok := r.inboxWake[w.Agent]; ok {
				close(ch)
				delete(r.inboxWake, w.Agent)
			}
			r.inboxMu.Unlock()
			continue
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return
	}
	r.pending.Add(int64(len(out)))
	r.outMu.Lock()
	r.outbox = append(r.outbox, out...)
	r.outMu.Unlock()
	select {
	case r.outWake <- struct{}{}:
	default:
	}
}

// TakeEffects returns the committed effects not taken yet, in the order
// they were committed, without waiting: each is handed out once.
func (r *Runtime) TakeEffects() []core.Effect {
	r.outMu.Lock()
	defer r.outMu.Unlock()
	out := r.outbox
	r.outbox = nil
	return out
}

// Effects waits until committed effects are waiting and returns them, in
// the order they were committed (see TakeEffects); it returns ctx's error
// when ctx ends first. An effect leaves the runtime only once the events
// that asked for it are durable: the executor performs what it gets.
func (r *Runtime) Effects(ctx context.Context) ([]core.Effect, error) {
	for {
		if out := r.TakeEffects(); len(out) > 0 {
			return out, nil
		}
		select {
		case <-r.outWake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Performed tells the runtime that n of the effects it handed out were
// performed, their outcomes (when they have one) reported: Pending counts
// them no more. The executor calls it; a caller of TakeEffects that never
// does leaves Pending counting up, which nothing else reads.
func (r *Runtime) Performed(n int) { r.pending.Add(-int64(n)) }

// Pending is how many committed effects are not performed yet: waiting to
// be taken (Effects) or being performed, until Performed. 0 once all that
// the core asked for (a start's recovery, say) has been done and its
// outcomes recorded.
func (r *Runtime) Pending() int { return int(r.pending.Load()) }

// Report records how an effect ended, or what an agent's adapter saw:
// the one way outcomes come back into the core (core.State.Report). It
// waits until the record is durable, and answers the core's result. The
// urgent ones (core.Urgent) run before a backlog of other commands.
func (r *Runtime) Report(ctx context.Context, o core.Outcome) (any, error) {
	return r.do(ctx, func(c *core.State, now time.Time) (any, error) { return c.Report(now, o) }, core.Urgent(o))
}

// InboxSignal returns a channel closed when a message next lands in the
// agent's inbox. Take it before a dispatch cycle that found nothing, then
// wait on it.
func (r *Runtime) InboxSignal(agent string) <-chan struct{} {
	r.inboxMu.Lock()
	defer r.inboxMu.Unlock()
	ch, ok := r.inboxWake[agent]
	if !ok {
		ch = make(chan struct{})
		r.inboxWake[agent] = ch
	}
	return ch
}

// CommittedSeq is the seq of the last durable event.
func (r *Runtime) CommittedSeq() uint64 {
	r.committedMu.RLock()
	defer r.committedMu.RUnlock()
	return r.committedSeq
}

// RecoveredTimers is how many timers were armed again by Open.
func (r *Runtime) RecoveredTimers() int { return r.recoveredTimer }
