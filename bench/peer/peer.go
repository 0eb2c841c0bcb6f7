package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const (
	streamName     = "DELIVERIES"
	subjectPrefix  = "deliveries."
	advisoryPrefix = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + streamName + "."

	// ackTimeout bounds one DoubleAck round trip. It is far above any
	// latency seen; an ack that hits it is reported as an error.
	ackTimeout = 30 * time.Second
	// stallLimit aborts the run when nothing settles for this long.
	stallLimit = 30 * time.Second
)

// config is the workload (shared with `wilco bench`) plus JetStream-side
// tuning knobs.
type config struct {
	Deliveries  int
	Agents      int
	AckProb     float64
	Seed        uint64
	Timeout     time.Duration
	BackoffBase time.Duration
	BackoffMax  time.Duration
	MaxRetries  int

	Conns         int
	Batch         int
	AckWorkers    int
	PubWindow     int
	MaxAckPending int
	PullExpiry    time.Duration
	SyncAlways    bool
}

func defaultConfig() config {
	return config{
		Deliveries:  200000,
		Agents:      100,
		AckProb:     0.7,
		Seed:        1,
		Timeout:     100 * time.Millisecond,
		BackoffBase: 100 * time.Millisecond,
		BackoffMax:  400 * time.Millisecond,
		MaxRetries:  3,

		Conns:         1,
		Batch:         32,
		AckWorkers:    0,
		PubWindow:     4096,
		MaxAckPending: 100,
		PullExpiry:    time.Second,
	}
}

func (c config) validate() error {
	switch {
	case c.Deliveries < 1:
		return errors.New("--deliveries must be >= 1")
	case c.Agents < 1:
		return errors.New("--agents must be >= 1")
	case c.AckProb < 0 || c.AckProb > 1 || math.IsNaN(c.AckProb):
		return errors.New("--ack-prob must be in [0, 1]")
	case c.Timeout <= 0:
		return errors.New("--timeout must be > 0")
	case c.BackoffBase < 0 || c.BackoffMax < 0:
		return errors.New("--backoff-base and --backoff-max must be >= 0")
	case c.MaxRetries < 0:
		return errors.New("--max-retries must be >= 0")
	case c.Conns < 1 || c.Batch < 1 || c.AckWorkers < 0 || c.PubWindow < 1:
		return errors.New("--conns, --batch and --pub-window must be >= 1, --ack-workers >= 0")
	case c.PullExpiry < time.Second:
		return errors.New("--pull-expiry must be >= 1s")
	case c.MaxAckPending == 0 || c.MaxAckPending < -1:
		return errors.New("--max-ack-pending must be -1 or >= 1")
	}
	return nil
}

// backoff is wilco's "backoff" policy: the pause after attempt n (1-based)
// went unacknowledged for the ack timeout.
func backoff(n int, base, maxDelay time.Duration) time.Duration {
	d := base
	for i := 1; i < n && d < maxDelay; i++ {
		d *= 2
	}
	return min(d, maxDelay)
}

// consumerBackOff is the consumer's BackOff list. JetStream uses BackOff[i]
// as the ack wait after delivery i+1 (the last entry for every later one),
// and a message whose wait after delivery MaxDeliver runs out is dropped
// with a MAX_DELIVERIES advisory. So entries 0..R-1 are wilco's gaps between
// send n and send n+1 (timeout + backoff(n)), and entry R is the plain ack
// timeout of the last send, after which wilco gives the delivery up.
// len(BackOff) = R+1 = MaxDeliver, which the server allows (it must be <=).
func consumerBackOff(c config) []time.Duration {
	bo := make([]time.Duration, 0, c.MaxRetries+1)
	for n := 1; n <= c.MaxRetries; n++ {
		bo = append(bo, c.Timeout+backoff(n, c.BackoffBase, c.BackoffMax))
	}
	return append(bo, c.Timeout)
}

func consumerConfig(c config, agent int) jetstream.ConsumerConfig {
	bo := consumerBackOff(c)
	return jetstream.ConsumerConfig{
		Durable:       agentName(agent),
		FilterSubject: subjectPrefix + agentName(agent),
		DeliverPolicy: jetstream.DeliverAllPolicy,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       bo[0], // the server sets AckWait = BackOff[0] anyway
		MaxDeliver:    c.MaxRetries + 1,
		BackOff:       bo,
		MaxAckPending: c.MaxAckPending,
		ReplayPolicy:  jetstream.ReplayInstantPolicy,
	}
}

func streamConfig() jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:      streamName,
		Subjects:  []string{subjectPrefix + ">"},
		Storage:   jetstream.FileStorage,
		Retention: jetstream.LimitsPolicy,
		Discard:   jetstream.DiscardOld,
		MaxMsgs:   -1,
		MaxBytes:  -1,
		MaxAge:    0,
		Replicas:  1,
	}
}

func agentName(k int) string { return "agent-" + strconv.Itoa(k) }

// result is the JSON object the peer prints.
type result struct {
	System      string  `json:"system"`
	Deliveries  int     `json:"deliveries"`
	Agents      int     `json:"agents"`
	AckProb     float64 `json:"ack_prob"`
	Seed        uint64  `json:"seed"`
	MaxRetries  int     `json:"max_retries"`
	Acked       int64   `json:"acked"`
	Failed      int64   `json:"failed"`
	Sends       int64   `json:"sends"`
	ElapsedMS   float64 `json:"elapsed_ms"`
	AckedPerSec float64 `json:"acked_per_sec"`
	P50MS       float64 `json:"p50_ms"`
	P99MS       float64 `json:"p99_ms"`
	PeakRSSMB   float64 `json:"peak_rss_mb"`
	AckSamples  int     `json:"ack_samples"`
	PublishMS   float64 `json:"publish_ms"`
}

const (
	pending uint32 = iota
	acked
	failed
)

// tracker settles each delivery (keyed by stream sequence) exactly once:
// by the first successful DoubleAck or by its MAX_DELIVERIES advisory.
type tracker struct {
	n       int64
	state   []atomic.Uint32
	acked   atomic.Int64
	failed  atomic.Int64
	settled atomic.Int64
	bogus   atomic.Int64
	end     atomic.Int64 // UnixNano of the last settlement
	done    chan struct{}
}

func newTracker(n int) *tracker {
	return &tracker{n: int64(n), state: make([]atomic.Uint32, n+1), done: make(chan struct{})}
}

func (t *tracker) settle(seq uint64, outcome uint32) {
	if seq == 0 || seq > uint64(t.n) {
		t.bogus.Add(1)
		return
	}
	if !t.state[seq].CompareAndSwap(pending, outcome) {
		return
	}
	if outcome == acked {
		t.acked.Add(1)
	} else {
		t.failed.Add(1)
	}
	if t.settled.Add(1) == t.n {
		t.end.Store(time.Now().UnixNano())
		close(t.done)
	}
}

func run(cfg config) (*result, error) {
	dir, err := os.MkdirTemp("", "wilco-bench-jetstream-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	srv, err := startServer(dir, cfg.SyncAlways)
	if err != nil {
		return nil, err
	}
	defer func() {
		srv.Shutdown()
		srv.WaitForShutdown()
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := &peer{cfg: cfg, url: srv.ClientURL(), tr: newTracker(cfg.Deliveries), quit: make(chan struct{})}
	defer p.closeConns()
	p.ackCtx, p.ackCancel = context.WithCancel(ctx)
	defer p.ackCancel()
	if err := p.setUp(ctx); err != nil {
		return nil, err
	}
	if err := p.startAgents(ctx); err != nil {
		p.stopAgents()
		return nil, err
	}
	start := time.Now()
	publishDone, err := p.publish(start)
	if err != nil {
		p.stopAgents()
		return nil, err
	}
	if err := p.waitSettled(ctx); err != nil {
		return nil, err
	}
	elapsed := time.Duration(p.tr.end.Load() - start.UnixNano())
	p.stopAgents()
	return p.result(elapsed, publishDone)
}

// startServer starts an embedded NATS server with JetStream storing in dir.
func startServer(dir string, syncAlways bool) (*server.Server, error) {
	srv, err := server.NewServer(&server.Options{
		Host:       "127.0.0.1",
		Port:       server.RANDOM_PORT,
		JetStream:  true,
		StoreDir:   dir,
		NoLog:      true,
		NoSigs:     true,
		SyncAlways: syncAlways,
	})
	if err != nil {
		return nil, fmt.Errorf("nats server: %w", err)
	}
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		return nil, errors.New("nats server not ready")
	}
	return srv, nil
}

// peer is one run of the JetStream side: its connections, its agents and
// what they counted.
type peer struct {
	cfg   config
	url   string
	tr    *tracker
	conns []*nats.Conn

	pjs         jetstream.JetStream // the publisher's
	pubErrs     atomic.Int64
	firstPubErr atomic.Value
	agentJS     []jetstream.JetStream

	sends    atomic.Int64
	ackErrs  atomic.Int64
	firstErr atomic.Value
	quit     chan struct{}
	workers  sync.WaitGroup
	latMu    sync.Mutex
	lats     []time.Duration
	ccs      []jetstream.ConsumeContext
	// Per-ack goroutines (--ack-workers 0) may only be started until the
	// agents stop, so that workers.Wait is not racing workers.Go.
	spawnMu   sync.RWMutex
	stopping  bool
	ackCtx    context.Context
	ackCancel context.CancelFunc
}

func (p *peer) connect(name string) (*nats.Conn, error) {
	nc, err := nats.Connect(p.url, nats.Name(name), nats.NoReconnect())
	if err == nil {
		p.conns = append(p.conns, nc)
	}
	return nc, err
}

func (p *peer) closeConns() {
	for _, nc := range p.conns {
		nc.Close()
	}
}

// setUp connects the publisher (and makes the stream), the listener of the
// advisories that announce failures, and the agents' connections.
func (p *peer) setUp(ctx context.Context) error {
	pubNC, err := p.connect("publisher")
	if err != nil {
		return err
	}
	p.pjs, err = jetstream.New(pubNC,
		jetstream.WithPublishAsyncMaxPending(p.cfg.PubWindow),
		jetstream.WithPublishAsyncErrHandler(func(_ jetstream.JetStream, _ *nats.Msg, err error) {
			p.pubErrs.Add(1)
			p.firstPubErr.CompareAndSwap(nil, err.Error())
		}))
	if err != nil {
		return err
	}
	if _, err := p.pjs.CreateStream(ctx, streamConfig()); err != nil {
		return fmt.Errorf("create stream: %w", err)
	}
	if err := p.listenFailures(); err != nil {
		return err
	}
	// Agents share cfg.Conns connections.
	p.agentJS = make([]jetstream.JetStream, min(p.cfg.Conns, p.cfg.Agents))
	for i := range p.agentJS {
		nc, err := p.connect("agents-" + strconv.Itoa(i))
		if err != nil {
			return err
		}
		if p.agentJS[i], err = jetstream.New(nc); err != nil {
			return err
		}
	}
	return nil
}

// listenFailures settles failed deliveries: the server drops a delivery
// after its last ack wait and announces it with a MAX_DELIVERIES advisory
// carrying the stream seq.
func (p *peer) listenFailures() error {
	advNC, err := p.connect("advisories")
	if err != nil {
		return err
	}
	advSub, err := advNC.Subscribe(advisoryPrefix+"*", func(m *nats.Msg) {
		var adv struct {
			StreamSeq uint64 `json:"stream_seq"`
		}
		if err := json.Unmarshal(m.Data, &adv); err != nil {
			p.tr.bogus.Add(1)
			return
		}
		p.tr.settle(adv.StreamSeq, failed)
	})
	if err != nil {
		return err
	}
	if err := advSub.SetPendingLimits(-1, -1); err != nil {
		return err
	}
	return advNC.Flush()
}

// stopAgents stops the agents' consumers and waits for their acks.
func (p *peer) stopAgents() {
	close(p.quit)
	p.spawnMu.Lock()
	p.stopping = true
	p.spawnMu.Unlock()
	for _, cc := range p.ccs {
		cc.Stop()
	}
	p.ackCancel() // outstanding acks are late duplicates now
	p.workers.Wait()
}

// ackOne acknowledges m and measures the round trip.
func (p *peer) ackOne(m jetstream.Msg) {
	actx, acancel := context.WithTimeout(p.ackCtx, ackTimeout)
	t0 := time.Now()
	err := m.DoubleAck(actx)
	d := time.Since(t0)
	acancel()
	if err != nil {
		select {
		case <-p.quit: // shutting down; a late duplicate ack
		default:
			p.ackErrs.Add(1)
			p.firstErr.CompareAndSwap(nil, err.Error())
		}
		return
	}
	p.latMu.Lock()
	p.lats = append(p.lats, d)
	p.latMu.Unlock()
	md, err := m.Metadata()
	if err != nil {
		p.tr.bogus.Add(1)
		return
	}
	p.tr.settle(md.Sequence.Stream, acked)
}

// acker is how agent k hands a message to acknowledge: to its ack
// workers, or to a goroutine of its own (--ack-workers 0).
func (p *peer) acker() func(jetstream.Msg) {
	if p.cfg.AckWorkers == 0 {
		return func(m jetstream.Msg) {
			p.spawnMu.RLock()
			defer p.spawnMu.RUnlock()
			if !p.stopping {
				p.workers.Go(func() { p.ackOne(m) })
			}
		}
	}
	acks := make(chan jetstream.Msg, p.cfg.Batch)
	for range p.cfg.AckWorkers {
		p.workers.Go(func() {
			for {
				select {
				case <-p.quit:
					return
				case m := <-acks:
					p.ackOne(m)
				}
			}
		})
	}
	return func(m jetstream.Msg) {
		select {
		case acks <- m:
		case <-p.quit:
		}
	}
}

// startAgents starts each agent's consumer: it acknowledges what it
// receives with probability AckProb.
func (p *peer) startAgents(ctx context.Context) error {
	for k := 0; k < p.cfg.Agents; k++ {
		js := p.agentJS[k%len(p.agentJS)]
		cons, err := js.CreateOrUpdateConsumer(ctx, streamName, consumerConfig(p.cfg, k))
		if err != nil {
			return fmt.Errorf("create consumer %s: %w", agentName(k), err)
		}
		ack := p.acker()
		rng := rand.New(rand.NewPCG(p.cfg.Seed, uint64(k)))
		// Consume callbacks for one consumer run one at a time, so rng
		// needs no lock.
		cc, err := cons.Consume(func(m jetstream.Msg) {
			p.sends.Add(1)
			if rng.Float64() < p.cfg.AckProb {
				ack(m)
			}
		}, jetstream.PullMaxMessages(p.cfg.Batch), jetstream.PullExpiry(p.cfg.PullExpiry), jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			select {
			case <-p.quit:
			default:
				p.firstErr.CompareAndSwap(nil, "consume: "+err.Error())
			}
		}))
		if err != nil {
			return fmt.Errorf("consume %s: %w", agentName(k), err)
		}
		p.ccs = append(p.ccs, cc)
	}
	return nil
}

// publish creates the deliveries: async publish with a bounded window. A
// delivery is durable when its PubAck arrives. It returns how long that
// took from start.
func (p *peer) publish(start time.Time) (time.Duration, error) {
	subjects := make([]string, p.cfg.Agents)
	for k := range subjects {
		subjects[k] = subjectPrefix + agentName(k)
	}
	for i := 0; i < p.cfg.Deliveries; i++ {
		k := i % p.cfg.Agents
		payload := []byte(`{"delivery":` + strconv.Itoa(i) + `,"agent":"` + agentName(k) + `","task":"bench"}`)
		if _, err := p.pjs.PublishAsync(subjects[k], payload, jetstream.WithStallWait(ackTimeout)); err != nil {
			return 0, fmt.Errorf("publish %d: %w", i, err)
		}
	}
	select {
	case <-p.pjs.PublishAsyncComplete():
	case <-time.After(5 * time.Minute):
		return 0, errors.New("publish acks did not complete")
	}
	publishDone := time.Since(start)
	if n := p.pubErrs.Load(); n > 0 {
		return 0, fmt.Errorf("%d publishes failed (first: %v)", n, p.firstPubErr.Load())
	}
	return publishDone, nil
}

// waitSettled waits for every delivery to settle, and stops the agents
// with an error when progress stalls.
func (p *peer) waitSettled(ctx context.Context) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last, lastChange := p.tr.settled.Load(), time.Now()
	for {
		select {
		case <-p.tr.done:
			return nil
		case <-tick.C:
			if s := p.tr.settled.Load(); s != last {
				last, lastChange = s, time.Now()
			} else if time.Since(lastChange) > stallLimit {
				diag := diagnose(ctx, p.agentJS, p.cfg.Agents)
				p.stopAgents()
				return fmt.Errorf("stalled at %d/%d settled (ack errors %d, first error %v); %s",
					s, p.tr.n, p.ackErrs.Load(), p.firstErr.Load(), diag)
			}
		}
	}
}

// result is what the run measured, once the agents stopped.
func (p *peer) result(elapsed, publishDone time.Duration) (*result, error) {
	cfg := p.cfg
	if n := p.ackErrs.Load(); n > 0 {
		return nil, fmt.Errorf("%d DoubleAcks failed (first: %v)", n, p.firstErr.Load())
	}
	if n := p.tr.bogus.Load(); n > 0 {
		return nil, fmt.Errorf("%d unexpected acks or advisories", n)
	}
	rss, err := peakRSSMiB()
	if err != nil {
		return nil, err
	}
	slices.Sort(p.lats)
	res := &result{
		System:     "jetstream",
		Deliveries: cfg.Deliveries,
		Agents:     cfg.Agents,
		AckProb:    cfg.AckProb,
		Seed:       cfg.Seed,
		MaxRetries: cfg.MaxRetries,
		Acked:      p.tr.acked.Load(),
		Failed:     p.tr.failed.Load(),
		Sends:      p.sends.Load(),
		ElapsedMS:  ms(elapsed),
		P50MS:      ms(percentile(p.lats, 0.50)),
		P99MS:      ms(percentile(p.lats, 0.99)),
		PeakRSSMB:  rss,
		AckSamples: len(p.lats),
		PublishMS:  ms(publishDone),
	}
	if elapsed > 0 {
		res.AckedPerSec = float64(res.Acked) / elapsed.Seconds()
	}
	return res, nil
}

func diagnose(ctx context.Context, js []jetstream.JetStream, agents int) string {
	var b strings.Builder
	for k := 0; k < agents; k++ {
		c, err := js[k%len(js)].Consumer(ctx, streamName, agentName(k))
		if err != nil {
			continue
		}
		ci, err := c.Info(ctx)
		if err != nil {
			continue
		}
		if ci.NumAckPending > 0 || ci.NumPending > 0 {
			fmt.Fprintf(&b, "%s: pending %d ack_pending %d redelivered %d; ", agentName(k), ci.NumPending, ci.NumAckPending, ci.NumRedelivered)
		}
	}
	return b.String()
}

// percentile returns the nearest-rank p-quantile of sorted samples.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// peakRSSMiB reads VmHWM (peak resident set size) of this process.
func peakRSSMiB() (float64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			fields := strings.Fields(rest) // e.g. "123456 kB"
			if len(fields) == 2 && fields[1] == "kB" {
				kb, err := strconv.ParseFloat(fields[0], 64)
				if err != nil {
					return 0, err
				}
				return kb / 1024, nil
			}
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("VmHWM not found in /proc/self/status")
}
