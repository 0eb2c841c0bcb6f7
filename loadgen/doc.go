// Package loadgen is wilco's delivery benchmark: N task deliveries across M
// simulated agents that acknowledge each send with probability P, run on
// the real runtime and the durable SQLite store, under the backoff policy.
// It measures acknowledged deliveries per second, the latency from an
// acknowledgment arriving to its event being durable and published, and
// peak memory; with Open it holds a million open deliveries with armed
// timers and measures the restart until every timer is armed again.
//
// bench/peer (a module of its own) runs the same workload on an embedded
// NATS JetStream server, so that both can be compared in one run.
package loadgen
