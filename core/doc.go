// Package core is wilco's state machine: agents, deliveries under the three
// delivery policies (cycles, backoff, reminders), operations, and the rules
// that decide what happens when an agent answers, stays silent or answers
// the wrong thing.
//
// The core is pure, in the manner of etcd's raft library: no I/O, no
// goroutines, no wall clock. The caller (package runtime) feeds it a command
// and the current time with Step, or a due timer with Fire; the core answers
// with a result and accumulates a Ready: the events to persist and the
// effects to perform (hand a message to an agent, arm a timer, run an
// operation's command). Every state change is an event first: the state is
// changed only by applying events, so replaying the event log rebuilds the
// same state, and the seeded simulation can check exactly that.
//
// A command that is refused returns an error and changes nothing: no event,
// no effect.
//
// The shell reports what happened, the core decides what it means. A
// verification's verdict in particular is decided here alone (Judge, in
// verdict.go): the shell's verify run reports its steps (commands, exit
// codes, timeouts, durations, the kept part of their output), the files
// the attempt changed and the PATH; the core decides whether it passed,
// the failure type, the analysis of the output (package diagnose), an
// escalation, the boundary and package checks (Scope) and what the
// failure record and the summary say.
package core
