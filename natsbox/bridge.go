package natsbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"wilco/wire"
)

// BridgeOptions configures wilco's side.
type BridgeOptions struct {
	// URL is the NATS server's (nats://host:port, or a comma-separated
	// list of servers).
	URL string
	// Repo is the repository's name: it names the stream and subjects.
	Repo string
	// Handler is wilco's HTTP API: requests go through its mailbox routes.
	Handler http.Handler
	// Authenticate names the agent whose token this is (ok false: no
	// agent has it). Its error says that wilco cannot tell now (it is
	// stopping, or its loop stopped): the request is left for another
	// wilco, or this one restarted, never answered as from an unknown
	// token.
	Authenticate func(token string) (agent string, ok bool, err error)
	// Signal is closed when a message next lands in the agent's inbox
	// (runtime.InboxSignal).
	Signal func(agent string) <-chan struct{}
	// Push hands over what waits for the agent (server.Server.Push): the
	// messages (each as GET /v1/inbox lists it) to publish on its inbox
	// subject. An error the agent is not known by ends its pushes.
	Push func(ctx context.Context, agent string) ([]json.RawMessage, error)
	// Unknown reports whether Push's error says the agent is not known
	// (removed).
	Unknown func(error) bool
	Logger  *slog.Logger
	// Options are more options of the NATS connection (credentials, TLS).
	Options []nats.Option
}

// Bridge is wilco's side of the NATS mailbox.
type Bridge struct {
	opts BridgeOptions
	log  *slog.Logger
	nc   *nats.Conn
	js   jetstream.JetStream

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	agents map[string]*pushAgent
}

// pushAgent is an agent on NATS: heard from, or reading its inbox's
// consumer when the bridge started. mu keeps its hand-overs (and so its messages) in
// order.
type pushAgent struct {
	name string
	mu   sync.Mutex
}

// StartBridge connects to NATS and starts handling the agents' requests
// and pushing their messages. The connection is retried in the background
// for as long as the bridge runs, so a NATS server that is down at the
// start or restarts later costs only the time it is away.
func StartBridge(opts BridgeOptions) (*Bridge, error) {
	if opts.Handler == nil || opts.Authenticate == nil || opts.Signal == nil || opts.Push == nil {
		return nil, errors.New("natsbox: a bridge needs Handler, Authenticate, Signal and Push")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	b := &Bridge{opts: opts, log: opts.Logger, agents: map[string]*pushAgent{}}
	nopts := append([]nats.Option{
		nats.Name("wilco " + opts.Repo),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.RetryOnFailedConnect(true),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				b.log.Warn("NATS disconnected", "err", err)
			}
		}),
		nats.ReconnectHandler(func(*nats.Conn) { b.log.Info("NATS reconnected") }),
	}, opts.Options...)
	nc, err := nats.Connect(opts.URL, nopts...)
	if err != nil {
		return nil, fmt.Errorf("natsbox: connect to %s: %w", opts.URL, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("natsbox: %w", err)
	}
	b.nc, b.js = nc, js
	b.ctx, b.cancel = context.WithCancel(context.Background())
	b.wg.Go(b.run)
	return b, nil
}

// Close stops the bridge: requests being handled finish, and the rest wait
// in the stream for the next wilco.
func (b *Bridge) Close() {
	b.cancel()
	b.wg.Wait()
	b.nc.Close()
}

// run consumes the replies, setting the stream and the consumer up again
// whenever consuming stops (NATS away), until Close.
func (b *Bridge) run() {
	for b.ctx.Err() == nil {
		err := b.consume()
		if b.ctx.Err() != nil {
			return
		}
		b.log.Warn("NATS mailbox: consuming the agents' requests stopped; retrying", "err", err)
		select {
		case <-b.ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func (b *Bridge) consume() error {
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	st, err := ensureStream(ctx, b.js, b.opts.Repo)
	if err != nil {
		return err
	}
	cons, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable:       bridgeConsumer,
		Description:   "wilco reads the agents' requests",
		FilterSubject: "wilco." + Escape(b.opts.Repo) + ".reply.*",
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       bridgeAckWait,
		MaxAckPending: 1,
		DeliverPolicy: jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return err
	}
	it, err := cons.Messages(jetstream.PullHeartbeat(2 * time.Second))
	if err != nil {
		return err
	}
	stop := context.AfterFunc(b.ctx, it.Stop)
	defer stop()
	b.discover(ctx, st)
	b.log.Info("NATS mailbox: handling the agents' requests", "stream", Stream(b.opts.Repo), "url", b.nc.ConnectedUrlRedacted())
	for {
		m, err := it.Next()
		if err != nil {
			it.Stop()
			if errors.Is(err, jetstream.ErrMsgIteratorClosed) && b.ctx.Err() != nil {
				return nil
			}
			return err
		}
		b.handling(m)
	}
}

// bridgeAckWait is how long the stream waits for wilco to acknowledge a
// request before handing it over again. One request is handled at a time
// (MaxAckPending 1, to keep an agent's replies in order), so a request a
// node was handling when it died holds up every agent's requests for this
// long: short, and kept alive while a request is really being handled.
const bridgeAckWait = 3 * time.Second

// handling handles m, telling the stream every second that it is still
// being handled.
func (b *Bridge) handling(m jetstream.Msg) {
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(bridgeAckWait / 3)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				_ = m.InProgress()
			}
		}
	}()
	defer close(done)
	b.handle(m)
}

// handle runs one request through wilco's handler, answers it, and
// acknowledges it to the stream, unless wilco could not take it now (it is
// stopping, or not the active node), when it is left for redelivery.
func (b *Bridge) handle(m jetstream.Msg) {
	var req Request
	if err := json.Unmarshal(m.Data(), &req); err != nil {
		b.answer(m, Answer{Status: http.StatusBadRequest, Body: errorBody(wire.CodeInvalidArgument, "not a natsbox request: "+err.Error())})
		_ = m.Ack()
		return
	}
	agent, ok, err := b.opts.Authenticate(req.Token)
	if err != nil {
		// Not now, as for a 503 below: the token may well be valid.
		_ = m.NakWithDelay(time.Second)
		return
	}
	if !ok || Escape(agent) != subjectAgent(m.Subject()) {
		b.answer(m, Answer{Status: http.StatusUnauthorized, Body: errorBody(wire.CodeUnauthenticated, "not the token of the agent of "+m.Subject())})
		_ = m.Ack()
		return
	}
	pa := b.remember(agent)
	var ans Answer
	switch req.Kind {
	case KindCycle:
		ans = b.cycle(pa, req.Token)
	case KindReply:
		ans = b.call(http.MethodPost, "/v1/inbox/replies", req.Token, req.Reply)
	default:
		ans = Answer{Status: http.StatusBadRequest, Body: errorBody(wire.CodeInvalidArgument, "kind: cycle or reply, got "+strconv.Quote(req.Kind))}
	}
	if ans.Status == http.StatusServiceUnavailable || ans.Status == http.StatusTemporaryRedirect {
		// Not now: another wilco (or this one, restarted) handles it.
		_ = m.NakWithDelay(time.Second)
		return
	}
	b.answer(m, ans)
	if err := m.DoubleAck(b.ctx); err != nil {
		b.log.Warn("NATS mailbox: acknowledging a request failed; it will be handled again", "err", err)
	}
}

func subjectAgent(subject string) string {
	return subject[strings.LastIndexByte(subject, '.')+1:]
}

// discover starts pushing to every agent reading its inbox's consumer
// now (a pull request of its waits), known without hearing from it, so
// that a wilco that just started or took over from another node pushes at
// once what waits for them. An agent away at that moment asks for a cycle
// when it is back; one that left NATS for the HTTP mailbox is not pushed
// to just because its consumer is still in the stream.
func (b *Bridge) discover(ctx context.Context, st jetstream.Stream) {
	list := st.ListConsumers(ctx)
	for info := range list.Info() {
		esc, ok := strings.CutPrefix(info.Name, agentConsumerPrefix)
		if !ok || info.NumWaiting == 0 {
			continue
		}
		agent, err := Unescape(esc)
		if err != nil {
			continue // not one of ours
		}
		b.remember(agent)
	}
	if err := list.Err(); err != nil {
		b.log.Warn("NATS mailbox: listing the agents' consumers failed; agents are pushed to once heard from", "err", err)
	}
}

// remember starts pushing the agent's messages, with a hand-over now (what
// landed while nobody pushed), unless it does already.
func (b *Bridge) remember(agent string) *pushAgent {
	b.mu.Lock()
	defer b.mu.Unlock()
	pa, ok := b.agents[agent]
	if !ok {
		pa = &pushAgent{name: agent}
		b.agents[agent] = pa
		now := make(chan struct{})
		close(now)
		b.wg.Go(func() { b.push(pa, now) })
	}
	return pa
}

// push hands over the agent's messages whenever one lands in its inbox,
// and publishes them.
func (b *Bridge) push(pa *pushAgent, sig <-chan struct{}) {
	for {
		select {
		case <-b.ctx.Done():
			return
		case <-sig:
		}
		// The next signal is taken before the hand-over, so that nothing
		// landing during it is missed.
		sig = b.opts.Signal(pa.name)
		if ans := b.cycle(pa, ""); ans.Status != http.StatusOK {
			if ans.Status == http.StatusNotFound {
				b.log.Info("NATS mailbox: no such agent any more; its pushes stop", "agent", pa.name)
				b.mu.Lock()
				delete(b.agents, pa.name)
				b.mu.Unlock()
				return
			}
			b.log.Warn("NATS mailbox: handing over an agent's messages failed", "agent", pa.name, "status", ans.Status, "body", string(ans.Body))
		}
	}
}

// cycle hands over the agent's messages and publishes them on its inbox
// subject: with the agent's token, a dispatch cycle the agent asked for
// (GET /v1/inbox, with its checks); without, a push (Options.Push). A
// message whose publish fails is sent again by its delivery's policy, as
// one whose HTTP answer was lost.
func (b *Bridge) cycle(pa *pushAgent, token string) Answer {
	pa.mu.Lock()
	defer pa.mu.Unlock()
	var msgs []json.RawMessage
	if token != "" {
		ans := b.call(http.MethodGet, "/v1/inbox", token, nil)
		if ans.Status != http.StatusOK {
			return ans
		}
		var out struct {
			Messages []json.RawMessage `json:"messages"` // wire.Inbox's, published as they are
		}
		if err := json.Unmarshal(ans.Body, &out); err != nil {
			return Answer{Status: http.StatusInternalServerError, Body: errorBody(wire.CodeInternal, err.Error())}
		}
		msgs = out.Messages
	} else {
		var err error
		if msgs, err = b.opts.Push(b.ctx, pa.name); err != nil {
			if b.opts.Unknown != nil && b.opts.Unknown(err) {
				return Answer{Status: http.StatusNotFound, Body: errorBody(wire.CodeNotFound, err.Error())}
			}
			return Answer{Status: http.StatusServiceUnavailable, Body: errorBody(wire.CodeUnavailable, err.Error())}
		}
	}
	subject := InboxSubject(b.opts.Repo, pa.name)
	for _, raw := range msgs {
		var m wire.InboxMessage
		_ = json.Unmarshal(raw, &m)
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		_, err := b.js.Publish(ctx, subject, raw, jetstream.WithMsgID(m.ID+"/"+strconv.Itoa(m.Attempt)))
		cancel()
		if err != nil {
			b.log.Warn("NATS mailbox: publishing a message failed; its delivery's policy sends it again", "agent", pa.name, "message", m.ID, "err", err)
		}
	}
	return Answer{Status: http.StatusOK, Body: json.RawMessage(fmt.Sprintf(`{"published":%d}`, len(msgs)))}
}

// call runs one request through wilco's handler with the agent's token.
func (b *Bridge) call(method, path, token string, body []byte) Answer {
	req, err := http.NewRequestWithContext(b.ctx, method, path, bytes.NewReader(body))
	if err != nil {
		return Answer{Status: http.StatusInternalServerError, Body: errorBody(wire.CodeInternal, err.Error())}
	}
	req.RemoteAddr = "127.0.0.1:0" // the bridge, in this process
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := &recorder{header: http.Header{}, status: http.StatusOK}
	b.opts.Handler.ServeHTTP(rec, req)
	return Answer{Status: rec.status, Body: json.RawMessage(bytes.TrimSpace(rec.body.Bytes()))}
}

// answer publishes a request's answer where the request asked for it.
func (b *Bridge) answer(m jetstream.Msg, a Answer) {
	to := m.Headers().Get(HeaderAnswerTo)
	if to == "" {
		return
	}
	if len(a.Body) == 0 {
		a.Body = json.RawMessage("null")
	}
	data, _ := json.Marshal(a)
	_ = b.nc.Publish(to, data)
}

func errorBody(code wire.Code, msg string) json.RawMessage {
	b, _ := json.Marshal(wire.NewError(code, msg))
	return b
}

// recorder is the http.ResponseWriter of an in-process request.
type recorder struct {
	header http.Header
	status int
	wrote  bool
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if !r.wrote {
		r.status, r.wrote = status, true
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	r.wrote = true
	return r.body.Write(p)
}
