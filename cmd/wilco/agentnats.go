package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"

	"path/filepath"
	"strings"
	"time"

	"wilco/client"
	"wilco/daemon"
	"wilco/natsbox"
	"wilco/wire"
)

// natsCycleEvery is how often `wilco inbox --follow` asks for a dispatch
// cycle over NATS, as a long-polling agent would poll.
const natsCycleEvery = 15 * time.Second

// Environment variables of the agent's side over NATS.
const (
	envAgent      = "WILCO_AGENT"
	envRepository = "WILCO_REPOSITORY"
)

// natsFlags are the agent's-side flags of the NATS mailbox.
type natsFlags struct {
	c                            *cli
	transport, agent, repository *string
}

func (c *cli) natsFlags(fs *flag.FlagSet) *natsFlags {
	return &natsFlags{
		c:          c,
		transport:  fs.String("transport", "", "nats://… : use the NATS mailbox (default $WILCO_TRANSPORT)"),
		agent:      fs.String("agent", "", "with --transport: the agent's name (default $WILCO_AGENT)"),
		repository: fs.String("repository", "", "with --transport: the repository's name in wilco (default $WILCO_REPOSITORY, else the working directory's name)"),
	}
}

func (n *natsFlags) url() string {
	if *n.transport != "" {
		return *n.transport
	}
	return n.c.getenv(daemon.EnvTransport)
}

// dial connects the agent to the NATS mailbox.
func (n *natsFlags) dial(ctx context.Context) (*natsbox.Agent, error) {
	agent := *n.agent
	if agent == "" {
		agent = n.c.getenv(envAgent)
	}
	if agent == "" {
		return nil, errors.New("the NATS mailbox needs the agent's name: --agent or WILCO_AGENT")
	}
	token := strings.TrimSpace(n.c.getenv(client.EnvAgentToken))
	if token == "" {
		return nil, client.ErrNoAgentToken
	}
	repo := *n.repository
	if repo == "" {
		repo = n.c.getenv(envRepository)
	}
	if repo == "" {
		repo = filepath.Base(n.c.wd)
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return natsbox.Dial(dctx, n.url(), repo, agent, token)
}

// followInbox prints the agent's messages as they arrive: pushed over
// NATS, or by long-polling the HTTP mailbox.
func (c *cli) followInbox(ctx context.Context, n *natsFlags, asJSON bool) int {
	print := func(m wire.InboxMessage) {
		if asJSON {
			b, _ := json.Marshal(m)
			fmt.Fprintln(c.stdout, string(b))
			return
		}
		c.printInboxMessage(m)
	}
	if n.url() == "" {
		cl, err := c.agentClient()
		if err != nil {
			return c.fail(err)
		}
		for {
			msgs, err := cl.Inbox(ctx, 30*time.Second)
			if ctx.Err() != nil {
				return exitOK
			}
			if err != nil {
				return c.fail(err)
			}
			for _, m := range msgs {
				print(m)
			}
		}
	}
	ag, err := n.dial(ctx)
	if err != nil {
		return c.fail(err)
	}
	defer ag.Close()
	if err := ag.Cycle(ctx); err != nil {
		return c.fail(err)
	}
	// A dispatch cycle now and then: the instructions not yet
	// acknowledged come again, and a wilco that took over from another
	// learns of this agent.
	go func() {
		t := time.NewTicker(natsCycleEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				_ = ag.Cycle(ctx)
			}
		}
	}()
	err = ag.Messages(ctx, func(m wire.InboxMessage) error {
		print(m)
		return nil
	})
	if ctx.Err() != nil {
		return exitOK
	}
	return c.fail(err)
}

// replyOverNATS sends r on the NATS mailbox and returns wilco's
// interpretation, or nil and the exit code.
func (c *cli) replyOverNATS(ctx context.Context, n *natsFlags, r wire.Reply) (*wire.Interpretation, int) {
	ag, err := n.dial(ctx)
	if err != nil {
		return nil, c.fail(err)
	}
	defer ag.Close()
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ans, err := ag.Reply(rctx, r)
	if errors.Is(err, natsbox.ErrNoAnswer) {
		fmt.Fprintln(c.stderr, "wilco: the reply is stored in the NATS stream; wilco has not answered yet and handles it when it is back")
		return nil, exitOK
	}
	if err != nil {
		return nil, c.fail(err)
	}
	if ans.Status/100 != 2 {
		var e wire.Error
		_ = json.Unmarshal(ans.Body, &e)
		return nil, c.fail(&client.APIError{Status: ans.Status, Code: e.Error.Code, Message: e.Error.Message, Method: "POST", Path: "/v1/inbox/replies", Structured: true})
	}
	var out wire.Interpreted
	if err := json.Unmarshal(ans.Body, &out); err != nil {
		return nil, c.fail(err)
	}
	return &out.Interpreted, exitOK
}
