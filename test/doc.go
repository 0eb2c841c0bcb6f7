// Package test holds wilco's black-box tests: they build the real binary
// (go build ./cmd/wilco; until the CLI builds, the stand-in in
// testdata/serve, which calls daemon.Run the same way), start
// `wilco serve` on a loopback port with a wilco.yaml of their own, and
// drive it over HTTP the way a user, an agent or an AI Maestro script
// would: instruction retries to failure, delegation with ACK requests under
// backoff until an agent is unresponsive and its task reassigned, a
// clarification round trip, event-stream resumption, AI Maestro's request
// shapes, graceful shutdown, and a table of bad requests that must each be
// refused with the right status and code and change nothing.
//
// Every wait is on a signal or a poll with a deadline; no test sleeps for
// a fixed time.
package test
