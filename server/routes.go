package server

import (
	"net/http"

	"wilco/wire"
)

// ownRoutes is the route table of the HTTP API. The OpenAPI document is
// generated from it; Options.Routes adds more.
func (s *Server) ownRoutes() []Route {
	routes := []Route{
		{Method: "GET", Path: "/healthz", Auth: Public, Summary: "Liveness: 200 while the server runs.",
			Handler: s.healthz, Responses: map[int]any{200: wire.Health{}, 503: wire.Health{}}},
		{Method: "GET", Path: "/openapi.json", Auth: Public, Summary: "This document.",
			Handler: s.openapi, Responses: map[int]any{200: wire.OpenAPI{}}},
		{Method: "GET", Path: "/metrics", Auth: Admin, Summary: "Prometheus metrics (text exposition format).",
			Handler: s.metricsHandler, Responses: map[int]any{200: "text/plain"}},
	}
	routes = append(routes, s.agentRoutes()...)
	routes = append(routes, s.messageRoutes()...)
	routes = append(routes, s.instructionRoutes()...)
	routes = append(routes, s.agentSideRoutes()...)
	routes = append(routes, s.operationRoutes()...)
	routes = append(routes, s.notificationRoutes()...)
	routes = append(routes, s.eventRoutes()...)
	routes = append(routes, s.taskRoutes()...)
	routes = append(routes, s.sessionRoutes()...)
	routes = append(routes, s.pageRoutes()...)
	routes = append(routes, s.forgeRoutes()...)
	if s.mailbox != nil {
		routes = append(routes, s.maestroRoutes()...)
	}
	return routes
}

// agentRoutes are the routes of the agents and their tokens.
func (s *Server) agentRoutes() []Route {
	name := map[string]string{"name": "alpha"}
	return []Route{
		{Method: "GET", Path: "/v1/agents", Auth: Admin, Summary: "List the agents.",
			Query:   []Param{{"status", "string", "only agents with this status"}},
			Handler: s.listAgents, Responses: map[int]any{200: wire.AgentList{}}},
		{Method: "POST", Path: "/v1/agents", Auth: Admin, Summary: "Create an agent and its token (shown once).",
			Request: wire.CreateAgent{}, Handler: s.createAgent, Responses: map[int]any{201: wire.CreatedAgent{}}},
		{Method: "GET", Path: "/v1/agents/{name}", Auth: Admin, Summary: "One agent.",
			Examples: name, Handler: s.getAgent, Responses: map[int]any{200: wire.Agent{}}},
		{Method: "DELETE", Path: "/v1/agents/{name}", Auth: Admin, Summary: "Remove an agent: it gets no more work, its open messages are cancelled, its token stops working, and the task it works on is retried by another agent. An agent still in wilco.yaml comes back at the next start.",
			Examples: name, Handler: s.removeAgent, Responses: map[int]any{200: wire.Agent{}}},
		{Method: "POST", Path: "/v1/agents/{name}/probe", Auth: Admin, Summary: "Ask the agent for its context (OS, CLI version, the tools the verify steps need and the toolchains); its answer is kept in the agent's context.",
			Examples: name, Handler: s.probeAgent, Responses: map[int]any{202: wire.Message{}}},
		{Method: "POST", Path: "/v1/agents/{name}/token", Auth: Admin, Summary: "Give the agent a new token; the old one stops working at once.",
			Examples: name, Handler: s.rotateToken, Responses: map[int]any{200: wire.Token{}}},
	}
}

// messageRoutes are the routes of messages (deliveries).
func (s *Server) messageRoutes() []Route {
	id := func(v string) map[string]string { return map[string]string{"id": v} }
	return []Route{
		{Method: "POST", Path: "/v1/messages", Auth: Admin, Summary: "Send a message; without type it is classified, and a task delegation is tracked under the ack policy.",
			Request: wire.SendMessage{}, Handler: s.sendMessage, Responses: map[int]any{201: wire.Message{}}},
		{Method: "GET", Path: "/v1/messages", Auth: Admin, Summary: "List messages (every delivery, instructions included).",
			Query: []Param{{"agent", "string", "only messages to this agent"}, {"state", "string", "pending, sent, clarifying, acknowledged, failed or cancelled"},
				{"type", "string", "instruction, task_delegation, conversation, pre_operation or task_turn"}, {"task", "string", "only messages of this task"}},
			Handler: s.listMessages, Responses: map[int]any{200: wire.MessageList{}}},
		{Method: "GET", Path: "/v1/messages/{id}", Auth: Admin, Summary: "One message.",
			Examples: id("M-1"), Handler: s.getMessage, Responses: map[int]any{200: wire.Message{}}},
		{Method: "POST", Path: "/v1/messages/{id}/cancel", Auth: Admin, Summary: "Cancel an open message; the agent of a delegation is told to stop.",
			Examples: id("M-1"), Request: wire.Reason{}, OptionalBody: true, Handler: s.cancelMessage, Responses: map[int]any{200: wire.Message{}}},
		{Method: "POST", Path: "/v1/messages/{id}/clarify", Auth: Admin, Summary: "Answer the agent's questions (task-clarification) and wait for its acknowledgment again.",
			Examples: id("M-1"), Request: wire.Clarify{}, Handler: s.clarifyMessage, Responses: map[int]any{200: wire.Message{}}},
	}
}

// instructionRoutes are the routes of instructions (the cycles policy).
func (s *Server) instructionRoutes() []Route {
	id := func(v string) map[string]string { return map[string]string{"id": v} }
	return []Route{
		{Method: "POST", Path: "/v1/instructions", Auth: Admin, Summary: "Queue an instruction for the agent's next dispatch cycle (cycles policy). Instructions may be sent more than once: make them idempotent.",
			Request: wire.CreateInstruction{}, Handler: s.createInstruction, Responses: map[int]any{201: wire.Instruction{}}},
		{Method: "GET", Path: "/v1/instructions", Auth: Admin, Summary: "List instructions.",
			Query: []Param{{"state", "string", "pending, sent, acknowledged, failed or cancelled"}, {"agent", "string", "only this agent's"},
				{"limit", "integer", "only the newest n (1 to 10000)"}},
			Handler: s.listInstructions, Responses: map[int]any{200: wire.InstructionList{}}},
		{Method: "GET", Path: "/v1/instructions/{id}", Auth: Admin, Summary: "One instruction.",
			Examples: id("I-1"), Handler: s.getInstruction, Responses: map[int]any{200: wire.Instruction{}}},
		{Method: "POST", Path: "/v1/instructions/{id}/ack", Auth: Admin, Summary: "Acknowledge an instruction (the caller's acknowledge(id)).",
			Examples: id("I-1"), Handler: s.ackInstruction, Responses: map[int]any{200: wire.Instruction{}}},
	}
}

// agentSideRoutes are the routes of the agents' side: their inbox, MCP, scouts, replies.
func (s *Server) agentSideRoutes() []Route {
	id := func(v string) map[string]string { return map[string]string{"id": v} }
	return []Route{
		{Method: "GET", Path: "/v1/inbox", Auth: AgentOnly, Summary: "One dispatch cycle of the calling agent; long-polls up to wait when nothing is there.",
			Query:   []Param{{"wait", "string", "Go duration to wait when the inbox is empty (default 0, at most 5m)"}},
			Handler: s.inbox, Responses: map[int]any{200: wire.Inbox{}}},
		{Method: "POST", Path: "/mcp", Auth: AgentOnly, Summary: "wilco's MCP tools for agents over MCP's streamable HTTP transport (stateless: no session; the protocol version negotiated by initialize; each JSON-RPC message POSTed gets one JSON answer, a notification 202): acknowledge, clarify, checkpoint, ask a scout, complete — for the calling agent's task (or the X-Wilco-Task header's, or the one a call names).",
			Request: wire.MCPMessage{}, Handler: s.mcp, Responses: map[int]any{200: wire.MCPMessage{}, 202: nil,
				// The MCP SDK's own refusals are plain text; wilco's (a
				// token) are its error body.
				400: "text/plain", 403: []any{wire.Error{}, "text/plain"}, 406: "text/plain", 409: "text/plain", 413: "text/plain",
				415: "text/plain"}},
		{Method: "POST", Path: "/v1/ask", Auth: AgentOnly, Summary: "Ask a scout (a read-only helper agent) a question, from inside the calling agent's task; the answer comes back through GET /v1/ask/{id}.",
			Request: wire.Ask{}, Handler: s.ask, Responses: map[int]any{201: wire.Consultation{}}},
		{Method: "GET", Path: "/v1/ask/{id}", Auth: AgentOnly, Summary: "A question to a scout and its answer, for the agent that asked it; long-polls up to wait while it is pending.",
			Examples: id("M-7"), Query: []Param{{"wait", "string", "Go duration to wait while the question is pending (default 0, at most 5m)"}},
			Handler: s.askResult, Responses: map[int]any{200: wire.Consultation{}}},
		{Method: "POST", Path: "/v1/inbox/replies", Auth: AgentOnly, Summary: "Answer: text (ACK lines, ok/wait/cancel) or type and data. An agent may answer only what was sent to it.",
			Request: wire.Reply{}, Handler: s.reply, Responses: map[int]any{202: wire.Interpreted{}}},
	}
}

// operationRoutes are the routes of operations and their round.
func (s *Server) operationRoutes() []Route {
	id := func(v string) map[string]string { return map[string]string{"id": v} }
	return []Route{
		{Method: "POST", Path: "/v1/operations", Auth: Admin, Summary: "Ask agents for their \"ok\" before an operation (reminders policy), then perform it: hibernate, wake, restart, install-skill, install-plugin or maintenance on the agents, or any other operation's command.",
			Request: wire.StartOperation{}, Handler: s.startOperation, Responses: map[int]any{201: wire.Operation{}}},
		{Method: "GET", Path: "/v1/operations", Auth: Admin, Summary: "The operation log: operations, oldest first (the newest n with limit), each with its agents' answers and what was done to each of them (results).",
			Query:   []Param{{"state", "string", "waiting, proceeding, done, cancelled, aborted or failed"}, {"agent", "string", "only operations on this agent"}, {"limit", "integer", "only the newest n (1 to 10000)"}},
			Handler: s.listOperations, Responses: map[int]any{200: wire.OperationList{}}},
		{Method: "GET", Path: "/v1/operations/{id}", Auth: Admin, Summary: "One operation, with its round step by step (log).",
			Examples: id("OP-1"), Handler: s.getOperation, Responses: map[int]any{200: wire.Operation{}}},
		{Method: "POST", Path: "/v1/operations/{id}/cancel", Auth: Admin, Summary: "Cancel a waiting operation.",
			Examples: id("OP-1"), Request: wire.Reason{}, OptionalBody: true, Handler: s.cancelOperation, Responses: map[int]any{200: wire.Operation{}}},
	}
}

// notificationRoutes are the routes of notifications to webhooks and the desktop.
func (s *Server) notificationRoutes() []Route {
	id := func(v string) map[string]string { return map[string]string{"id": v} }
	return []Route{
		{Method: "GET", Path: "/v1/notifications", Auth: Admin, Summary: "List the notifications to webhooks and the desktop, newest first, with how their delivery went (attempts, last status and error).",
			Query: []Param{{"state", "string", "pending, delivered or failed"}, {"limit", "integer", "at most this many (default 100, at most 10000)"},
				{"hook", "string", "only this hook's"}, {"task", "string", "only this task's"}, {"event", "string", "only this event's (escalated, clarification, blocked, stuck, unresponsive, operation, permission, success, failed)"}},
			Handler: s.listNotifications, Responses: map[int]any{200: wire.NotificationList{}}},
		{Method: "GET", Path: "/v1/notifications/{id}", Auth: Admin, Summary: "One notification.",
			Examples: id("N-1"), Handler: s.getNotification, Responses: map[int]any{200: wire.Notification{}}},
	}
}

// eventRoutes are the routes of the event log.
func (s *Server) eventRoutes() []Route {
	return []Route{
		{Method: "GET", Path: "/v1/events", Auth: Admin, Summary: "The event log: a Server-Sent Events stream resumable with Last-Event-ID (or ?after=), or with follow=false one page of JSON.",
			Query: []Param{{"follow", "boolean", "false: one page of JSON instead of a stream (default true)"}, {"after", "integer", "only events after this seq"},
				{"limit", "integer", "page size with follow=false (default 1000, at most 10000)"}, {"task", "string", "only this task's events"}, {"agent", "string", "only this agent's events"}},
			Handler: s.events, Responses: map[int]any{200: []any{wire.EventPage{}, "text/event-stream"}}},
	}
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	status, code := "ok", http.StatusOK
	if s.rt.Err() != nil {
		status, code = "failed (see the server log)", http.StatusServiceUnavailable
	}
	WriteJSON(w, code, wire.Health{Status: status, Seq: s.rt.CommittedSeq()})
	return nil
}
