// Package runtime is the single loop around the core: it feeds commands and
// due timers to the core, commits the resulting events to the store in
// batches (group commit), and only then performs the effects, publishes the
// events to subscribers and answers the callers.
//
// One goroutine owns the core. Callers hand it functions (Do, Submit); a
// function runs on the loop with the core and the current time, and its
// answer is delivered once every event it caused is durable. Timers live in
// one heap, rebuilt from the store on start. Subscribers get every
// committed event through a buffered channel; one that falls behind is
// dropped, never waited for, and resumes from the stored log (Follow).
//
// For deterministic tests the loop can also be driven by hand: Open without
// Start, then Drain after each step of a fake clock.
package runtime
