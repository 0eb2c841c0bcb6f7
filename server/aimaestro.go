package server

import (
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"wilco/ack"
	"wilco/core"
	"wilco/wire"
)

// AI Maestro compatibility: /api/messages as AI Maestro serves it
// (app/api/messages/route.ts and services/messages-service.ts in
// 23blocks-OS/ai-maestro), so that its agents and their shell scripts
// (check-, read-, reply- and send-aimaestro-message.sh) work unchanged.
//
// Messages wilco sends to an agent land in that agent's AI Maestro inbox:
// listing the inbox is the agent's dispatch cycle (as GET /v1/inbox). A
// message an agent sends to the orchestrator is a reply: it is interpreted
// with the acknowledgment language (core.Reply), and refused — with nothing
// changed — when the rules refuse it. Messages between two agents are
// relayed. Errors are AI Maestro's {"error": "…"} (with wilco's code
// beside it).
//
// The routes answer loopback clients only, and need a token as AI
// Maestro's AMP clients send their API key (Authorization: Bearer): the
// agent's own wilco token, which may act only as that agent, or the admin
// token. A reply to the orchestrator (an ACK, a completion…) counts only
// with the sending agent's own token: missing 401, another's 403.
//
// To run the scripts unchanged, give wilco AI Maestro's address (listen:
// 127.0.0.1:23000) and register each AI Maestro agent as a mailbox agent
// under its name; the scripts take the agent's name from its tmux session
// (name@host) and find wilco through AIMAESTRO_API_BASE and
// /api/hosts/identity. Messages are "to" the orchestrator's name.

func (s *Server) maestroRoutes() []Route {
	q := func(name, desc string) Param { return Param{name, "string", desc} }
	return []Route{
		{Method: "GET", Path: "/api/messages", Auth: Loopback, Handler: s.maestroGet,
			Summary: "AI Maestro: list an agent's inbox (its dispatch cycle) or sent box, read one message, resolve an agent.",
			Query: []Param{q("agent", "agent name (agent@host accepted)"), q("id", "a message id: the whole message"),
				q("status", "unread, read or archived"), q("box", "inbox (default) or sent"), q("limit", "default 25; 0 for all"),
				q("action", "resolve, search, unread-count, sent-count, stats, agents, list"), q("priority", "low, normal, high or urgent"),
				q("from", "inbox: only from this sender"), q("to", "sent box: only to this recipient")},
			Responses: map[int]any{200: []any{wire.MaestroList{}, wire.MaestroMessage{}, wire.MaestroResolved{}, wire.MaestroSearch{}, wire.MaestroCount{}, wire.MaestroStats{}, wire.MaestroOwners{}},
				404: []any{wire.MaestroError{}, wire.MaestroUnresolved{}}}},
		{Method: "POST", Path: "/api/messages", Auth: Loopback, Handler: s.maestroPost,
			Summary: "AI Maestro: send a message. To the orchestrator it is a reply wilco interprets; to another agent it is relayed.",
			Request: wire.MaestroSend{}, Responses: map[int]any{201: wire.MaestroSent{}}},
		{Method: "PATCH", Path: "/api/messages", Auth: Loopback, Handler: s.maestroPatch,
			Summary:   "AI Maestro: mark an inbox message read or archived (?agent=&id=&action=read|archive).",
			Query:     []Param{q("agent", "agent name"), q("id", "message id"), q("action", "read or archive")},
			Responses: map[int]any{200: wire.MaestroSuccess{}}},
		{Method: "GET", Path: "/api/hosts/identity", Auth: Loopback, Handler: s.maestroIdentity,
			Summary:   "AI Maestro: this host's identity (its scripts ask it for the URL to post replies to).",
			Responses: map[int]any{200: wire.MaestroIdentity{}}},
		{Method: "DELETE", Path: "/api/messages", Auth: Loopback, Handler: s.maestroDelete,
			Summary:   "AI Maestro: delete an inbox message (?agent=&id=).",
			Query:     []Param{q("agent", "agent name"), q("id", "message id")},
			Responses: map[int]any{200: wire.MaestroSuccess{}}},
	}
}

// writeMaestroError writes err in AI Maestro's shape, with the status of
// the error table.
func writeMaestroError(w http.ResponseWriter, err error) {
	status, code := classify(err)
	WriteJSON(w, status, wire.MaestroError{Error: message(err, code), Code: code})
}

// maestroAgent reads ?agent= (AI Maestro also takes agentId and session),
// without its @host, and checks it against an agent's token.
func (s *Server) maestroAgent(r *http.Request) (string, error) {
	q := r.URL.Query()
	agent := q.Get("agent")
	for _, alt := range []string{"agentId", "session"} {
		if agent == "" {
			agent = q.Get(alt)
		}
	}
	agent = hostName(agent)
	if me := AgentName(r.Context()); me != "" && agent != "" && agent != me {
		return "", Errorf(wire.CodePermissionDenied, "the token of %s may not act as %s", me, agent)
	}
	return agent, nil
}

// known reports whether name is the orchestrator or a registered agent.
func (s *Server) known(name string) (exists bool, err error) {
	if name == s.orch {
		return true, nil
	}
	err = s.read(func(c *core.State) { _, exists = c.Agent(name) })
	return exists, err
}

var maestroActions = map[string]bool{"resolve": true, "search": true, "unread-count": true, "sent-count": true,
	"stats": true, "agents": true, "sessions": true, "list": true}

func (s *Server) maestroGet(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	agent, err := s.maestroAgent(r)
	if err != nil {
		return err
	}
	id, action, box := q.Get("id"), q.Get("action"), q.Get("box")
	if box == "" {
		box = "inbox"
	}
	if box != "inbox" && box != "sent" {
		return invalidf("box must be inbox or sent, got %q", box)
	}
	switch {
	case action == "resolve" && agent != "":
		return s.maestroResolve(w, r, agent)
	case action == "search" && agent != "":
		return s.maestroSearch(w, r, agent)
	case agent != "" && id != "":
		m, ok := s.mailbox.get(agent, box, id)
		if !ok {
			return notFoundf("Message not found")
		}
		WriteJSON(w, http.StatusOK, m)
		return nil
	case action == "unread-count" && agent != "":
		if err := s.maestroCycle(r, agent); err != nil {
			return err
		}
		WriteJSON(w, http.StatusOK, wire.MaestroCount{Count: len(s.mailbox.list(agent, "inbox", listFilter{status: "unread"}))})
		return nil
	case action == "sent-count" && agent != "":
		WriteJSON(w, http.StatusOK, wire.MaestroCount{Count: len(s.mailbox.list(agent, "sent", listFilter{}))})
		return nil
	case action == "stats" && agent != "":
		return s.maestroStats(w, r, agent)
	case action == "agents" || action == "sessions":
		owners := s.mailbox.owners()
		WriteJSON(w, http.StatusOK, wire.MaestroOwners{Agents: owners, Sessions: owners})
		return nil
	case action != "" && !maestroActions[action]:
		return invalidf("Invalid action: '%s'. Valid actions: resolve, search, unread-count, sent-count, stats, agents, sessions, list", preview(action, 50))
	case agent == "":
		return invalidf("Agent identifier required (agent ID, alias, or session name)")
	}
	return s.maestroList(w, r, agent, box)
}

// maestroStats answers action=stats: the agent's inbox counted by
// priority and unread.
func (s *Server) maestroStats(w http.ResponseWriter, r *http.Request, agent string) error {
	if err := s.maestroCycle(r, agent); err != nil {
		return err
	}
	all := s.mailbox.list(agent, "inbox", listFilter{})
	st := wire.MaestroStats{Total: len(all), ByPriority: map[string]int{}}
	for _, p := range (wire.MaestroPriority).Values("") {
		st.ByPriority[p] = 0
	}
	for _, m := range all {
		st.ByPriority[string(m.Priority)]++
		if m.Status == wire.StatusUnread {
			st.Unread++
		}
	}
	WriteJSON(w, http.StatusOK, st)
	return nil
}

// maestroList answers a listing of the agent's box, filtered as the query
// says.
func (s *Server) maestroList(w http.ResponseWriter, r *http.Request, agent, box string) error {
	q := r.URL.Query()
	// AI Maestro's limit: 25 when absent, 0 (or not a number) for all.
	limit := 25
	if v, ok := q["limit"]; ok {
		limit, _ = strconv.Atoi(strings.TrimSpace(v[0]))
		limit = max(limit, 0)
	}
	f := listFilter{priority: q.Get("priority"), limit: limit}
	if box == "sent" {
		f.to = hostName(q.Get("to"))
	} else {
		f.status, f.from = q.Get("status"), hostName(q.Get("from"))
		if f.status != "" && f.status != "unread" && f.status != "read" && f.status != "archived" {
			return invalidf("status must be unread, read or archived, got %q", f.status)
		}
		if err := s.maestroCycle(r, agent); err != nil {
			return err
		}
	}
	WriteJSON(w, http.StatusOK, wire.MaestroList{Messages: s.mailbox.list(agent, box, f), Limit: limit})
	return nil
}

// maestroCycle is the agent's dispatch cycle: what wilco has for a pull
// agent lands in its AI Maestro inbox, unread.
func (s *Server) maestroCycle(r *http.Request, agent string) error {
	msgs, err := do(r.Context(), s, func(c *core.State, now time.Time) ([]core.InboxMessage, error) {
		if a, ok := c.Agent(agent); !ok || !a.Pull {
			return nil, nil // unknown (AI Maestro lists an empty inbox) or handed its messages
		}
		return c.Cycle(now, agent)
	})
	if err != nil || len(msgs) == 0 {
		return err
	}
	adds := make([]mailboxAdd, 0, len(msgs))
	now := time.Now()
	for _, m := range s.whereToWork(msgs) {
		adds = append(adds, mailboxAdd{owner: agent, box: "inbox", msg: s.maestroFromWilco(agent, m, now)})
	}
	return s.mailbox.add(adds...)
}

// maestroTypes names wilco's sends with the message types of their wire
// forms (task-assignment and task-clarification of the ACK protocol;
// pre-operation, reminder, timeout-notice, extension-granted of operations).
var maestroTypes = map[string]string{
	string(core.TypeDelegation):       "task-assignment",
	string(core.SendResend):           "task-assignment",
	string(core.TypeInstruction):      "request",
	string(core.SendRetry):            "request",
	string(core.TypeConversation):     "request",
	string(core.TypePreOperation):     "pre-operation",
	string(core.SendAckRequest):       "ack-request",
	string(core.SendCorrection):       "task-correction",
	string(core.SendWrongID):          "task-correction",
	string(core.SendClarification):    "task-clarification",
	string(core.SendReminder):         "reminder",
	string(core.SendFollowup):         "status-check",
	string(core.SendTimeoutNotice):    "timeout-notice",
	string(core.SendExtension):        "extension-granted",
	string(core.SendCancel):           "task-cancel",
	string(core.SendOperationOutcome): "operation-outcome",
}

var highPriority = map[string]bool{
	"task-assignment": true, "ack-request": true, "task-correction": true, "pre-operation": true,
	"reminder": true, "timeout-notice": true, "task-cancel": true,
}

func (s *Server) maestroFromWilco(agent string, m core.InboxMessage, now time.Time) *storedMessage {
	typ := maestroTypes[m.Type]
	if typ == "" {
		typ = "notification"
	}
	subject := m.Subject
	if subject == "" {
		if m.InstructionID != "" {
			subject = "Instruction " + m.ID
		} else {
			subject = "Message " + m.ID
		}
	}
	wilco := map[string]any{"message_id": m.ID, "type": m.Type, "attempt": m.Attempt}
	ctx := map[string]any{"wilco": wilco}
	if m.TaskID != "" {
		wilco["task_id"], ctx["task_id"] = m.TaskID, m.TaskID
	}
	if m.InstructionID != "" {
		wilco["instruction_id"] = m.InstructionID
	}
	if m.OperationID != "" {
		wilco["operation_id"], ctx["operation_id"] = m.OperationID, m.OperationID
	}
	if typ == "task-assignment" || typ == "ack-request" || typ == "task-correction" || typ == "task-clarification" {
		ctx["requires_ack"] = true
	}
	if typ == "pre-operation" || typ == "reminder" {
		ctx["requires_acknowledgment"] = true
	}
	content, _ := json.Marshal(map[string]any{"type": typ, "message": m.Body, "context": ctx})
	priority := wire.PriorityNormal
	if highPriority[typ] {
		priority = wire.PriorityHigh
	}
	created := m.CreatedAt
	if created.IsZero() {
		created = now
	}
	return &storedMessage{MaestroMessage: wire.MaestroMessage{
		ID: s.mailbox.nextID(created), From: s.orch, FromAlias: s.orch, To: agent, ToAlias: agent,
		Timestamp: created.UTC().Format(maestroTime), Subject: subject, Priority: priority, Status: wire.StatusUnread,
		Content: content,
	}, WilcoDelivery: m.ID}
}

func (s *Server) maestroResolve(w http.ResponseWriter, r *http.Request, agent string) error {
	exists, err := s.known(agent)
	if err != nil {
		return err
	}
	if !exists {
		WriteJSON(w, http.StatusNotFound, wire.MaestroUnresolved{Error: "Agent not found", Code: wire.CodeNotFound})
		return nil
	}
	WriteJSON(w, http.StatusOK, wire.MaestroResolved{Resolved: s.resolved(r, agent)})
	return nil
}

// maestroIdentity is AI Maestro's GET /api/hosts/identity: the scripts'
// common.sh asks it for this host's id and URL.
func (s *Server) maestroIdentity(w http.ResponseWriter, r *http.Request) error {
	host, _ := os.Hostname()
	host = strings.ToLower(host)
	if host == "" {
		host = "local"
	}
	WriteJSON(w, http.StatusOK, wire.MaestroIdentity{Host: wire.MaestroHost{
		ID: host, Name: host, URL: "http://" + r.Host, Description: "wilco", Version: "wilco", Tailscale: false, IsSelf: true,
	}})
	return nil
}

func (s *Server) resolved(r *http.Request, name string) wire.MaestroAgent {
	return wire.MaestroAgent{AgentID: name, Alias: name, DisplayName: name, SessionName: name, HostID: "local", HostURL: "http://" + r.Host}
}

func (s *Server) maestroSearch(w http.ResponseWriter, r *http.Request, query string) error {
	out := wire.MaestroSearch{Query: query, Results: []wire.MaestroAgent{}}
	names := []string{s.orch}
	if err := s.read(func(c *core.State) {
		for _, a := range c.Agents() {
			names = append(names, a.Name)
		}
	}); err != nil {
		return err
	}
	for _, n := range names {
		if strings.Contains(strings.ToLower(n), strings.ToLower(query)) {
			res := s.resolved(r, n)
			res.Name, res.Label = n, n
			out.Results = append(out.Results, res)
		}
	}
	out.Count = len(out.Results)
	WriteJSON(w, http.StatusOK, out)
	return nil
}

// replyForms are the JSON forms a message's content (or its
// context) may take.
var replyForms = map[string]bool{"task-acknowledgment": true, "task-acknowledgment-error": true,
	"checkpoint-ack": true, "task-complete": true, "acknowledgment": true}

func formType(t string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(t)), "_", "-")
}

func (s *Server) maestroPost(w http.ResponseWriter, r *http.Request) error {
	var req wire.MaestroSend
	if err := decodeJSON(r, &req, false); err != nil {
		return err
	}
	if req.From == "" || req.To == "" || req.Subject == "" || len(req.Content) == 0 || string(req.Content) == "null" {
		return invalidf("Missing required fields: from, to, subject, content")
	}
	var content wire.MaestroContent
	if err := json.Unmarshal(req.Content, &content); err != nil || content.Type == "" || content.Message == "" {
		return invalidf("Content must have type and message fields")
	}
	switch req.Priority {
	case "":
		req.Priority = wire.PriorityNormal
	case wire.PriorityLow, wire.PriorityNormal, wire.PriorityHigh, wire.PriorityUrgent:
	default:
		return invalidf("priority must be low, normal, high or urgent, got %q", req.Priority)
	}
	from, to := hostName(req.From), hostName(req.To)
	me := AgentName(r.Context())
	if me != "" && from != me {
		return Errorf(wire.CodePermissionDenied, "the token of %s may not send as %s", me, from)
	}
	for _, name := range []string{from, to} {
		exists, err := s.known(name)
		if err != nil {
			return err
		}
		if !exists {
			return notFoundf("Agent not found: %s", name)
		}
	}
	if to == s.orch && from != s.orch && me != from {
		return Errorf(wire.CodePermissionDenied, "a reply to %s counts only with the sending agent's own token: send %s's token as Authorization: Bearer", s.orch, from)
	}
	now := time.Now()
	msg := &storedMessage{MaestroMessage: wire.MaestroMessage{
		From: from, FromAlias: from, FromHost: req.FromHost, To: to, ToAlias: to, ToHost: req.ToHost,
		Timestamp: now.UTC().Format(maestroTime), Subject: req.Subject, Priority: req.Priority, Status: wire.StatusUnread,
		Content: req.Content, InReplyTo: req.InReplyTo,
	}}
	switch {
	case from == to:
		return invalidf("from and to are the same (%s)", from)
	case to == s.orch:
		return s.maestroReply(w, r, msg, content.Type, content.Message, content.Context)
	case from == s.orch:
		return s.maestroSendAsOrchestrator(w, r, msg, content.Message, content.Context)
	}
	// Between two agents: relayed as it is.
	msg.ID = s.mailbox.nextID(now)
	if err := s.mailbox.add(mailboxAdd{to, "inbox", msg}, mailboxAdd{from, "sent", msg}); err != nil {
		return err
	}
	WriteJSON(w, http.StatusCreated, wire.MaestroSent{Message: msg.MaestroMessage})
	return nil
}

// maestroReply interprets a message to the orchestrator as the agent's
// reply. It is filed (the agent's sent box, the orchestrator's inbox) only
// when wilco accepted it.
func (s *Server) maestroReply(w http.ResponseWriter, r *http.Request, msg *storedMessage, typ, text string, context json.RawMessage) error {
	in := core.ReplyInput{Agent: msg.From}
	if msg.InReplyTo != "" {
		owner, orig := s.mailbox.inboxOwner(msg.InReplyTo)
		switch {
		case orig != nil && owner != msg.From:
			return Errorf(wire.CodePermissionDenied, "message %s was not sent to %s", msg.InReplyTo, msg.From)
		case orig != nil:
			in.InReplyTo = orig.WilcoDelivery // "" for a relayed message: wilco finds what it answers
		default:
			var found bool
			if err := s.read(func(c *core.State) { _, found = c.Delivery(msg.InReplyTo) }); err != nil {
				return err
			}
			if !found {
				return notFoundf("no message %q", msg.InReplyTo)
			}
			in.InReplyTo = msg.InReplyTo // a wilco message id: the core checks it was sent to this agent
		}
	}
	in.Type, in.Data, in.Text = maestroReplyForm(typ, text, json.RawMessage(msg.Content), context)
	interp, err := s.interpret(r, in)
	if err != nil {
		return err
	}
	msg.ID = s.mailbox.nextID(time.Now())
	msg.WilcoDelivery = interp.DeliveryID
	if err := s.mailbox.add(mailboxAdd{s.orch, "inbox", msg}, mailboxAdd{msg.From, "sent", msg}); err != nil {
		return err
	}
	in2 := interpretation(interp)
	WriteJSON(w, http.StatusCreated, wire.MaestroSent{Message: msg.MaestroMessage, Notified: true, Interpreted: &in2})
	return nil
}

// maestroReplyForm reads an AI Maestro message to the orchestrator as the
// reply it carries. AI Maestro's content is {type, message, context}, its
// type free-form (request, response, notification, update…; see Message in
// ai-maestro's lib/messageQueue.ts), and the task id may be only in the
// context (task_id, taskId, task) or only in the text. The structured form
// is used when the type (of the content or of its context) names a form of
// the ACK protocol and the form reads whole; otherwise the message text is
// read as an agent's text reply (an [ACK] line, questions, a checkpoint, a
// completion or blocked report), the task id from the context written into
// an [ACK] line that lacks one.
func maestroReplyForm(typ, text string, content, context json.RawMessage) (form string, data []byte, plain string) {
	taskID := contextTaskID(context)
	try := func(t string, raw json.RawMessage) bool {
		if !replyForms[formType(t)] {
			return false
		}
		d := withTaskID(raw, taskID)
		if _, err := ack.ParseJSON(formType(t), d); err != nil && strings.TrimSpace(text) != "" {
			return false // incomplete as JSON: the text says it
		}
		form, data = formType(t), d
		return true
	}
	if try(typ, content) {
		return form, data, ""
	}
	var c struct {
		Type string `json:"type"`
	}
	if len(context) > 0 && context[0] == '{' && json.Unmarshal(context, &c) == nil && try(c.Type, context) {
		return form, data, ""
	}
	return "", nil, ackWithTaskID(text, taskID)
}

// contextTaskID is the task id an AI Maestro message's context names, if
// any.
func contextTaskID(context json.RawMessage) string {
	var c map[string]any
	if len(context) == 0 || json.Unmarshal(context, &c) != nil {
		return ""
	}
	for _, k := range []string{"task_id", "taskId", "taskID", "task"} {
		if id, ok := c[k].(string); ok && core.ValidID(strings.TrimSpace(id)) {
			return strings.TrimSpace(id)
		}
	}
	return ""
}

// withTaskID adds "task_id" to a JSON object that has none.
func withTaskID(raw json.RawMessage, taskID string) []byte {
	if taskID == "" {
		return raw
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return raw
	}
	if _, ok := m["task_id"]; ok {
		return raw
	}
	m["task_id"], _ = json.Marshal(taskID)
	b, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return b
}

// ackNoID is an [ACK] line with no task id before its status.
var ackNoID = regexp.MustCompile(`(?m)\[ACK\][ \t]*(?:-[ \t]*)?(RECEIVED|CLARIFICATION[_ -]NEEDED|REJECTED|QUEUED|CONFIRMED)\b`)

// ackWithTaskID writes taskID into an [ACK] line of text that names no
// task: "[ACK] RECEIVED" becomes "[ACK] T-3 - RECEIVED".
func ackWithTaskID(text, taskID string) string {
	if taskID == "" {
		return text
	}
	if loc := ackNoID.FindStringSubmatchIndex(text); loc != nil {
		return text[:loc[0]] + "[ACK] " + taskID + " - " + text[loc[2]:loc[3]] + text[loc[1]:]
	}
	return text
}

// maestroSendAsOrchestrator sends a message as wilco (it needs the admin
// token): the same as POST /v1/messages. The agent gets it at its next
// dispatch cycle.
func (s *Server) maestroSendAsOrchestrator(w http.ResponseWriter, r *http.Request, msg *storedMessage, text string, context json.RawMessage) error {
	if !IsAdmin(r.Context()) {
		return Errorf(wire.CodePermissionDenied, "sending as %s needs the admin token", s.orch)
	}
	var ctx struct {
		TaskID string `json:"task_id"`
	}
	if len(context) > 0 {
		_ = json.Unmarshal(context, &ctx)
	}
	d, err := do(r.Context(), s, func(c *core.State, now time.Time) (core.Delivery, error) {
		return c.Send(now, core.SendRequest{From: s.orch, To: msg.To, Subject: msg.Subject, Body: text, TaskID: ctx.TaskID})
	})
	if err != nil {
		return err
	}
	msg.ID = s.mailbox.nextID(time.Now())
	msg.WilcoDelivery = d.ID
	if err := s.mailbox.add(mailboxAdd{s.orch, "sent", msg}); err != nil {
		return err
	}
	m := messageView(d, s.orch)
	WriteJSON(w, http.StatusCreated, wire.MaestroSent{Message: msg.MaestroMessage, WilcoMessage: &m})
	return nil
}

func (s *Server) maestroPatch(w http.ResponseWriter, r *http.Request) error {
	agent, err := s.maestroAgent(r)
	if err != nil {
		return err
	}
	id, action := r.URL.Query().Get("id"), r.URL.Query().Get("action")
	if agent == "" || id == "" {
		return invalidf("Agent identifier and message ID required")
	}
	status := map[string]wire.MaestroStatus{"read": wire.StatusRead, "archive": wire.StatusArchived}[action]
	if status == "" {
		return invalidf("Invalid action")
	}
	ok, err := s.mailbox.mark(agent, id, status)
	if err != nil {
		return err
	}
	if !ok {
		return notFoundf("Message not found")
	}
	WriteJSON(w, http.StatusOK, wire.MaestroSuccess{Success: true})
	return nil
}

func (s *Server) maestroDelete(w http.ResponseWriter, r *http.Request) error {
	agent, err := s.maestroAgent(r)
	if err != nil {
		return err
	}
	id := r.URL.Query().Get("id")
	if agent == "" || id == "" {
		return invalidf("Agent identifier and message ID required")
	}
	ok, err := s.mailbox.remove(agent, id)
	if err != nil {
		return err
	}
	if !ok {
		return notFoundf("Message not found")
	}
	WriteJSON(w, http.StatusOK, wire.MaestroSuccess{Success: true})
	return nil
}
