package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const testConfig = `agents:
  - name: remote-1
    adapter: mailbox
    capabilities: [go]
compat: {aimaestro: true}
`

type testBundle struct {
	t    testing.TB
	dir  string
	cfg  string
	logs *syncBuffer
}

func setup(t testing.TB) *testBundle {
	t.Helper()
	b := &testBundle{t: t, dir: t.TempDir(), logs: &syncBuffer{}}
	b.cfg = filepath.Join(b.dir, "wilco.yaml")
	if err := os.WriteFile(b.cfg, []byte(testConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return b
}

func (b *testBundle) opts() Options {
	return Options{ConfigPath: b.cfg, Dir: filepath.Join(b.dir, ".wilco"), Addr: "127.0.0.1:0",
		Logger: slog.New(slog.NewTextHandler(b.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
}

func (b *testBundle) start(o Options) *Daemon {
	b.t.Helper()
	d, err := Start(context.Background(), o)
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() { d.Close() })
	return d
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func call(t *testing.T, d *Daemon, method, path, token string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		rd = bytes.NewReader(data)
	}
	req, _ := http.NewRequest(method, d.URL+path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func TestStartServesAndRestartKeepsState(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d := b.start(b.opts())
	tokPath := filepath.Join(b.dir, ".wilco", "token")
	fi, err := os.Stat(tokPath)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", fi, err)
	}
	data, _ := os.ReadFile(tokPath)
	if strings.TrimSpace(string(data)) != d.Token || len(d.Token) < 32 {
		t.Fatalf("token %q vs file %q", d.Token, data)
	}
	addr, _ := os.ReadFile(filepath.Join(b.dir, ".wilco", "addr"))
	if strings.TrimSpace(string(addr)) != d.URL {
		t.Fatalf("addr file %q, url %q", addr, d.URL)
	}
	if st, _ := call(t, d, "GET", "/healthz", "", nil); st != 200 {
		t.Fatalf("healthz %d", st)
	}
	st, out := call(t, d, "GET", "/v1/agents/remote-1", d.Token, nil)
	if st != 200 || out["adapter"] != "mailbox" {
		t.Fatalf("configured agent: %d %v", st, out)
	}
	st, out = call(t, d, "POST", "/v1/agents", d.Token, map[string]any{"name": "api-1", "adapter": "mailbox"})
	if st != 201 {
		t.Fatalf("create: %d %v", st, out)
	}
	agentTok := out["token"].(string)
	if st, _ := call(t, d, "GET", "/api/messages?agent=remote-1", d.Token, nil); st != 200 {
		t.Fatalf("AI Maestro on loopback: %d", st)
	}
	if st, _ := call(t, d, "GET", "/api/messages?agent=remote-1", "", nil); st != 401 {
		t.Fatalf("AI Maestro without a token: %d, want 401", st)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(b.dir, ".wilco", "addr")); !os.IsNotExist(err) {
		t.Fatalf("addr file left behind: %v", err)
	}

	d2 := b.start(b.opts())
	if d2.Token != d.Token {
		t.Fatal("the admin token changed across a restart")
	}
	if st, out := call(t, d2, "GET", "/v1/inbox", agentTok, nil); st != 200 {
		t.Fatalf("the agent created before the restart: %d %v", st, out)
	}
	for _, secret := range []string{d.Token, agentTok} {
		if strings.Contains(b.logs.String(), secret) {
			t.Fatal("a token is in the log")
		}
	}
	if !strings.Contains(b.logs.String(), "path=/v1/agents") || !strings.Contains(b.logs.String(), "agent=api-1") {
		t.Fatalf("requests are not logged with path and agent:\n%s", b.logs.String())
	}
}

func TestATransportThatIsNotNATSIsRefusedAtStart(t *testing.T) {
	t.Parallel()
	b := setup(t)
	o := b.opts()
	o.Transport = "http://127.0.0.1:4222"
	if d, err := Start(context.Background(), o); err == nil || !strings.Contains(err.Error(), "must be a NATS server URL") {
		if d != nil {
			d.Close()
		}
		t.Fatalf("Start with transport %q: %v", o.Transport, err)
	}
}

func TestRefusesRemoteListenUnlessAllowed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	o := b.opts()
	o.Addr = "0.0.0.0:0"
	if _, err := Start(context.Background(), o); err == nil || !strings.Contains(err.Error(), "--allow-remote") {
		t.Fatalf("remote listen: %v", err)
	}
	o.AllowRemote = true
	d := b.start(o)
	if st, _ := call(t, d, "GET", "/healthz", "", nil); st != 200 {
		t.Fatalf("healthz %d", st)
	}
	if st, _ := call(t, d, "GET", "/api/messages?agent=remote-1", "", nil); st != 404 {
		t.Fatalf("AI Maestro must be off on a remote listen address: %d", st)
	}
	if !strings.Contains(b.logs.String(), "compat.aimaestro is off") {
		t.Fatal("no warning that AI Maestro is off")
	}
}

func TestIsLoopback(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{
		"127.0.0.1:7777": true, "localhost:1": true, "[::1]:80": true, "127.1.2.3:0": true,
		":7777": false, "0.0.0.0:7777": false, "192.168.1.2:7777": false, "[::]:1": false, "example.com:80": false, "nope": false,
	} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v", addr, got)
		}
	}
}

func TestAdminToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if tok, err := adminToken("given", dir); err != nil || tok != "given" {
		t.Fatal(tok, err)
	}
	path := filepath.Join(dir, "token")
	if err := os.WriteFile(path, []byte("abc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := adminToken("", dir); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("readable token file: %v", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if tok, err := adminToken("", dir); err != nil || tok != "abc" {
		t.Fatal(tok, err)
	}
	if err := os.WriteFile(path, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := adminToken("", dir); err == nil {
		t.Fatal("empty token file accepted")
	}
}

func TestTokenFromEnvironment(t *testing.T) {
	b := setup(t)
	t.Setenv(EnvToken, "from-the-environment")
	d := b.start(b.opts())
	if d.Token != "from-the-environment" {
		t.Fatalf("token %q", d.Token)
	}
	if _, err := os.Stat(filepath.Join(b.dir, ".wilco", "token")); !os.IsNotExist(err) {
		t.Fatalf("a token file was written although WILCO_TOKEN is set: %v", err)
	}
}

// waitOperation polls an operation until it leaves states.
func waitOperation(t *testing.T, d *Daemon, id string, until func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, op := call(t, d, "GET", "/v1/operations/"+id, d.Token, nil)
		if until(op) {
			return op
		}
		if time.Now().After(deadline) {
			t.Fatalf("operation stuck: %v", op)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestOperationCommandRunsAfterOK(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d := b.start(b.opts())
	_, created := call(t, d, "POST", "/v1/agents", d.Token, map[string]any{"name": "alpha", "adapter": "mailbox"})
	tok := created["token"].(string)
	st, op := call(t, d, "POST", "/v1/operations", d.Token, map[string]any{"operation": "rotate-logs", "agents": []string{"alpha"},
		"command": []string{"sh", "-c", "echo restarting $WILCO_OPERATION_ID; exit 3"}})
	if st != 201 {
		t.Fatalf("start: %d %v", st, op)
	}
	id := op["id"].(string)
	if st, out := call(t, d, "POST", "/v1/inbox/replies", tok, map[string]any{"text": "ok, ready"}); st != 202 {
		t.Fatalf("reply: %d %v", st, out)
	}
	op = waitOperation(t, d, id, func(op map[string]any) bool { return op["finished_at"] != nil })
	if op["state"] != "failed" || op["exit_code"] != 3.0 || !strings.Contains(op["output"].(string), "restarting "+id) {
		t.Fatalf("operation %v", op)
	}
}

// A command may start a process that outlives it (a service it
// restarts): that process keeps the command's output open, which holds up
// the end of the operation a few seconds at most, and the operation is the
// command's own exit, not a command that could not run.
func TestAnOperationCommandWhoseChildKeepsItsOutputEndsWithItsOwnExit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d := b.start(b.opts())
	_, created := call(t, d, "POST", "/v1/agents", d.Token, map[string]any{"name": "alpha", "adapter": "mailbox"})
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 1 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	_, op := call(t, d, "POST", "/v1/operations", d.Token, map[string]any{"operation": "restart-service", "agents": []string{"alpha"},
		"command": []string{"sh", "-c", `sleep 60 & echo $! > "$0"; echo restarted`, pidFile}})
	id := op["id"].(string)
	call(t, d, "POST", "/v1/inbox/replies", created["token"].(string), map[string]any{"text": "ok"})
	op = waitOperation(t, d, id, func(op map[string]any) bool { return op["finished_at"] != nil })
	if op["exit_code"] != 0.0 || op["output"] != "restarted\n" {
		t.Fatalf("operation %v", op)
	}
	pid, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := strconv.Atoi(strings.TrimSpace(string(pid))); n <= 1 || syscall.Kill(n, 0) != nil {
		t.Fatalf("the command's child (%q) was stopped", pid)
	}
}

func TestOperationKilledOnCloseIsRecorded(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d, err := Start(context.Background(), b.opts())
	if err != nil {
		t.Fatal(err)
	}
	_, created := call(t, d, "POST", "/v1/agents", d.Token, map[string]any{"name": "alpha", "adapter": "mailbox"})
	_, op := call(t, d, "POST", "/v1/operations", d.Token, map[string]any{"operation": "maintenance", "agents": []string{"alpha"},
		"command": []string{"sh", "-c", "echo started; sleep 60"}})
	id := op["id"].(string)
	call(t, d, "POST", "/v1/inbox/replies", created["token"].(string), map[string]any{"text": "ok"})
	waitOperation(t, d, id, func(op map[string]any) bool { return op["state"] == "proceeding" })
	start := time.Now()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 15*time.Second {
		t.Fatal("Close waited for the command")
	}
	d2 := b.start(b.opts())
	op = waitOperation(t, d2, id, func(op map[string]any) bool { return op["finished_at"] != nil })
	if op["state"] != "failed" || op["exit_code"] != -1.0 || !strings.Contains(op["output"].(string), "killed") {
		t.Fatalf("operation %v", op)
	}
}

// A connection that never sent a request (a browser opens some ahead of
// its requests) does not hold up the stop: net/http's Shutdown would wait
// until it is 5 s old.
func TestCloseDoesNotWaitForAConnectionThatSentNoRequest(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d, err := Start(context.Background(), b.opts())
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", d.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The server has the connection once it answers on another one.
	if status, _ := call(t, d, "GET", "/v1/health", "", nil); status == 0 {
		t.Fatal("no answer")
	}
	start := time.Now()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took >= 4*time.Second {
		t.Fatalf("Close took %s: it waited for the connection that sent nothing", took)
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := conn.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the connection is still open after Close (read %d, %v)", n, err)
	}
}

func TestRunStopsWhenContextEnds(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, b.opts()) }()
	addrFile := filepath.Join(b.dir, ".wilco", "addr")
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(addrFile); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("Run returned early: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("Run did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not stop")
	}
}

func TestStartRefusesBadConfig(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if err := os.WriteFile(b.cfg, []byte("agents: 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Start(context.Background(), b.opts()); err == nil || !strings.Contains(err.Error(), "wilco.yaml:1: agents") {
		t.Fatalf("bad config: %v", err)
	}
	o := b.opts()
	o.ConfigPath = filepath.Join(b.dir, "missing.yaml")
	if _, err := Start(context.Background(), o); err == nil {
		t.Fatal("missing config accepted")
	}
}

// A daemon serves the page at / and gives a one-time login link to it:
// the link's code logs a browser in once; Run hands the daemon to Started
// (wilco serve prints the link there).
func TestDaemonServesThePageAndALoginLinkThatWorksOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d := b.start(b.opts())
	base, code, ok := strings.Cut(d.LoginURL, "/#login=")
	if !ok || base != d.URL || code == "" {
		t.Fatalf("login link %q for %s", d.LoginURL, d.URL)
	}
	resp, err := http.Get(d.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(page), "/ui/app.js") {
		t.Fatalf("GET /: %d %s\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), page)
	}
	for i, want := range []int{201, 401} {
		if st, body := call(t, d, "POST", "/v1/session", "", map[string]any{"code": code}); st != want {
			t.Fatalf("login %d with the link: %d %v", i+1, st, body)
		}
	}

	b2 := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan string, 1)
	o := b2.opts()
	o.Started = func(d *Daemon) { started <- d.LoginURL; cancel() }
	if err := Run(ctx, o); err != nil {
		t.Fatal(err)
	}
	if link := <-started; !strings.Contains(link, "/#login=") {
		t.Fatalf("Started got %q", link)
	}
}
