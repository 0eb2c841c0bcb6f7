package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"wilco/wire"
)

func cmdInbox(ctx context.Context, c *cli, v *verb, args []string) int {
	fs := c.flags(v)
	wait := fs.Duration("wait", 0, "long-poll up to this long when the inbox is empty")
	asJSON := fs.Bool("json", false, "print the API JSON (with --follow: one message per line)")
	follow := fs.Bool("follow", false, "print the messages as they arrive, until interrupted (over NATS with --transport, else long-polling)")
	nt := c.natsFlags(fs)
	if _, _, code, ok := c.parse(v, fs, args, 0, 0); !ok {
		return code
	}
	if *follow {
		return c.followInbox(ctx, nt, *asJSON)
	}
	cl, err := c.agentClient()
	if err != nil {
		return c.fail(err)
	}
	msgs, err := cl.Inbox(ctx, *wait)
	if err != nil {
		return c.fail(err)
	}
	if *asJSON {
		return c.printJSON(map[string]any{"messages": nonNil(msgs)})
	}
	if len(msgs) == 0 {
		fmt.Fprintln(c.stderr, "no messages")
		return exitOK
	}
	for i, m := range msgs {
		if i > 0 {
			fmt.Fprintln(c.stdout)
		}
		c.printInboxMessage(m)
	}
	return exitOK
}

func (c *cli) printInboxMessage(m wire.InboxMessage) {
	head := []string{m.ID, m.Type, "from " + m.From}
	for _, kv := range [][2]string{{"task", m.TaskID}, {"instruction", m.InstructionID}, {"operation", m.OperationID}} {
		if kv[1] != "" {
			head = append(head, kv[0]+" "+kv[1])
		}
	}
	head = append(head, fmt.Sprintf("attempt %d", m.Attempt))
	fmt.Fprintf(c.stdout, "--- %s\n", strings.Join(head, "  "))
	if m.Subject != "" {
		fmt.Fprintf(c.stdout, "Subject: %s\n", m.Subject)
	}
	fmt.Fprintln(c.stdout, strings.TrimRight(m.Body, "\n"))
}

func cmdReply(ctx context.Context, c *cli, v *verb, args []string) int {
	fs := c.flags(v)
	to := fs.String("to", "", "the id of the message answered (default: the server finds it)")
	typ := fs.String("type", "", "the reply's form: task-acknowledgment, task-acknowledgment-error, checkpoint-ack, task-complete, acknowledgment (with --data, or with the text: a task-complete's text is its summary)")
	data := fs.String("data", "", "the reply as a JSON object (its \"type\" field names the form when --type is not given)")
	asJSON := fs.Bool("json", false, "print the API JSON")
	nt := c.natsFlags(fs)
	pos, _, code, ok := c.parse(v, fs, args, 0, 1)
	if !ok {
		return code
	}
	r := wire.Reply{InReplyTo: *to, Type: wire.ReplyType(*typ)}
	if len(pos) == 1 {
		text, err := c.readText(pos[0])
		if err != nil {
			return c.fail(err)
		}
		r.Text = text
	}
	switch {
	case *data != "":
		if !json.Valid([]byte(*data)) {
			return c.usageError(v, fs, "--data is not valid JSON")
		}
		r.Data = json.RawMessage(*data)
	case strings.TrimSpace(r.Text) == "":
		return c.usageError(v, fs, "give the reply's text (with --type to name its form), or --data")
	}
	var in *wire.Interpretation
	if nt.url() != "" {
		var code int
		if in, code = c.replyOverNATS(ctx, nt, r); in == nil {
			return code
		}
	} else {
		cl, err := c.agentClient()
		if err != nil {
			return c.fail(err)
		}
		if in, err = cl.Reply(ctx, r); err != nil {
			return c.fail(err)
		}
	}
	if *asJSON {
		return c.printJSON(map[string]any{"interpreted": in})
	}
	fmt.Fprintln(c.stdout, describeInterpretation(in))
	return exitOK
}

// describeInterpretation says in one line what wilco made of a reply.
func describeInterpretation(in *wire.Interpretation) string {
	line := "interpreted as " + string(in.Kind) + optional(" ", in.Status)
	var about []string
	for _, kv := range [][2]string{{"task", in.TaskID}, {"operation", in.OperationID}, {"message", in.DeliveryID}} {
		if kv[1] != "" {
			about = append(about, kv[0]+" "+kv[1])
		}
	}
	if len(about) > 0 {
		line += " (" + strings.Join(about, ", ") + ")"
	}
	switch {
	case in.Action != "":
		line += ": " + in.Action
	case len(in.Acknowledged) > 0:
		line += ": acknowledged " + strings.Join(in.Acknowledged, ", ")
	}
	if len(in.Questions) > 0 {
		line += fmt.Sprintf("; %d questions", len(in.Questions))
	}
	return line
}

// cmdAsk asks a scout a question as the agent working on a task and
// prints the answer: exit 0 with the answer, 1 when the question failed
// (the scout changed a file, did not answer…) or no answer came in time.
func cmdAsk(ctx context.Context, c *cli, v *verb, args []string) int {
	fs := c.flags(v)
	timeout := fs.Duration("timeout", 10*time.Minute, "how long to wait for the answer")
	asJSON := fs.Bool("json", false, "print the API JSON")
	pos, _, code, ok := c.parse(v, fs, args, 2, 2)
	if !ok {
		return code
	}
	question, err := c.readText(pos[1])
	if err != nil {
		return c.fail(err)
	}
	if strings.TrimSpace(question) == "" {
		return c.usageError(v, fs, "ask something")
	}
	cl, err := c.agentClient()
	if err != nil {
		return c.fail(err)
	}
	q, err := cl.Ask(ctx, pos[0], question, *timeout)
	if err != nil {
		return c.fail(err)
	}
	if *asJSON {
		if code := c.printJSON(q); code != exitOK || q.State == wire.ConsultAnswered {
			return code
		}
		return exitFailure
	}
	switch q.State {
	case wire.ConsultAnswered:
		fmt.Fprintln(c.stdout, q.Answer)
		return exitOK
	case wire.ConsultFailed:
		fmt.Fprintf(c.stderr, "wilco: the scout %s gave no answer: %s\n", q.Scout, q.Error)
	default:
		fmt.Fprintf(c.stderr, "wilco: the scout %s did not answer within %s (question %s)\n", q.Scout, *timeout, q.ID)
	}
	return exitFailure
}
