package test

// The crash test: wilco serve under load is killed with SIGKILL at random
// moments and started again on the same state directory, while callers
// and mailbox agents keep going. Whatever a caller was answered 2xx must
// have survived; no delivery may end twice. See TestCrashKillNineLosesNothingAcknowledged.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"wilco/test/blackbox"
)

var (
	crashKills = flag.Int("crash.kills", 0, "SIGKILLs in the crash test (default 20, or $WILCO_CRASH_KILLS)")
	crashSeed  = flag.Uint64("crash.seed", 0, "seed of the crash test's choices (default: from the clock)")
)

const crashDefaultKills = 20

// crashAgents are the configured mailbox agents the load drives.
var crashAgents = []string{"a1", "a2", "a3", "a4"}

const crashConfig = `agents:
  - {name: a1, adapter: mailbox, capabilities: [go]}
  - {name: a2, adapter: mailbox, capabilities: [go]}
  - {name: a3, adapter: mailbox, capabilities: [go]}
  - {name: a4, adapter: mailbox, capabilities: [go]}
policy:
  ack: {timeouts: [300ms, 300ms], backoff: {base: 100ms, max: 200ms}}
  instruction: {max_retries: 2}
`

// TestCrashKillNineLosesNothingAcknowledged drives the real `wilco serve`
// with callers (instructions, task delegations, explicit acks, reads,
// new agents) and mailbox agents (dispatch cycles, ACKs, "ok" and matcher
// replies, duplicates, late answers, task-complete, token rotation), and
// SIGKILLs it at random moments (now and then a graceful stop, a kill
// during the graceful stop, or a kill during start-up instead), starting
// it again on the same directory each time. At the end it checks that
// every 2xx answer still holds: created instructions and messages exist
// with their content, every acknowledgment a caller or an agent was told
// of is in force, tokens handed out work, a terminal state once read is
// still the state; and that the event log is gapless, ends each delivery
// at most once, changes no delivery after its end, and agrees with the
// states the API serves.
//
// The seed fixes every random choice (the printed -crash.seed reruns
// them); the interleaving with the kills depends on timing.
func TestCrashKillNineLosesNothingAcknowledged(t *testing.T) {
	kills := crashDefaultKills
	if v := os.Getenv("WILCO_CRASH_KILLS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("WILCO_CRASH_KILLS=%q: want a positive number", v)
		}
		kills = n
	}
	if *crashKills > 0 {
		kills = *crashKills
	}
	if testing.Short() {
		kills = min(kills, 5)
	}
	seed := *crashSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d, %d kills (rerun with -crash.seed=%d; -crash.kills=N for a longer run)", seed, kills, seed)
	start := time.Now()

	x := newCrashRun(t, seed)
	if err := x.srv.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.srv.stopAtEnd)
	x.setUp()

	loadCtx, stopLoad := context.WithCancel(context.Background())
	defer stopLoad()
	var load sync.WaitGroup
	for i, name := range crashAgents {
		ag := x.agents[name]
		load.Add(1)
		go func() {
			defer load.Done()
			x.agentLoop(loadCtx, ag, x.rng(100+uint64(i)))
		}()
	}
	for i := range 3 {
		load.Add(1)
		go func() {
			defer load.Done()
			x.callerLoop(loadCtx, i, x.rng(200+uint64(i)))
		}()
	}

	killerDone := make(chan struct{})
	go func() {
		defer close(killerDone)
		x.killer(loadCtx, kills, x.rng(1))
	}()
	limit := max(5*time.Minute, time.Duration(kills)*3*time.Second)
	select {
	case <-killerDone:
	case <-time.After(limit):
		t.Errorf("seed %d: the killer did not finish in %s", seed, limit)
		stopLoad()
		<-killerDone
	}
	// A little more load on the last instance, then stop.
	select {
	case <-time.After(300 * time.Millisecond):
	case <-loadCtx.Done():
	}
	stopLoad()
	load.Wait()
	if _, gen, _ := x.srv.current(); x.srv.isDown() {
		t.Fatalf("seed %d: the server is down after instance %d:\n%s", seed, gen, blackbox.Tail(x.srv.output(), 40))
	}
	x.verify()
	x.summary(time.Since(start))

	// After all the crashes, a graceful stop still exits 0. (Connections
	// the client dialed but never used would hold the server's shutdown
	// for 5 s: net/http waits that long for a new connection's request.)
	x.hc.CloseIdleConnections()
	stopped := time.Now()
	if _, err := x.srv.terminate(-1); err != nil {
		t.Errorf("seed %d: %v", seed, err)
	}
	t.Logf("the last instance stopped gracefully in %s", time.Since(stopped).Round(time.Millisecond))
}

// --- the server process -------------------------------------------------------

// crashServer is `wilco serve` on one state directory, across restarts.
type crashServer struct {
	t     *testing.T
	dir   string
	token string

	mu      sync.Mutex
	url     string
	gen     int           // instance number, 1 for the first start
	changed chan struct{} // closed when the next instance serves
	cmd     *exec.Cmd
	exited  chan error
	stderr  *blackbox.LockedBuffer
	down    bool
	// recoveries are the runtime's "recovered" log lines, one per start.
	recoveries []string
	startTimes []time.Duration // from exec to serving, per start
}

// recoveryLine is the runtime's account of a start: the checkpoint it
// loaded and the events it replayed after it.
func recoveryLine(out string) string {
	for line := range strings.Lines(out) {
		if strings.Contains(line, "msg=recovered") {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

func (s *crashServer) current() (url string, gen int, changed <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.url, s.gen, s.changed
}

func (s *crashServer) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stderr == nil {
		return ""
	}
	return s.stderr.String()
}

// launch starts the process without waiting for it to serve.
func (s *crashServer) launch() error {
	_ = os.Remove(filepath.Join(s.dir, ".wilco", "addr")) // a killed server leaves it behind
	cmd := exec.Command(blackbox.WilcoBin, "serve", "--addr", "127.0.0.1:0")
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "WILCO_CONFIG="+filepath.Join(s.dir, "wilco.yaml"), "WILCO_TOKEN="+s.token)
	out := &blackbox.LockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	s.mu.Lock()
	s.cmd, s.exited, s.stderr, s.down = cmd, exited, out, false
	s.mu.Unlock()
	return nil
}

// start launches the process and waits until it serves, then publishes its
// address.
func (s *crashServer) start() error {
	began := time.Now()
	if err := s.launch(); err != nil {
		return err
	}
	s.mu.Lock()
	exited, out := s.exited, s.stderr
	s.mu.Unlock()
	addrFile := filepath.Join(s.dir, ".wilco", "addr")
	deadline := time.Now().Add(30 * time.Second)
	var url string
	for {
		if data, err := os.ReadFile(addrFile); err == nil && strings.HasSuffix(string(data), "\n") {
			url = strings.TrimSpace(string(data))
			break
		}
		select {
		case err := <-exited:
			exited <- err
			return fmt.Errorf("wilco serve exited at start: %v\n%s", err, blackbox.Tail(out.String(), 40))
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("wilco serve did not start in 30s:\n%s", blackbox.Tail(out.String(), 40))
		}
	}
	for {
		resp, err := http.Get(url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("wilco serve at %s does not answer /healthz: %v\n%s", url, err, blackbox.Tail(out.String(), 40))
		}
		<-time.After(5 * time.Millisecond)
	}
	s.mu.Lock()
	s.recoveries = append(s.recoveries, recoveryLine(out.String()))
	s.startTimes = append(s.startTimes, time.Since(began))
	s.url = url
	s.gen++
	if s.changed != nil {
		close(s.changed)
	}
	s.changed = make(chan struct{})
	s.mu.Unlock()
	return nil
}

// kill sends SIGKILL and waits for the process to end.
func (s *crashServer) kill() error {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	_ = cmd.Process.Kill()
	return s.await(exited, "SIGKILL")
}

// terminate sends SIGTERM; killAfter >= 0 sends SIGKILL that long after,
// during the graceful stop. It reports whether the process was killed.
func (s *crashServer) terminate(killAfter time.Duration) (killed bool, err error) {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if killAfter >= 0 {
		select {
		case err := <-exited:
			exited <- err
		case <-time.After(killAfter):
			_ = cmd.Process.Kill()
		}
	}
	select {
	case werr := <-exited:
		exited <- werr
		s.setDown()
		var ee *exec.ExitError
		if errors.As(werr, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
				return true, nil
			}
		}
		if werr != nil {
			return false, fmt.Errorf("wilco serve exited with %v after SIGTERM:\n%s", werr, blackbox.Tail(s.output(), 40))
		}
		return false, nil
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		return false, fmt.Errorf("wilco serve did not stop in 30s after SIGTERM:\n%s", blackbox.Tail(s.output(), 40))
	}
}

func (s *crashServer) await(exited chan error, what string) error {
	select {
	case err := <-exited:
		exited <- err
		s.setDown()
		return nil
	case <-time.After(30 * time.Second):
		return fmt.Errorf("wilco serve did not end in 30s after %s", what)
	}
}

func (s *crashServer) isDown() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.down
}

func (s *crashServer) setDown() {
	s.mu.Lock()
	s.down = true
	s.mu.Unlock()
}

// stopAtEnd stops the last instance gracefully: it must exit 0 after all
// the crashes.
func (s *crashServer) stopAtEnd() {
	s.mu.Lock()
	down, cmd := s.down, s.cmd
	s.mu.Unlock()
	if down || cmd == nil {
		return
	}
	if _, err := s.terminate(-1); err != nil {
		s.t.Error(err)
	}
}

// --- the run: shared records ----------------------------------------------------

type crashInstruction struct {
	Agent, Content, Token string
}

type crashMessage struct {
	To, TaskID, Body string
}

type crashAgent struct {
	name string
	mu   sync.Mutex
	tok  string
	// uncertainGen: a token rotation whose answer was lost went to this
	// instance; until an instance after it accepts the current token, a
	// 401 is no proof of loss (0: none).
	uncertainGen int
}

func (a *crashAgent) token() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.tok
}

type crashRun struct {
	t    *testing.T
	seed uint64
	srv  *crashServer
	hc   *http.Client

	agents map[string]*crashAgent

	mu sync.Mutex
	// What was answered 2xx.
	instructions map[string]crashInstruction
	messages     map[string]crashMessage
	created      []string          // instructions and messages, in the order of their 201s
	createdIns   []string          // instructions only
	acked        map[string]string // delivery id → the accepted request that acknowledged it
	observed     map[string]string // delivery id → a terminal state a GET returned
	dynAgents    map[string]string // agent created by POST /v1/agents → its token
	counts       map[string]int    // "METHOD route status" → n
	connErrors   int
	kills        int
	earlyKills   int
	termKills    int
	graceful     int
	longLived    int
	// longRecoveries: how each start after a long-lived instance recovered.
	longRecoveries []string
	problems       []string
}

func newCrashRun(t *testing.T, seed uint64) *crashRun {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "wilco.yaml"), []byte(crashConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	x := &crashRun{
		t: t, seed: seed,
		srv: &crashServer{t: t, dir: dir, token: "crash-admin-" + hex.EncodeToString(b[:])},
		hc: &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{
			MaxIdleConns: 64, MaxIdleConnsPerHost: 16, IdleConnTimeout: 30 * time.Second,
		}},
		agents:       map[string]*crashAgent{},
		instructions: map[string]crashInstruction{},
		messages:     map[string]crashMessage{},
		acked:        map[string]string{},
		observed:     map[string]string{},
		dynAgents:    map[string]string{},
		counts:       map[string]int{},
	}
	t.Cleanup(x.hc.CloseIdleConnections)
	return x
}

func (x *crashRun) rng(stream uint64) *mrand.Rand {
	return mrand.New(mrand.NewPCG(x.seed, stream))
}

// problem records a failure found while the load runs.
func (x *crashRun) problem(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	x.mu.Lock()
	x.problems = append(x.problems, msg)
	n := len(x.problems)
	x.mu.Unlock()
	if n <= 30 {
		x.t.Errorf("seed %d: %s", x.seed, msg)
	}
}

// answer is one HTTP exchange.
type answer struct {
	status int
	body   []byte
	gen    int // the server instance it went to
}

func (a answer) decode(out any) error { return json.Unmarshal(a.body, out) }

// call sends a request to the current instance. A transport error (the
// server is down or died during the request) is returned after waiting a
// little for the next instance, so that loops do not spin.
func (x *crashRun) call(ctx context.Context, method, path, token string, body any, route string) (answer, error) {
	url, gen, changed := x.srv.current()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return answer{}, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, url+path, rd)
	if err != nil {
		return answer{}, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := x.hc.Do(req)
	var data []byte
	if err == nil {
		data, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if err != nil {
		x.mu.Lock()
		x.connErrors++
		x.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
		return answer{gen: gen}, err
	}
	x.mu.Lock()
	x.counts[fmt.Sprintf("%s %s %d", method, route, resp.StatusCode)]++
	x.mu.Unlock()
	return answer{status: resp.StatusCode, body: data, gen: gen}, nil
}

// unexpected records an answer the load never provokes on a server that
// lost nothing.
func (x *crashRun) unexpected(what string, a answer) {
	x.problem("%s: unexpected %d: %s", what, a.status, bytes.TrimSpace(a.body))
}

// ackedBy records that an accepted request acknowledged ids.
func (x *crashRun) ackedBy(how string, ids ...string) {
	var twice []string
	x.mu.Lock()
	for _, id := range ids {
		if prev, ok := x.acked[id]; ok {
			twice = append(twice, fmt.Sprintf("%s was acknowledged by two accepted requests: %s, then %s", id, prev, how))
			continue
		}
		x.acked[id] = how
	}
	x.mu.Unlock()
	for _, msg := range twice {
		x.problem("%s", msg)
	}
}

// setUp gives each configured agent a token.
func (x *crashRun) setUp() {
	ctx := context.Background()
	for _, name := range crashAgents {
		a, err := x.call(ctx, "POST", "/v1/agents/"+name+"/token", x.srv.token, nil, "/v1/agents/{name}/token")
		if err != nil || a.status != 200 {
			x.t.Fatalf("token for %s: %v %d %s", name, err, a.status, a.body)
		}
		var out struct{ Token string }
		if err := a.decode(&out); err != nil || out.Token == "" {
			x.t.Fatalf("token for %s: %s", name, a.body)
		}
		x.agents[name] = &crashAgent{name: name, tok: out.Token}
	}
}

// --- the killer -------------------------------------------------------------------

// killer kills and restarts the server until it has been killed n times.
//
// Instances live 50–700 ms, except one in 25 (at least one per run), which
// lives 10–11.5 s: long enough for the runtime's periodic checkpoint
// (every 10 s), so that a later start recovers from a checkpoint taken
// under load plus the log after it, not only from a shutdown's checkpoint.
func (x *crashRun) killer(ctx context.Context, n int, rng *mrand.Rand) {
	long := map[int]bool{}
	for range max(1, n/25) {
		long[n/4+rng.IntN(max(1, n/2))] = true
	}
	for i := 0; x.killCount() < n; i++ {
		pause := time.Duration(50+rng.IntN(651)) * time.Millisecond
		if long[i] {
			pause = 10*time.Second + time.Duration(rng.IntN(1500))*time.Millisecond
			x.mu.Lock()
			x.longLived++
			x.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		p := rng.Float64()
		x.mu.Lock()
		switch {
		case long[i]:
			p = 1 // a plain SIGKILL
		case x.graceful == 0 && x.kills >= n/2:
			p = 0 // at least one graceful stop per run
		}
		x.mu.Unlock()
		switch {
		case p < 0.08: // a graceful stop writes a full checkpoint
			if _, err := x.srv.terminate(-1); err != nil {
				x.problem("%v", err)
				return
			}
			x.mu.Lock()
			x.graceful++
			x.mu.Unlock()
		case p < 0.16: // killed while stopping (and checkpointing)
			killed, err := x.srv.terminate(time.Duration(rng.IntN(40)) * time.Millisecond)
			if err != nil {
				x.problem("%v", err)
				return
			}
			x.mu.Lock()
			if killed {
				x.kills++
				x.termKills++
			} else {
				x.graceful++
			}
			x.mu.Unlock()
		default:
			if err := x.srv.kill(); err != nil {
				x.problem("%v", err)
				return
			}
			x.mu.Lock()
			x.kills++
			x.mu.Unlock()
		}
		// Now and then, a kill during recovery, before it serves.
		if rng.Float64() < 0.1 {
			if err := x.srv.launch(); err != nil {
				x.problem("restart: %v", err)
				return
			}
			<-time.After(time.Duration(rng.IntN(80)) * time.Millisecond)
			if err := x.srv.kill(); err != nil {
				x.problem("%v", err)
				return
			}
			x.mu.Lock()
			x.kills++
			x.earlyKills++
			x.mu.Unlock()
		}
		if err := x.srv.start(); err != nil {
			x.problem("restart after a crash: %v", err)
			return
		}
		if long[i] {
			x.srv.mu.Lock()
			line := x.srv.recoveries[len(x.srv.recoveries)-1]
			x.srv.mu.Unlock()
			x.mu.Lock()
			x.longRecoveries = append(x.longRecoveries, fmt.Sprintf("killed after %s; then %s", pause.Round(time.Millisecond), line[strings.Index(line, "msg="):]))
			x.mu.Unlock()
		}
	}
}

func (x *crashRun) killCount() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.kills
}

// --- callers ------------------------------------------------------------------------

func (x *crashRun) callerLoop(ctx context.Context, id int, rng *mrand.Rand) {
	n := 0
	for ctx.Err() == nil {
		n++
		switch p := rng.Float64(); {
		case p < 0.32:
			x.createInstruction(ctx, id, n, rng)
		case p < 0.58:
			x.delegate(ctx, id, n, rng)
		case p < 0.72:
			x.callerAck(ctx, rng)
		case p < 0.985:
			x.readBack(ctx, rng)
		default:
			x.createAgent(ctx, id, n)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(rng.IntN(15)) * time.Millisecond):
		}
	}
}

func (x *crashRun) createInstruction(ctx context.Context, caller, n int, rng *mrand.Rand) {
	agent := crashAgents[rng.IntN(len(crashAgents))]
	rec := crashInstruction{Agent: agent, Content: fmt.Sprintf("crash %d: caller %d instruction %d: check the build cache", x.seed, caller, n)}
	body := map[string]any{"agent": agent, "content": rec.Content}
	if rng.Float64() < 0.3 {
		rec.Token = fmt.Sprintf("<done:c%d-%d>", caller, n)
		rec.Content += "; when it is done, reply with " + rec.Token
		body["content"] = rec.Content
		body["ack_when"] = map[string]string{"contains": rec.Token}
	}
	if rng.Float64() < 0.5 {
		body["max_retries"] = rng.IntN(4)
	}
	a, err := x.call(ctx, "POST", "/v1/instructions", x.srv.token, body, "/v1/instructions")
	if err != nil {
		return
	}
	switch a.status {
	case 201:
		var out struct{ ID, Agent, Content string }
		if err := a.decode(&out); err != nil || out.ID == "" {
			x.problem("POST /v1/instructions answered 201 %s", a.body)
			return
		}
		if out.Content != rec.Content || out.Agent != agent {
			x.problem("POST /v1/instructions answered 201 with %s, sent %+v", a.body, rec)
		}
		x.mu.Lock()
		if prev, ok := x.instructions[out.ID]; ok {
			x.mu.Unlock()
			x.problem("two instructions were created as %s: %q and %q", out.ID, prev.Content, rec.Content)
			return
		}
		x.instructions[out.ID] = rec
		x.createdIns = append(x.createdIns, out.ID)
		x.created = append(x.created, out.ID)
		x.mu.Unlock()
		if rng.Float64() < 0.2 { // the caller acknowledges it itself, before the agent can
			x.ackInstruction(ctx, out.ID)
		}
	case 503:
	default:
		x.unexpected("POST /v1/instructions", a)
	}
}

func (x *crashRun) delegate(ctx context.Context, caller, n int, rng *mrand.Rand) {
	agent := crashAgents[rng.IntN(len(crashAgents))]
	task := fmt.Sprintf("CR-%d-%d", caller, n)
	rec := crashMessage{To: agent, TaskID: task, Body: fmt.Sprintf("crash %d: implement item %s of the listing", x.seed, task)}
	a, err := x.call(ctx, "POST", "/v1/messages", x.srv.token, map[string]any{
		"to": agent, "type": "task_delegation", "task_id": task, "body": rec.Body, "capabilities": []string{"go"},
	}, "/v1/messages")
	if err != nil {
		return
	}
	switch a.status {
	case 201:
		var out struct{ ID, To, TaskID, Body string }
		if err := a.decode(&out); err != nil || out.ID == "" {
			x.problem("POST /v1/messages answered 201 %s", a.body)
			return
		}
		x.mu.Lock()
		if prev, ok := x.messages[out.ID]; ok {
			x.mu.Unlock()
			x.problem("two messages were created as %s: %+v and %+v", out.ID, prev, rec)
			return
		}
		x.messages[out.ID] = rec
		x.created = append(x.created, out.ID)
		x.mu.Unlock()
	case 503:
	default:
		x.unexpected("POST /v1/messages", a)
	}
}

// randomID is an instruction (or a message) created so far, half the time
// one of the newest.
func (x *crashRun) randomID(rng *mrand.Rand, instructionsOnly bool) (string, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	ids := x.created
	if instructionsOnly {
		ids = x.createdIns
	}
	if len(ids) == 0 {
		return "", false
	}
	if rng.Float64() < 0.5 {
		ids = ids[max(0, len(ids)-8):]
	}
	return ids[rng.IntN(len(ids))], true
}

func (x *crashRun) callerAck(ctx context.Context, rng *mrand.Rand) {
	if id, ok := x.randomID(rng, true); ok {
		x.ackInstruction(ctx, id)
	}
}

func (x *crashRun) ackInstruction(ctx context.Context, id string) {
	a, err := x.call(ctx, "POST", "/v1/instructions/"+id+"/ack", x.srv.token, nil, "/v1/instructions/{id}/ack")
	if err != nil {
		return
	}
	switch a.status {
	case 200:
		var out struct{ ID, State string }
		if err := a.decode(&out); err != nil || out.ID != id || out.State != "acknowledged" {
			x.problem("POST /v1/instructions/%s/ack answered 200 %s", id, a.body)
		}
		x.ackedBy(fmt.Sprintf("POST /v1/instructions/%s/ack answered 200 (instance %d)", id, a.gen), id)
	case 409, 503:
	case 404:
		x.problem("instruction %s, created with 201, is lost: POST /v1/instructions/%s/ack answered 404 %s", id, id, a.body)
	default:
		x.unexpected("POST /v1/instructions/"+id+"/ack", a)
	}
}

// readBack reads a created instruction or message: it must be there, with
// its content; a terminal state read is remembered, as it may not change.
func (x *crashRun) readBack(ctx context.Context, rng *mrand.Rand) {
	id, ok := x.randomID(rng, false)
	if !ok {
		return
	}
	x.mu.Lock()
	ins, isIns := x.instructions[id]
	msg := x.messages[id]
	x.mu.Unlock()
	path, route := "/v1/messages/"+id, "/v1/messages/{id}"
	if isIns {
		path, route = "/v1/instructions/"+id, "/v1/instructions/{id}"
	}
	a, err := x.call(ctx, "GET", path, x.srv.token, nil, route)
	if err != nil {
		return
	}
	switch a.status {
	case 200:
	case 503:
		return
	case 404:
		x.problem("%s, created with 201, is lost: GET %s answered 404", id, path)
		return
	default:
		x.unexpected("GET "+path, a)
		return
	}
	var out struct{ ID, State, Content, Body, To, Agent string }
	if err := a.decode(&out); err != nil {
		x.problem("GET %s: %s", path, a.body)
		return
	}
	if isIns && (out.Content != ins.Content || out.Agent != ins.Agent) || !isIns && (out.Body != msg.Body || out.To != msg.To) {
		x.problem("GET %s answered %s, not what was created", path, a.body)
	}
	if terminal(out.State) {
		x.mu.Lock()
		if _, ok := x.observed[id]; !ok {
			x.observed[id] = out.State
		}
		x.mu.Unlock()
	}
}

// createAgent adds a mailbox agent nobody polls (so delegations passed to
// it are chased and passed on again); at most three.
func (x *crashRun) createAgent(ctx context.Context, caller, n int) {
	x.mu.Lock()
	many := len(x.dynAgents) >= 3
	x.mu.Unlock()
	if many {
		return
	}
	name := fmt.Sprintf("dyn-%d-%d", caller, n)
	a, err := x.call(ctx, "POST", "/v1/agents", x.srv.token, map[string]any{"name": name, "adapter": "mailbox", "capabilities": []string{"go"}}, "/v1/agents")
	if err != nil {
		return
	}
	switch a.status {
	case 201:
		var out struct{ Token string }
		if err := a.decode(&out); err != nil || out.Token == "" {
			x.problem("POST /v1/agents answered 201 %s", a.body)
			return
		}
		x.mu.Lock()
		x.dynAgents[name] = out.Token
		x.mu.Unlock()
	case 503:
	default:
		x.unexpected("POST /v1/agents", a)
	}
}

// --- agents ---------------------------------------------------------------------------

type crashReply struct {
	body map[string]any
	what string
	task string // the delegation's task, for an ACK
}

func (x *crashRun) agentLoop(ctx context.Context, ag *crashAgent, rng *mrand.Rand) {
	var later []crashReply
	var working []string // tasks acknowledged, to complete
	for ctx.Err() == nil {
		if rng.Float64() < 0.02 {
			x.rotate(ctx, ag)
		}
		wait := time.Duration(rng.IntN(250)) * time.Millisecond
		a, err := x.call(ctx, "GET", "/v1/inbox?wait="+wait.String(), ag.token(), nil, "/v1/inbox")
		if err != nil {
			continue
		}
		if !x.agentStatus(ctx, ag, "GET /v1/inbox", a, 200) {
			continue
		}
		var out struct{ Messages []blackbox.InboxMessage }
		if err := a.decode(&out); err != nil {
			x.problem("GET /v1/inbox: %s", a.body)
			continue
		}
		var now []crashReply
		for _, m := range out.Messages {
			r, ok := x.answerFor(m, rng)
			if !ok {
				continue
			}
			switch p := rng.Float64(); {
			case p < 0.55:
				now = append(now, r)
				if rng.Float64() < 0.15 { // a duplicate
					now = append(now, r)
				}
			case p < 0.75:
				later = append(later, r)
			}
		}
		// Some late answers: to messages that may since have been retried,
		// failed or passed on.
		if len(later) > 0 && rng.Float64() < 0.4 {
			k := rng.IntN(len(later))
			now = append(now, later[k])
			later = slices.Delete(later, k, k+1)
		}
		if len(working) > 0 && rng.Float64() < 0.3 {
			k := rng.IntN(len(working))
			task := working[k]
			working = slices.Delete(working, k, k+1)
			now = append(now, crashReply{what: "task-complete " + task, body: map[string]any{
				"type": "task-complete", "data": map[string]any{"task_id": task, "status": "success", "summary": "listed"},
			}})
		}
		for _, r := range now {
			if ctx.Err() != nil {
				return
			}
			if x.reply(ctx, ag, r) && r.task != "" {
				working = append(working, r.task)
			}
		}
	}
}

// answerFor is the reply an agent would send to m.
func (x *crashRun) answerFor(m blackbox.InboxMessage, rng *mrand.Rand) (crashReply, bool) {
	switch {
	case m.InstructionID != "":
		if i := strings.Index(m.Body, "reply with <done:"); i >= 0 {
			tok := strings.TrimSpace(m.Body[i+len("reply with "):])
			return crashReply{what: "matcher reply for " + m.InstructionID, body: map[string]any{"text": "finished: " + tok}}, true
		}
		return crashReply{what: "ok to " + m.InstructionID, body: map[string]any{"in_reply_to": m.InstructionID, "text": "ok, done"}}, true
	case m.TaskID != "" && m.Type != "cancel":
		body := map[string]any{"text": fmt.Sprintf("[ACK] %s - RECEIVED\nUnderstanding: implement item %s of the listing", m.TaskID, m.TaskID)}
		if rng.Float64() < 0.5 {
			body["in_reply_to"] = m.ID
		}
		return crashReply{what: "ACK of " + m.ID + " (" + m.TaskID + ")", body: body, task: m.TaskID}, true
	}
	return crashReply{}, false
}

// reply sends r; it reports whether the reply was accepted as an ACK.
func (x *crashRun) reply(ctx context.Context, ag *crashAgent, r crashReply) bool {
	a, err := x.call(ctx, "POST", "/v1/inbox/replies", ag.token(), r.body, "/v1/inbox/replies")
	if err != nil {
		return false
	}
	if a.status == 409 || a.status == 503 {
		return false
	}
	if !x.agentStatus(ctx, ag, "POST /v1/inbox/replies ("+r.what+")", a, 202) {
		return false
	}
	var out struct {
		Interpreted struct {
			Kind         string   `json:"kind"`
			Acknowledged []string `json:"acknowledged"`
		} `json:"interpreted"`
	}
	if err := a.decode(&out); err != nil {
		x.problem("POST /v1/inbox/replies: %s", a.body)
		return false
	}
	if len(out.Interpreted.Acknowledged) > 0 {
		x.ackedBy(fmt.Sprintf("%s's reply (%s) answered 202 %s (instance %d)", ag.name, r.what, bytes.TrimSpace(a.body), a.gen), out.Interpreted.Acknowledged...)
	}
	return out.Interpreted.Kind == "ack" && len(out.Interpreted.Acknowledged) > 0
}

// agentStatus checks an agent's answer: want, or a 401 explained by a
// rotation whose answer was lost (then the agent gets a new token).
func (x *crashRun) agentStatus(ctx context.Context, ag *crashAgent, what string, a answer, want int) bool {
	ag.mu.Lock()
	uncertain := ag.uncertainGen
	if a.status == want && uncertain != 0 && a.gen > uncertain {
		ag.uncertainGen = 0
	}
	ag.mu.Unlock()
	switch a.status {
	case want:
		return true
	case 503:
		return false
	case 401:
		if uncertain != 0 {
			x.rotate(ctx, ag)
			return false
		}
		x.problem("%s: %s's token, acknowledged by an earlier answer, was refused (instance %d): %s", what, ag.name, a.gen, bytes.TrimSpace(a.body))
		return false
	case 404:
		x.problem("%s for %s answered 404 (lost?): %s", what, ag.name, bytes.TrimSpace(a.body))
		return false
	}
	x.unexpected(what+" for "+ag.name, a)
	return false
}

// rotate gives the agent a new token (POST /v1/agents/{name}/token).
func (x *crashRun) rotate(ctx context.Context, ag *crashAgent) {
	a, err := x.call(ctx, "POST", "/v1/agents/"+ag.name+"/token", x.srv.token, nil, "/v1/agents/{name}/token")
	ag.mu.Lock()
	defer ag.mu.Unlock()
	switch {
	case err != nil, a.status == 503:
		// It may have taken effect: the old token may or may not work.
		ag.uncertainGen = a.gen
	case a.status == 200:
		var out struct{ Token string }
		if err := a.decode(&out); err != nil || out.Token == "" {
			x.problem("POST /v1/agents/%s/token answered 200 %s", ag.name, a.body)
			return
		}
		ag.tok, ag.uncertainGen = out.Token, 0
	default:
		x.problem("POST /v1/agents/%s/token: unexpected %d %s", ag.name, a.status, a.body)
	}
}

// --- the final checks --------------------------------------------------------------

func terminal(state string) bool {
	return state == "acknowledged" || state == "failed" || state == "cancelled"
}

// terminalEvents maps the events that end a delivery to its state.
var terminalEvents = map[string]string{
	"delivery.acknowledged": "acknowledged",
	"delivery.failed":       "failed",
	"delivery.cancelled":    "cancelled",
}

// afterEnd are the delivery events that may follow its end, by the state
// it ended in: notices (a cancel, a follow-up), the agent's progress on an
// acknowledged task, and the record of a failed one passed on.
var afterEnd = map[string]map[string]bool{
	"acknowledged": {"delivery.notice": true, "delivery.reply": true},
	"failed":       {"delivery.notice": true, "delivery.reassigned": true, "delivery.escalated": true},
	"cancelled":    {"delivery.notice": true},
}

type crashEvent struct {
	blackbox.Event
	id string // the delivery it is about ("" for none)
}

// deliveryOf is the delivery an event is about.
func deliveryOf(ev blackbox.Event) string {
	if !strings.HasPrefix(ev.Type, "delivery.") {
		return ""
	}
	var d struct {
		ID      string `json:"id"`
		Message *struct {
			ID string `json:"id"`
		} `json:"message"`
	}
	_ = json.Unmarshal(ev.Data, &d)
	if d.ID == "" && d.Message != nil {
		return d.Message.ID
	}
	return d.ID
}

// log reads the whole event log, page by page.
func (x *crashRun) log() []crashEvent {
	var all []crashEvent
	var after uint64
	for {
		a, err := x.call(context.Background(), "GET", "/v1/events?follow=false&limit=10000&after="+strconv.FormatUint(after, 10), x.srv.token, nil, "/v1/events")
		if err != nil || a.status != 200 {
			x.t.Fatalf("seed %d: read the event log after %d: %v %d %s", x.seed, after, err, a.status, a.body)
		}
		var page struct {
			Events []blackbox.Event `json:"events"`
			Next   uint64           `json:"next"`
		}
		if err := a.decode(&page); err != nil {
			x.t.Fatalf("seed %d: event page: %v", x.seed, err)
		}
		if len(page.Events) == 0 {
			return all
		}
		for _, ev := range page.Events {
			all = append(all, crashEvent{Event: ev, id: deliveryOf(ev)})
		}
		if page.Next <= after {
			x.t.Fatalf("seed %d: the event page after %d gave next %d", x.seed, after, page.Next)
		}
		after = page.Next
	}
}

func (x *crashRun) head() uint64 {
	a, err := x.call(context.Background(), "GET", "/healthz", "", nil, "/healthz")
	if err != nil || a.status != 200 {
		x.t.Fatalf("seed %d: /healthz: %v %d %s", x.seed, err, a.status, a.body)
	}
	var h struct{ Seq uint64 }
	if err := a.decode(&h); err != nil {
		x.t.Fatalf("seed %d: /healthz: %s", x.seed, a.body)
	}
	return h.Seq
}

// excerpt is the events of one delivery, for a report.
func excerpt(evs []crashEvent, id string) string {
	var b strings.Builder
	n := 0
	for _, ev := range evs {
		if ev.id != id {
			continue
		}
		if n++; n > 25 {
			b.WriteString("    …\n")
			break
		}
		fmt.Fprintf(&b, "    %d %s %s agent=%s %s\n", ev.Seq, ev.Time.Format("15:04:05.000000"), ev.Type, ev.Agent, ev.Data)
	}
	return b.String()
}

type apiState struct {
	ID      string `json:"id"`
	State   string `json:"state"`
	To      string `json:"to"`
	Agent   string `json:"agent"`
	Body    string `json:"body"`
	Content string `json:"content"`
	TaskID  string `json:"task_id"`
	Type    string `json:"type"`
}

func (x *crashRun) get(path string) (apiState, int) {
	a, err := x.call(context.Background(), "GET", path, x.srv.token, nil, "final GET")
	if err != nil {
		x.t.Fatalf("seed %d: GET %s: %v", x.seed, path, err)
	}
	var s apiState
	if a.status == 200 {
		if err := a.decode(&s); err != nil {
			x.t.Fatalf("seed %d: GET %s: %s", x.seed, path, a.body)
		}
	}
	return s, a.status
}

// verify checks, with the load stopped and the last instance up, that every
// 2xx answer still holds and that the log and the API agree.
func (x *crashRun) verify() {
	t := x.t
	bad := 0
	fail := func(format string, args ...any) {
		if bad++; bad <= 40 {
			t.Errorf("seed %d: "+format, append([]any{x.seed}, args...)...)
		}
	}

	// Tokens handed out work on the last instance.
	for _, name := range crashAgents {
		ag := x.agents[name]
		a, err := x.call(context.Background(), "GET", "/v1/inbox", ag.token(), nil, "final inbox")
		if err != nil {
			t.Fatalf("seed %d: GET /v1/inbox: %v", x.seed, err)
		}
		if a.status != 200 && !(a.status == 401 && ag.uncertainGen != 0) {
			fail("%s's token is refused after the restarts: %d %s", name, a.status, a.body)
		}
	}
	for name, tok := range x.dynAgents {
		if s, st := x.get("/v1/agents/" + name); st != 200 {
			fail("agent %s, created with 201, is lost: %d %+v", name, st, s)
		}
		a, err := x.call(context.Background(), "GET", "/v1/inbox", tok, nil, "final inbox")
		if err != nil || a.status != 200 {
			fail("agent %s's token, given with 201, is refused: %v %d %s", name, err, a.status, a.body)
		}
	}

	// The deliveries, as the log knew them, then as the API serves them,
	// then the whole log again.
	h0 := x.head()
	before := x.log()
	states := map[string]apiState{}
	for _, ev := range before {
		if ev.id == "" || ev.Seq > h0 {
			continue
		}
		if _, ok := states[ev.id]; ok {
			continue
		}
		s, st := x.get("/v1/messages/" + ev.id)
		if st != 200 {
			fail("delivery %s of the log: GET /v1/messages/%s answered %d\n%s", ev.id, ev.id, st, excerpt(before, ev.id))
			continue
		}
		states[ev.id] = s
	}
	for id, rec := range x.instructions {
		s, st := x.get("/v1/instructions/" + id)
		if st != 200 {
			fail("instruction %s (%q), created with 201, is lost: GET answered %d", id, rec.Content, st)
			continue
		}
		if s.Content != rec.Content || s.Agent != rec.Agent {
			fail("instruction %s is %+v, created as %+v", id, s, rec)
		}
		if _, ok := states[id]; !ok {
			states[id] = apiState{ID: id, State: s.State}
		}
	}
	for id, rec := range x.messages {
		s, st := x.get("/v1/messages/" + id)
		if st != 200 {
			fail("message %s (%s to %s), created with 201, is lost: GET answered %d", id, rec.TaskID, rec.To, st)
			continue
		}
		if s.Body != rec.Body || s.To != rec.To || s.TaskID != rec.TaskID || s.Type != "task_delegation" {
			fail("message %s is %+v, created as %+v", id, s, rec)
		}
		if _, ok := states[id]; !ok {
			states[id] = s
		}
	}
	evs := x.log()

	// (3) The log: seqs 1..n without a gap, at most one end per delivery,
	// nothing but notices and records after it.
	for i, ev := range evs {
		if ev.Seq != uint64(i+1) {
			t.Fatalf("seed %d: event %d has seq %d: a gap or a duplicate in the log", x.seed, i+1, ev.Seq)
		}
	}
	if uint64(len(evs)) < h0 {
		t.Fatalf("seed %d: the log has %d events, /healthz said %d", x.seed, len(evs), h0)
	}
	ended := map[string]crashEvent{} // delivery → its first terminal event
	created := map[string]bool{}
	for _, ev := range evs {
		if ev.id == "" {
			continue
		}
		switch ev.Type {
		case "delivery.queued":
			created[ev.id] = true
		case "delivery.sent":
			var d struct {
				Message *json.RawMessage `json:"message"`
			}
			_ = json.Unmarshal(ev.Data, &d)
			if d.Message != nil {
				created[ev.id] = true
			}
		}
		if !created[ev.id] {
			fail("event %d (%s) is about %s, which no earlier event created\n%s", ev.Seq, ev.Type, ev.id, excerpt(evs, ev.id))
			created[ev.id] = true
		}
		end, isEnded := ended[ev.id]
		if _, ok := terminalEvents[ev.Type]; ok {
			if isEnded {
				fail("delivery %s ended twice: %s at seq %d, then %s at seq %d\n%s", ev.id, end.Type, end.Seq, ev.Type, ev.Seq, excerpt(evs, ev.id))
				continue
			}
			ended[ev.id] = ev
			continue
		}
		if isEnded && !afterEnd[terminalEvents[end.Type]][ev.Type] {
			fail("delivery %s got %s at seq %d after it ended (%s at seq %d)\n%s", ev.id, ev.Type, ev.Seq, end.Type, end.Seq, excerpt(evs, ev.id))
		}
	}
	for id := range x.instructions {
		if !created[id] {
			fail("instruction %s, created with 201, has no creation event", id)
		}
	}
	for id := range x.messages {
		if !created[id] {
			fail("message %s, created with 201, has no creation event", id)
		}
	}

	// (2) Every acknowledgment answered 2xx is in force.
	for id, how := range x.acked {
		s, ok := states[id]
		end := ended[id]
		switch {
		case !ok:
			fail("%s was acknowledged (%s) but the API does not know it\n%s", id, how, excerpt(evs, id))
		case s.State == "cancelled" && end.Type == "delivery.cancelled":
			fail("%s was acknowledged (%s), then cancelled\n%s", id, how, excerpt(evs, id))
		case s.State != "acknowledged" || end.Type != "delivery.acknowledged":
			fail("%s was acknowledged (%s) but is %s now\n%s", id, how, s.State, excerpt(evs, id))
		}
	}
	// A terminal state a GET returned is still the state.
	for id, st := range x.observed {
		if s := states[id]; s.State != st {
			fail("GET %s answered %s during the load; it is %s now\n%s", id, st, s.State, excerpt(evs, id))
		}
	}

	// (4) The API agrees with the log's ends: an end logged before the
	// reads shows; a terminal state read is logged.
	for id, s := range states {
		end, isEnded := ended[id]
		switch {
		case isEnded && end.Seq <= h0 && s.State != terminalEvents[end.Type]:
			fail("%s ended with %s at seq %d, but the API says %s\n%s", id, end.Type, end.Seq, s.State, excerpt(evs, id))
		case terminal(s.State) && (!isEnded || terminalEvents[end.Type] != s.State):
			fail("the API says %s is %s, the log has no such end\n%s", id, s.State, excerpt(evs, id))
		}
	}
	if bad > 40 {
		t.Errorf("seed %d: … %d problems in all", x.seed, bad)
	}
	if t.Failed() {
		t.Logf("server output (last instance):\n%s", blackbox.Tail(x.srv.output(), 40))
	}

	x.mu.Lock()
	defer x.mu.Unlock()
	x.counts["events"] = len(evs)
	x.counts["deliveries"] = len(created)
	for _, ev := range ended {
		x.counts[ev.Type]++
	}
	for _, ev := range evs {
		switch ev.Type {
		case "delivery.retried", "delivery.reassigned", "delivery.escalated", "agent.token", "delivery.reply":
			x.counts[ev.Type]++
		}
	}
}

func (x *crashRun) summary(took time.Duration) {
	x.mu.Lock()
	defer x.mu.Unlock()
	ok := 0
	var lines []string
	for k, n := range x.counts {
		f := strings.Fields(k)
		if len(f) == 3 && strings.HasPrefix(f[2], "2") && f[1] != "final" {
			ok += n
		}
		if len(f) == 3 && f[1] != "final" && f[1] != "/v1/events" && f[1] != "/healthz" {
			lines = append(lines, fmt.Sprintf("%s: %d", k, n))
		}
	}
	sort.Strings(lines)
	x.srv.mu.Lock()
	var sum, longest time.Duration
	for _, d := range x.srv.startTimes {
		sum += d
		longest = max(longest, d)
	}
	mean := sum / time.Duration(max(1, len(x.srv.startTimes)))
	x.srv.mu.Unlock()
	x.t.Logf("seed %d: %s, %d SIGKILLs (%d during start-up, %d during a graceful stop), %d graceful restarts, %d instances (%d lived past a periodic checkpoint); start to serving: mean %s, max %s",
		x.seed, took.Round(time.Millisecond), x.kills, x.earlyKills, x.termKills, x.graceful, x.srv.gen, x.longLived,
		mean.Round(time.Millisecond), longest.Round(time.Millisecond))
	for _, l := range x.longRecoveries {
		x.t.Logf("long-lived instance %s", l)
	}
	x.t.Logf("requests answered 2xx: %d (%d instructions and %d delegations created, %d acknowledgments told, %d agents created); %d transport errors ignored",
		ok, len(x.instructions), len(x.messages), len(x.acked), len(x.dynAgents), x.connErrors)
	x.t.Logf("log: %d events, %d deliveries: %d acknowledged, %d failed, %d cancelled; %d retries, %d reassignments, %d escalations, %d token changes",
		x.counts["events"], x.counts["deliveries"], x.counts["delivery.acknowledged"], x.counts["delivery.failed"], x.counts["delivery.cancelled"],
		x.counts["delivery.retried"], x.counts["delivery.reassigned"], x.counts["delivery.escalated"], x.counts["agent.token"])
	x.t.Logf("answers by route:\n  %s", strings.Join(lines, "\n  "))
}
