package test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"wilco/apicheck"
)

// wilcoBin is the binary under test, built by TestMain.
var wilcoBin string

// binDir is where TestMain built it: other programs the tests build go
// there too, removed with it.
var binDir string

func TestMain(m *testing.M) {
	// The black-box tests spend their time waiting on other processes
	// (wilco, agents, tmux, browsers), not on the CPU: unless -parallel
	// was given, four run at once on a machine of fewer cores.
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given && runtime.GOMAXPROCS(0) < 4 {
		_ = flag.Set("test.parallel", "4")
	}
	dir, err := os.MkdirTemp("", "wilco-blackbox-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	wilcoBin, err = build(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// build builds ./cmd/wilco (with the race detector when the tests run
// with it), or the stand-in while the CLI does not build.
func build(dir string) (string, error) {
	root, err := filepath.Abs("..")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "wilco")
	cmd := exec.Command("go", append(append([]string{"build"}, buildFlags...), "-o", bin, "./cmd/wilco")...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err == nil {
		return bin, nil
	}
	fmt.Fprintf(os.Stderr, "test: ./cmd/wilco does not build; the black-box tests use test/testdata/serve instead:\n%s", firstLines(out, 5))
	cmd = exec.Command("go", append(append([]string{"build"}, buildFlags...), "-o", bin, "./test/testdata/serve")...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the stand-in server: %v\n%s", err, out)
	}
	return bin, nil
}

func firstLines(b []byte, n int) string {
	lines := strings.SplitAfter(string(b), "\n")
	if len(lines) > n {
		lines = append(lines[:n], "…\n")
	}
	return strings.Join(lines, "")
}

const adminToken = "blackbox-admin-token-0123456789"

// instance is one `wilco serve` process.
type instance struct {
	t      testing.TB
	dir    string
	url    string
	cmd    *exec.Cmd
	stderr *lockedBuffer
	exited chan error
	// check checks every answer against the server's OpenAPI document.
	check     *apicheck.Checker
	checkOnce sync.Once
}

// checkers are the answers' checkers, by OpenAPI document (the
// configuration changes it: AI Maestro's routes).
var checkers sync.Map

// checker checks the server's answers against its own OpenAPI document.
func (in *instance) checker() *apicheck.Checker {
	in.t.Helper()
	in.checkOnce.Do(func() {
		resp, err := http.Get(in.url + "/openapi.json")
		if err != nil {
			in.t.Fatalf("GET /openapi.json: %v", err)
		}
		defer resp.Body.Close()
		doc, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			in.t.Fatalf("GET /openapi.json: %d %v", resp.StatusCode, err)
		}
		if c, ok := checkers.Load(string(doc)); ok {
			in.check = c.(*apicheck.Checker)
			return
		}
		c, err := apicheck.New(doc)
		if err != nil {
			in.t.Fatal(err)
		}
		got, _ := checkers.LoadOrStore(string(doc), c)
		in.check = got.(*apicheck.Checker)
	})
	return in.check
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// serve writes wilco.yaml into a fresh directory and starts `wilco serve`
// there on a loopback port of the system's choosing.
func serve(t *testing.T, yaml string) *instance {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "wilco.yaml")
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	in := &instance{t: t, dir: dir, stderr: &lockedBuffer{}, exited: make(chan error, 1)}
	in.cmd = exec.Command(wilcoBin, "serve", "--addr", "127.0.0.1:0")
	in.cmd.Dir = dir
	in.cmd.Env = append(os.Environ(), "WILCO_CONFIG="+cfg, "WILCO_TOKEN="+adminToken)
	in.cmd.Stderr = in.stderr
	in.cmd.Stdout = in.stderr
	if err := in.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { in.exited <- in.cmd.Wait() }()
	t.Cleanup(in.stop)

	addrFile := filepath.Join(dir, ".wilco", "addr")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if data, err := os.ReadFile(addrFile); err == nil && strings.HasSuffix(string(data), "\n") {
			in.url = strings.TrimSpace(string(data))
			break
		}
		select {
		case err := <-in.exited:
			in.exited <- err
			t.Fatalf("wilco serve exited at start: %v\n%s", err, in.stderr)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("wilco serve did not start in 30s:\n%s", in.stderr)
		}
	}
	return in
}

// stop sends SIGTERM and waits for a clean exit.
func (in *instance) stop() {
	if in.cmd.ProcessState != nil {
		return
	}
	_ = in.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-in.exited:
		in.exited <- err
		if err != nil {
			in.t.Errorf("wilco serve exited with %v:\n%s", err, in.stderr)
		}
	case <-time.After(30 * time.Second):
		_ = in.cmd.Process.Kill()
		in.t.Errorf("wilco serve did not stop in 30s after SIGTERM:\n%s", in.stderr)
	}
}

// reply is a decoded answer.
type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) decode(t testing.TB, out any) {
	t.Helper()
	if err := json.Unmarshal(r.body, out); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// errorCode is error.code of an error response.
func (r reply) errorCode() string {
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.Unmarshal(r.body, &e)
	return e.Error.Code
}

// call sends a request. body: nil, a string sent as it is, or a value sent
// as JSON.
func (in *instance) call(method, path, token string, body any, header ...string) reply {
	in.t.Helper()
	var rd io.Reader
	switch v := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(v)
	default:
		data, err := json.Marshal(v)
		if err != nil {
			in.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, in.url+path, rd)
	if err != nil {
		in.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		in.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if err := in.checker().Check(method, resp.Request.URL.Path, resp.StatusCode, resp.Header, data); err != nil {
		in.t.Errorf("the answer is not what the OpenAPI document says: %v", err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: data}
}

// must checks the status and decodes the body into out, when given.
func (in *instance) must(status int, r reply, out ...any) reply {
	in.t.Helper()
	if r.status != status {
		in.t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	if len(out) > 0 {
		r.decode(in.t, out[0])
	}
	return r
}

// agent creates a mailbox agent and returns its token.
func (in *instance) agent(name string, caps ...string) string {
	in.t.Helper()
	var out struct{ Token string }
	in.must(201, in.call("POST", "/v1/agents", adminToken, map[string]any{"name": name, "adapter": "mailbox", "capabilities": caps}), &out)
	return out.Token
}

type inboxMessage struct {
	ID            string `json:"id"`
	From          string `json:"from"`
	Type          string `json:"type"`
	Subject       string `json:"subject"`
	Body          string `json:"body"`
	TaskID        string `json:"task_id"`
	InstructionID string `json:"instruction_id"`
	OperationID   string `json:"operation_id"`
	Attempt       int    `json:"attempt"`
}

// inbox is one dispatch cycle of the agent; wait long-polls.
func (in *instance) inbox(token string, wait time.Duration) []inboxMessage {
	in.t.Helper()
	path := "/v1/inbox"
	if wait > 0 {
		path += "?wait=" + wait.String()
	}
	var out struct{ Messages []inboxMessage }
	in.must(200, in.call("GET", path, token, nil), &out)
	return out.Messages
}

func (in *instance) replyAs(token string, body map[string]any) map[string]any {
	in.t.Helper()
	var out struct{ Interpreted map[string]any }
	in.must(202, in.call("POST", "/v1/inbox/replies", token, body), &out)
	return out.Interpreted
}

type message struct {
	ID            string   `json:"id"`
	To            string   `json:"to"`
	Type          string   `json:"type"`
	TaskID        string   `json:"task_id"`
	State         string   `json:"state"`
	Attempts      int      `json:"attempts"`
	Questions     []string `json:"questions"`
	Understanding string   `json:"understanding"`
	Reason        string   `json:"reason"`
}

func (in *instance) message(id string) message {
	in.t.Helper()
	var m message
	in.must(200, in.call("GET", "/v1/messages/"+id, adminToken, nil), &m)
	return m
}

type event struct {
	Seq    uint64          `json:"seq"`
	Time   time.Time       `json:"time"`
	Type   string          `json:"type"`
	TaskID string          `json:"task_id"`
	Agent  string          `json:"agent"`
	Data   json.RawMessage `json:"data"`
}

// events returns the stored events after a seq, and the next cursor.
func (in *instance) events(after uint64) ([]event, uint64) {
	in.t.Helper()
	var page struct {
		Events []event `json:"events"`
		Next   uint64  `json:"next"`
	}
	in.must(200, in.call("GET", "/v1/events?follow=false&limit=10000&after="+strconv.FormatUint(after, 10), adminToken, nil), &page)
	return page.Events, page.Next
}

// head is the seq of the last event (what /healthz reports).
func (in *instance) head() uint64 {
	in.t.Helper()
	var h struct{ Seq uint64 }
	in.must(200, in.call("GET", "/healthz", "", nil), &h)
	return h.Seq
}

// until polls cond until it holds; it fails the test after the deadline.
func (in *instance) until(what string, timeout time.Duration, cond func() bool) {
	in.t.Helper()
	if !eventually(timeout, 10*time.Millisecond, cond) {
		in.t.Fatalf("timed out after %s waiting for %s", timeout, what)
	}
}

// atRandom lets d pass: a crash test's random moment (drawn by the test)
// to kill a process at, which is the scenario, not a wait for something.
func atRandom(t testing.TB, d time.Duration) {
	select {
	case <-time.After(d):
	case <-t.Context().Done():
	}
}

// eventually asks cond every interval until it holds, and reports whether
// it did before timeout passed. The black-box tests watch other processes
// (wilco, agents, tmux, a browser) that offer no signal to wait on: this is
// their one way to wait, and it never assumes how long anything takes.
func eventually(timeout, interval time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		<-tick.C
	}
	return true
}

// stream is an open event stream.
type stream struct {
	body io.ReadCloser
	rd   *bufio.Reader
}

func (in *instance) stream(path string, header ...string) *stream {
	in.t.Helper()
	req, _ := http.NewRequest("GET", in.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		in.t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body.Close()
		in.t.Fatalf("stream %s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	s := &stream{body: resp.Body, rd: bufio.NewReader(resp.Body)}
	in.t.Cleanup(func() { s.body.Close() })
	return s
}

// next returns the next event's id and data.
func (s *stream) next() (uint64, event, error) {
	var id uint64
	var ev event
	got := false
	for {
		line, err := s.rd.ReadString('\n')
		if err != nil {
			return 0, ev, err
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "" && got:
			return id, ev, nil
		case strings.HasPrefix(line, "id: "):
			id, _ = strconv.ParseUint(line[4:], 10, 64)
			got = true
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(line[6:]), &ev); err != nil {
				return 0, ev, err
			}
		}
	}
}
