package natsbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"wilco/client"
	"wilco/daemon"
	"wilco/natsbox"
	"wilco/wire"
)

const testConfig = `agents:
  - {name: far.1, adapter: mailbox, capabilities: [go]}
verify:
  steps:
    - {name: check, run: "true", timeout: 30s}
`

// natsServer is an embedded NATS server with JetStream, restartable on the
// same port and store.
type natsServer struct {
	t     testing.TB
	dir   string
	port  int
	users []*server.User
	srv   *server.Server
	mu    sync.Mutex
	start func()
}

func startNATS(t testing.TB, users ...*server.User) *natsServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	n := &natsServer{t: t, dir: t.TempDir(), port: port, users: users}
	n.up()
	t.Cleanup(n.down)
	return n
}

func (n *natsServer) up() {
	n.t.Helper()
	srv, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: n.port, JetStream: true, StoreDir: n.dir, NoLog: true, NoSigs: true, Users: n.users,
	})
	if err != nil {
		n.t.Fatal(err)
	}
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		n.t.Fatal("nats server not ready")
	}
	n.mu.Lock()
	n.srv = srv
	n.mu.Unlock()
}

func (n *natsServer) down() {
	n.mu.Lock()
	srv := n.srv
	n.srv = nil
	n.mu.Unlock()
	if srv != nil {
		srv.Shutdown()
		srv.WaitForShutdown()
	}
}

func (n *natsServer) url() string { return fmt.Sprintf("nats://127.0.0.1:%d", n.port) }

// urlAs is the server's URL with a user's name and password.
func (n *natsServer) urlAs(user, password string) string {
	return fmt.Sprintf("nats://%s:%s@127.0.0.1:%d", user, password, n.port)
}

type testBundle struct {
	opts  daemon.Options
	ctx   context.Context
	nats  *natsServer
	d     *daemon.Daemon
	admin *client.Client
	agent *natsbox.Agent
	token string
}

func setup(t testing.TB) *testBundle {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "wilco.yaml")
	if err := os.WriteFile(cfg, []byte(testConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	ns := startNATS(t)
	opts := daemon.Options{ConfigPath: cfg, Root: dir, Addr: "127.0.0.1:0", Token: "admin",
		Transport: ns.url(), Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	d, err := daemon.Start(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	admin := client.New(d.URL, "admin")
	tok, err := admin.RotateAgentToken(t.Context(), "far.1")
	if err != nil {
		t.Fatal(err)
	}
	ag, err := natsbox.Dial(t.Context(), ns.url(), "repo", "far.1", tok)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ag.Close)
	return &testBundle{opts: opts, ctx: t.Context(), nats: ns, d: d, admin: admin, agent: ag, token: tok}
}

// restart stops wilco and starts it again on the same repository and NATS
// server, and returns it and its admin client.
func (tb *testBundle) restart(t *testing.T) (*daemon.Daemon, *client.Client) {
	t.Helper()
	if err := tb.d.Close(); err != nil {
		t.Fatal(err)
	}
	d, err := daemon.Start(t.Context(), tb.opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, client.New(d.URL, "admin")
}

// reply sends r until wilco answers it (across a NATS restart).
func reply(t *testing.T, ag *natsbox.Agent, r map[string]any) natsbox.Answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	for {
		actx, acancel := context.WithTimeout(ctx, 5*time.Second)
		ans, err := ag.Reply(actx, r)
		acancel()
		if err == nil {
			return ans
		}
		if ctx.Err() != nil {
			t.Fatalf("reply %v: %v", r, err)
		}
		t.Logf("reply %v: %v; again", r, err)
		// The reply is stored; its answer may come later: waiting for
		// the task's state tells.
		if err == natsbox.ErrNoAnswer {
			return natsbox.Answer{}
		}
	}
}

func waitState(t *testing.T, admin *client.Client, id string, want wire.TaskState) *wire.Task {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		tk, err := admin.Task(t.Context(), id)
		if err == nil && tk.State == want {
			return tk
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s: %+v, %v; want %s", id, tk, err, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestAnAgentOnNATSIsPushedItsTaskAcknowledgesAndCompletesIt(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	if err := tb.agent.Cycle(tb.ctx); err != nil {
		t.Fatal(err)
	}
	msgs := make(chan wire.InboxMessage, 16)
	go tb.agent.Messages(tb.ctx, func(m wire.InboxMessage) error { msgs <- m; return nil }) //nolint:errcheck // ends with the test
	// The agent announced itself; the task is pushed to it without a poll.
	task, err := tb.admin.Submit(tb.ctx, wire.SubmitTask{Description: "list the files", Agent: "far.1"})
	if err != nil {
		t.Fatal(err)
	}
	var m wire.InboxMessage
	select {
	case m = <-msgs:
	case <-time.After(30 * time.Second):
		t.Fatal("the delegation was not pushed")
	}
	if m.TaskID != task.ID || !strings.Contains(m.Body, "ACKNOWLEDGMENT REQUIRED") {
		t.Fatalf("pushed %+v", m)
	}
	ans := reply(t, tb.agent, map[string]any{"in_reply_to": m.ID, "text": fmt.Sprintf("[ACK] %s - RECEIVED\nUnderstanding: list the files", task.ID)})
	if ans.Status != 202 || !strings.Contains(string(ans.Body), `"kind":"ack"`) {
		t.Fatalf("ACK answered %d %s", ans.Status, ans.Body)
	}
	waitState(t, tb.admin, task.ID, "running")
	reply(t, tb.agent, map[string]any{"type": "task-complete", "data": map[string]any{"task_id": task.ID, "status": "success", "summary": "listed"}})
	waitState(t, tb.admin, task.ID, "success")
}

func TestAReplyWithAnotherAgentsTokenIsRefused(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	impostor, err := natsbox.Dial(tb.ctx, tb.nats.url(), "repo", "far.1", "not-the-token")
	if err != nil {
		t.Fatal(err)
	}
	defer impostor.Close()
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	ans, err := impostor.Reply(ctx, map[string]any{"text": "[ACK] T-1 - RECEIVED"})
	if err != nil {
		t.Fatal(err)
	}
	var body struct{ Error struct{ Code string } }
	_ = json.Unmarshal(ans.Body, &body)
	if ans.Status != 401 || body.Error.Code != "unauthenticated" {
		t.Fatalf("answer = %d %s, want 401 unauthenticated", ans.Status, ans.Body)
	}
}

func TestNATSRestartedMidTaskLosesNothing(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	if err := tb.agent.Cycle(tb.ctx); err != nil {
		t.Fatal(err)
	}
	msgs := make(chan wire.InboxMessage, 16)
	go func() {
		for tb.ctx.Err() == nil {
			_ = tb.agent.Messages(tb.ctx, func(m wire.InboxMessage) error { msgs <- m; return nil })
		}
	}()
	task, err := tb.admin.Submit(tb.ctx, wire.SubmitTask{Description: "list the files", Agent: "far.1"})
	if err != nil {
		t.Fatal(err)
	}
	m := <-msgs
	reply(t, tb.agent, map[string]any{"in_reply_to": m.ID, "text": fmt.Sprintf("[ACK] %s - RECEIVED\nUnderstanding: list the files", task.ID)})
	waitState(t, tb.admin, task.ID, "running")

	// NATS goes away mid-task; the agent's completion is sent while it is
	// away (the publish retries) and handled once it is back.
	tb.nats.down()
	done := make(chan natsbox.Answer, 1)
	go func() {
		done <- reply(t, tb.agent, map[string]any{"type": "task-complete", "data": map[string]any{"task_id": task.ID, "status": "success", "summary": "listed"}})
	}()
	time.Sleep(500 * time.Millisecond)
	tb.nats.up()
	<-done
	waitState(t, tb.admin, task.ID, "success")

	// And a message for the agent after the restart is pushed too.
	in, err := tb.admin.Instruct(tb.ctx, wire.CreateInstruction{Agent: "far.1", Content: "note the time"})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.After(30 * time.Second)
	for {
		select {
		case m := <-msgs:
			if m.InstructionID == in.ID {
				return
			}
		case <-deadline:
			t.Fatal("the instruction sent after the restart was not pushed")
		}
	}
}

// A wilco that starts (after a restart, or taking over from another node)
// pushes at once to the agents with a consumer in the stream, without
// waiting to hear from them: this agent never sends wilco a request.
func TestANewWilcoPushesToTheAgentsOnNATSWithoutHearingFromThem(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	msgs := make(chan wire.InboxMessage, 16)
	go tb.agent.Messages(tb.ctx, func(m wire.InboxMessage) error { msgs <- m; return nil }) //nolint:errcheck // ends with the test
	_, admin := tb.restart(t)
	task, err := admin.Submit(tb.ctx, wire.SubmitTask{Description: "list the files", Agent: "far.1"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-msgs:
		if m.TaskID != task.ID {
			t.Fatalf("pushed %+v, want the delegation of %s", m, task.ID)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the delegation was not pushed to an agent wilco had not heard from since it started")
	}
	page, err := admin.Events(tb.ctx, client.EventQuery{Agent: "far.1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range page.Events {
		if ev.Type == "agent.seen" {
			t.Errorf("pushing to the agent counted it as seen: %+v", ev)
		}
	}
}

// agentUser is a NATS user limited to natsbox.Permissions.
func agentUser(repo, agent, password string) *server.User {
	pub, sub := natsbox.Permissions(repo, agent)
	return &server.User{Username: agent, Password: password, Permissions: &server.Permissions{
		Publish: &server.SubjectPermission{Allow: pub}, Subscribe: &server.SubjectPermission{Allow: sub},
	}}
}

// With each agent's NATS user limited to natsbox.Permissions, an agent
// does all its work — its consumer, pushed messages, its ACK and its
// completion — while NATS itself refuses another agent's user that
// replies as it, reads its messages, or listens to its inboxes.
func TestNATSPermissionsLetAnAgentWorkAndKeepOthersOut(t *testing.T) {
	t.Parallel()
	ns := startNATS(t, &server.User{Username: "wilco", Password: "wilco-pw"},
		agentUser("repo", "far.1", "far-pw"), agentUser("repo", "near", "near-pw"))
	dir := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "wilco.yaml")
	conf := strings.Replace(testConfig, "verify:", "  - {name: near, adapter: mailbox, capabilities: [go]}\nverify:", 1)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := daemon.Start(t.Context(), daemon.Options{ConfigPath: cfg, Root: dir, Addr: "127.0.0.1:0", Token: "admin",
		Transport: ns.urlAs("wilco", "wilco-pw"), Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	admin := client.New(d.URL, "admin")
	ctx := t.Context()
	farTok, err := admin.RotateAgentToken(ctx, "far.1")
	if err != nil {
		t.Fatal(err)
	}
	// The bridge makes the stream when it connects.
	var far *natsbox.Agent
	if !eventuallyOK(30*time.Second, func() error {
		far, err = natsbox.Dial(ctx, ns.urlAs("far.1", "far-pw"), "repo", "far.1", farTok)
		return err
	}) {
		t.Fatalf("far.1 with its limited user: %v", err)
	}
	defer far.Close()
	msgs := make(chan wire.InboxMessage, 16)
	go far.Messages(ctx, func(m wire.InboxMessage) error { msgs <- m; return nil }) //nolint:errcheck // ends with the test
	if err := far.Cycle(ctx); err != nil {
		t.Fatal(err)
	}
	task, err := admin.Submit(ctx, wire.SubmitTask{Description: "list the files", Agent: "far.1"})
	if err != nil {
		t.Fatal(err)
	}
	var m wire.InboxMessage
	select {
	case m = <-msgs:
	case <-time.After(30 * time.Second):
		t.Fatal("the delegation was not pushed to the limited user")
	}
	ans := reply(t, far, map[string]any{"in_reply_to": m.ID, "text": fmt.Sprintf("[ACK] %s - RECEIVED\nUnderstanding: list the files", task.ID)})
	if ans.Status != 202 {
		t.Fatalf("ACK answered %d %s", ans.Status, ans.Body)
	}
	waitState(t, admin, task.ID, "running")

	// near's user, even with far.1's token, cannot act as far.1.
	violations := make(chan error, 16)
	nc, err := nats.Connect(ns.urlAs("near", "near-pw"), nats.CustomInboxPrefix(natsbox.InboxPrefix("near")),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { violations <- err }))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	expectViolation := func(what string) {
		t.Helper()
		select {
		case err := <-violations:
			if !strings.Contains(strings.ToLower(err.Error()), "permissions violation") {
				t.Errorf("%s: %v, want a permissions violation", what, err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("%s: NATS did not refuse it", what)
		}
	}
	forged, _ := json.Marshal(natsbox.Request{Kind: natsbox.KindReply, Token: farTok,
		Reply: json.RawMessage(`{"type":"task-complete","data":{"task_id":"` + task.ID + `","status":"success","summary":"forged"}}`)})
	if err := nc.Publish(natsbox.ReplySubject("repo", "far.1"), forged); err != nil {
		t.Fatal(err)
	}
	_ = nc.Flush()
	expectViolation("publishing on far.1's reply subject")
	if _, err := nc.SubscribeSync(natsbox.InboxPrefix("far.1") + ".>"); err != nil {
		t.Fatal(err)
	}
	_ = nc.Flush()
	expectViolation("subscribing to far.1's inboxes")
	dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if stolen, err := natsbox.Dial(dctx, ns.urlAs("near", "near-pw"), "repo", "far.1", farTok); err == nil {
		stolen.Close()
		t.Error("near's user set up far.1's consumer")
	}
	if tk, _ := admin.Task(ctx, task.ID); tk == nil || tk.State != "running" {
		t.Fatalf("after the forgeries the task is %+v, want still running", tk)
	}
	reply(t, far, map[string]any{"type": "task-complete", "data": map[string]any{"task_id": task.ID, "status": "success", "summary": "listed"}})
	waitState(t, admin, task.ID, "success")
}

// eventuallyOK calls fn until it returns nil or timeout passes.
func eventuallyOK(timeout time.Duration, fn func() error) bool {
	deadline := time.Now().Add(timeout)
	for {
		if fn() == nil {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// An agent whose consumer is in the stream but that reads it no more (it
// went back to the HTTP mailbox) is not pushed to by a wilco that starts:
// its messages wait for its next poll.
func TestANewWilcoDoesNotPushToAnAgentThatStoppedReadingNATS(t *testing.T) {
	t.Parallel()
	tb := setup(t) // the agent's consumer is made; nothing reads it
	d, admin := tb.restart(t)
	task, err := admin.Submit(tb.ctx, wire.SubmitTask{Description: "list the files", Agent: "far.1"})
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := client.New(d.URL, tb.token).Inbox(tb.ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || msgs[0].TaskID != task.ID {
		t.Fatalf("the agent's poll got %+v, want the delegation (not pushed into NATS)", msgs)
	}
}
