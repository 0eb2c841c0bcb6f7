package loadgen

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"wilco/core"
	"wilco/runtime"
	"wilco/store"
	"wilco/store/postgres"
)

// Options describe a run. The defaults are the issue's: 200 000
// deliveries, 100 agents, acknowledgment probability 0.7.
type Options struct {
	Deliveries  int
	Agents      int
	AckProb     float64
	Seed        uint64
	Timeout     time.Duration // per-attempt ACK timeout
	BackoffBase time.Duration
	BackoffMax  time.Duration
	MaxRetries  int // sends per delivery: MaxRetries+1
	// Window bounds deliveries created and not yet answered (like an async
	// publisher's window).
	Window int
	// Dir holds the database; a temporary directory when empty.
	Dir string
	// Store is "" or "sqlite" (a SQLite file in Dir), "postgres" (a
	// throw-away PostgreSQL server started for the run, see pgtemp) or a
	// postgres:// URL (a new repository in that database).
	Store string
}

// Defaults returns the workload.
func Defaults() Options {
	return Options{
		Deliveries: 200000, Agents: 100, AckProb: 0.7, Seed: 1,
		Timeout: 100 * time.Millisecond, BackoffBase: 100 * time.Millisecond, BackoffMax: 400 * time.Millisecond,
		MaxRetries: 3, Window: 4096,
	}
}

// Validate reports the first bad option.
func (o Options) Validate() error {
	switch {
	case o.Deliveries <= 0:
		return fmt.Errorf("--deliveries must be positive, got %d", o.Deliveries)
	case o.Agents <= 0:
		return fmt.Errorf("--agents must be positive, got %d", o.Agents)
	case o.AckProb < 0 || o.AckProb > 1:
		return fmt.Errorf("--ack-prob must be within 0..1, got %g", o.AckProb)
	case o.Timeout <= 0 || o.BackoffBase <= 0 || o.BackoffMax <= 0:
		return fmt.Errorf("--timeout, --backoff-base and --backoff-max must be positive")
	case o.MaxRetries < 0:
		return fmt.Errorf("--max-retries must not be negative, got %d", o.MaxRetries)
	case o.Window <= 0:
		return fmt.Errorf("--window must be positive, got %d", o.Window)
	}
	return nil
}

// Result is what a run prints: one JSON object.
type Result struct {
	System      string  `json:"system"`
	Deliveries  int     `json:"deliveries"`
	Agents      int     `json:"agents"`
	AckProb     float64 `json:"ack_prob"`
	Acked       int64   `json:"acked"`
	Failed      int64   `json:"failed"`
	Sends       int64   `json:"sends"`
	Events      uint64  `json:"events"`
	ElapsedMS   float64 `json:"elapsed_ms"`
	AckedPerSec float64 `json:"acked_per_sec"`
	// P50MS and P99MS are from an acknowledgment arriving (the agent hands
	// it to wilco) to its event being durable and published: the moment
	// wilco answers the agent, its event already in every subscriber's
	// queue. JetStream's peer measures the same span (an ack until the
	// server confirms it stored it).
	P50MS float64 `json:"p50_ms"`
	P99MS float64 `json:"p99_ms"`
	// SeenP50MS and SeenP99MS run on until a subscriber's goroutine has
	// read the event: they add the scheduling of that goroutine.
	SeenP50MS float64 `json:"seen_p50_ms"`
	SeenP99MS float64 `json:"seen_p99_ms"`
	PeakRSSMB float64 `json:"peak_rss_mb"`
	// Open mode.
	Open       int     `json:"open,omitempty"`
	RSSMB      float64 `json:"rss_mb,omitempty"`
	RecoveryMS float64 `json:"recovery_ms,omitempty"`
	Timers     int     `json:"timers,omitempty"`
	// RecoveryPeakRSSMB is the restarted process's peak resident set.
	RecoveryPeakRSSMB float64 `json:"recovery_peak_rss_mb,omitempty"`
}

func (o Options) policies() core.Policies {
	p := core.DefaultPolicies()
	p.Ack.Timeouts = nil
	for range o.MaxRetries + 1 {
		p.Ack.Timeouts = append(p.Ack.Timeouts, o.Timeout)
	}
	p.Ack.BackoffBase, p.Ack.BackoffMax = o.BackoffBase, o.BackoffMax
	// A delivery that is never acknowledged ends failed; the workload does
	// not reassign it.
	p.Ack.OnUnresponsive = core.Escalate
	return p
}

// agents is the simulated agents: each send handed to an agent is
// acknowledged with probability P, by the agent's own goroutine.
type agents struct {
	rt      *runtime.Runtime
	prob    float64
	sends   atomic.Int64
	queues  []*queue
	arrived sync.Map // delivery id → time the acknowledgment was sent
	wg      sync.WaitGroup

	latMu     sync.Mutex
	latencies []time.Duration // acknowledgment → durable and published
}

type queue struct {
	mu     sync.Mutex
	items  []string
	signal chan struct{}
	rng    *rand.Rand
	name   string
}

func (a *agents) index(name string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(name, "agent-"))
	return n
}

// perform takes the effects the runtime commits, in order, and hands the
// messages to their agents' queues, until ctx ends.
func (a *agents) perform(ctx context.Context, rt *runtime.Runtime) {
	defer a.wg.Done()
	for {
		effects, err := rt.Effects(ctx)
		if err != nil {
			return
		}
		for _, e := range effects {
			if d, ok := e.(core.Deliver); ok {
				a.deliver(d.Agent, d.Message)
			}
		}
	}
}

// deliver queues a message for its agent.
func (a *agents) deliver(agent string, m core.InboxMessage) {
	a.sends.Add(1)
	q := a.queues[a.index(agent)]
	q.mu.Lock()
	q.items = append(q.items, m.ID)
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

func (a *agents) run(ctx context.Context, q *queue) {
	defer a.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case <-q.signal:
		}
		q.mu.Lock()
		items := q.items
		q.items = nil
		q.mu.Unlock()
		for _, id := range items {
			if q.rng.Float64() >= a.prob {
				continue // silent this time
			}
			t0 := time.Now()
			a.arrived.Store(id, t0)
			a.rt.SubmitUrgent(func(c *core.State, now time.Time) (any, error) {
				return nil, c.AgentAck(now, q.name, id)
			}, func(_ any, err error) {
				// Called once the acknowledgment's event is durable and
				// published (an error: a late duplicate, not counted).
				if err == nil {
					d := time.Since(t0)
					a.latMu.Lock()
					a.latencies = append(a.latencies, d)
					a.latMu.Unlock()
				}
			})
		}
	}
}

// Run runs the workload and measures it.
func Run(ctx context.Context, o Options) (Result, error) {
	if err := o.Validate(); err != nil {
		return Result{}, err
	}
	dir, cleanup, err := workdir(o.Dir)
	if err != nil {
		return Result{}, err
	}
	defer cleanup()
	st, closeStore, err := openStore(ctx, o.Store, dir)
	if err != nil {
		return Result{}, err
	}
	defer closeStore()
	ag := &agents{prob: o.AckProb}
	rt, err := openRuntime(ctx, st)
	if err != nil {
		return Result{}, err
	}
	ag.rt = rt
	rt.Start()
	defer rt.Close()
	if err := setup(ctx, rt, o); err != nil {
		return Result{}, err
	}

	actx, stop := context.WithCancel(ctx)
	defer stop()
	for i := range o.Agents {
		q := &queue{signal: make(chan struct{}, 1), rng: rand.New(rand.NewPCG(o.Seed, uint64(i))), name: agentName(i)}
		ag.queues = append(ag.queues, q)
		ag.wg.Add(1)
		go ag.run(actx, q)
	}
	ag.wg.Add(1)
	go ag.perform(actx, rt)

	// The subscriber counts settlements and measures when it saw them. Its
	// buffer holds seconds of them: it is never dropped for being slow.
	sub, err := rt.Subscribe(ctx, func(ev store.Event) bool {
		return ev.Type == core.TypeDeliveryAcknowledged || ev.Type == core.TypeDeliveryFailed
	}, 1<<16)
	if err != nil {
		return Result{}, err
	}
	var res Result
	ag.latencies = make([]time.Duration, 0, o.Deliveries)
	var seen []time.Duration
	window := make(chan struct{}, o.Window)
	settled := count(sub, ag, o.Deliveries, window, &res, &seen)

	start := time.Now()
	for i := range o.Deliveries {
		select {
		case window <- struct{}{}:
		case <-ctx.Done():
			return Result{}, ctx.Err()
		}
		agent, task := agentName(i%o.Agents), fmt.Sprintf("B-%07d", i)
		rt.Submit(func(c *core.State, now time.Time) (any, error) {
			return c.Send(now, core.SendRequest{To: agent, Type: core.TypeDelegation, TaskID: task, Body: "bench delivery " + task})
		}, nil)
	}
	select {
	case <-settled:
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
	elapsed := time.Since(start)
	if err := sub.Err(); err != nil {
		return Result{}, fmt.Errorf("the measuring subscriber was dropped: %w", err)
	}
	stop()
	ag.wg.Wait()

	ag.fill(&res, o, rt.CommittedSeq(), elapsed, seen)
	return res, nil
}

// openRuntime opens the runtime on st, tuned for its kind of store.
func openRuntime(ctx context.Context, st store.Store) (*runtime.Runtime, error) {
	rcfg := runtime.Config{Store: st}
	if _, ok := st.(*postgres.Store); ok {
		rcfg.MaxCommitEvents, rcfg.CheckpointChunk = postgres.GroupCommitEvents, postgres.CheckpointChunk
	}
	return runtime.Open(ctx, rcfg)
}

// count counts the settlements the subscriber sees, and when it saw an
// acknowledgment after its agent handed it over (into res and seen); each
// settlement frees a place in window. The channel closes after n.
func count(sub *runtime.Subscription, ag *agents, n int, window chan struct{}, res *Result, seen *[]time.Duration) <-chan struct{} {
	*seen = make([]time.Duration, 0, n)
	settled := make(chan struct{})
	go func() {
		defer close(settled)
		k := 0
		for ev := range sub.C {
			now := time.Now()
			id := deliveryID(ev.Data)
			if ev.Type == core.TypeDeliveryAcknowledged {
				res.Acked++
				if t, ok := ag.arrived.LoadAndDelete(id); ok {
					*seen = append(*seen, now.Sub(t.(time.Time)))
				}
			} else {
				res.Failed++
			}
			<-window
			if k++; k == n {
				return
			}
		}
	}()
	return settled
}

// fill writes what the run measured into res.
func (a *agents) fill(res *Result, o Options, events uint64, elapsed time.Duration, seen []time.Duration) {
	res.System, res.Deliveries, res.Agents, res.AckProb = "wilco", o.Deliveries, o.Agents, o.AckProb
	if o.Store != "" && o.Store != "sqlite" {
		res.System = "wilco-postgres"
	}
	res.Sends = a.sends.Load()
	res.Events = events
	res.ElapsedMS = ms(elapsed)
	res.AckedPerSec = float64(res.Acked) / elapsed.Seconds()
	a.latMu.Lock()
	res.P50MS, res.P99MS = percentile(a.latencies, 0.50), percentile(a.latencies, 0.99)
	a.latMu.Unlock()
	res.SeenP50MS, res.SeenP99MS = percentile(seen, 0.50), percentile(seen, 0.99)
	res.PeakRSSMB = PeakRSSMB()
}

func setup(ctx context.Context, rt *runtime.Runtime, o Options) error {
	_, err := rt.Do(ctx, func(c *core.State, now time.Time) (any, error) {
		if err := c.Configure(now, o.policies()); err != nil {
			return nil, err
		}
		for i := range o.Agents {
			if err := c.RegisterAgent(now, core.AgentSpec{Name: agentName(i), Adapter: "sim"}); err != nil {
				return nil, err
			}
		}
		return nil, nil
	})
	return err
}

func agentName(i int) string { return "agent-" + strconv.Itoa(i) }

// deliveryID reads "id" from an event's JSON without decoding all of it.
func deliveryID(data []byte) string {
	s := string(data)
	i := strings.Index(s, `"id":"`)
	if i < 0 {
		return ""
	}
	s = s[i+6:]
	if j := strings.IndexByte(s, '"'); j >= 0 {
		return s[:j]
	}
	return ""
}

func workdir(dir string) (string, func(), error) {
	if dir != "" {
		return dir, func() {}, os.MkdirAll(dir, 0o755)
	}
	d, err := os.MkdirTemp("", "wilco-bench-")
	if err != nil {
		return "", nil, err
	}
	return d, func() { os.RemoveAll(d) }, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func percentile(xs []time.Duration, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	i := int(float64(len(xs)-1) * p)
	return ms(xs[i])
}

// PeakRSSMB is the process's peak resident set (VmHWM) in MiB.
func PeakRSSMB() float64 { return procStatus("VmHWM:") }

// RSSMB is the process's resident set (VmRSS) in MiB.
func RSSMB() float64 { return procStatus("VmRSS:") }

func procStatus(key string) float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), key); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			return kb / 1024
		}
	}
	return 0
}
