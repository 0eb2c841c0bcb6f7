package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"wilco/config"
	"wilco/core"
	"wilco/wire"
)

// The request shapes below are those of AI Maestro's messaging scripts
// (messaging_scripts/*.sh and scripts/shell-helpers/common.sh in
// 23blocks-OS/ai-maestro): the URLs they build and the JSON their jq
// writes, field for field.

type maestroList struct {
	Messages []wire.MaestroSummary `json:"messages"`
	Limit    int                   `json:"limit"`
}

type maestroFull struct {
	ID        string `json:"id"`
	From      string `json:"from"`
	FromAlias string `json:"fromAlias"`
	FromHost  string `json:"fromHost"`
	To        string `json:"to"`
	Subject   string `json:"subject"`
	Priority  string `json:"priority"`
	Status    string `json:"status"`
	Timestamp string `json:"timestamp"`
	InReplyTo string `json:"inReplyTo"`
	Content   struct {
		Type    string         `json:"type"`
		Message string         `json:"message"`
		Context map[string]any `json:"context"`
	} `json:"content"`
}

func maestroSetup(t *testing.T, orchestrator string) *testBundle {
	cfg := config.Default()
	if orchestrator != "" {
		cfg.Orchestrator = orchestrator
	}
	cfg.Compat.AIMaestro = true
	cfg.Agents = []config.Agent{{Name: "remote-1", Adapter: "mailbox", Capabilities: []string{"go"}}, {Name: "remote-2", Adapter: "mailbox"}}
	b := setup(t, setupOpts{cfg: cfg, aimaestro: true})
	b.tokens = map[string]string{}
	for _, a := range cfg.Agents {
		b.tokens[a.Name] = b.must(200, b.call("POST", "/v1/agents/"+a.Name+"/token", adminToken, nil)).json(t)["token"].(string)
	}
	return b
}

// maestroCall calls an AI Maestro route as AMP clients do, with a token
// as Authorization: Bearer: token, or "" for the token of the agent the
// request is from (its from, else its ?agent=; the admin token for the
// orchestrator and for unknown agents), or "-" for none.
func (b *testBundle) maestroCall(method, path, token string, body any) response {
	b.t.Helper()
	switch token {
	case "-":
		token = ""
	case "":
		name := ""
		if m, ok := body.(map[string]any); ok {
			name, _ = m["from"].(string)
		}
		if name == "" {
			if u, err := url.Parse(path); err == nil {
				name = u.Query().Get("agent")
			}
		}
		name, _, _ = strings.Cut(name, "@")
		token = b.tokens[name]
		if token == "" {
			token = adminToken
		}
	}
	return b.call(method, path, token, body)
}

// check-aimaestro-messages.sh: get_unread_messages.
func (b *testBundle) maestroUnread(agent string) []wire.MaestroSummary {
	b.t.Helper()
	var l maestroList
	b.must(200, b.maestroCall("GET", "/api/messages?agent="+agent+"&box=inbox&status=unread", "", nil), &l)
	return l.Messages
}

// read-aimaestro-message.sh and reply-aimaestro-message.sh: the message.
func (b *testBundle) maestroRead(agent, id string) maestroFull {
	b.t.Helper()
	var m maestroFull
	b.must(200, b.maestroCall("GET", "/api/messages?agent="+agent+"&id="+id+"&box=inbox", "", nil), &m)
	return m
}

// reply-aimaestro-message.sh's payload (without Slack context).
func replyPayload(from, to, subject, inReplyTo, message string) map[string]any {
	if !strings.HasPrefix(subject, "Re: ") {
		subject = "Re: " + subject
	}
	return map[string]any{
		"from": from, "fromAlias": from, "fromHost": "local", "to": to, "toAlias": to, "toHost": "local",
		"subject": subject, "priority": "normal", "inReplyTo": inReplyTo,
		"content": map[string]any{"type": "response", "message": message},
	}
}

func TestAIMaestroScriptsAcknowledgeADelegation(t *testing.T) {
	t.Parallel()
	b := maestroSetup(t, "")
	// messaging-helper.sh resolve_agent, for the sender and the recipient.
	for _, name := range []string{"remote-1", "wilco"} {
		var res struct {
			Resolved map[string]any `json:"resolved"`
		}
		b.must(200, b.maestroCall("GET", "/api/messages?action=resolve&agent="+name, "", nil), &res)
		if res.Resolved["agentId"] != name || res.Resolved["alias"] != name {
			t.Fatalf("resolve %s: %v", name, res)
		}
	}
	if r := b.maestroCall("GET", "/api/messages?action=resolve&agent=ghost", "", nil); r.status != 404 || r.json(t)["resolved"] != nil {
		t.Fatalf("resolve ghost: %d %s", r.status, r.body)
	}

	var m wire.Message
	b.must(201, b.call("POST", "/v1/messages", adminToken, map[string]any{"to": "remote-1", "type": "task_delegation", "task_id": "T-7",
		"body": "Add a --json flag to xls."}), &m)
	unread := b.maestroUnread("remote-1")
	if len(unread) != 1 {
		t.Fatalf("unread %+v", unread)
	}
	u := unread[0]
	if u.From != "wilco" || u.Subject != "Task T-7" || u.Type != "task-assignment" || u.Priority != "high" || u.Status != "unread" ||
		!strings.HasPrefix(u.Preview, "Add a --json flag") || !strings.HasSuffix(u.Timestamp, "Z") {
		t.Fatalf("summary %+v", u)
	}
	full := b.maestroRead("remote-1", u.ID)
	if !strings.Contains(full.Content.Message, "[ACK] T-7 - RECEIVED") || full.Content.Context["task_id"] != "T-7" || full.FromAlias != "wilco" {
		t.Fatalf("message %+v", full)
	}
	// mark_message_read
	r := b.must(200, b.maestroCall("PATCH", "/api/messages?agent=remote-1&id="+u.ID+"&action=read", "", nil))
	if r.json(t)["success"] != true {
		t.Fatalf("mark read %s", r.body)
	}
	if got := b.maestroUnread("remote-1"); len(got) != 0 {
		t.Fatalf("still unread %+v", got)
	}
	// reply-aimaestro-message.sh: the reply goes back to the original sender.
	var sent struct {
		Message     maestroFull         `json:"message"`
		Notified    bool                `json:"notified"`
		Interpreted core.Interpretation `json:"interpreted"`
	}
	b.must(201, b.maestroCall("POST", "/api/messages", "", replyPayload("remote-1", full.From, full.Subject, u.ID,
		"[ACK] T-7 - RECEIVED\nUnderstanding: add a --json flag to xls")), &sent)
	if !sent.Notified || sent.Interpreted.Kind != "ack" || sent.Interpreted.DeliveryID != m.ID || sent.Message.Subject != "Re: Task T-7" {
		t.Fatalf("reply %+v", sent)
	}
	if d := b.delivery(m.ID); d.State != core.Acknowledged {
		t.Fatalf("delivery %s", d.State)
	}
	// The reply is in the agent's sent box and the orchestrator's inbox.
	var l maestroList
	b.must(200, b.maestroCall("GET", "/api/messages?agent=remote-1&box=sent", "", nil), &l)
	if len(l.Messages) != 1 || l.Messages[0].To != "wilco" || l.Limit != 25 {
		t.Fatalf("sent box %+v", l)
	}
	if got := b.maestroUnread("wilco"); len(got) != 1 || got[0].From != "remote-1" {
		t.Fatalf("orchestrator inbox %+v", got)
	}
}

// An operation's acknowledgment: {"type": "acknowledgment", "message": "ok",
// "ready": true, "notes": …} to the chief of staff.
func TestAIMaestroOperationAcknowledgment(t *testing.T) {
	t.Parallel()
	b := maestroSetup(t, "chief-of-staff")
	var op wire.Operation
	b.must(201, b.call("POST", "/v1/operations", adminToken, map[string]any{"operation": "skill-install", "agents": []string{"remote-1"}}), &op)
	unread := b.maestroUnread("remote-1")
	if len(unread) != 1 || unread[0].Type != "pre-operation" || unread[0].From != "chief-of-staff" || unread[0].Priority != "high" {
		t.Fatalf("unread %+v", unread)
	}
	before := b.head()
	r := b.maestroCall("POST", "/api/messages", "", map[string]any{
		"from": "remote-1", "to": "wilco", "subject": "RE: [skill-install] Pending - Acknowledgment Required",
		"content": map[string]any{"type": "acknowledgment", "message": "ok"}})
	if r.status != 404 || b.head() != before {
		t.Fatalf("to the wrong orchestrator name: %d %s", r.status, r.body)
	}
	b.must(201, b.maestroCall("POST", "/api/messages", "", map[string]any{
		"from": "remote-1", "to": "chief-of-staff", "subject": "RE: [skill-install] Pending - Acknowledgment Required",
		"content": map[string]any{"type": "acknowledgment", "message": "ok", "ready": true, "notes": "Finished saving current work, ready for operation"}}))
	b.must(200, b.call("GET", "/v1/operations/"+op.ID, adminToken, nil), &op)
	if op.State != wire.OperationDone || !op.AcknowledgmentReceived {
		t.Fatalf("operation %+v", op)
	}
	// The chief of staff's check for acknowledgments lists the chief of staff's unread.
	var l maestroList
	b.must(200, b.maestroCall("GET", "/api/messages?agent=chief-of-staff&action=list&status=unread", "", nil), &l)
	if len(l.Messages) != 1 || l.Messages[0].From != "remote-1" || l.Messages[0].Preview != "ok" {
		t.Fatalf("chief-of-staff inbox %+v", l)
	}
}

func TestAIMaestroSendBetweenAgentsAndFilters(t *testing.T) {
	t.Parallel()
	b := maestroSetup(t, "")
	// send-aimaestro-message.sh's payload.
	for i, subject := range []string{"Need API", "Status update", "Deployment"} {
		priority := []string{"normal", "high", "urgent"}[i]
		b.must(201, b.maestroCall("POST", "/api/messages", "", map[string]any{
			"from": "remote-1", "fromAlias": "remote-1", "fromHost": "local", "to": "remote-2", "toAlias": "remote-2", "toHost": "local",
			"subject": subject, "priority": priority, "content": map[string]any{"type": "request", "message": "Please implement POST /api/users"}}))
	}
	var l maestroList
	b.must(200, b.maestroCall("GET", "/api/messages?agent=remote-2@local&limit=2", "", nil), &l)
	if len(l.Messages) != 2 || l.Limit != 2 || l.Messages[0].Subject != "Deployment" {
		t.Fatalf("newest first, limited: %+v", l)
	}
	b.must(200, b.maestroCall("GET", "/api/messages?agent=remote-2&limit=0&priority=high", "", nil), &l)
	if len(l.Messages) != 1 || l.Limit != 0 || l.Messages[0].Subject != "Status update" {
		t.Fatalf("priority filter, no limit: %+v", l)
	}
	b.must(200, b.maestroCall("GET", "/api/messages?agent=remote-2&limit=abc", "", nil), &l)
	if len(l.Messages) != 3 || l.Limit != 0 {
		t.Fatalf("limit not a number (AI Maestro: all): %+v", l)
	}
	id := l.Messages[0].ID
	b.must(200, b.maestroCall("PATCH", "/api/messages?agent=remote-2&id="+id+"&action=archive", "", nil))
	b.must(200, b.maestroCall("GET", "/api/messages?agent=remote-2&status=archived", "", nil), &l)
	if len(l.Messages) != 1 || l.Messages[0].ID != id {
		t.Fatalf("archived %+v", l)
	}
	var count struct{ Count int }
	b.must(200, b.maestroCall("GET", "/api/messages?agent=remote-2&action=unread-count", "", nil), &count)
	if count.Count != 2 {
		t.Fatalf("unread count %d", count.Count)
	}
	b.must(200, b.maestroCall("DELETE", "/api/messages?agent=remote-2&id="+id, "", nil))
	if r := b.maestroCall("GET", "/api/messages?agent=remote-2&id="+id, "", nil); r.status != 404 || r.json(t)["error"] != "Message not found" {
		t.Fatalf("deleted message: %d %s", r.status, r.body)
	}
	var stats struct {
		Unread, Total int
		ByPriority    map[string]int
	}
	b.must(200, b.maestroCall("GET", "/api/messages?agent=remote-2&action=stats", "", nil), &stats)
	if stats.Total != 2 || stats.ByPriority["normal"] != 1 {
		t.Fatalf("stats %+v", stats)
	}
	// An unknown agent has an empty inbox, as in AI Maestro.
	b.must(200, b.maestroCall("GET", "/api/messages?agent=ghost", "", nil), &l)
	if len(l.Messages) != 0 {
		t.Fatalf("ghost inbox %+v", l)
	}
}

func TestAIMaestroRefusals(t *testing.T) {
	t.Parallel()
	b := maestroSetup(t, "")
	b.must(201, b.call("POST", "/v1/messages", adminToken, map[string]any{"to": "remote-1", "type": "task_delegation", "task_id": "T-1", "body": "Do it."}))
	mine := b.maestroUnread("remote-1")[0].ID
	tok := b.tokens["remote-2"]
	tests := []struct {
		name, method, path, token string
		body                      any
		status                    int
		want                      string
	}{
		{"missing fields", "POST", "/api/messages", "", map[string]any{"from": "remote-1", "to": "wilco"}, 400, "Missing required fields: from, to, subject, content"},
		{"content without message", "POST", "/api/messages", "", map[string]any{"from": "remote-1", "to": "wilco", "subject": "x", "content": map[string]any{"type": "response"}}, 400, "Content must have type and message fields"},
		{"content not an object", "POST", "/api/messages", "", map[string]any{"from": "remote-1", "to": "wilco", "subject": "x", "content": "ok"}, 400, "Content must have type and message fields"},
		{"malformed JSON", "POST", "/api/messages", "", `{"from": `, 400, "malformed JSON"},
		{"bad priority", "POST", "/api/messages", "", map[string]any{"from": "remote-1", "to": "wilco", "subject": "x", "priority": "meh", "content": map[string]any{"type": "response", "message": "ok"}}, 400, "priority"},
		{"unknown sender", "POST", "/api/messages", "", map[string]any{"from": "ghost", "to": "wilco", "subject": "x", "content": map[string]any{"type": "response", "message": "ok"}}, 404, "Agent not found: ghost"},
		{"unknown recipient", "POST", "/api/messages", "", map[string]any{"from": "remote-1", "to": "ghost", "subject": "x", "content": map[string]any{"type": "response", "message": "ok"}}, 404, "Agent not found: ghost"},
		{"answering another agent's message", "POST", "/api/messages", "", replyPayload("remote-2", "wilco", "Task T-1", mine, "[ACK] T-1 - RECEIVED\nUnderstanding: do it"), 403, "was not sent to remote-2"},
		{"acknowledging another agent's task", "POST", "/api/messages", "", replyPayload("remote-2", "wilco", "Task T-1", "", "[ACK] T-1 - RECEIVED\nUnderstanding: do it"), 403, "not delegated to remote-2"},
		{"unknown inReplyTo", "POST", "/api/messages", "", replyPayload("remote-1", "wilco", "x", "msg-404", "ok"), 404, "no message"},
		{"broken ACK", "POST", "/api/messages", "", replyPayload("remote-1", "wilco", "x", "", "[ACK] T-1 - MAYBE"), 400, "reply"},
		{"sending as wilco with an agent's token", "POST", "/api/messages", tok, map[string]any{"from": "wilco", "to": "remote-1", "subject": "x", "content": map[string]any{"type": "request", "message": "hi"}}, 403, "may not send as wilco"},
		{"an agent's token acting as another", "POST", "/api/messages", tok, replyPayload("remote-1", "wilco", "x", "", "ok"), 403, "may not send as remote-1"},
		{"an agent's token reading another's inbox", "GET", "/api/messages?agent=remote-1", tok, nil, 403, "may not act as remote-1"},
		{"an unknown token", "GET", "/api/messages?agent=remote-1", "nope", nil, 401, "unknown token"},
		{"no token: a forged ACK", "POST", "/api/messages", "-", replyPayload("remote-1", "wilco", "Task T-1", "", "[ACK] T-1 - RECEIVED\nUnderstanding: do it"), 401, "missing token"},
		{"no token: reading an inbox", "GET", "/api/messages?agent=remote-1", "-", nil, 401, "missing token"},
		{"no token: the identity", "GET", "/api/hosts/identity", "-", nil, 401, "missing token"},
		{"the admin token replying as an agent", "POST", "/api/messages", adminToken, replyPayload("remote-1", "wilco", "Task T-1", "", "[ACK] T-1 - RECEIVED\nUnderstanding: do it"), 403, "the sending agent's own token"},
		{"no agent", "GET", "/api/messages", "", nil, 400, "Agent identifier required"},
		{"bad action", "GET", "/api/messages?agent=remote-1&action=explode", "", nil, 400, "Invalid action"},
		{"bad box", "GET", "/api/messages?agent=remote-1&box=trash", "", nil, 400, "box"},
		{"patch without id", "PATCH", "/api/messages?agent=remote-1&action=read", "", nil, 400, "Agent identifier and message ID required"},
		{"patch bad action", "PATCH", "/api/messages?agent=remote-1&id=" + mine + "&action=burn", "", nil, 400, "Invalid action"},
		{"patch unknown message", "PATCH", "/api/messages?agent=remote-1&id=msg-404&action=read", "", nil, 404, "Message not found"},
		{"patch another's message", "PATCH", "/api/messages?agent=remote-2&id=" + mine + "&action=read", "", nil, 404, "Message not found"},
		{"delete unknown", "DELETE", "/api/messages?agent=remote-1&id=msg-404", "", nil, 404, "Message not found"},
		{"method", "PUT", "/api/messages", "", nil, 405, "not allowed"},
	}
	for _, tt := range tests {
		before := b.head()
		r := b.maestroCall(tt.method, tt.path, tt.token, tt.body)
		var e struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(r.body, &e)
		if r.status != tt.status || !strings.Contains(e.Error, tt.want) {
			t.Errorf("%s: %d %s, want %d %q", tt.name, r.status, r.body, tt.status, tt.want)
		}
		if b.head() != before {
			t.Errorf("%s: the refused request changed the state", tt.name)
		}
	}
	if m := b.maestroRead("remote-1", mine); m.Status != "unread" {
		t.Errorf("refusals changed the mailbox: %+v", m)
	}
}

func TestAIMaestroLoopbackOnlyAndOffByDefault(t *testing.T) {
	t.Parallel()
	b := maestroSetup(t, "")
	req := httptest.NewRequest("GET", "/api/messages?agent=remote-1", nil)
	req.RemoteAddr = "192.0.2.7:40000"
	rec := httptest.NewRecorder()
	b.srv.ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "loopback") {
		t.Fatalf("remote client: %d %s", rec.Code, rec.Body)
	}
	off := setup(t)
	if r := off.call("GET", "/api/messages?agent=x", "", nil); r.status != 404 {
		t.Fatalf("compat off: %d %s", r.status, r.body)
	}
}

func TestAIMaestroMailboxSurvivesRestart(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "aimaestro.json")
	m, err := openMailbox(path)
	if err != nil {
		t.Fatal(err)
	}
	id := m.nextID(testTime)
	msg := &storedMessage{MaestroMessage: wire.MaestroMessage{ID: id, From: "wilco", To: "a", Subject: "s", Priority: "normal", Status: "unread",
		Content: wire.MaestroRawContent(`{"type":"request","message":"hi"}`)}, WilcoDelivery: "M-1"}
	if err := m.add(mailboxAdd{"a", "inbox", msg}); err != nil {
		t.Fatal(err)
	}
	if ok, err := m.mark("a", id, "read"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	again, err := openMailbox(path)
	if err != nil {
		t.Fatal(err)
	}
	_, got := again.inboxOwner(id)
	if got == nil || got.Status != "read" || got.WilcoDelivery != "M-1" {
		t.Fatalf("reopened %+v", got)
	}
	if id := again.nextID(testTime); !strings.HasSuffix(id, "-2") {
		t.Fatalf("id sequence restarted: %s", id)
	}
}
