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
// Between the cycles the agent asks for, Bridge pushes: whenever wilco has
// a new message for an agent on NATS, it hands over what waits for the
// agent (the core's Push: the inbox and new instructions, without
// counting the agent as heard from) and publishes it. The agents on NATS
// are those it has had a request from, and those reading their inbox's
// consumer when it starts (a pull request of theirs waits): a wilco that
// just started, or took over from another node, pushes to them at once,
// what landed meanwhile first. An agent that left NATS for the HTTP
// mailbox is not pushed to by the next wilco, though its consumer stays. An agent's side still asks for a cycle now and then (`wilco
// inbox --follow` every 15 s), which tells wilco it is alive and brings
// its unacknowledged instructions again, as polling would.
// A message is published with the JetStream message id
// <message id>/<attempt>, so that a publish repeated after a lost answer
// is stored once, while a retry (the next attempt) is a new message.
//
// Agent is the agent's side: Messages consumes the inbox, Cycle asks for
// a dispatch cycle, Reply answers. `wilco inbox --follow` uses it.
package natsbox
