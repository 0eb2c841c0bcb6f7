package natsbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"wilco/wire"
)

// ErrNoAnswer is returned by Agent.Reply when wilco did not answer before
// the context ended. The reply is stored in the stream all the same: wilco
// handles it when it is back.
var ErrNoAnswer = errors.New("natsbox: no answer from wilco yet; the reply waits in the stream")

// Agent is an agent's side of the NATS mailbox.
type Agent struct {
	nc    *nats.Conn
	js    jetstream.JetStream
	cons  jetstream.Consumer
	repo  string
	name  string
	token string
}

// Dial connects agent (with its token) to the NATS mailbox of repository
// repo on the NATS server at url, and sets up its durable consumer. The
// connection reconnects by itself for as long as the Agent is open. Its
// inboxes are under InboxPrefix(agent), so that a NATS user limited to
// Permissions(repo, agent) can do all an agent does (once wilco has made
// the stream).
func Dial(ctx context.Context, url, repo, agent, token string, opts ...nats.Option) (*Agent, error) {
	nopts := append([]nats.Option{
		nats.Name("wilco agent " + agent),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.CustomInboxPrefix(InboxPrefix(agent)),
	}, opts...)
	nc, err := nats.Connect(url, nopts...)
	if err != nil {
		return nil, fmt.Errorf("natsbox: connect to %s: %w", url, err)
	}
	a := &Agent{nc: nc, repo: repo, name: agent, token: token}
	if a.js, err = jetstream.New(nc); err != nil {
		nc.Close()
		return nil, fmt.Errorf("natsbox: %w", err)
	}
	st, err := ensureStream(ctx, a.js, repo)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("natsbox: stream %s: %w", Stream(repo), err)
	}
	a.cons, err = st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable:       agentConsumer(agent),
		Description:   "the inbox of agent " + agent,
		FilterSubject: InboxSubject(repo, agent),
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       time.Minute,
		DeliverPolicy: jetstream.DeliverAllPolicy,
	})
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("natsbox: consumer of %s: %w", agent, err)
	}
	return a, nil
}

// Close closes the connection.
func (a *Agent) Close() { a.nc.Close() }

// Messages calls fn with each message of the agent's inbox, in order, as
// it arrives, until ctx ends or fn fails. A message fn returns nil for is
// acknowledged to the stream and not handed over again; the one fn fails
// on is handed over again later (to this agent's next Messages).
func (a *Agent) Messages(ctx context.Context, fn func(wire.InboxMessage) error) error {
	it, err := a.cons.Messages(jetstream.PullHeartbeat(2 * time.Second))
	if err != nil {
		return fmt.Errorf("natsbox: %w", err)
	}
	defer it.Stop()
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	for {
		m, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("natsbox: %w", err)
		}
		var msg wire.InboxMessage
		if err := json.Unmarshal(m.Data(), &msg); err != nil {
			_ = m.Term() // not ours to read: never again
			continue
		}
		if err := fn(msg); err != nil {
			_ = m.Nak()
			return err
		}
		if err := m.DoubleAck(ctx); err != nil && ctx.Err() == nil {
			return fmt.Errorf("natsbox: acknowledge %s: %w", msg.ID, err)
		}
	}
}

// Cycle asks wilco for a dispatch cycle: what waits for the agent, and
// its unacknowledged instructions again, come on the inbox subject.
func (a *Agent) Cycle(ctx context.Context) error {
	_, err := a.request(ctx, Request{Kind: KindCycle, Token: a.token}, false)
	return err
}

// Reply sends body (the JSON of POST /v1/inbox/replies: in_reply_to, type,
// text, data) and waits for wilco's answer until ctx ends; then it returns
// ErrNoAnswer, the reply being stored in the stream all the same.
func (a *Agent) Reply(ctx context.Context, body any) (Answer, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return Answer{}, fmt.Errorf("natsbox: reply: %w", err)
	}
	return a.request(ctx, Request{Kind: KindReply, Token: a.token, Reply: raw}, true)
}

// request publishes req to the stream, retrying until it is stored or ctx
// ends, and with wait, waits for its answer.
func (a *Agent) request(ctx context.Context, req Request, wait bool) (Answer, error) {
	data, err := json.Marshal(req)
	if err != nil {
		return Answer{}, err
	}
	msg := nats.NewMsg(ReplySubject(a.repo, a.name))
	msg.Data = data
	var sub *nats.Subscription
	if wait {
		inbox := a.nc.NewRespInbox()
		if sub, err = a.nc.SubscribeSync(inbox); err != nil {
			return Answer{}, fmt.Errorf("natsbox: %w", err)
		}
		defer sub.Unsubscribe() //nolint:errcheck // the connection may be gone
		msg.Header.Set(HeaderAnswerTo, inbox)
	}
	id := nats.NewInbox() // a unique id: a publish repeated after a lost PubAck is stored once
	for {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err = a.js.PublishMsg(pctx, msg, jetstream.WithMsgID(id))
		cancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return Answer{}, fmt.Errorf("natsbox: publish: %w", err)
		}
		select {
		case <-ctx.Done():
			return Answer{}, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	if !wait {
		return Answer{}, nil
	}
	m, err := sub.NextMsgWithContext(ctx)
	if err != nil {
		return Answer{}, ErrNoAnswer
	}
	var ans Answer
	if err := json.Unmarshal(m.Data, &ans); err != nil {
		return Answer{}, fmt.Errorf("natsbox: answer: %w", err)
	}
	return ans, nil
}
