package sim

import (
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	flagSeed    = flag.Int64("sim.seed", -1, "run only this seed")
	flagSeeds   = flag.Int("sim.seeds", defaultSeeds, "how many seeds to run")
	flagFirst   = flag.Uint64("sim.first", 1, "the first seed")
	flagSteps   = flag.Int("sim.steps", defaultSteps, "steps per seed")
	flagFor     = flag.Duration("sim.for", 0, "stop starting new seeds after this long (0: run them all)")
	flagWorkers = flag.Int("sim.workers", defaultWorkers, "seeds run side by side")
	flagPar     = flag.Int("sim.parallel", 0, "tasks worked in parallel: 0 as the seed decides, 1 in every seed, -1 in none")
)

// paths sums the path counts of several runs.
type paths struct {
	mu     sync.Mutex
	counts map[string]int
	seeds  int
	steps  int
	events uint64
	acks   int
}

func (p *paths) add(r Report) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.counts == nil {
		p.counts = map[string]int{}
	}
	for k, v := range r.Paths {
		p.counts[k] += v
	}
	p.seeds++
	p.steps += r.Steps
	p.events += r.Events
	p.acks += r.Acks
}

func (p *paths) table() string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(p.counts)) {
		fmt.Fprintf(&b, "  %-45s %d\n", k, p.counts[k])
	}
	return b.String()
}

// TestSimulation runs the seeded simulation: by default a short run in
// plain go test; -sim.seeds, -sim.steps, -sim.seed for the long one.
func TestSimulation(t *testing.T) {
	seeds := []uint64{}
	if *flagSeed >= 0 {
		seeds = append(seeds, uint64(*flagSeed))
	} else {
		for i := range *flagSeeds {
			seeds = append(seeds, *flagFirst+uint64(i))
		}
	}
	steps := *flagSteps
	var total paths
	start := time.Now()
	// Seeds run side by side: each run is one goroutine of its own, and
	// most of a run's time is spent waiting for the disk.
	work := make(chan uint64)
	var wg sync.WaitGroup
	for range min(*flagWorkers, len(seeds)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range work {
				t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
					if *flagFor > 0 && time.Since(start) > *flagFor {
						t.Skip("out of time (-sim.for)")
					}
					rep, err := Run(Config{Seed: seed, Steps: steps, Dir: t.TempDir(), Parallel: *flagPar})
					if err != nil {
						t.Fatal(err)
					}
					total.add(rep)
				})
			}
		}()
	}
	for _, seed := range seeds {
		work <- seed
	}
	close(work)
	wg.Wait()
	t.Logf("%d seeds, %d steps, %d events, %d acknowledgments checked across restarts, in %s",
		total.seeds, total.steps, total.events, total.acks, time.Since(start).Round(time.Millisecond))
	if testing.Verbose() {
		t.Logf("paths reached:\n%s", total.table())
	}
	if t.Failed() || total.steps < 5000 {
		return // too short a run to reach every path
	}
	if missing := Missing(total.counts); len(missing) > 0 {
		t.Errorf("%d seeds × %d steps never reached: %s", total.seeds, steps, strings.Join(missing, ", "))
	}
}

// TestSimulationIsReproducible runs seeds twice: the logs are the same,
// event for event.
func TestSimulationIsReproducible(t *testing.T) {
	t.Parallel()
	const seed = 7
	cfg := Config{Seed: seed, Steps: 100, RestartRate: 0.05, FaultRate: 0.05}
	cfg.Dir = t.TempDir()
	a, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Dir = t.TempDir()
	b, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if a.Digest != b.Digest || a.Events != b.Events || !a.End.Equal(b.End) || !maps.Equal(a.Paths, b.Paths) {
		t.Fatalf("seed %d ran twice gives two runs: %d events (digest %x) then %d (digest %x)", seed, a.Events, a.Digest, b.Events, b.Digest)
	}
	if a.Restarts == 0 {
		t.Fatal("no restart in the run")
	}
}

// TestFailureNamesSeedAndStep checks that a broken invariant is reported
// with what reproduces it.
func TestFailureNamesSeedAndStep(t *testing.T) {
	t.Parallel()
	_, err := Run(Config{Seed: 42, Steps: 100, Dir: t.TempDir(), failAt: 37})
	f, ok := err.(*Failure)
	if !ok {
		t.Fatalf("err %v, want a *Failure", err)
	}
	msg := f.Error()
	for _, want := range []string{"seed=42 step=37:", "-sim.seed=42 -sim.steps=37", "last events:"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("the report does not say %q:\n%s", want, msg)
		}
	}
	if len(f.Last) == 0 {
		t.Fatal("the report has no events")
	}
}

// TestRestartsLoseNoAcknowledgment restarts wilco often, at every kind of
// point: every acknowledgment answered ok is still there after each.
func TestRestartsLoseNoAcknowledgment(t *testing.T) {
	t.Parallel()
	got := runSeeds(t, 100, 3, Config{RestartRate: 0.08, FaultRate: 0.08})
	wantPaths(t, got, "restart.crash", "restart.clean", "restart.fail_before_commit", "restart.crash_after_commit", "effect.lost_in_crash")
	if got.acks == 0 {
		t.Error("no acknowledgment to check")
	}
}

// TestTimersFireAtTheirExactTimeAcrossRestarts restarts often: timers are
// recovered and fire at the time they were armed for (rule 4, checked on
// every event).
func TestTimersFireAtTheirExactTimeAcrossRestarts(t *testing.T) {
	t.Parallel()
	got := runSeeds(t, 200, 3, Config{RestartRate: 0.1})
	wantPaths(t, got, "restart.timers_recovered", "timers.fired", "backoff.ack_request", "op.reminder.gentle", "notice.followup")
}

// TestReplayRebuildsTheLiveState compares the live state with the replayed
// log after every step and replays the stored log every ten (rule 5).
func TestReplayRebuildsTheLiveState(t *testing.T) {
	t.Parallel()
	got := runSeeds(t, 300, 2, Config{CheckEvery: 1, ReplayEvery: 10})
	wantPaths(t, got, "check.replay_all")
}

// runSeeds runs seeds first..first+n-1 and sums their paths.
func runSeeds(t *testing.T, first uint64, n int, cfg Config) *paths {
	t.Helper()
	total := &paths{}
	for seed := first; seed < first+uint64(n); seed++ {
		c := cfg
		c.Seed, c.Dir = seed, t.TempDir()
		if c.Steps == 0 {
			c.Steps = 100
		}
		rep, err := Run(c)
		if err != nil {
			t.Fatal(err)
		}
		total.add(rep)
	}
	return total
}

func wantPaths(t *testing.T, got *paths, want ...string) {
	t.Helper()
	for _, p := range want {
		if got.counts[p] == 0 {
			t.Errorf("the rule was never exercised: no %s", p)
		}
	}
}

// TestEveryDeliveryEndsOnce: deliveries end acknowledged, failed or
// cancelled, once; answers to what already ended are refused and change
// nothing (rules 1 and 2, checked on every event).
func TestEveryDeliveryEndsOnce(t *testing.T) {
	t.Parallel()
	got := runSeeds(t, 1, 6, Config{})
	wantPaths(t, got, "backoff.ack.agent", "backoff.failed.unresponsive", "backoff.cancelled",
		"reply.after_acknowledged", "reply.after_failed", "reply.after_cancelled", "agent.duplicate", "agent.late")
}

// TestSendsNeverExceedThePolicy: every retry limit of the three policies
// is reached, and never passed (rule 3, checked on every event).
func TestSendsNeverExceedThePolicy(t *testing.T) {
	t.Parallel()
	got := runSeeds(t, 500, 3, Config{})
	wantPaths(t, got, "cycles.failed.max_retries", "backoff.failed.unresponsive", "backoff.failed.corrections_exhausted",
		"op.reminder.final", "op.extension_refused", "reminders.failed.timeout")
}

// TestNotificationsAreNeverLostAcrossCrashes: with hooks that hear of
// unresponsive agents and operations and a webhook that answers at random,
// every notification recorded is delivered, failed, retried at its time, or
// has its attempt under way — after every crash, in or after a commit, too
// (the attempts under way are made again).
func TestNotificationsAreNeverLostAcrossCrashes(t *testing.T) {
	t.Parallel()
	got := runSeeds(t, 700, 4, Config{Notify: true, Steps: 300, RestartRate: 0.05, FaultRate: 0.05})
	wantPaths(t, got, "notify.attempt", "notify.delivered", "notify.failed", "notify.pending", "notify.stale",
		"restart.crash_after_commit", "effect.lost_in_crash")
}
