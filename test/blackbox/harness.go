package blackbox

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

// WilcoBin is the binary under test, built by Main.
var WilcoBin string

// BinDir is where Main built it: other programs the tests build go
// there too, removed with it.
var BinDir string

// Main is the TestMain of a black-box test package: it builds wilco into
// a temporary directory, runs the tests and removes it. The black-box
// tests spend their time waiting on other processes (wilco, agents,
// tmux, browsers), not on the CPU: unless -parallel was given, four run
// at once on a machine of fewer cores.
func Main(m *testing.M) {
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
	BinDir = dir
	WilcoBin, err = build(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Root is the module's root directory: the nearest directory above the
// working directory that holds go.mod.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = up
	}
}

// Testdata is the absolute path of a file or directory under test/testdata,
// whichever black-box package asks.
func Testdata(t testing.TB, elem ...string) string {
	t.Helper()
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(append([]string{root, "test", "testdata"}, elem...)...)
}

// build builds ./cmd/wilco (with the race detector when the tests run
// with it), or the stand-in while the CLI does not build.
func build(dir string) (string, error) {
	root, err := Root()
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
	fmt.Fprintf(os.Stderr, "test: ./cmd/wilco does not build; the black-box tests use test/testdata/serve instead:\n%s", FirstLines(out, 5))
	cmd = exec.Command("go", append(append([]string{"build"}, buildFlags...), "-o", bin, "./test/testdata/serve")...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the stand-in server: %v\n%s", err, out)
	}
	return bin, nil
}

// FirstLines is the first n lines of b, and an ellipsis if there were more.
func FirstLines(b []byte, n int) string {
	lines := strings.SplitAfter(string(b), "\n")
	if len(lines) > n {
		lines = append(lines[:n], "…\n")
	}
	return strings.Join(lines, "")
}

const AdminToken = "blackbox-admin-token-0123456789"

// Instance is one `wilco serve` process.
type Instance struct {
	T      testing.TB
	Dir    string
	Url    string
	Cmd    *exec.Cmd
	Stderr *LockedBuffer
	Exited chan error
	// check checks every answer against the server's OpenAPI document.
	Check     *apicheck.Checker
	CheckOnce sync.Once
}

// Checkers are the answers' checkers, by OpenAPI document (the
// configuration changes it: AI Maestro's routes).
var Checkers sync.Map

// checker checks the server's answers against its own OpenAPI document.
func (in *Instance) Checker() *apicheck.Checker {
	in.T.Helper()
	in.CheckOnce.Do(func() {
		resp, err := http.Get(in.Url + "/openapi.json")
		if err != nil {
			in.T.Fatalf("GET /openapi.json: %v", err)
		}
		defer resp.Body.Close()
		doc, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			in.T.Fatalf("GET /openapi.json: %d %v", resp.StatusCode, err)
		}
		if c, ok := Checkers.Load(string(doc)); ok {
			in.Check = c.(*apicheck.Checker)
			return
		}
		c, err := apicheck.New(doc)
		if err != nil {
			in.T.Fatal(err)
		}
		got, _ := Checkers.LoadOrStore(string(doc), c)
		in.Check = got.(*apicheck.Checker)
	})
	return in.Check
}

type LockedBuffer struct {
	Mu sync.Mutex
	B  bytes.Buffer
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.Mu.Lock()
	defer l.Mu.Unlock()
	return l.B.Write(p)
}

func (l *LockedBuffer) String() string {
	l.Mu.Lock()
	defer l.Mu.Unlock()
	return l.B.String()
}

// Serve writes wilco.yaml into a fresh directory and starts `wilco serve`
// there on a loopback port of the system's choosing.
func Serve(t *testing.T, yaml string) *Instance {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "wilco.yaml")
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	in := &Instance{T: t, Dir: dir, Stderr: &LockedBuffer{}, Exited: make(chan error, 1)}
	in.Cmd = exec.Command(WilcoBin, "serve", "--addr", "127.0.0.1:0")
	in.Cmd.Dir = dir
	in.Cmd.Env = append(os.Environ(), "WILCO_CONFIG="+cfg, "WILCO_TOKEN="+AdminToken)
	in.Cmd.Stderr = in.Stderr
	in.Cmd.Stdout = in.Stderr
	if err := in.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { in.Exited <- in.Cmd.Wait() }()
	t.Cleanup(in.Stop)

	addrFile := filepath.Join(dir, ".wilco", "addr")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if data, err := os.ReadFile(addrFile); err == nil && strings.HasSuffix(string(data), "\n") {
			in.Url = strings.TrimSpace(string(data))
			break
		}
		select {
		case err := <-in.Exited:
			in.Exited <- err
			t.Fatalf("wilco serve exited at start: %v\n%s", err, in.Stderr)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("wilco serve did not start in 30s:\n%s", in.Stderr)
		}
	}
	return in
}

// stop sends SIGTERM and waits for a clean exit.
func (in *Instance) Stop() {
	if in.Cmd.ProcessState != nil {
		return
	}
	_ = in.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-in.Exited:
		in.Exited <- err
		if err != nil {
			in.T.Errorf("wilco serve exited with %v:\n%s", err, in.Stderr)
		}
	case <-time.After(30 * time.Second):
		_ = in.Cmd.Process.Kill()
		in.T.Errorf("wilco serve did not stop in 30s after SIGTERM:\n%s", in.Stderr)
	}
}

// Reply is a decoded answer.
type Reply struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r Reply) Decode(t testing.TB, out any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, out); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// errorCode is error.code of an error response.
func (r Reply) ErrorCode() string {
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.Unmarshal(r.Body, &e)
	return e.Error.Code
}

// call sends a request. body: nil, a string sent as it is, or a value sent
// as JSON.
func (in *Instance) Call(method, path, token string, body any, header ...string) Reply {
	in.T.Helper()
	var rd io.Reader
	switch v := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(v)
	default:
		data, err := json.Marshal(v)
		if err != nil {
			in.T.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, in.Url+path, rd)
	if err != nil {
		in.T.Fatal(err)
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
		in.T.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if err := in.Checker().Check(method, resp.Request.URL.Path, resp.StatusCode, resp.Header, data); err != nil {
		in.T.Errorf("the answer is not what the OpenAPI document says: %v", err)
	}
	return Reply{Status: resp.StatusCode, Header: resp.Header, Body: data}
}

// must checks the status and decodes the body into out, when given.
func (in *Instance) Must(status int, r Reply, out ...any) Reply {
	in.T.Helper()
	if r.Status != status {
		in.T.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	if len(out) > 0 {
		r.Decode(in.T, out[0])
	}
	return r
}

// agent creates a mailbox agent and returns its token.
func (in *Instance) Agent(name string, caps ...string) string {
	in.T.Helper()
	var out struct{ Token string }
	in.Must(201, in.Call("POST", "/v1/agents", AdminToken, map[string]any{"name": name, "adapter": "mailbox", "capabilities": caps}), &out)
	return out.Token
}

type InboxMessage struct {
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
func (in *Instance) Inbox(token string, wait time.Duration) []InboxMessage {
	in.T.Helper()
	path := "/v1/inbox"
	if wait > 0 {
		path += "?wait=" + wait.String()
	}
	var out struct{ Messages []InboxMessage }
	in.Must(200, in.Call("GET", path, token, nil), &out)
	return out.Messages
}

func (in *Instance) ReplyAs(token string, body map[string]any) map[string]any {
	in.T.Helper()
	var out struct{ Interpreted map[string]any }
	in.Must(202, in.Call("POST", "/v1/inbox/replies", token, body), &out)
	return out.Interpreted
}

type Message struct {
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

func (in *Instance) Message(id string) Message {
	in.T.Helper()
	var m Message
	in.Must(200, in.Call("GET", "/v1/messages/"+id, AdminToken, nil), &m)
	return m
}

type Event struct {
	Seq    uint64          `json:"seq"`
	Time   time.Time       `json:"time"`
	Type   string          `json:"type"`
	TaskID string          `json:"task_id"`
	Agent  string          `json:"agent"`
	Data   json.RawMessage `json:"data"`
}

// events returns the stored events after a seq, and the next cursor.
func (in *Instance) Events(after uint64) ([]Event, uint64) {
	in.T.Helper()
	var page struct {
		Events []Event `json:"events"`
		Next   uint64  `json:"next"`
	}
	in.Must(200, in.Call("GET", "/v1/events?follow=false&limit=10000&after="+strconv.FormatUint(after, 10), AdminToken, nil), &page)
	return page.Events, page.Next
}

// head is the seq of the last event (what /healthz reports).
func (in *Instance) Head() uint64 {
	in.T.Helper()
	var h struct{ Seq uint64 }
	in.Must(200, in.Call("GET", "/healthz", "", nil), &h)
	return h.Seq
}

// until polls cond until it holds; it fails the test after the deadline.
func (in *Instance) Until(what string, timeout time.Duration, cond func() bool) {
	in.T.Helper()
	if !Eventually(timeout, 10*time.Millisecond, cond) {
		in.T.Fatalf("timed out after %s waiting for %s", timeout, what)
	}
}

// AtRandom lets d pass: a crash test's random moment (drawn by the test)
// to kill a process at, which is the scenario, not a wait for something.
func AtRandom(t testing.TB, d time.Duration) {
	select {
	case <-time.After(d):
	case <-t.Context().Done():
	}
}

// Eventually asks cond every interval until it holds, and reports whether
// it did before timeout passed. The black-box tests watch other processes
// (wilco, agents, tmux, a browser) that offer no signal to wait on: this is
// their one way to wait, and it never assumes how long anything takes.
func Eventually(timeout, interval time.Duration, cond func() bool) bool {
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

// Stream is an open event stream.
type Stream struct {
	Body io.ReadCloser
	Rd   *bufio.Reader
}

func (in *Instance) Stream(path string, header ...string) *Stream {
	in.T.Helper()
	req, _ := http.NewRequest("GET", in.Url+path, nil)
	req.Header.Set("Authorization", "Bearer "+AdminToken)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		in.T.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body.Close()
		in.T.Fatalf("stream %s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	s := &Stream{Body: resp.Body, Rd: bufio.NewReader(resp.Body)}
	in.T.Cleanup(func() { s.Body.Close() })
	return s
}

// next returns the next event's id and data.
func (s *Stream) Next() (uint64, Event, error) {
	var id uint64
	var ev Event
	got := false
	for {
		line, err := s.Rd.ReadString('\n')
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
