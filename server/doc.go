// Package server is wilco's HTTP API: agents and their
// tokens, messages, instructions, the agent's side (inbox and replies),
// operations, the event log as Server-Sent Events, /healthz, /metrics
// (Prometheus), /openapi.json, and AI Maestro's /api/messages.
//
// # Routes
//
// Every route is a Route in one table (routes.go): its pattern for the
// standard net/http router, who may call it, and its documentation. The
// OpenAPI 3.1 document at /openapi.json is generated from that table, so a
// route cannot be served undocumented. Tasks, plans and runs plug in
// through Options.Routes and get the same treatment.
//
// # Security
//
// The control API needs the admin token (Authorization: Bearer); the
// agent's side needs that agent's token, which reads only its own inbox and
// answers only what was sent to it (core.Reply refuses the rest with
// permission_denied). Only a SHA-256 hash of an agent's token is kept, in
// the core's state: rotating a token replaces the hash before the answer
// goes out, so the old token stops working at once. A missing or unknown
// token is 401; a valid token on a route it may not use is 403. Bodies over
// 1 MiB are refused (413); JSON is strict: one object, no unknown field, no
// trailing data. /healthz and /openapi.json need no token; /metrics needs
// the admin token. Tokens never reach the log: each request is logged with
// log/slog as method, path, status, duration and agent.
//
// # Errors
//
// errors.go holds the one table that maps every error — the core's refusal
// codes, the server's own (JSON, authentication, size), a stopped runtime —
// to an HTTP status and error.code.
//
// # Inbox and events
//
// GET /v1/inbox is one dispatch cycle (core.Cycle). When it finds nothing
// it long-polls up to ?wait=: the runtime's inbox signal is taken before
// each cycle, so a message arriving between the cycle and the wait wakes it.
// GET /v1/events streams the event log from the store then live
// (runtime.Follow): no gap, no duplicate; Last-Event-ID or ?after= resumes;
// a comment line every 15 s keeps an idle stream open; a client that falls
// behind is dropped (its stream ends) and resumes where it was.
//
// # AI Maestro
//
// With Options.AIMaestro, /api/messages behaves as AI Maestro's messaging
// API so that its agents and shell scripts work unchanged; see
// aimaestro.go. It needs no token, as AI Maestro does, and therefore
// answers loopback clients only. Listing an agent's inbox there is its
// dispatch cycle; a message to the orchestrator is a reply, interpreted as
// POST /v1/inbox/replies interprets one.
package server
