// Package client is the Go client of wilco's HTTP API.
//
// A Client talks to one wilco server with one token: the admin token for
// the control API (agents, messages, instructions, operations, tasks,
// plans, events), or an agent's token for the agent's side (its inbox and
// its replies).
//
//	c, err := client.FromEnv() // WILCO_ADDR, WILCO_TOKEN or .wilco/token
//	if err != nil { … }
//	in, err := c.Instruct(ctx, wire.CreateInstruction{Agent: "claude", Content: "Run go vet ./..."})
//
// Every method takes a context and returns, for an error the server
// answered, an *APIError carrying the HTTP status and the API's error
// code and message; errors.As finds it through any wrapping.
//
// Events can be read a page at a time (Events) or followed live over
// Server-Sent Events (Follow, Follower). A follower that loses its
// connection reconnects with Last-Event-ID set to the last event it handed
// over, and drops any event it has already seen, so the caller sees every
// event once, in order, without gaps.
//
// The bodies it sends and decodes are package wire's: the types the
// server answers and the OpenAPI document's schemas are made of. The
// package imports only the standard library and wire.
package client
