package test

// Several `wilco serve` processes on one PostgreSQL store: the active node
// is killed with SIGKILL again and again while callers and mailbox agents
// go on, and a paused former leader is shown to write nothing after a
// standby took over. See TestFailoverKillNineLosesNothingAcknowledged and
// TestAPausedFormerLeaderCannotWrite.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"wilco/natsbox"
	"wilco/store/postgres/pgtemp"
	"wilco/test/blackbox"
	"wilco/wire"
)

// failoverTTL is the nodes' lease TTL in these tests: short, so that ten
// takeovers fit in a test run; $WILCO_FAILOVER_TTL sets another (the
// benchmark in docs/BENCHMARKS.md uses the default, 10s).
var failoverTTL = func() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("WILCO_FAILOVER_TTL")); err == nil && d > 0 {
		return d
	}
	return 2 * time.Second
}()

const failoverConfig = `agents:
  - {name: a1, adapter: mailbox, capabilities: [go]}
  - {name: a2, adapter: mailbox, capabilities: [go]}
  - {name: a3, adapter: mailbox, capabilities: [go]}
verify:
  steps:
    - {name: check, run: "true", timeout: 30s}
policy:
  ack: {timeouts: [2s, 2s, 2s], backoff: {base: 200ms, max: 500ms}}
  instruction: {max_retries: 50}
`

// startPostgres starts a throw-away PostgreSQL server for one test and
// returns a database's store URL on it.
func startPostgres(t *testing.T, repo string) string {
	t.Helper()
	srv, err := pgtemp.Start(t.Context())
	if errors.Is(err, pgtemp.ErrNoServer) {
		t.Skipf("no PostgreSQL here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv.URL("postgres") + "&repository=" + repo
}

// pgNode is one `wilco serve` on the PostgreSQL store, in a directory of
// its own (as on a host of its own), on a fixed port across restarts.
type pgNode struct {
	t     *testing.T
	name  string
	dir   string
	addr  string
	store string
	// transport is the NATS server's URL ("": none).
	transport string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan error
	out    *blackbox.LockedBuffer
	starts int
}

func newPGNode(t *testing.T, name, store string) *pgNode {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "wilco.yaml"), []byte(failoverConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	n := &pgNode{t: t, name: name, dir: dir, addr: addr, store: store, out: &blackbox.LockedBuffer{}}
	t.Cleanup(n.stop)
	return n
}

func (n *pgNode) url() string { return "http://" + n.addr }

// start starts the process; it serves as a standby or as the active node.
func (n *pgNode) start() {
	n.t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	n.starts++
	fmt.Fprintf(n.out, "=== start %d\n", n.starts)
	args := []string{"serve", "--addr", n.addr, "--store", n.store, "--lease-ttl", failoverTTL.String()}
	if n.transport != "" {
		args = append(args, "--transport", n.transport)
	}
	cmd := exec.Command(blackbox.WilcoBin, args...)
	cmd.Dir = n.dir
	cmd.Env = append(os.Environ(), "WILCO_TOKEN="+blackbox.AdminToken)
	cmd.Stdout, cmd.Stderr = n.out, n.out
	if err := cmd.Start(); err != nil {
		n.t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	n.cmd, n.exited = cmd, exited
}

// signal sends sig to the running process.
func (n *pgNode) signal(sig syscall.Signal) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd != nil {
		_ = n.cmd.Process.Signal(sig)
	}
}

// kill SIGKILLs the process and waits for it to be gone.
func (n *pgNode) kill() {
	n.mu.Lock()
	cmd, exited := n.cmd, n.exited
	n.cmd = nil
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-exited
}

func (n *pgNode) stop() {
	n.mu.Lock()
	cmd, exited := n.cmd, n.exited
	n.cmd = nil
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGCONT)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		n.t.Errorf("%s did not stop in 30s after SIGTERM", n.name)
	}
}

// role asks the node's /healthz: "active", "standby" or "down".
func (n *pgNode) role(hc *http.Client) string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", n.url()+"/healthz", nil)
	resp, err := hc.Do(req)
	if err != nil {
		return "down"
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.Header.Get("Wilco-Standby") != "" {
		return "standby"
	}
	if resp.StatusCode == 200 {
		return "active"
	}
	return "down"
}

// failoverRun is the state of a failover test: the nodes, and what the
// callers and agents were answered 2xx.
type failoverRun struct {
	t     *testing.T
	nodes []*pgNode
	hc    *http.Client

	mu       sync.Mutex
	tokens   map[string]string // agent → token
	instrs   map[string]bool   // instructions created with 201
	tasks    map[string]bool   // tasks created with 201
	acked    map[string]string // delivery → how its acknowledgment was answered 2xx
	problems []string
}

func (x *failoverRun) problem(format string, args ...any) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.problems) < 50 {
		x.problems = append(x.problems, fmt.Sprintf(format, args...))
	}
}

// active is the node that answers as the active one ("" none).
func (x *failoverRun) active() *pgNode {
	for _, n := range x.nodes {
		if n.role(x.hc) == "active" {
			return n
		}
	}
	return nil
}

type answer2 struct {
	status int
	body   []byte
}

// call sends a request to the cluster as a client that knows every node's
// address would: to any node, following a standby's redirect, moving on
// from a node that is down or standing by with no active node, for up to
// a minute. A request whose answer was lost (err != nil) may or may not
// have been carried out.
func (x *failoverRun) call(ctx context.Context, method, path, token string, body any) (answer2, error) {
	var data []byte
	if body != nil {
		data, _ = json.Marshal(body)
	}
	deadline := time.Now().Add(time.Minute)
	var last error
	for i := 0; time.Now().Before(deadline); i++ {
		if ctx.Err() != nil {
			return answer2{}, ctx.Err()
		}
		base := x.nodes[i%len(x.nodes)].url()
		for hop := 0; hop < 3; hop++ {
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			req, _ := http.NewRequestWithContext(rctx, method, base+path, bytes.NewReader(data))
			req.Header.Set("Authorization", "Bearer "+token)
			if body != nil {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := x.hc.Do(req)
			if err != nil {
				cancel()
				last = err
				if method != "GET" && !isRefused(err) {
					// Sent, perhaps carried out: the answer is lost.
					return answer2{}, err
				}
				break
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			cancel()
			if act := resp.Header.Get("Wilco-Active"); act != "" && resp.StatusCode == http.StatusTemporaryRedirect {
				base = act
				continue
			}
			if resp.StatusCode == http.StatusServiceUnavailable {
				last = fmt.Errorf("503 %s", b)
				break
			}
			return answer2{resp.StatusCode, b}, nil
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	return answer2{}, fmt.Errorf("no node answered %s %s in a minute: %v", method, path, last)
}

func isRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED)
}

func (x *failoverRun) setUp(ctx context.Context) {
	x.t.Helper()
	for _, a := range []string{"a1", "a2", "a3"} {
		r, err := x.call(ctx, "POST", "/v1/agents/"+a+"/token", blackbox.AdminToken, nil)
		if err != nil || r.status != 200 {
			x.t.Fatalf("token of %s: %v %d %s", a, err, r.status, r.body)
		}
		var out struct{ Token string }
		_ = json.Unmarshal(r.body, &out)
		x.tokens[a] = out.Token
	}
}

// caller creates instructions and tasks.
func (x *failoverRun) caller(ctx context.Context, rng *mrand.Rand) {
	for k := 0; ctx.Err() == nil; k++ {
		if k%8 == 0 {
			id := fmt.Sprintf("F-%d", k/8+1)
			r, err := x.call(ctx, "POST", "/v1/tasks", blackbox.AdminToken, map[string]any{"id": id, "description": "list item " + id})
			if err == nil && r.status == 201 {
				x.mu.Lock()
				x.tasks[id] = true
				x.mu.Unlock()
			} else if err == nil {
				x.problem("POST /v1/tasks %s answered %d %s", id, r.status, r.body)
			}
		} else {
			agent := []string{"a1", "a2", "a3"}[rng.IntN(3)]
			r, err := x.call(ctx, "POST", "/v1/instructions", blackbox.AdminToken, map[string]any{"agent": agent, "content": fmt.Sprintf("step %d", k)})
			if err == nil && r.status == 201 {
				var out struct{ ID string }
				_ = json.Unmarshal(r.body, &out)
				x.mu.Lock()
				x.instrs[out.ID] = true
				x.mu.Unlock()
			} else if err == nil {
				x.problem("POST /v1/instructions answered %d %s", r.status, r.body)
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(20+rng.IntN(60)) * time.Millisecond):
		}
	}
}

// agent polls its inbox and answers: "ok" to instructions, an ACK and then
// task-complete to task delegations.
func (x *failoverRun) agent(ctx context.Context, name string) {
	token := x.tokens[name]
	for ctx.Err() == nil {
		r, err := x.call(ctx, "GET", "/v1/inbox?wait=500ms", token, nil)
		if err != nil || r.status != 200 {
			if err == nil {
				x.problem("%s: GET /v1/inbox answered %d %s", name, r.status, r.body)
			}
			continue
		}
		var out struct{ Messages []blackbox.InboxMessage }
		_ = json.Unmarshal(r.body, &out)
		for _, m := range out.Messages {
			switch {
			case m.InstructionID != "":
				x.reply(ctx, name, token, map[string]any{"in_reply_to": m.InstructionID, "text": "ok, done"})
			case m.TaskID != "" && m.Type != "cancel":
				if x.reply(ctx, name, token, map[string]any{"in_reply_to": m.ID,
					"text": fmt.Sprintf("[ACK] %s - RECEIVED\nUnderstanding: list item %s", m.TaskID, m.TaskID)}) {
					// A completion whose answer was lost is sent again,
					// as an agent that knows its work is done does.
					for !x.replied(ctx, name, token, map[string]any{"type": "task-complete",
						"data": map[string]any{"task_id": m.TaskID, "status": "success", "summary": "listed"}}) && ctx.Err() == nil {
					}
				}
			}
		}
	}
}

// natsAgent is agent on NATS: pushed its messages, it answers them as
// agent does, and asks for a dispatch cycle every 2 s.
func (x *failoverRun) natsAgent(ctx context.Context, name, url string) {
	var ag *natsbox.Agent
	for ctx.Err() == nil {
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		var err error
		ag, err = natsbox.Dial(dctx, url, "failover", name, x.tokens[name])
		cancel()
		if err == nil {
			break
		}
	}
	if ag == nil {
		return
	}
	defer ag.Close()
	go func() {
		tick := time.NewTicker(2 * time.Second)
		defer tick.Stop()
		for {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_ = ag.Cycle(cctx)
			cancel()
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	answer := func(body map[string]any) bool {
		for ctx.Err() == nil {
			rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			ans, err := ag.Reply(rctx, body)
			cancel()
			if err != nil {
				continue // stored or not, the same reply again is answered the same
			}
			return x.answered(name, body, ans.Status, ans.Body)
		}
		return false
	}
	for ctx.Err() == nil {
		_ = ag.Messages(ctx, func(m wire.InboxMessage) error {
			switch {
			case m.InstructionID != "":
				answer(map[string]any{"in_reply_to": m.InstructionID, "text": "ok, done"})
			case m.TaskID != "" && m.Type != "cancel":
				if answer(map[string]any{"in_reply_to": m.ID,
					"text": fmt.Sprintf("[ACK] %s - RECEIVED\nUnderstanding: list item %s", m.TaskID, m.TaskID)}) {
					answer(map[string]any{"type": "task-complete",
						"data": map[string]any{"task_id": m.TaskID, "status": "success", "summary": "listed"}})
				}
			}
			return nil
		})
	}
}

// reply sends an agent's reply and records what it acknowledged.
//
// A reply whose answer was lost (the node died with it, stored or not) is
// sent again until one is answered, as the agents on NATS do. An ACK
// stored by a node that died before answering never comes back as an ACK
// REQUIRED — the task is acknowledged — so an agent that waited for one
// would never complete it; sent again, it is answered 409 "already
// acknowledged", which says it was stored.
func (x *failoverRun) reply(ctx context.Context, name, token string, body map[string]any) bool {
	for ctx.Err() == nil {
		r, err := x.call(ctx, "POST", "/v1/inbox/replies", token, body)
		if err == nil {
			return x.answered(name, body, r.status, r.body)
		}
	}
	return false
}

// replied sends an agent's reply and reports whether it was answered at
// all (its answer not lost to a node's death).
func (x *failoverRun) replied(ctx context.Context, name, token string, body map[string]any) bool {
	r, err := x.call(ctx, "POST", "/v1/inbox/replies", token, body)
	if err != nil {
		return false
	}
	x.answered(name, body, r.status, r.body)
	return true
}

// answered records what a reply answered 202 acknowledged, and reports
// whether it was an acknowledgment.
func (x *failoverRun) answered(name string, body map[string]any, status int, answer []byte) bool {
	if status == http.StatusConflict && bytes.Contains(answer, []byte("is already acknowledged")) {
		return true // an ACK sent again whose first answer was lost
	}
	if status != 202 {
		return false
	}
	var out struct {
		Interpreted struct {
			Kind         string   `json:"kind"`
			Acknowledged []string `json:"acknowledged"`
		} `json:"interpreted"`
	}
	_ = json.Unmarshal(answer, &out)
	x.mu.Lock()
	for _, id := range out.Interpreted.Acknowledged {
		x.acked[id] = fmt.Sprintf("%s's reply %v answered 202", name, body)
	}
	x.mu.Unlock()
	return out.Interpreted.Kind == "ack" && len(out.Interpreted.Acknowledged) > 0
}

// log reads the whole event log from the active node.
func (x *failoverRun) log(ctx context.Context) []blackbox.Event {
	var all []blackbox.Event
	after := uint64(0)
	for {
		r, err := x.call(ctx, "GET", fmt.Sprintf("/v1/events?follow=false&after=%d&limit=10000", after), blackbox.AdminToken, nil)
		if err != nil || r.status != 200 {
			x.t.Fatalf("read the log: %v %d %s", err, r.status, r.body)
		}
		var page struct {
			Events []blackbox.Event
			Next   uint64
		}
		_ = json.Unmarshal(r.body, &page)
		if len(page.Events) == 0 {
			return all
		}
		all = append(all, page.Events...)
		after = page.Next
	}
}

var terminalTaskStates = []string{"success", "cancelled", "stuck", "skipped", "aborted", "failed"}

// TestFailoverKillNineLosesNothingAcknowledged runs three `wilco serve`
// processes on one PostgreSQL database, with callers creating tasks and
// instructions and mailbox agents answering them through whichever node
// answers, and kills the active node with SIGKILL ten times at random
// moments, restarting it as a standby each time. A standby takes over
// within the lease's TTL every time. At the end every instruction and task
// answered 201 exists, every acknowledgment answered 202 is in force,
// every task ended exactly once, no delivery ended twice, and the log has
// no gap. The time from each kill to the first event the new active node
// committed is logged (docs/BENCHMARKS.md has the numbers).
func TestFailoverKillNineLosesNothingAcknowledged(t *testing.T) {
	kills := 10
	if testing.Short() {
		kills = 3
	}
	failover(t, kills, "")
}

// TestFailoverWithAgentsOnNATSLosesNothingAcknowledged is the same with the
// three nodes carrying the mailbox over NATS JetStream (wilco serve
// --store postgres://… --transport nats://…) and the agents on NATS
// (package natsbox): pushed their messages, replying on their subjects,
// asking for a cycle every 2 s as `wilco inbox --follow` does every 15.
func TestFailoverWithAgentsOnNATSLosesNothingAcknowledged(t *testing.T) {
	kills := 3
	if testing.Short() {
		kills = 2
	}
	failover(t, kills, startNATS(t))
}

// failover runs three nodes on one PostgreSQL database under load and
// kills the active one kills times; with transport, the nodes and the
// agents use NATS.
func failover(t *testing.T, kills int, transport string) {
	store := startPostgres(t, "failover")
	x := &failoverRun{t: t, hc: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		tokens: map[string]string{}, instrs: map[string]bool{}, tasks: map[string]bool{}, acked: map[string]string{}}
	for i := range 3 {
		n := newPGNode(t, fmt.Sprintf("node%d", i+1), store)
		n.transport = transport
		x.nodes = append(x.nodes, n)
	}
	for _, n := range x.nodes {
		n.start()
	}
	waitActive := func(what string) *pgNode {
		var n *pgNode
		if blackbox.Eventually(30*time.Second+2*failoverTTL, 20*time.Millisecond, func() bool { n = x.active(); return n != nil }) {
			return n
		}
		x.dump()
		t.Fatalf("no node became active %s", what)
		return nil
	}
	waitActive("at start")
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	x.setUp(ctx)

	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := mrand.New(mrand.NewPCG(seed, 1))
	var load sync.WaitGroup
	callerCtx, stopCaller := context.WithCancel(ctx)
	defer stopCaller()
	load.Go(func() { x.caller(callerCtx, mrand.New(mrand.NewPCG(seed, 2))) })
	agentsCtx, stopAgents := context.WithCancel(ctx)
	defer stopAgents()
	var agents sync.WaitGroup
	for _, a := range []string{"a1", "a2", "a3"} {
		if transport != "" {
			agents.Go(func() { x.natsAgent(agentsCtx, a, transport) })
		} else {
			agents.Go(func() { x.agent(agentsCtx, a) })
		}
	}

	var failovers []time.Duration
	for k := range kills {
		blackbox.AtRandom(t, time.Duration(500+rng.IntN(2500))*time.Millisecond) // a random moment of the load
		victim := waitActive(fmt.Sprintf("before kill %d", k+1))
		killed := time.Now()
		victim.kill()
		// The new active node's first event: the first whose time is past
		// the kill (the nodes share this machine's clock).
		next := waitActive(fmt.Sprintf("after kill %d", k+1))
		if next == victim {
			t.Fatalf("kill %d: the killed node is active", k+1)
		}
		var first time.Time
		blackbox.Eventually(30*time.Second, 10*time.Millisecond, func() bool {
			for _, ev := range x.tailEvents(ctx, 200) {
				if ev.Time.After(killed) {
					first = ev.Time
					return true
				}
			}
			return false
		})
		if first.IsZero() {
			t.Fatalf("kill %d: no event committed after the kill within 30 s", k+1)
		}
		failovers = append(failovers, first.Sub(killed))
		t.Logf("kill %d of %s: %s active, first event committed %s after the kill", k+1, victim.name, next.name, first.Sub(killed).Round(time.Millisecond))
		victim.start() // back as a standby
	}
	stopCaller()
	load.Wait()

	// Let the agents finish every task, then check.
	var open []string
	if !blackbox.Eventually(3*time.Minute, 200*time.Millisecond, func() bool { open = x.openTasks(ctx); return len(open) == 0 }) {
		x.dump()
		x.dumpTasks(ctx, open)
		t.Fatalf("tasks still open 3 minutes after the load: %v", open)
	}
	stopAgents()
	agents.Wait()
	x.verify(ctx)

	sorted := slices.Clone(failovers)
	slices.Sort(sorted)
	t.Logf("failover (kill to the first event of the new active node), %d kills, TTL %s, transport %q: median %s, max %s; %d tasks, %d instructions, %d acknowledgments",
		len(sorted), failoverTTL, transport, sorted[len(sorted)/2].Round(time.Millisecond), sorted[len(sorted)-1].Round(time.Millisecond),
		len(x.tasks), len(x.instrs), len(x.acked))
}

// tailEvents reads the last n events of the log.
func (x *failoverRun) tailEvents(ctx context.Context, n int) []blackbox.Event {
	r, err := x.call(ctx, "GET", "/healthz", blackbox.AdminToken, nil)
	if err != nil || r.status != 200 {
		return nil
	}
	var h struct {
		Seq uint64 `json:"seq"`
	}
	_ = json.Unmarshal(r.body, &h)
	after := uint64(0)
	if h.Seq > uint64(n) {
		after = h.Seq - uint64(n)
	}
	r, err = x.call(ctx, "GET", fmt.Sprintf("/v1/events?follow=false&after=%d&limit=10000", after), blackbox.AdminToken, nil)
	if err != nil || r.status != 200 {
		return nil
	}
	var page struct{ Events []blackbox.Event }
	_ = json.Unmarshal(r.body, &page)
	return page.Events
}

func (x *failoverRun) openTasks(ctx context.Context) []string {
	x.mu.Lock()
	ids := make([]string, 0, len(x.tasks))
	for id := range x.tasks {
		ids = append(ids, id)
	}
	x.mu.Unlock()
	sort.Strings(ids)
	var open []string
	for _, id := range ids {
		r, err := x.call(ctx, "GET", "/v1/tasks/"+id, blackbox.AdminToken, nil)
		if err != nil || r.status != 200 {
			open = append(open, id+"?")
			continue
		}
		var tk struct{ State string }
		_ = json.Unmarshal(r.body, &tk)
		if !slices.Contains(terminalTaskStates, tk.State) {
			open = append(open, id+":"+tk.State)
		}
	}
	return open
}

func (x *failoverRun) verify(ctx context.Context) {
	t := x.t
	evs := x.log(ctx)
	for i, ev := range evs {
		if ev.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d: a gap or a duplicate in the log", i+1, ev.Seq)
		}
	}
	ended := map[string]uint64{}      // delivery → seq of its end
	taskEnds := map[string][]uint64{} // task → seqs of its terminal transitions
	for _, ev := range evs {
		if id := deliveryOf(ev); id != "" {
			if _, ok := terminalEvents[ev.Type]; ok {
				if at, twice := ended[id]; twice {
					x.problem("delivery %s ended twice: at seq %d and at seq %d", id, at, ev.Seq)
				}
				ended[id] = ev.Seq
			}
		}
		if ev.Type == "task.state" {
			var d struct{ To string }
			_ = json.Unmarshal(ev.Data, &d)
			if slices.Contains(terminalTaskStates, d.To) {
				taskEnds[ev.TaskID] = append(taskEnds[ev.TaskID], ev.Seq)
			}
		}
	}
	for id := range x.tasks {
		if n := len(taskEnds[id]); n != 1 {
			x.problem("task %s, created with 201, has %d terminal transitions in the log (seqs %v)", id, n, taskEnds[id])
		}
	}
	for id := range x.instrs {
		r, err := x.call(ctx, "GET", "/v1/instructions/"+id, blackbox.AdminToken, nil)
		if err != nil || r.status != 200 {
			x.problem("instruction %s, created with 201, answers %d %v", id, r.status, err)
		}
	}
	for id, how := range x.acked {
		path := "/v1/messages/" + id
		if strings.HasPrefix(id, "I-") || x.instrs[id] {
			path = "/v1/instructions/" + id
		}
		r, err := x.call(ctx, "GET", path, blackbox.AdminToken, nil)
		if err != nil || r.status != 200 {
			x.problem("%s was acknowledged (%s) but answers %d %v", id, how, r.status, err)
			continue
		}
		var d struct{ State string }
		_ = json.Unmarshal(r.body, &d)
		if d.State != "acknowledged" {
			x.problem("%s was acknowledged (%s) but is %s", id, how, d.State)
		}
	}
	x.standbysAgree(ctx, evs)
	if len(x.problems) > 0 {
		x.dump()
		t.Fatalf("%d problems:\n%s", len(x.problems), strings.Join(x.problems, "\n"))
	}
}

// standbysAgree asks every standby, itself (no redirect), for each task
// and for its last event: each answers from the store what the log says.
func (x *failoverRun) standbysAgree(ctx context.Context, evs []blackbox.Event) {
	states := map[string]string{}
	for _, ev := range evs {
		if ev.Type == "task.state" {
			var d struct{ To string }
			_ = json.Unmarshal(ev.Data, &d)
			states[ev.TaskID] = d.To
		}
	}
	standbys := 0
	for _, n := range x.nodes {
		if n.role(x.hc) != "standby" {
			continue
		}
		standbys++
		get := func(path string) (int, []byte, http.Header) {
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(rctx, "GET", n.url()+path, nil)
			req.Header.Set("Authorization", "Bearer "+blackbox.AdminToken)
			resp, err := x.hc.Do(req)
			if err != nil {
				return 0, nil, nil
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, b, resp.Header
		}
		for id := range x.tasks {
			status, b, h := get("/v1/tasks/" + id)
			var tk struct{ State string }
			_ = json.Unmarshal(b, &tk)
			if status != 200 || h.Get("Wilco-Standby") == "" || tk.State != states[id] {
				x.problem("standby %s answers task %s with %d %q, the log says %q", n.name, id, status, tk.State, states[id])
			}
		}
		status, b, _ := get(fmt.Sprintf("/v1/events?follow=false&after=%d", len(evs)-1))
		var page struct{ Events []blackbox.Event }
		_ = json.Unmarshal(b, &page)
		// The log's last event the test read is there (an agent's
		// dispatch cycle may have committed more since).
		if status != 200 || len(page.Events) == 0 || page.Events[0].Seq != uint64(len(evs)) {
			x.problem("standby %s answers the last event with %d %s", n.name, status, b)
		}
	}
	if standbys == 0 {
		x.problem("no node answered as a standby at the end")
	}
}

func (x *failoverRun) dump() {
	for _, n := range x.nodes {
		x.t.Logf("--- %s (%s):\n%s", n.name, n.addr, blackbox.Tail(n.out.String(), 30))
	}
}

// dumpTasks logs what each node, asked itself (no redirect), says of the
// first open tasks: its role, the seq it is at, the task's state and its
// last events — to tell a task stuck on the active node from a standby
// that stopped following the store.
func (x *failoverRun) dumpTasks(ctx context.Context, open []string) {
	get := func(n *pgNode, path string) string {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(rctx, "GET", n.url()+path, nil)
		req.Header.Set("Authorization", "Bearer "+blackbox.AdminToken)
		resp, err := x.hc.Do(req)
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return fmt.Sprintf("%d %s", resp.StatusCode, blackbox.Tail(string(b), 40))
	}
	// The tasks under way first: those queued wait behind them.
	open = slices.Clone(open)
	queued := func(id string) int {
		if strings.HasSuffix(id, ":queued") {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(open, func(a, b string) int { return queued(a) - queued(b) })
	for _, n := range x.nodes {
		x.t.Logf("--- %s is %s; /healthz: %s", n.name, n.role(x.hc), get(n, "/healthz"))
		for _, id := range open[:min(len(open), 2)] {
			id, _, _ = strings.Cut(id, ":")
			x.t.Logf("%s says of %s: %s\nits last events: %s", n.name, id, get(n, "/v1/tasks/"+id), get(n, "/v1/events?follow=false&limit=1000&task="+id))
		}
	}
}

// TestAPausedFormerLeaderCannotWrite pauses the active node (SIGSTOP) until
// a standby has taken over and written, then resumes it (SIGCONT) and
// sends it a write directly: the write is refused, the lease's fencing
// token having moved on, and nothing the old node did reaches the log.
func TestAPausedFormerLeaderCannotWrite(t *testing.T) {
	store := startPostgres(t, "paused")
	x := &failoverRun{t: t, hc: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		tokens: map[string]string{}, instrs: map[string]bool{}, tasks: map[string]bool{}, acked: map[string]string{}}
	a, b := newPGNode(t, "node1", store), newPGNode(t, "node2", store)
	x.nodes = []*pgNode{a, b}
	a.start()
	role := func(n *pgNode, want string) func() bool { return func() bool { return n.role(x.hc) == want } }
	if !blackbox.Eventually(30*time.Second, 20*time.Millisecond, role(a, "active")) {
		x.dump()
		t.Fatal("node1 did not become active")
	}
	b.start()
	if !blackbox.Eventually(30*time.Second, 20*time.Millisecond, role(b, "standby")) {
		x.dump()
		t.Fatal("node2 did not stand by")
	}
	ctx := t.Context()
	x.setUp(ctx)
	// An instruction the old leader holds open: its retries are writes
	// it will try to make once it runs again.
	r, err := x.call(ctx, "POST", "/v1/instructions", blackbox.AdminToken, map[string]any{"agent": "a1", "content": "pending"})
	if err != nil || r.status != 201 {
		t.Fatalf("instruction: %v %d %s", err, r.status, r.body)
	}

	a.signal(syscall.SIGSTOP)
	if !blackbox.Eventually(30*time.Second, 20*time.Millisecond, role(b, "active")) {
		a.signal(syscall.SIGCONT)
		x.dump()
		t.Fatal("node2 did not take over from the paused node1")
	}
	// The new leader writes (the paused node would hold the request).
	x.nodes = []*pgNode{b}
	r, err = x.call(ctx, "POST", "/v1/tasks", blackbox.AdminToken, map[string]any{"id": "NEW-1", "description": "by the new leader"})
	if err != nil || r.status != 201 {
		t.Fatalf("task on the new leader: %v %d %s", err, r.status, r.body)
	}
	before := len(x.log(ctx))

	a.signal(syscall.SIGCONT)
	// Straight to the old leader, not following anything.
	req, _ := http.NewRequestWithContext(ctx, "POST", a.url()+"/v1/tasks", strings.NewReader(`{"id": "OLD-1", "description": "by the old leader"}`))
	req.Header.Set("Authorization", "Bearer "+blackbox.AdminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := x.hc.Do(req)
	if err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 == 2 {
			x.dump()
			t.Fatalf("the resumed old leader accepted a write: %d %s", resp.StatusCode, body)
		}
		t.Logf("the resumed old leader answered %d %s", resp.StatusCode, bytes.TrimSpace(body))
	}
	// It stands by again, with the new leader's address.
	if !blackbox.Eventually(30*time.Second, 20*time.Millisecond, role(a, "standby")) {
		x.dump()
		t.Fatal("the old leader did not stand by again")
	}
	if r, _ := x.call(ctx, "GET", "/v1/tasks/OLD-1", blackbox.AdminToken, nil); r.status != 404 {
		t.Errorf("GET the old leader's task = %d %s, want 404", r.status, r.body)
	}
	evs := x.log(ctx)
	for i, ev := range evs {
		if ev.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d", i+1, ev.Seq)
		}
		if ev.TaskID == "OLD-1" {
			t.Errorf("the old leader's task reached the log: %+v", ev)
		}
	}
	if len(evs) < before {
		t.Errorf("the log shrank from %d to %d events", before, len(evs))
	}
	out := a.out.String()
	if !strings.Contains(out, "lost the repository's lease") {
		t.Errorf("the old leader's log does not say it lost the lease:\n%s", blackbox.Tail(out, 30))
	}
	t.Logf("the old leader: %s", firstMatch(out, "stale", "lease was lost"))

	// wilco status --cluster, asked of the standby, shows both nodes and
	// the lease at its second token.
	st := exec.Command(blackbox.WilcoBin, "status", "--cluster")
	st.Dir = t.TempDir()
	st.Env = append(os.Environ(), "WILCO_ADDR="+a.url(), "WILCO_TOKEN="+blackbox.AdminToken)
	got, err := st.CombinedOutput()
	if err != nil {
		t.Fatalf("wilco status --cluster: %v\n%s", err, got)
	}
	for _, want := range []string{regexp.QuoteMeta(b.url()) + `\s+active`, regexp.QuoteMeta(a.url()) + `\s+standby`, `paused\s+\S+\s+` + regexp.QuoteMeta(b.url()) + `\s+2\s`} {
		if !regexp.MustCompile(want).Match(got) {
			t.Errorf("wilco status --cluster does not match %q:\n%s", want, got)
		}
	}
}

func firstMatch(s string, subs ...string) string {
	for _, line := range strings.Split(s, "\n") {
		for _, sub := range subs {
			if strings.Contains(line, sub) {
				return line
			}
		}
	}
	return "(no fencing refusal logged)"
}

// wilco run, when no server answers, serves in its own process on the
// store WILCO_STORE names: on a PostgreSQL store it takes the free lease
// and runs the task; while another node holds the lease it says so and
// which variable to set, instead of waiting for that node to die.
func TestWilcoRunServesOnThePostgreSQLStoreOfWilcoStore(t *testing.T) {
	t.Parallel()
	store := startPostgres(t, "run")
	dir := t.TempDir()
	agent := "#!/bin/sh\ncat >/dev/null\necho \"[ACK] $WILCO_TASK_ID - RECEIVED\"\necho done > out.txt\n"
	cfg := "agents:\n  - {name: script, adapter: exec, command: [./agent.sh]}\nverify:\n  steps:\n    - {name: check, run: \"grep -q done out.txt\"}\n"
	if err := os.WriteFile(filepath.Join(dir, "agent.sh"), []byte(agent), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "wilco.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func() (string, int) {
		t.Helper()
		cmd := exec.Command(blackbox.WilcoBin, "run", "Write done to out.txt")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "WILCO_STORE="+store, "WILCO_ADDR=http://127.0.0.1:1", "WILCO_TOKEN=")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		switch {
		case err == nil:
			return string(out), 0
		case errors.As(err, &ee):
			return string(out), ee.ExitCode()
		}
		t.Fatalf("wilco run: %v", err)
		return "", 0
	}
	if out, code := run(); code != 0 || !strings.Contains(out, "serving in this process") {
		t.Fatalf("wilco run on a free PostgreSQL store: exit %d\n%s", code, out)
	}

	node := newPGNode(t, "holder", store)
	node.start()
	if !blackbox.Eventually(30*time.Second, 20*time.Millisecond, func() bool { return node.role(http.DefaultClient) == "active" }) {
		t.Fatalf("the node never became active:\n%s", node.out)
	}
	out, code := run()
	if code == 0 || !strings.Contains(out, "another wilco node holds the repository's lease") || !strings.Contains(out, "WILCO_ADDR") ||
		strings.Contains(out, "password") {
		t.Fatalf("wilco run while another node holds the lease: exit %d\n%s", code, out)
	}
}

// startNATS starts an embedded NATS server with JetStream for one test and
// returns its URL.
func startNATS(t *testing.T) string {
	t.Helper()
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("the NATS server is not ready")
	}
	t.Cleanup(func() {
		srv.Shutdown()
		srv.WaitForShutdown()
	})
	return srv.ClientURL()
}

// loginLink is the page's login link the node printed when it last became
// active.
func (n *pgNode) loginLink() string {
	n.t.Helper()
	var link string
	if !blackbox.Eventually(30*time.Second, 20*time.Millisecond, func() bool {
		out := n.out.String()
		out = out[strings.LastIndex(out, "=== start"):]
		for _, f := range strings.Fields(out) {
			if strings.HasPrefix(f, "http://") && strings.Contains(f, "/#login=") {
				link = f
				return true
			}
		}
		return false
	}) {
		n.t.Fatalf("%s printed no login link:\n%s", n.name, n.out)
	}
	return link
}

// The page of a node on a PostgreSQL store has a Cluster view: the nodes,
// which one is active, and the lease with its holder and fencing token;
// after the active node is killed, the page of the node that took over
// shows it active, with the next token.
func TestThePageShowsTheClusterInARealBrowser(t *testing.T) {
	t.Parallel()
	store := startPostgres(t, "page")
	x := &failoverRun{t: t, hc: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	a, b := newPGNode(t, "node1", store), newPGNode(t, "node2", store)
	x.nodes = []*pgNode{a, b}
	a.start()
	if !blackbox.Eventually(30*time.Second, 20*time.Millisecond, func() bool { return a.role(x.hc) == "active" }) {
		t.Fatalf("node1 never became active:\n%s", a.out)
	}
	b.start()
	if !blackbox.Eventually(30*time.Second, 20*time.Millisecond, func() bool { return b.role(x.hc) == "standby" }) {
		t.Fatalf("node2 never stood by:\n%s", b.out)
	}
	br := openBrowser(t)
	show := func(n *pgNode, token int) {
		t.Helper()
		br.navigate(n.loginLink())
		br.waitFor("the Cluster link", `(() => { const a = document.querySelector('#nav a[data-view="cluster"]'); return a !== null && !a.hidden; })()`, 30*time.Second)
		br.goTo("#/cluster")
		br.waitFor("two nodes, one active, and the lease of "+n.name, fmt.Sprintf(`(() => {
			const active = [...document.querySelectorAll('#cluster-nodes tr[data-role="active"]')];
			const lease = document.querySelector('#cluster-leases tr[data-repository="page"]');
			return document.querySelectorAll('#cluster-nodes tr[data-node]').length === 2 && active.length === 1 &&
				active[0].textContent.includes(%s) && lease !== null && lease.dataset.holder === active[0].dataset.node &&
				lease.textContent.includes(%s) && lease.textContent.includes('held');
		})()`, js(n.url()), js(fmt.Sprint(token))), 30*time.Second)
	}
	show(a, 1)
	br.screenshot("cluster")
	a.kill()
	if !blackbox.Eventually(30*time.Second+2*failoverTTL, 20*time.Millisecond, func() bool { return b.role(x.hc) == "active" }) {
		t.Fatalf("node2 did not take over:\n%s", b.out)
	}
	a.start() // back, as a standby
	show(b, 2)
	br.noExceptions()
}
