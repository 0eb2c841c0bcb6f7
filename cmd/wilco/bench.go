package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"

	"wilco/loadgen"
)

// benchFlags are `wilco bench`'s flags: the delivery benchmark's options,
// those of tasks worked in parallel, and which measurement to make.
type benchFlags struct {
	o                       loadgen.Options
	par                     loadgen.ParallelOptions
	asJSON                  bool
	open, tasks, statusRuns int
	recoverDir              string
}

// runBench is `wilco bench`: the delivery benchmark (see loadgen). It prints
// one JSON object; without --json a one-line summary follows on stderr.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, f := benchFlagSet(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, "usage: wilco bench [--deliveries N] [--agents M] [--ack-prob P] [--json] | --open N | --tasks N | --tasks N --parallel P [--work D] [--conflicting F]")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "wilco bench: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if bad := benchFlagsWrong(f.o, f.open, f.tasks, f.statusRuns); bad != "" {
		fmt.Fprintf(stderr, "wilco bench: %s\n", bad)
		return exitUsage
	}
	if f.par.Parallel > 0 || setFlag(fs, "work") || setFlag(fs, "verify") || setFlag(fs, "conflicting") || setFlag(fs, "land") {
		f.par.Tasks, f.par.Dir = f.tasks, f.o.Dir
		return runBenchParallel(ctx, f.par, f.asJSON, stdout, stderr)
	}
	if f.tasks > 0 {
		return runBenchTasks(ctx, f.tasks, f.statusRuns, f.asJSON, stdout, stderr)
	}
	return runBenchDeliveries(ctx, f, stdout, stderr)
}

// benchFlagSet defines bench's flags, at their defaults, on a flag set
// that writes its errors to stderr.
func benchFlagSet(stderr io.Writer) (*flag.FlagSet, *benchFlags) {
	f := &benchFlags{o: loadgen.Defaults(), par: loadgen.ParallelDefaults()}
	o, par := &f.o, &f.par
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.Deliveries, "deliveries", o.Deliveries, "deliveries to make")
	fs.IntVar(&o.Agents, "agents", o.Agents, "simulated agents")
	fs.Float64Var(&o.AckProb, "ack-prob", o.AckProb, "probability that an agent acknowledges a send")
	fs.Uint64Var(&o.Seed, "seed", o.Seed, "seed of the agents' choices")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "per-attempt ACK timeout")
	fs.DurationVar(&o.BackoffBase, "backoff-base", o.BackoffBase, "backoff base wait")
	fs.DurationVar(&o.BackoffMax, "backoff-max", o.BackoffMax, "backoff max wait")
	fs.IntVar(&o.MaxRetries, "max-retries", o.MaxRetries, "retries per delivery (sends: max-retries+1)")
	fs.IntVar(&o.Window, "window", o.Window, "deliveries in flight at most")
	fs.StringVar(&o.Dir, "dir", "", "directory for the database (default: a temporary one)")
	fs.StringVar(&o.Store, "store", "sqlite", "the store: sqlite, postgres (a throw-away PostgreSQL server from the installed programs) or a postgres:// URL")
	fs.BoolVar(&f.asJSON, "json", false, "print only the JSON object")
	fs.IntVar(&f.open, "open", 0, "hold this many open deliveries with armed timers, then measure the restart")
	fs.StringVar(&f.recoverDir, "recover-dir", "", "internal: measure a restart from this directory")
	fs.IntVar(&f.tasks, "tasks", 0, "measure the orchestration overhead per attempt over this many no-op tasks (and wilco status)")
	fs.IntVar(&f.statusRuns, "status-runs", 50, "with --tasks: how many times to time `wilco status`")
	fs.IntVar(&par.Parallel, "parallel", 0, "with --tasks: work the tasks this many at once, each by a scripted exec agent, and measure against the ideal")
	fs.DurationVar(&par.Work, "work", par.Work, "with --parallel: how long each task's agent works")
	fs.DurationVar(&par.Verify, "verify", 0, "with --parallel: how long the verify step takes beyond its check (a project's tests)")
	fs.Float64Var(&par.Conflicting, "conflicting", 0, "with --parallel: the fraction of tasks that edit the same line as another (0..0.5)")
	fs.StringVar(&par.How, "land", par.How, "with --parallel: land.how (merge, rebase or squash)")
	return fs, f
}

// runBenchDeliveries is `wilco bench` of deliveries: their throughput
// and latency, or with --open the memory of open deliveries and the
// restart (--recover-dir: its half in the new process).
func runBenchDeliveries(ctx context.Context, f *benchFlags, stdout, stderr io.Writer) int {
	var res loadgen.Result
	var err error
	switch {
	case f.recoverDir != "":
		res, err = loadgen.Recover(ctx, f.recoverDir)
	case f.open > 0:
		self, e := os.Executable()
		if e != nil {
			fmt.Fprintf(stderr, "wilco bench: %v\n", e)
			return exitFailure
		}
		res, err = loadgen.RunOpen(ctx, f.o, f.open, func(dir string) *exec.Cmd {
			return exec.CommandContext(ctx, self, "bench", "--recover-dir", dir, "--json")
		})
	default:
		res, err = loadgen.Run(ctx, f.o)
	}
	if err != nil {
		fmt.Fprintf(stderr, "wilco bench: %v\n", err)
		return exitFailure
	}
	if err := json.NewEncoder(stdout).Encode(res); err != nil {
		return exitFailure
	}
	if f.asJSON {
		return exitOK
	}
	switch {
	case f.recoverDir != "":
	case f.open > 0:
		fmt.Fprintf(stderr, "%d open deliveries: rss %.0f MiB (peak %.0f), restart %.0f ms until %d timers armed\n",
			res.Open, res.RSSMB, res.PeakRSSMB, res.RecoveryMS, res.Timers)
	default:
		fmt.Fprintf(stderr, "%d deliveries, %d agents, p=%.2f: %.0f acknowledged/s, p50 %.2f ms, p99 %.2f ms (read by a subscriber: p99 %.2f ms), peak rss %.0f MiB\n",
			res.Deliveries, res.Agents, res.AckProb, res.AckedPerSec, res.P50MS, res.P99MS, res.SeenP99MS, res.PeakRSSMB)
	}
	return exitOK
}

// benchFlagsWrong says what is wrong with bench's flags ("" for nothing).
func benchFlagsWrong(o loadgen.Options, open, tasks, statusRuns int) string {
	if err := o.Validate(); err != nil {
		return err.Error()
	}
	switch {
	case open < 0:
		return fmt.Sprintf("--open must not be negative, got %d", open)
	case tasks < 0:
		return fmt.Sprintf("--tasks must not be negative, got %d", tasks)
	case statusRuns <= 0:
		return fmt.Sprintf("--status-runs must be positive, got %d", statusRuns)
	case open > 0 && tasks > 0:
		return "--open and --tasks are two different measurements: give one"
	}
	return ""
}

// runBenchTasks is `wilco bench --tasks N`: the orchestration overhead
// per attempt over N no-op tasks, and the time `wilco status` takes.
func runBenchTasks(ctx context.Context, tasks, statusRuns int, asJSON bool, stdout, stderr io.Writer) int {
	self, err := os.Executable()
	if err == nil {
		var res loadgen.TaskResult
		if res, err = loadgen.RunTasks(ctx, tasks, statusRuns, self); err == nil {
			_ = json.NewEncoder(stdout).Encode(res)
			if !asJSON {
				fmt.Fprintf(stderr, "%d no-op tasks: orchestration overhead per attempt p50 %.2f ms (p99 %.2f), whole attempt p50 %.2f ms; wilco status p50 %.2f ms\n",
					res.Tasks, res.OverheadP50MS, res.OverheadP99MS, res.AttemptP50MS, res.StatusP50MS)
			}
			return exitOK
		}
	}
	fmt.Fprintf(stderr, "wilco bench: %v\n", err)
	return exitFailure
}

// setFlag reports whether the flag name was given.
func setFlag(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// runBenchParallel is `wilco bench --tasks N --parallel P --work D
// [--conflicting F]`: N tasks worked P at once, against the ideal.
func runBenchParallel(ctx context.Context, o loadgen.ParallelOptions, asJSON bool, stdout, stderr io.Writer) int {
	if err := o.Validate(); err != nil {
		fmt.Fprintf(stderr, "wilco bench: %v\n", err)
		return exitUsage
	}
	res, err := loadgen.RunParallel(ctx, o)
	if err != nil {
		fmt.Fprintf(stderr, "wilco bench: %v\n", err)
		if res.Tasks == 0 {
			return exitFailure
		}
	}
	_ = json.NewEncoder(stdout).Encode(res)
	if err != nil {
		return exitFailure
	}
	if !asJSON {
		fmt.Fprintf(stderr, "%d tasks, %d at once, %s of work: %.2f s against an ideal of %.2f s (ratio %.2f); a landing p50 %.0f ms, p99 %.0f ms; landings %.0f ms apart (p50, p99 %.0f ms); %d merge conflicts\n",
			res.Tasks, res.Parallel, o.Work, res.WallMS/1000, res.IdealMS/1000, res.Ratio, res.LandP50MS, res.LandP99MS, res.LandGapP50MS, res.LandGapP99MS, res.Conflicts)
	}
	return exitOK
}
