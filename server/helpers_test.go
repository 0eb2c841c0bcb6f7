package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"wilco/apicheck"
	"wilco/config"
	"wilco/core"
	"wilco/runtime"
	"wilco/store"
	"wilco/store/sqlite"
	"wilco/wire"
)

const adminToken = "admin-secret-token"

// testBundle is one server on a fresh store, with its runtime running.
type testBundle struct {
	t       *testing.T
	rt      *runtime.Runtime
	st      *sqlite.Store
	srv     *Server
	hs      *httptest.Server
	reg     *prometheus.Registry
	metrics *Metrics
	cfg     *config.Config
	dir     string
	// tokens are the agents' tokens (maestroSetup makes them).
	tokens map[string]string
	// broken is the store under the runtime with setupOpts.breakable.
	broken *breakableStore
	// check checks every answer against the server's OpenAPI document.
	check     *apicheck.Checker
	checkOnce sync.Once
}

type setupOpts struct {
	cfg          *config.Config
	aimaestro    bool
	keepAlive    time.Duration
	streamBuffer int
	routes       []Route
	// breakable puts the store behind a breakableStore (b.broken), whose
	// commits fail once it is broken.
	breakable bool
}

// errBroken is what a broken breakableStore's commits fail with.
var errBroken = errors.New("disk I/O error (the test broke the store)")

// breakableStore is a store whose commits fail once broken: a disk that
// fails under a running wilco.
type breakableStore struct {
	store.Store
	broken atomic.Bool
}

func (s *breakableStore) Commit(ctx context.Context, b store.Batch) error {
	if s.broken.Load() {
		return errBroken
	}
	return s.Store.Commit(ctx, b)
}

func setup(t *testing.T, opts ...setupOpts) *testBundle {
	t.Helper()
	var o setupOpts
	if len(opts) > 0 {
		o = opts[0]
	}
	b := &testBundle{t: t, dir: t.TempDir(), cfg: o.cfg}
	if b.cfg == nil {
		b.cfg = config.Default()
	}
	var err error
	if b.st, err = sqlite.Open(filepath.Join(b.dir, "wilco.db")); err != nil {
		t.Fatal(err)
	}
	b.reg = prometheus.NewRegistry()
	if b.metrics, err = NewMetrics(b.reg); err != nil {
		t.Fatal(err)
	}
	var st store.Store = b.st
	if o.breakable {
		b.broken = &breakableStore{Store: b.st}
		st = b.broken
	}
	if b.rt, err = runtime.Open(context.Background(), runtime.Config{Store: st, Observe: b.metrics.Observe}); err != nil {
		t.Fatal(err)
	}
	if b.srv, err = New(Options{
		Runtime: b.rt, Store: b.st, Config: b.cfg, AdminToken: adminToken, Registry: b.reg, Metrics: b.metrics,
		AIMaestro: o.aimaestro, MailboxFile: filepath.Join(b.dir, "aimaestro.json"), KeepAlive: o.keepAlive,
		StreamBuffer: o.streamBuffer, Routes: o.routes,
	}); err != nil {
		t.Fatal(err)
	}
	b.rt.Start()
	b.do(func(c *core.State, now time.Time) error {
		if err := c.Configure(now, b.cfg.Policies()); err != nil {
			return err
		}
		for _, a := range b.cfg.Agents {
			if err := c.RegisterAgent(now, a.Spec()); err != nil {
				return err
			}
		}
		return nil
	})
	b.hs = httptest.NewServer(b.srv)
	t.Cleanup(func() {
		b.srv.Stop()
		b.hs.Close()
		if err := b.rt.Close(); err != nil && !errors.Is(err, errBroken) {
			t.Error(err)
		}
		b.st.Close()
	})
	return b
}

func (b *testBundle) do(fn func(c *core.State, now time.Time) error) {
	b.t.Helper()
	if _, err := b.rt.Do(context.Background(), func(c *core.State, now time.Time) (any, error) { return nil, fn(c, now) }); err != nil {
		b.t.Fatal(err)
	}
}

// response is a decoded answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("status %d: body is not a JSON object: %v\n%s", r.status, err, r.body)
	}
	return m
}

// text is the error message of an error response, else the raw body.
func (r response) text() string {
	var e struct {
		Error struct{ Message string } `json:"error"`
	}
	if json.Unmarshal(r.body, &e) == nil && e.Error.Message != "" {
		return e.Error.Message
	}
	return string(r.body)
}

func (r response) code(t *testing.T) string {
	t.Helper()
	e, _ := r.json(t)["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

// call sends a request; body is a string (sent as is) or a value (JSON).
func (b *testBundle) call(method, path, token string, body any, header ...string) response {
	b.t.Helper()
	var rd io.Reader
	switch v := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(v)
	case []byte:
		rd = bytes.NewReader(v)
	default:
		data, err := json.Marshal(v)
		if err != nil {
			b.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, b.hs.URL+path, rd)
	if err != nil {
		b.t.Fatal(err)
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
	resp, err := b.hs.Client().Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	out := response{status: resp.StatusCode, header: resp.Header, body: data}
	if err := b.checker().Check(method, req.URL.Path, out.status, out.header, out.body); err != nil {
		b.t.Errorf("the answer is not what the OpenAPI document says: %v", err)
	}
	return out
}

// checkers are the answers' checkers, by OpenAPI document: a server's
// routes (plug-ins, AI Maestro's) make its document.
var checkers sync.Map

// checker checks the server's answers against its OpenAPI document.
func (b *testBundle) checker() *apicheck.Checker {
	b.t.Helper()
	b.checkOnce.Do(func() {
		doc, err := json.Marshal(b.srv.OpenAPI())
		if err != nil {
			b.t.Fatal(err)
		}
		if c, ok := checkers.Load(string(doc)); ok {
			b.check = c.(*apicheck.Checker)
			return
		}
		c, err := apicheck.New(doc)
		if err != nil {
			b.t.Fatal(err)
		}
		got, _ := checkers.LoadOrStore(string(doc), c)
		b.check = got.(*apicheck.Checker)
	})
	return b.check
}

// must checks the status and decodes the body into out (when given).
func (b *testBundle) must(status int, r response, out ...any) response {
	b.t.Helper()
	if r.status != status {
		b.t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	if len(out) > 0 {
		if err := json.Unmarshal(r.body, out[0]); err != nil {
			b.t.Fatalf("decode %s: %v", r.body, err)
		}
	}
	return r
}

// agent creates a mailbox agent and returns its token.
func (b *testBundle) agent(name string, caps ...string) string {
	b.t.Helper()
	var out struct {
		Agent wire.Agent `json:"agent"`
		Token string     `json:"token"`
	}
	b.must(201, b.call("POST", "/v1/agents", adminToken, map[string]any{"name": name, "adapter": "mailbox", "capabilities": caps}), &out)
	if out.Token == "" || out.Agent.Name != name {
		b.t.Fatalf("created %+v", out)
	}
	return out.Token
}

// head is the seq of the last event.
func (b *testBundle) head() uint64 { return b.rt.CommittedSeq() }

// inbox fetches an agent's inbox once (no wait).
func (b *testBundle) inbox(token string) []core.InboxMessage {
	b.t.Helper()
	var out struct {
		Messages []core.InboxMessage `json:"messages"`
	}
	b.must(200, b.call("GET", "/v1/inbox", token, nil), &out)
	return out.Messages
}

func (b *testBundle) delivery(id string) core.Delivery {
	b.t.Helper()
	var d core.Delivery
	var ok bool
	if err := b.rt.Read(func(c *core.State) { d, ok = c.Delivery(id) }); err != nil {
		b.t.Fatal(err)
	}
	if !ok {
		b.t.Fatalf("no delivery %s", id)
	}
	return d
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

var testTime = time.Date(2026, 1, 26, 14, 0, 0, 0, time.UTC)
