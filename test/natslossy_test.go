package test

import (
	"context"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"wilco/natsbox"
	"wilco/test/blackbox"
	"wilco/wire"
)

// natsServerBin builds the nats-server program of the version go.mod
// names (its main package, github.com/nats-io/nats-server/v2), once: the
// server as users run it, a process of its own that kill -9 stops.
var natsServerBin = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(blackbox.BinDir, "nats-server")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/nats-io/nats-server/v2")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build nats-server: %v\n%s", err, out)
	}
	return bin, nil
})

// natsProcess is a nats-server process with JetStream, started as
// docs/DEPLOY.md starts it (nats-server -js -a … -p … -sd …: its default
// sync_interval, an fsync every 2 minutes — defaultSyncInterval in
// nats-server v2.15.2's server/filestore.go), on the same port and storage
// directory at every start. It writes each message to its block file
// before it answers the publish (a stream of one replica flushes in
// place), so that SIGKILL alone loses nothing the kernel holds; what is
// not fsynced a power loss takes (losePower).
type natsProcess struct {
	t      *testing.T
	bin    string
	dir    string
	port   int
	out    *blackbox.LockedBuffer
	cmd    *exec.Cmd
	exited chan error
	starts int
	// atStart are the sizes of the stream's message blocks when it last
	// became ready: what it wrote since is not fsynced yet.
	atStart map[string]int64
}

func startNATSProcess(t *testing.T) *natsProcess {
	t.Helper()
	bin, err := natsServerBin()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n := &natsProcess{t: t, bin: bin, dir: t.TempDir(), port: ln.Addr().(*net.TCPAddr).Port, out: &blackbox.LockedBuffer{}}
	ln.Close()
	n.start()
	t.Cleanup(func() {
		if n.cmd != nil {
			n.kill()
		}
	})
	return n
}

func (n *natsProcess) url() string { return fmt.Sprintf("nats://127.0.0.1:%d", n.port) }

func (n *natsProcess) start() {
	n.t.Helper()
	n.starts++
	fmt.Fprintf(n.out, "=== start %d\n", n.starts)
	n.cmd = exec.Command(n.bin, "-js", "-a", "127.0.0.1", "-p", strconv.Itoa(n.port), "-sd", n.dir)
	n.cmd.Stdout, n.cmd.Stderr = n.out, n.out
	if err := n.cmd.Start(); err != nil {
		n.t.Fatal(err)
	}
	exited := make(chan error, 1)
	n.exited = exited
	cmd := n.cmd
	go func() { exited <- cmd.Wait() }()
	if !blackbox.Eventually(30*time.Second, 10*time.Millisecond, func() bool {
		select {
		case err := <-exited:
			n.t.Fatalf("nats-server start %d: exited (%v):\n%s", n.starts, err, blackbox.Tail(n.out.String(), 30))
		default:
		}
		return strings.Count(n.out.String(), "Server is ready") == n.starts
	}) {
		n.t.Fatalf("nats-server start %d: not ready in 30 s:\n%s", n.starts, blackbox.Tail(n.out.String(), 30))
	}
	n.atStart = n.blocks()
}

// kill stops the server with SIGKILL.
func (n *natsProcess) kill() {
	n.t.Helper()
	_ = n.cmd.Process.Signal(syscall.SIGKILL)
	<-n.exited
	n.cmd = nil
}

// blocks are the sizes of the message blocks of the server's streams.
func (n *natsProcess) blocks() map[string]int64 {
	n.t.Helper()
	out := map[string]int64{}
	err := filepath.WalkDir(n.dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".blk" || filepath.Base(filepath.Dir(path)) != "msgs" {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[path] = info.Size()
		return nil
	})
	if err != nil {
		n.t.Fatal(err)
	}
	return out
}

// losePower drops from the killed server's storage what a power loss, or
// the kernel's crash, may take from it: the messages it wrote since it
// started, none of which was fsynced yet (its first fsync is due 2 minutes
// after its start). It returns the bytes dropped.
func (n *natsProcess) losePower() int64 {
	n.t.Helper()
	if n.cmd != nil {
		n.t.Fatal("losePower: the server still runs")
	}
	var dropped int64
	for path, size := range n.blocks() {
		keep := n.atStart[path] // 0 for a block made since the start
		if size > keep {
			if err := os.Truncate(path, keep); err != nil {
				n.t.Fatal(err)
			}
			dropped += size - keep
		}
	}
	return dropped
}

// lossyRun is the record of the agents of TestALossyTransportLosesNothingWilcoAcknowledged.
type lossyRun struct {
	t    *testing.T
	in   *blackbox.Instance
	repo string
	url  string

	mu sync.Mutex
	// got are the sends each agent was handed: agent → "id/attempt" →
	// the send's type.
	got map[string]map[string]string
	// acked are the messages a reply answered 202 acknowledged, and how.
	acked map[string]string
	// completed are the tasks whose completion was answered 202.
	completed map[string]bool
	// unanswered counts the replies wilco did not answer in time (sent again).
	unanswered int
	// twice counts the sends handed to their agent more than once.
	twice int
}

func (x *lossyRun) received(agent string, m wire.InboxMessage) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.got[agent] == nil {
		x.got[agent] = map[string]string{}
	}
	key := m.ID + "/" + strconv.Itoa(m.Attempt)
	if _, ok := x.got[agent][key]; ok {
		x.twice++
	}
	x.got[agent][key] = m.Type
}

// agent is a mailbox agent on NATS until ctx ends: pushed its messages, it
// acknowledges each task's delegation and reports it complete, sending a
// reply again until wilco answers it (its answer lost, or its request lost
// by NATS), as an agent that knows what it did does. It asks for a
// dispatch cycle every 2 s.
func (x *lossyRun) agent(ctx context.Context, name, token string) {
	var ag *natsbox.Agent
	for ctx.Err() == nil {
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		var err error
		ag, err = natsbox.Dial(dctx, x.url, x.repo, name, token)
		cancel()
		if err == nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
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
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			_ = ag.Cycle(cctx)
			cancel()
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	// answer sends body until wilco answers it; it returns the answer's
	// status and what it interpreted.
	answer := func(body map[string]any) (int, wire.Interpretation) {
		for ctx.Err() == nil {
			rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			ans, err := ag.Reply(rctx, body)
			cancel()
			if err != nil {
				x.mu.Lock()
				x.unanswered++
				x.mu.Unlock()
				continue
			}
			var out wire.Interpreted
			_ = json.Unmarshal(ans.Body, &out)
			return ans.Status, out.Interpreted
		}
		return 0, wire.Interpretation{}
	}
	for ctx.Err() == nil {
		_ = ag.Messages(ctx, func(m wire.InboxMessage) error {
			x.received(name, m)
			if m.TaskID == "" || m.Type == "cancel" {
				return nil
			}
			status, in := answer(map[string]any{"in_reply_to": m.ID,
				"text": fmt.Sprintf("[ACK] %s - RECEIVED\nUnderstanding: list the files", m.TaskID)})
			if status != 202 || len(in.Acknowledged) == 0 {
				return nil
			}
			x.mu.Lock()
			for _, id := range in.Acknowledged {
				x.acked[id] = fmt.Sprintf("%s's ACK of %s/%d answered 202", name, m.ID, m.Attempt)
			}
			x.mu.Unlock()
			status, _ = answer(map[string]any{"type": "task-complete",
				"data": map[string]any{"task_id": m.TaskID, "status": "success", "summary": "listed"}})
			if status == 202 {
				x.mu.Lock()
				x.completed[m.TaskID] = true
				x.mu.Unlock()
			}
			return nil
		})
	}
}

// sends are the sends of deliveries to an agent that ask for an answer
// (the first send, ACK REQUIRED and the other resends), as "id/attempt",
// from wilco's event log.
func sends(evs []blackbox.Event) map[string][]string {
	out := map[string][]string{}
	for _, ev := range evs {
		if ev.Type != "delivery.sent" && ev.Type != "delivery.retried" {
			continue
		}
		var d struct {
			ID      string `json:"id"`
			Attempt int    `json:"attempt"`
			Message *struct {
				ID string `json:"id"`
				To string `json:"to"`
			} `json:"message"`
		}
		_ = json.Unmarshal(ev.Data, &d)
		id, agent := d.ID, ev.Agent
		if d.Message != nil {
			if id == "" {
				id = d.Message.ID
			}
			if agent == "" {
				agent = d.Message.To
			}
		}
		out[agent] = append(out[agent], id+"/"+strconv.Itoa(d.Attempt))
	}
	return out
}

// TestALossyTransportLosesNothingWilcoAcknowledged runs wilco with its
// mailbox over a nats-server process (JetStream with its default fsync
// policy) and three agents on NATS that acknowledge and complete the tasks
// they are pushed, and kills the NATS server with SIGKILL mid-traffic,
// restarting it on the same storage: twice as a process crash, then once
// as a power loss, which takes the messages it had stored and acknowledged
// since it started (its next fsync was not due). Before the power loss one
// agent is away and its task's delegation waits in the stream, read back
// from NATS: that message is lost with the rest. Wilco's state does not
// live in NATS: every task ends exactly once, in success; every reply
// wilco answered 202 is in force in its records; every send NATS lost was
// covered by a later send (ACK REQUIRED) — the away agent's lost
// delegation among them, which it acknowledges from a resend.
func TestALossyTransportLosesNothingWilcoAcknowledged(t *testing.T) {
	t.Parallel()
	ns := startNATSProcess(t)
	in := blackbox.Serve(t, `transport: `+ns.url()+`
agents:
  - {name: a1, adapter: mailbox, capabilities: [go]}
  - {name: a2, adapter: mailbox, capabilities: [go]}
  - {name: a3, adapter: mailbox, capabilities: [go]}
verify:
  steps:
    - {name: check, run: "true", timeout: 30s}
policy:
  ack: {timeouts: [3s, 2s, 2s, 2s, 2s, 2s, 2s, 2s, 2s, 2s], backoff: {base: 200ms, max: 500ms}}
`)
	x := &lossyRun{t: t, in: in, repo: filepath.Base(in.Dir), url: ns.url(),
		got: map[string]map[string]string{}, acked: map[string]string{}, completed: map[string]bool{}}
	tokens := map[string]string{}
	for _, a := range []string{"a1", "a2", "a3"} {
		var tok struct{ Token string }
		in.Must(200, in.Call("POST", "/v1/agents/"+a+"/token", blackbox.AdminToken, nil), &tok)
		tokens[a] = tok.Token
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var agents sync.WaitGroup
	defer agents.Wait()
	defer stop()
	// startAgent starts an agent; the function it returns stops it and
	// waits until it is gone (its connection closed): no message reaches
	// it after.
	startAgent := func(name string) func() {
		actx, cancel := context.WithCancel(ctx)
		gone := make(chan struct{})
		agents.Go(func() {
			defer close(gone)
			x.agent(actx, name, tokens[name])
		})
		return func() {
			cancel()
			<-gone
		}
	}
	startAgent("a1")
	startAgent("a2")
	stopA3 := startAgent("a3")

	key := uint64(time.Now().UnixNano())
	t.Logf("random key %d (the moments of the kills and of the load)", key)
	rng := mrand.New(mrand.NewPCG(key, 1))
	var tasks []string
	var tasksMu sync.Mutex
	submit := func(agent string) string {
		id := in.Submit(map[string]any{"description": "list the files", "agent": agent}).ID
		tasksMu.Lock()
		tasks = append(tasks, id)
		tasksMu.Unlock()
		return id
	}
	// load submits tasks to the agents in turn, at random moments drawn
	// from a stream of its own, until ctx ends.
	load := func(ctx context.Context, stream uint64, agents ...string) *sync.WaitGroup {
		lrng := mrand.New(mrand.NewPCG(key, stream))
		var wg sync.WaitGroup
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				submit(agents[i%len(agents)])
				blackbox.AtRandom(t, time.Duration(50+lrng.IntN(250))*time.Millisecond)
			}
		})
		return &wg
	}

	// Two process crashes mid-traffic.
	lctx, stopLoad := context.WithCancel(ctx)
	loading := load(lctx, 2, "a1", "a2", "a3")
	// The first is a blip; after the second NATS stays away longer than
	// wilco's publishes and the agents' replies wait for its answers.
	for k, down := range []time.Duration{time.Duration(rng.IntN(1000)) * time.Millisecond, time.Duration(5500+rng.IntN(1000)) * time.Millisecond} {
		blackbox.AtRandom(t, time.Duration(800+rng.IntN(1500))*time.Millisecond)
		ns.kill()
		t.Logf("kill -9 %d of nats-server, down %s", k+1, down.Round(time.Millisecond))
		blackbox.AtRandom(t, down)
		ns.start()
	}
	blackbox.AtRandom(t, time.Second)
	stopLoad()
	loading.Wait()
	done := func() {
		t.Helper()
		tasksMu.Lock()
		all := slices.Clone(tasks)
		tasksMu.Unlock()
		for _, id := range all {
			in.WaitTask(id, 90*time.Second, "success")
		}
	}
	done() // a3 holds no task when it goes

	// The power loss: a3 is away; its new task's delegation is stored in
	// the stream (NATS acknowledged its publish), with the traffic of a1
	// and a2 around it, when NATS dies with what it wrote since its start.
	stopA3()
	lctx, stopLoad = context.WithCancel(ctx)
	loading = load(lctx, 3, "a1", "a2")
	away := submit("a3")
	var delegation string
	in.Until("the away agent's delegation to be sent", 20*time.Second, func() bool {
		for _, ev := range in.AllEvents() {
			if ev.Type == "delivery.sent" && ev.TaskID == away {
				delegation = deliveryOf(ev)
				return true
			}
		}
		return false
	})
	stored := func() bool {
		nc, err := nats.Connect(ns.url(), nats.Timeout(2*time.Second))
		if err != nil {
			return false
		}
		defer nc.Close()
		js, err := jetstream.New(nc)
		if err != nil {
			return false
		}
		gctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		st, err := js.Stream(gctx, natsbox.Stream(x.repo))
		if err != nil {
			return false
		}
		m, err := st.GetLastMsgForSubject(gctx, natsbox.InboxSubject(x.repo, "a3"))
		if err != nil {
			return false
		}
		var im wire.InboxMessage
		return json.Unmarshal(m.Data, &im) == nil && im.ID == delegation && im.Attempt == 1
	}
	in.Until("NATS to hold the away agent's delegation "+delegation, 10*time.Second, stored)
	blackbox.AtRandom(t, time.Duration(rng.IntN(300))*time.Millisecond)
	ns.kill()
	dropped := ns.losePower()
	t.Logf("kill -9 3 of nats-server, as a power loss: %d bytes it wrote since its start dropped", dropped)
	blackbox.AtRandom(t, time.Duration(rng.IntN(1000))*time.Millisecond)
	ns.start()
	startAgent("a3")
	blackbox.AtRandom(t, time.Second)
	stopLoad()
	loading.Wait()

	// Every task ends, in success.
	done()
	stop()
	agents.Wait()

	all := slices.Clone(tasks)
	evs := in.AllEvents()
	var problems []string
	ends := map[string][]uint64{}
	ended := map[string]uint64{}
	for i, ev := range evs {
		if ev.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d: a gap or a duplicate in the log", i+1, ev.Seq)
		}
		if ev.Type == "task.state" {
			var d struct{ To string }
			_ = json.Unmarshal(ev.Data, &d)
			if slices.Contains(blackbox.EndStates, d.To) {
				ends[ev.TaskID] = append(ends[ev.TaskID], ev.Seq)
			}
		}
		if id := deliveryOf(ev); id != "" {
			if _, ok := terminalEvents[ev.Type]; ok {
				if at, twice := ended[id]; twice {
					problems = append(problems, fmt.Sprintf("delivery %s ended twice: at seq %d and at seq %d", id, at, ev.Seq))
				}
				ended[id] = ev.Seq
			}
		}
	}
	for _, id := range all {
		if len(ends[id]) != 1 {
			problems = append(problems, fmt.Sprintf("task %s has %d terminal transitions (seqs %v)", id, len(ends[id]), ends[id]))
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for id, how := range x.acked {
		if m := in.Message(id); m.State != "acknowledged" {
			problems = append(problems, fmt.Sprintf("%s was acknowledged (%s) but is %s", id, how, m.State))
		}
		if _, ok := ended[id]; !ok {
			problems = append(problems, fmt.Sprintf("%s was acknowledged (%s) but the log has no end of it", id, how))
		}
	}
	for id := range x.completed {
		if !slices.Contains(all, id) {
			problems = append(problems, fmt.Sprintf("a completion of %s, no task of this run, was answered 202", id))
		}
	}

	// What NATS lost: the sends in wilco's log that never reached their
	// agent. Each was covered by a later send that did.
	refused := in.Stderr.String()
	var lost, lostRefused, resent int
	for agent, ss := range sends(evs) {
		for _, s := range ss {
			if _, ok := x.got[agent][s]; ok {
				continue
			}
			lost++
			id, attempt, _ := strings.Cut(s, "/")
			if strings.Contains(refused, "message="+id+" ") {
				lostRefused++
			}
			n, _ := strconv.Atoi(attempt)
			covered := false
			for later := range x.got[agent] {
				lid, la, _ := strings.Cut(later, "/")
				if k, _ := strconv.Atoi(la); lid == id && k > n {
					covered = true
				}
			}
			if covered {
				resent++
			} else if ended[id] == 0 {
				problems = append(problems, fmt.Sprintf("send %s to %s never reached it, nor any later send, and the delivery never ended", s, agent))
			}
		}
	}
	// The away agent's delegation: stored by NATS, lost, and resent.
	if _, ok := x.got["a3"][delegation+"/1"]; ok {
		problems = append(problems, fmt.Sprintf("a3 was handed %s/1, which NATS held before the power loss: it was not lost", delegation))
	}
	resentToA3 := ""
	for s, typ := range x.got["a3"] {
		if id, attempt, _ := strings.Cut(s, "/"); id == delegation && attempt != "1" {
			resentToA3 = s + " (" + typ + ")"
			if typ != "ack_request" {
				problems = append(problems, fmt.Sprintf("a3 was handed %s as %s, not ACK REQUIRED", s, typ))
			}
		}
	}
	if resentToA3 == "" {
		problems = append(problems, fmt.Sprintf("a3 was never handed a resend of %s, lost by NATS", delegation))
	}
	if _, ok := x.acked[delegation]; !ok {
		problems = append(problems, fmt.Sprintf("a3's ACK of %s was never answered 202", delegation))
	}
	t.Logf("%d publishes wilco saw fail (NATS away)", strings.Count(refused, "publishing a message failed"))
	t.Logf("%d tasks, %d events; %d sends never reached their agent (%d whose publish NATS refused while down, %d lost after NATS had them), %d of them covered by a later send; %d sends handed twice; %d replies sent again, unanswered; %s/1 lost, %s handed to a3 and acknowledged",
		len(all), len(evs), lost, lostRefused, lost-lostRefused, resent, x.twice, x.unanswered, delegation, resentToA3)
	if len(problems) > 0 {
		t.Fatalf("%d problems:\n%s\nnats-server:\n%s\nwilco (warnings and errors):\n%s", len(problems), strings.Join(problems, "\n"), blackbox.Tail(ns.out.String(), 30), in.Problems())
	}
}
