// Package natsbox carries the mailbox of wilco's agents over NATS
// JetStream, for agents on other hosts: wilco pushes their messages
// instead of waiting for them to poll, and their replies come back the
// same way. The HTTP mailbox (GET /v1/inbox, POST /v1/inbox/replies)
// keeps working beside it.
//
// # Subjects
//
// One JetStream stream per repository, WILCO_<repository>, holds
//
//	wilco.<repository>.inbox.<agent>   wilco → agent: one InboxMessage (JSON) per NATS message
//	wilco.<repository>.reply.<agent>   agent → wilco: a Request (JSON)
//
// with the names escaped (Escape) so that any repository or agent name
// is one subject token. Each agent reads its inbox subject through a
// durable consumer of its own (agent-<agent>), and wilco reads every
// reply subject through its durable consumer (wilco): what is published
// while the other side is away waits in the stream, and a message counts
// as handled only once its consumer acknowledges it, after handling it.
//
// # Requests
//
// A Request carries the agent's token and is one of two kinds:
//
//   - "cycle": a dispatch cycle, as GET /v1/inbox is; wilco publishes what
//     the cycle hands over on the agent's inbox subject.
//   - "reply": the body of POST /v1/inbox/replies.
//
// Wilco's side (Bridge) runs each request through wilco's own HTTP handler
// with the token as the agent's bearer token, so that a reply over NATS
// goes through exactly the checks of one over HTTP (the agent's identity
// is its token; NATS credentials or permissions may further restrict who
// publishes on a subject). When a request names an answer subject
// (the Wilco-Answer-To header), the handler's answer is published there:
// the agent's side waits for it with a deadline, and a request whose
// answer did not come is still in the stream, handled when wilco is back.
//
// Between cycles the agent asks for, Bridge runs one whenever wilco has a
// new message for an agent it has heard from (it keeps the token of each
// agent's last request, in memory): messages are pushed as they arrive.
// A wilco that just started, or took over from another node, has heard
// from no agent yet: an agent's side asks for a cycle now and then
// (`wilco inbox --follow` every 15 s), which also brings its
// unacknowledged instructions again, as polling would.
// A message is published with the JetStream message id
// <message id>/<attempt>, so that a publish repeated after a lost answer
// is stored once, while a retry (the next attempt) is a new message.
//
// Agent is the agent's side: Messages consumes the inbox, Cycle asks for
// a dispatch cycle, Reply answers. `wilco inbox --follow` uses it.
package natsbox
