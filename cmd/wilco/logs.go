package main

import (
	"context"
	"encoding/json"
	"fmt"

	"wilco/client"
	"wilco/retrylog"
	"wilco/store"
	"wilco/wire"
)

func cmdLogs(ctx context.Context, c *cli, v *verb, args []string) int {
	fs := c.flags(v)
	task := fs.String("task", "", "only this task's entries")
	agent := fs.String("agent", "", "only this agent's entries")
	follow := fs.Bool("follow", false, "keep printing entries as they happen (Ctrl-C stops)")
	asJSON := fs.Bool("json", false, "print retry.jsonl objects, one per line")
	if _, _, code, ok := c.parse(v, fs, args, 0, 0); !ok {
		return code
	}
	cl, err := c.admin()
	if err != nil {
		return c.fail(err)
	}
	records := retrylog.NewFormatter()
	emit := func(ev wire.Event) error {
		for _, l := range records.Lines(store.Event{Seq: ev.Seq, Time: ev.Time, Type: ev.Type, TaskID: ev.TaskID, Agent: ev.Agent, Data: ev.Data}) {
			switch {
			case !*asJSON && l.Text != "":
				fmt.Fprint(c.stdout, retrylog.TextLine(ev.Time, l.Key, l.Text))
			case *asJSON && l.Fields != nil:
				b, err := json.Marshal(retrylog.Object(ev.Time, ev.TaskID, l.Fields))
				if err != nil {
					return err
				}
				fmt.Fprintf(c.stdout, "%s\n", b)
			}
		}
		return nil
	}
	q := client.EventQuery{Task: *task, Agent: *agent, Limit: historyPage}
	err = cl.EachEvent(ctx, q, func(ev wire.Event) error {
		q.After = max(q.After, ev.Seq)
		return emit(ev)
	})
	if err != nil || !*follow {
		return c.watchError(err)
	}
	q.Limit = 0
	f := &client.Follower{Client: cl, Query: q, ReconnectDelay: c.reconnectDelay}
	return c.watchError(f.Run(ctx, emit))
}
