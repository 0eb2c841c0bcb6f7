package test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"wilco/test/blackbox"
)

const mailboxOnly = `agents:
  - {name: placeholder, adapter: mailbox}
`

// Two mailbox agents take instructions in their dispatch cycles: the one
// that answers has them acknowledged at once; the silent one gets each
// again every cycle, max_retries+1 sends in all, and at the next cycle it
// fails and is kept for inspection.
func TestInstructionsSilentAgentRetriedToFailureAnsweringAgentAcknowledged(t *testing.T) {
	t.Parallel()
	in := blackbox.Serve(t, mailboxOnly)
	silent, answering := in.Agent("silent"), in.Agent("answering")
	var s, a struct{ ID, State string }
	in.Must(201, in.Call("POST", "/v1/instructions", blackbox.AdminToken, map[string]any{"agent": "silent", "content": "Check if the OpenSpec CLI is available", "max_retries": 2}), &s)
	in.Must(201, in.Call("POST", "/v1/instructions", blackbox.AdminToken, map[string]any{"agent": "answering", "content": "Check if the OpenSpec CLI is available",
		"max_retries": 2, "ack_when": map[string]string{"regex": "(?i)openspec (found|missing)"}}), &a)
	if s.State != "pending" || a.State != "pending" {
		t.Fatalf("created %+v %+v", s, a)
	}

	got := in.Inbox(answering, 0)
	if len(got) != 1 || got[0].InstructionID != a.ID || got[0].Attempt != 1 {
		t.Fatalf("answering's first cycle %+v", got)
	}
	interp := in.ReplyAs(answering, map[string]any{"text": "OpenSpec found at /usr/local/bin/openspec"})
	if fmt.Sprint(interp["acknowledged"]) != "["+a.ID+"]" {
		t.Fatalf("interpreted %v", interp)
	}
	if got := in.Inbox(answering, 0); len(got) != 0 {
		t.Fatalf("an acknowledged instruction was sent again: %+v", got)
	}

	for attempt := 1; attempt <= 3; attempt++ {
		got := in.Inbox(silent, 0)
		if len(got) != 1 || got[0].InstructionID != s.ID || got[0].Attempt != attempt || got[0].Body != "Check if the OpenSpec CLI is available" {
			t.Fatalf("silent's cycle %d: %+v", attempt, got)
		}
	}
	if got := in.Inbox(silent, 0); len(got) != 0 {
		t.Fatalf("a fourth send: %+v", got)
	}
	var failed, acked struct {
		Instructions []struct {
			ID         string
			State      string
			RetryCount int        `json:"retry_count"`
			FailedAt   *time.Time `json:"failed_at"`
		}
	}
	in.Must(200, in.Call("GET", "/v1/instructions?state=failed", blackbox.AdminToken, nil), &failed)
	in.Must(200, in.Call("GET", "/v1/instructions?state=acknowledged", blackbox.AdminToken, nil), &acked)
	if len(failed.Instructions) != 1 || failed.Instructions[0].ID != s.ID || failed.Instructions[0].RetryCount != 2 || failed.Instructions[0].FailedAt == nil {
		t.Fatalf("failed %+v", failed)
	}
	if len(acked.Instructions) != 1 || acked.Instructions[0].ID != a.ID {
		t.Fatalf("acknowledged %+v", acked)
	}
	evs, _ := in.Events(0)
	var retried, failedEv int
	for _, ev := range evs {
		switch {
		case ev.Type == "delivery.retried" && ev.Agent == "silent":
			retried++
		case ev.Type == "delivery.failed" && ev.Agent == "silent":
			failedEv++
		}
	}
	if retried != 2 || failedEv != 1 {
		t.Fatalf("events: %d retries, %d failures", retried, failedEv)
	}
	in.WatchFold("instructions")
}

// A task delegation waits for [ACK]; without one it sends an explicit ACK
// request after timeout+backoff, then marks the agent unresponsive and
// reassigns the task to another capable agent.
func TestDelegationACKRequestsWithBackoffThenReassignment(t *testing.T) {
	t.Parallel()
	in := blackbox.Serve(t, mailboxOnly+`policy:
  ack: {timeouts: [200ms, 200ms], backoff: {base: 50ms, max: 100ms}}
`)
	slow := in.Agent("slow", "go")
	backup := in.Agent("backup", "go")
	in.Agent("pythonista", "python")
	var m blackbox.Message
	in.Must(201, in.Call("POST", "/v1/messages", blackbox.AdminToken, map[string]any{"to": "slow", "type": "task_delegation", "task_id": "T-1",
		"body": "Implement directory listing for xls.", "capabilities": []string{"go"}}), &m)
	if m.Type != "task_delegation" || m.State != "sent" {
		t.Fatalf("sent %+v", m)
	}
	got := in.Inbox(slow, 0)
	if len(got) != 1 || got[0].TaskID != "T-1" || !strings.Contains(got[0].Body, "ACKNOWLEDGMENT REQUIRED: Reply with [ACK] T-1 - RECEIVED") {
		t.Fatalf("delegation %+v", got)
	}
	// The ACK request comes after the first timeout and the backoff wait.
	got = in.Inbox(slow, 10*time.Second)
	if len(got) != 1 || got[0].Type != "ack_request" || got[0].Attempt != 2 || !strings.Contains(got[0].Body, "[ACK] T-1") {
		t.Fatalf("ACK request %+v", got)
	}
	in.Until("the delegation to fail", 20*time.Second, func() bool { return in.Message(m.ID).State == "failed" })
	if m = in.Message(m.ID); m.Reason != "unresponsive" || m.Attempts != 2 {
		t.Fatalf("failed delegation %+v", m)
	}
	var a struct{ Status string }
	in.Must(200, in.Call("GET", "/v1/agents/slow", blackbox.AdminToken, nil), &a)
	if a.Status != "unresponsive" {
		t.Fatalf("slow is %s", a.Status)
	}

	evs, _ := in.Events(0)
	var sentAt, retriedAt time.Time
	var reassigned struct {
		To    string `json:"to"`
		NewID string `json:"new_id"`
	}
	for _, ev := range evs {
		switch {
		case ev.Type == "delivery.sent" && ev.Agent == "slow" && ev.TaskID == "T-1":
			sentAt = ev.Time
		case ev.Type == "delivery.retried" && ev.Agent == "slow":
			retriedAt = ev.Time
		case ev.Type == "delivery.reassigned":
			_ = json.Unmarshal(ev.Data, &reassigned)
		}
	}
	if gap := retriedAt.Sub(sentAt); gap < 250*time.Millisecond {
		t.Fatalf("the ACK request came %s after the delegation, before timeout+backoff (250ms)", gap)
	}
	if reassigned.To != "backup" {
		t.Fatalf("reassigned %+v, want to backup (the other agent with go)", reassigned)
	}
	got = in.Inbox(backup, 0)
	if len(got) != 1 || got[0].ID != reassigned.NewID || got[0].TaskID != "T-1" {
		t.Fatalf("backup's inbox %+v", got)
	}
	interp := in.ReplyAs(backup, map[string]any{"text": "**[ACK] T-1 - RECEIVED**\nUnderstanding: implement directory listing for xls"})
	if interp["kind"] != "ack" || interp["delivery_id"] != reassigned.NewID {
		t.Fatalf("interpreted %v", interp)
	}
	if st := in.Message(reassigned.NewID).State; st != "acknowledged" {
		t.Fatalf("reassigned delegation %s", st)
	}
	in.Must(200, in.Call("GET", "/v1/agents/backup", blackbox.AdminToken, nil), &a)
	if a.Status != "busy" {
		t.Fatalf("backup is %s, want busy with T-1", a.Status)
	}
	in.WatchFold("reassign")
}

// The agent asks questions; the user answers; the agent confirms.
func TestClarificationRoundTrip(t *testing.T) {
	t.Parallel()
	in := blackbox.Serve(t, mailboxOnly)
	tok := in.Agent("remote-1")
	var m blackbox.Message
	in.Must(201, in.Call("POST", "/v1/messages", blackbox.AdminToken, map[string]any{"to": "remote-1",
		"body": "## Task: GH-42\nImplement user authentication.\n\n- [ ] login endpoint\n- [ ] logout endpoint"}), &m)
	if m.Type != "task_delegation" || m.TaskID != "GH-42" {
		t.Fatalf("classified %+v", m)
	}
	in.Inbox(tok, 0)
	interp := in.ReplyAs(tok, map[string]any{"text": "[ACK] GH-42 - CLARIFICATION_NEEDED\nUnderstanding: Implement JWT auth\nQuestions:\n1. Should JWT tokens expire after 24h or 7 days?\n2. Should we support refresh tokens?"})
	if interp["status"] != "clarification_needed" && interp["status"] != "CLARIFICATION_NEEDED" && !strings.Contains(fmt.Sprint(interp["action"]), "questions") {
		t.Fatalf("interpreted %v", interp)
	}
	m = in.Message(m.ID)
	if m.State != "clarifying" || len(m.Questions) != 2 {
		t.Fatalf("after the questions %+v", m)
	}
	in.Must(200, in.Call("POST", "/v1/messages/"+m.ID+"/clarify", blackbox.AdminToken, map[string]any{"answers": []string{"24 hours with refresh token support", "Yes, implement refresh tokens"}}))
	got := in.Inbox(tok, 5*time.Second)
	if len(got) != 1 || got[0].Type != "task_clarification" || !strings.Contains(got[0].Body, "24 hours with refresh token support") {
		t.Fatalf("clarification %+v", got)
	}
	in.ReplyAs(tok, map[string]any{"type": "task-acknowledgment", "data": map[string]any{"task_id": "GH-42", "status": "confirmed",
		"understanding": "JWT with 24h expiry and refresh tokens"}})
	if m = in.Message(m.ID); m.State != "acknowledged" || !strings.Contains(m.Understanding, "24h") {
		t.Fatalf("after the answers %+v", m)
	}
}

// A client that drops its event stream and comes back with Last-Event-ID
// gets every event once, from the stored log then live.
func TestEventStreamResumesAfterDisconnect(t *testing.T) {
	t.Parallel()
	in := blackbox.Serve(t, mailboxOnly)
	in.Agent("a1")
	in.Agent("a2")
	s := in.Stream("/v1/events?after=0")
	var seen []uint64
	for len(seen) < 3 {
		id, ev, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		if id != ev.Seq {
			t.Fatalf("id %d, data seq %d", id, ev.Seq)
		}
		seen = append(seen, id)
	}
	s.Body.Close() // the client drops
	in.Agent("a3")
	tok := in.Agent("a4")
	head := in.Head()
	s = in.Stream("/v1/events", "Last-Event-ID", strconv.FormatUint(seen[len(seen)-1], 10))
	for seen[len(seen)-1] < head {
		id, _, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, id)
	}
	in.Must(201, in.Call("POST", "/v1/instructions", blackbox.AdminToken, map[string]any{"agent": "a4", "content": "ping"}))
	in.Inbox(tok, 0)
	for seen[len(seen)-1] < in.Head() {
		id, _, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, id)
	}
	for i, id := range seen {
		if id != uint64(i+1) {
			t.Fatalf("seqs %v: a gap or a duplicate at %d", seen, i)
		}
	}
	// ?task= and ?agent= filter the stream.
	f := in.Stream("/v1/events?after=0&agent=a4")
	for range 3 {
		_, ev, err := f.Next()
		if err != nil || ev.Agent != "a4" {
			t.Fatalf("filtered %+v %v", ev, err)
		}
	}
}

// SIGTERM ends event streams and long-polls and exits 0.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	in := blackbox.Serve(t, mailboxOnly)
	tok := in.Agent("a1")
	s := in.Stream("/v1/events?after=0")
	if _, _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	poll := make(chan string, 1)
	go func() {
		req, _ := http.NewRequest("GET", in.Url+"/v1/inbox?wait=60s", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			poll <- err.Error()
			return
		}
		resp.Body.Close()
		poll <- resp.Status
	}()
	in.Until("the long-poll to wait", 10*time.Second, func() bool {
		var a struct{ Polling bool }
		in.Must(200, in.Call("GET", "/v1/agents/a1", blackbox.AdminToken, nil), &a)
		return a.Polling
	})
	streamEnded := make(chan error, 1)
	go func() {
		for {
			if _, _, err := s.Next(); err != nil {
				streamEnded <- err
				return
			}
		}
	}()
	start := time.Now()
	if err := in.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-streamEnded:
		if err != io.EOF && !strings.Contains(err.Error(), "EOF") {
			t.Fatalf("the stream ended with %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the event stream did not end on SIGTERM")
	}
	select {
	case st := <-poll:
		if st != "200 OK" {
			t.Fatalf("the long-poll answered %s", st)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the long-poll did not end on SIGTERM")
	}
	select {
	case err := <-in.Exited:
		in.Exited <- err
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, in.Stderr)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("wilco serve did not exit")
	}
	if time.Since(start) > 15*time.Second {
		t.Fatalf("shutdown took %s", time.Since(start))
	}
	if !strings.Contains(in.Stderr.String(), "wilco stopped") {
		t.Fatalf("no clean stop in the log:\n%s", in.Stderr)
	}
}

// An AI Maestro agent uses its own scripts' requests: it lists its unread
// messages (its dispatch cycle), reads one, marks it read and replies to
// it; wilco takes the reply as the ACK.
func TestAIMaestroAgentAcknowledgesThroughItsScripts(t *testing.T) {
	t.Parallel()
	in := blackbox.Serve(t, `agents:
  - {name: backend-api, adapter: mailbox, capabilities: [go]}
compat: {aimaestro: true}
`)
	// The agent's token, sent as AMP clients send their API key.
	var rotated struct{ Token string }
	in.Must(200, in.Call("POST", "/v1/agents/backend-api/token", blackbox.AdminToken, nil), &rotated)
	tok := rotated.Token
	var m blackbox.Message
	in.Must(201, in.Call("POST", "/v1/messages", blackbox.AdminToken, map[string]any{"to": "backend-api", "type": "task_delegation", "task_id": "GH-4-xls",
		"body": "Implement the xls CLI directory browser."}), &m)
	var resolved struct{ Resolved struct{ AgentID string } }
	in.Must(200, in.Call("GET", "/api/messages?action=resolve&agent=backend-api", tok, nil), &resolved)
	if resolved.Resolved.AgentID != "backend-api" {
		t.Fatalf("resolve %+v", resolved)
	}
	var list struct {
		Messages []struct{ ID, From, Subject, Priority, Preview, Type string }
	}
	in.Must(200, in.Call("GET", "/api/messages?agent=backend-api&box=inbox&status=unread", tok, nil), &list)
	if len(list.Messages) != 1 || list.Messages[0].From != "wilco" || list.Messages[0].Type != "task-assignment" {
		t.Fatalf("unread %+v", list)
	}
	id := list.Messages[0].ID
	var full struct {
		From    string
		Subject string
		Content struct{ Type, Message string }
	}
	in.Must(200, in.Call("GET", "/api/messages?agent=backend-api&id="+id+"&box=inbox", tok, nil), &full)
	if !strings.Contains(full.Content.Message, "[ACK] GH-4-xls - RECEIVED") {
		t.Fatalf("full %+v", full)
	}
	var ok struct{ Success bool }
	in.Must(200, in.Call("PATCH", "/api/messages?agent=backend-api&id="+id+"&action=read", tok, nil), &ok)
	if !ok.Success {
		t.Fatal("mark read")
	}
	in.Must(201, in.Call("POST", "/api/messages", tok, map[string]any{
		"from": "backend-api", "fromAlias": "backend-api", "fromHost": "local", "to": full.From, "toAlias": full.From, "toHost": "local",
		"subject": "Re: " + full.Subject, "priority": "normal", "inReplyTo": id,
		"content": map[string]any{"type": "response", "message": "[ACK] GH-4-xls - RECEIVED\nUnderstanding: Will implement the xls CLI directory browser"}}))
	if st := in.Message(m.ID).State; st != "acknowledged" {
		t.Fatalf("delegation %s", st)
	}
}

// /metrics answers the admin in the Prometheus text format.
func TestMetricsEndpoint(t *testing.T) {
	t.Parallel()
	in := blackbox.Serve(t, mailboxOnly)
	tok := in.Agent("a1")
	in.Must(201, in.Call("POST", "/v1/instructions", blackbox.AdminToken, map[string]any{"agent": "a1", "content": "ping"}))
	in.Inbox(tok, 0)
	r := in.Must(200, in.Call("GET", "/metrics", blackbox.AdminToken, nil))
	for _, want := range []string{`wilco_deliveries_sent_total{policy="cycles"} 1`, `wilco_agents{status="available"} 2`, "go_goroutines", "process_resident_memory_bytes"} {
		if !strings.Contains(string(r.Body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if r := in.Call("GET", "/metrics", "", nil); r.Status != 401 {
		t.Errorf("metrics without a token: %d", r.Status)
	}
}
