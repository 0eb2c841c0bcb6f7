package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"runtime/debug"
	"sync"
	"time"

	"wilco/core"
	"wilco/runtime"
	"wilco/store/sqlite"
)

// OpenTimeout is the ACK timeout of the open-delivery workload: long enough
// that no timer fires while it is measured.
const OpenTimeout = 24 * time.Hour

// RunOpen holds n open deliveries with armed timers across o.Agents silent
// agents, measures memory, then restarts from the store in a new process
// (recoverCmd, which must run Recover on the directory and print its
// Result as JSON) and measures the time until every timer is armed again.
func RunOpen(ctx context.Context, o Options, n int, recoverCmd func(dir string) *exec.Cmd) (Result, error) {
	if n <= 0 {
		return Result{}, fmt.Errorf("--open must be positive, got %d", n)
	}
	if err := o.Validate(); err != nil {
		return Result{}, err
	}
	dir, cleanup, err := workdir(o.Dir)
	if err != nil {
		return Result{}, err
	}
	defer cleanup()
	st, err := sqlite.Open(filepath.Join(dir, "wilco.db"))
	if err != nil {
		return Result{}, err
	}
	rt, err := runtime.Open(ctx, runtime.Config{Store: st})
	if err != nil {
		st.Close()
		return Result{}, err
	}
	rt.Start()
	o.Timeout = OpenTimeout
	if err := setup(ctx, rt, o); err != nil {
		st.Close()
		return Result{}, err
	}
	start := time.Now()
	if err := sendOpen(rt, o, n); err != nil {
		st.Close()
		return Result{}, err
	}
	created := time.Since(start)
	res := Result{System: "wilco", Open: n, Agents: o.Agents, Deliveries: n, Events: rt.CommittedSeq(), ElapsedMS: ms(created)}
	if res.Timers, err = rt.Timers(); err != nil {
		st.Close()
		return Result{}, err
	}
	goruntime.GC()
	debug.FreeOSMemory()
	res.RSSMB = RSSMB()
	res.PeakRSSMB = PeakRSSMB()
	// A crash: the store is closed under the runtime, no final checkpoint.
	st.Close()

	rec, err := recoverIn(recoverCmd(dir), n)
	if err != nil {
		return res, err
	}
	res.RecoveryMS = rec.RecoveryMS
	res.RecoveryPeakRSSMB = rec.PeakRSSMB
	return res, nil
}

// sendOpen creates n deliveries to o.Agents silent agents, at most
// o.Window at a time.
func sendOpen(rt *runtime.Runtime, o Options, n int) error {
	var wg sync.WaitGroup
	var failed error
	var mu sync.Mutex
	window := make(chan struct{}, o.Window)
	for i := range n {
		window <- struct{}{}
		wg.Add(1)
		agent, task := agentName(i%o.Agents), fmt.Sprintf("O-%07d", i)
		rt.Submit(func(c *core.State, now time.Time) (any, error) {
			return c.Send(now, core.SendRequest{To: agent, Type: core.TypeDelegation, TaskID: task, Body: "open delivery " + task})
		}, func(_ any, err error) {
			if err != nil {
				mu.Lock()
				failed = err
				mu.Unlock()
			}
			<-window
			wg.Done()
		})
	}
	wg.Wait()
	return failed
}

// recoverIn runs the recovery process and reads what it measured: it must
// have armed a timer for each of the n deliveries.
func recoverIn(cmd *exec.Cmd, n int) (Result, error) {
	var rec Result
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return rec, fmt.Errorf("recovery process: %w", err)
	}
	if err := json.Unmarshal(out, &rec); err != nil {
		return rec, fmt.Errorf("recovery process printed %q: %w", out, err)
	}
	if rec.Timers < n {
		return rec, fmt.Errorf("recovery armed %d timers, want at least %d", rec.Timers, n)
	}
	return rec, nil
}

// Recover opens the store in dir and measures the restart: from opening the
// store until every timer is armed again.
func Recover(ctx context.Context, dir string) (Result, error) {
	start := time.Now()
	st, err := sqlite.Open(filepath.Join(dir, "wilco.db"))
	if err != nil {
		return Result{}, err
	}
	defer st.Close()
	rt, err := runtime.Open(ctx, runtime.Config{Store: st})
	if err != nil {
		return Result{}, err
	}
	elapsed := time.Since(start)
	res := Result{System: "wilco", RecoveryMS: ms(elapsed), Timers: rt.RecoveredTimers(), Events: rt.CommittedSeq(), PeakRSSMB: PeakRSSMB()}
	return res, nil
}
