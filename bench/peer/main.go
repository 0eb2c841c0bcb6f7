// Command peer runs wilco's delivery benchmark workload against an embedded
// NATS JetStream server, so the two systems can be compared on the same
// machine in the same run. See ../README.md.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"time"
)

func main() {
	os.Exit(cli(os.Args[1:], os.Stdout, os.Stderr))
}

// cli parses args, runs the workload and prints the result. It returns the
// process exit code.
func cli(args []string, stdout, stderr io.Writer) int {
	cfg := defaultConfig()
	fs := flag.NewFlagSet("peer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print only the JSON result object")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file")

	// The workload: identical to `wilco bench`.
	fs.IntVar(&cfg.Deliveries, "deliveries", cfg.Deliveries, "number of deliveries to create")
	fs.IntVar(&cfg.Agents, "agents", cfg.Agents, "number of simulated agents (delivery i goes to agent-(i % agents))")
	fs.Float64Var(&cfg.AckProb, "ack-prob", cfg.AckProb, "probability that an agent acknowledges each send it receives")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed for the agents' PCG generators")
	fs.DurationVar(&cfg.Timeout, "timeout", cfg.Timeout, "per-attempt ack timeout")
	fs.DurationVar(&cfg.BackoffBase, "backoff-base", cfg.BackoffBase, "backoff before the first resend")
	fs.DurationVar(&cfg.BackoffMax, "backoff-max", cfg.BackoffMax, "upper bound of the backoff")
	fs.IntVar(&cfg.MaxRetries, "max-retries", cfg.MaxRetries, "resends after the first send (at most max-retries+1 sends per delivery)")

	// JetStream-side tuning knobs; the defaults are the fastest fair setting
	// found on a 2-core machine.
	fs.IntVar(&cfg.Conns, "conns", cfg.Conns, "client connections the agents share")
	fs.IntVar(&cfg.Batch, "batch", cfg.Batch, "messages each agent pulls per request (Consume PullMaxMessages)")
	fs.IntVar(&cfg.AckWorkers, "ack-workers", cfg.AckWorkers, "goroutines per agent sending DoubleAcks (0 = one goroutine per ack)")
	fs.IntVar(&cfg.PubWindow, "pub-window", cfg.PubWindow, "max outstanding async publishes")
	fs.IntVar(&cfg.MaxAckPending, "max-ack-pending", cfg.MaxAckPending, "consumer MaxAckPending (-1 = unlimited)")
	fs.DurationVar(&cfg.PullExpiry, "pull-expiry", cfg.PullExpiry, "expiry of each Consume pull request")
	fs.BoolVar(&cfg.SyncAlways, "sync-always", cfg.SyncAlways, "fsync every JetStream file-store write (server sync_interval: always)")

	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "peer: unexpected arguments: %v\n", fs.Args())
		return 2
	}
	if err := cfg.validate(); err != nil {
		fmt.Fprintf(stderr, "peer: %v\n", err)
		return 2
	}

	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "peer: %v\n", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "peer: %v\n", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	res, err := run(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "peer: %v\n", err)
		return 1
	}
	out, err := json.Marshal(res)
	if err != nil {
		fmt.Fprintf(stderr, "peer: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, string(out))
	if !*asJSON {
		fmt.Fprintf(stderr, "jetstream: %d deliveries to %d agents in %s: %d acked, %d failed, %d sends; %.0f acked/s; ack p50 %.3f ms, p99 %.3f ms; peak RSS %.1f MiB\n",
			res.Deliveries, res.Agents, (time.Duration(res.ElapsedMS * float64(time.Millisecond))).Round(time.Millisecond),
			res.Acked, res.Failed, res.Sends, res.AckedPerSec, res.P50MS, res.P99MS, res.PeakRSSMB)
	}
	return 0
}
