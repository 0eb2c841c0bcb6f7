// Package daemon runs wilco's server: it loads wilco.yaml, opens the store
// (.wilco/wilco.db), rebuilds the core with the runtime, registers the
// configured agents and policies, reads or creates the admin token, serves
// the HTTP API, and shuts all of it down cleanly.
//
// Run is `wilco serve`: it serves until its context ends (the caller turns
// SIGINT and SIGTERM into that). Start is the same for in-process use —
// `wilco run` when no server answers, and tests: it returns a handle with
// the bound address, the admin token and Close.
//
// # Listening
//
// wilco listens on loopback by default (127.0.0.1:7777). A listen address
// that is not loopback — another interface, or all of them (":7777") — is
// refused unless Options.AllowRemote is set (`wilco serve --allow-remote`):
// the API then answers anyone who can reach the port and holds a token, so
// put TLS in front of it. AI Maestro compatibility (compat.aimaestro) needs
// no token, as AI Maestro does, and so is served only on loopback; with a
// remote listen address it is switched off with a warning. The bound URL is
// written to <dir>/addr while the server runs (with port 0, this is how to
// find it).
//
// # The admin token
//
// WILCO_TOKEN, when set, is the admin token. Otherwise it is read from
// <dir>/token, which is created (32 random bytes, base64url, mode 0600) when
// missing; a token file that others can read is refused.
//
// # Effects
//
// An operation on agents (hibernate, wake, restart, install-skill,
// install-plugin, maintenance) is performed by the dispatcher with the
// adapters once it proceeds; what it did to each agent is reported with
// core.FinishAgentOperation. Another operation's command (POST
// /v1/operations with command), and maintenance's, runs in a process
// group of its own (package proc), in the working directory, with WILCO_OPERATION_ID
// set; its exit status and the tail of its output are reported with it (a
// process it leaves running is not stopped — it may be a service the command
// started — and its output is read at most 5 s after it ends). Close kills
// what still runs, the command's whole group, and records it as failed.
// An operation that was running when wilco stopped is recorded as failed at
// the next start: its outcome is unknown. Messages for exec and tmux agents
// go to the dispatcher's adapters; for other push agents, to
// Options.Deliver.
package daemon
