package sim

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"wilco/core"
)

// persona is how an agent misbehaves: the chance of each habit, per
// message it receives.
type persona struct {
	kind    string
	silent  float64 // ignores the message
	slow    float64 // answers after a long delay, often past the timeout
	dup     float64 // answers the same thing twice or more
	ooo     float64 // answers an older message (a retry's earlier send) after this one
	wrongID float64 // acknowledges another task first
	late    float64 // answers notices and settled messages
}

// personas are the kinds of agents a seed mixes.
var personas = []persona{
	{kind: "prompt", silent: 0.03, slow: 0.05, dup: 0.05, ooo: 0.05, wrongID: 0.02, late: 0.05},
	{kind: "silent", silent: 1},
	{kind: "slow", silent: 0.1, slow: 0.8, late: 0.2},
	{kind: "duplicate", silent: 0.05, slow: 0.1, dup: 0.7},
	{kind: "out_of_order", silent: 0.05, slow: 0.3, ooo: 0.7},
	{kind: "wrong_id", silent: 0.05, slow: 0.1, wrongID: 0.6},
	{kind: "late", silent: 0.1, slow: 0.3, late: 0.8},
	{kind: "mixed", silent: 0.2, slow: 0.3, dup: 0.3, ooo: 0.3, wrongID: 0.2, late: 0.3},
}

// agent is a simulated agent: it answers what it receives, in its own
// way and time, and takes dispatch cycles on its own schedule.
type agent struct {
	name    string
	adapter string
	pull    bool
	caps    []string
	p       persona
	// poll is the mean time between the agent's own dispatch cycles; zero
	// for an agent that never takes one.
	poll    time.Duration
	history []core.InboxMessage
}

// task is what the caller knows of a task it delegated.
type task struct {
	id       string
	desc     string
	criteria []string
}

type actKind int

const (
	actReply actKind = iota
	actAgentAck
	actCycle
	actFinish
	actNotified
	actTask
)

// action is something an agent (or an operation's command) does at a
// virtual time.
type action struct {
	at    time.Time
	n     int // order among actions at the same time
	kind  actKind
	agent string
	in    core.ReplyInput
	id    string
	exit  int
	tag   string // the habit that produced it, for the path counts
	// note is how a notification's attempt went (actNotified).
	note core.NotificationResult
	// fn is what a task agent or the executor does (actTask); proc:
	// it is done by wilco's own processes, and dies with wilco.
	fn   func()
	proc bool
}

func (w *world) schedule(a action) {
	w.agendaN++
	a.n = w.agendaN
	i, _ := slices.BinarySearchFunc(w.agenda, a, func(x, y action) int {
		if c := x.at.Compare(y.at); c != 0 {
			return c
		}
		return x.n - y.n
	})
	w.agenda = slices.Insert(w.agenda, i, a)
}

// perform runs one scheduled action.
func (w *world) perform(a action) {
	if a.tag != "" {
		w.hit("agent." + a.tag)
	}
	switch a.kind {
	case actCycle:
		w.cycle(a.agent, true)
	case actReply:
		w.tracef("%s replies (to %q) %s", a.agent, a.in.InReplyTo, describe(a.in))
		r := w.do("reply from "+a.agent, func(c *core.State, now time.Time) (any, error) {
			return c.Reply(now, a.in)
		})
		w.afterReply(r)
	case actAgentAck:
		w.tracef("%s acks %s", a.agent, a.id)
		r := w.do("agent ack from "+a.agent, func(c *core.State, now time.Time) (any, error) {
			return nil, c.AgentAck(now, a.agent, a.id)
		})
		w.checkAcks(r, []string{a.id})
		w.noteLate(r)
	case actFinish:
		w.tracef("operation %s finishes with %d", a.id, a.exit)
		w.do("finish "+a.id, func(c *core.State, now time.Time) (any, error) {
			o, ok := c.Operation(a.id)
			if !ok || !core.AgentOperation(o.Name) {
				return c.FinishOperation(now, a.id, a.exit, fmt.Sprintf("exit status %d", a.exit))
			}
			// An operation on agents: each agent's part done (or, with a
			// failing exit, the first one's failed), its status after.
			status := core.Available
			if o.Name == core.OpHibernate {
				status = core.Hibernating
			}
			var results []core.OperationResult
			for i, n := range o.Agents {
				r := core.OperationResult{Agent: n, Done: true, Action: o.Name, Status: status}
				if o.Name == core.OpHibernate {
					r.Conversation = "conv-" + a.id
				}
				if i == 0 && a.exit != 0 {
					r = core.OperationResult{Agent: n, Error: fmt.Sprintf("%s failed", o.Name)}
				}
				results = append(results, r)
			}
			return c.FinishAgentOperation(now, a.id, results, 0, "")
		})
	case actNotified:
		w.endNotification(a)
	case actTask:
		a.fn()
	}
}

func describe(in core.ReplyInput) string {
	if in.Type != "" || len(in.Data) > 0 {
		return fmt.Sprintf("%s %s", in.Type, in.Data)
	}
	return fmt.Sprintf("%q", in.Text)
}

func (w *world) afterReply(r *result) {
	if r.answered && r.err == nil {
		in := r.v.(core.Interpretation)
		w.checkAcks(r, in.Acknowledged)
		w.hit("reply." + in.Kind)
		return
	}
	w.noteLate(r)
}

// noteLate counts answers refused because what they answer had ended.
func (w *world) noteLate(r *result) {
	if !r.answered || r.err == nil {
		return
	}
	msg := r.err.Error()
	switch {
	case strings.Contains(msg, " is already acknowledged"):
		w.hit("reply.after_acknowledged")
	case strings.Contains(msg, " is already failed"):
		w.hit("reply.after_failed")
	case strings.Contains(msg, " is already cancelled"):
		w.hit("reply.after_cancelled")
	case strings.HasPrefix(msg, "operation ") && strings.Contains(msg, " is already "):
		w.hit("reply.after_operation_end")
	}
}

// cycle is one dispatch cycle of an agent. The core's answer is checked
// against the cycles policy: every new instruction is sent, every
// instruction still unacknowledged from an earlier cycle is sent again or,
// after max_retries+1 sends, failed — in this very cycle, the next after
// its last send.
func (w *world) cycle(name string, own bool) {
	type snap struct {
		id         string
		sends, max int
	}
	w.tracef("%s takes a dispatch cycle", name)
	r := w.do("cycle of "+name, func(c *core.State, now time.Time) (any, error) {
		var earlier, pending []snap
		inbox := 0
		if ag, ok := c.Agent(name); ok {
			for _, id := range ag.Unacked {
				d, _ := c.Delivery(id)
				earlier = append(earlier, snap{id, d.Sends, d.MaxRetries})
			}
			for _, id := range ag.Pending {
				d, _ := c.Delivery(id)
				pending = append(pending, snap{id, d.Sends, d.MaxRetries})
			}
			inbox = len(ag.Inbox)
		}
		msgs, err := c.Cycle(now, name)
		if err != nil {
			return nil, err
		}
		sent := map[string]int{}
		for _, m := range msgs[inbox:] {
			sent[m.ID]++
		}
		want := 0
		for _, s := range pending {
			d, _ := c.Delivery(s.id)
			if d.State != core.Sent || d.Sends != 1 || sent[s.id] != 1 {
				w.failf("cycle of %s: new instruction %s is %s with %d sends (%d in the cycle), want sent once", name, s.id, d.State, d.Sends, sent[s.id])
			}
			want++
		}
		for _, s := range earlier {
			d, _ := c.Delivery(s.id)
			if s.sends > s.max+1 {
				w.failf("instruction %s was sent %d times, max_retries %d", s.id, s.sends, s.max)
			}
			if s.sends == s.max+1 {
				if d.State != core.Failed || d.Sends != s.sends || sent[s.id] != 0 {
					w.failf("cycle of %s: %s was sent %d times (max_retries %d) and is %s with %d sends, want failed at this cycle", name, s.id, s.sends, s.max, d.State, d.Sends)
				}
				continue
			}
			if d.State != core.Sent || d.Sends != s.sends+1 || sent[s.id] != 1 {
				w.failf("cycle of %s: unacknowledged %s (%d sends, max_retries %d) is %s with %d sends, want sent again", name, s.id, s.sends, s.max, d.State, d.Sends)
			}
			want++
		}
		if len(msgs)-inbox != want {
			w.failf("cycle of %s handed over %d instructions, want %d", name, len(msgs)-inbox, want)
		}
		return msgs, nil
	})
	a := w.byName[name]
	if a == nil {
		return
	}
	if r.answered && r.err == nil {
		for _, m := range r.v.([]core.InboxMessage) {
			w.receive(a, m)
		}
	}
	if own && a.poll > 0 {
		w.schedule(action{at: w.clock.Now().Add(w.between(a.poll/2, a.poll*3/2)), kind: actCycle, agent: name})
	}
}

// Message categories, by the type an agent sees.
const (
	catTask = iota
	catInstruction
	catConversation
	catOperation
	catNotice
	catOther
)

func category(typ string) int {
	switch typ {
	case "task_delegation", "ack_request", "resend", "correction", "wrong_id", "task_clarification", "followup":
		return catTask
	case "instruction", "retry":
		return catInstruction
	case "conversation":
		return catConversation
	case "pre_operation", "reminder", "extension_granted":
		return catOperation
	case "cancel", "timeout_notice", "operation_outcome":
		return catNotice
	}
	return catOther
}

// scale is the time an agent is expected to answer in.
func (w *world) scale(cat int) time.Duration {
	p := w.live.Policies()
	if cat == catOperation {
		return p.Operation.Timeout
	}
	return p.Ack.Timeouts[0]
}

func (w *world) quick(cat int) time.Duration { return w.between(0, w.scale(cat)*4/5) }

func (w *world) slow(cat int) time.Duration {
	s := w.scale(cat)
	return w.between(s/2, 3*s*time.Duration(len(w.live.Policies().Ack.Timeouts)))
}

// receive is an agent getting a message: it decides, by its persona, what
// to answer and when.
func (w *world) receive(a *agent, m core.InboxMessage) {
	w.hit("agent.received." + m.Type)
	a.history = append(a.history, m)
	if len(a.history) > 32 {
		a.history = a.history[1:]
	}
	now := w.clock.Now()
	cat := category(m.Type)
	if cat == catNotice || cat == catOther {
		if w.chance(a.p.late) {
			act := w.compose(a, m, false)
			act.tag, act.at = "late", now.Add(w.slow(cat))
			w.schedule(act)
		}
		return
	}
	if w.chance(a.p.silent) {
		w.hit("agent.silent")
		return
	}
	delay, tag := w.quick(cat), ""
	if w.chance(a.p.slow) {
		delay, tag = w.slow(cat), "slow"
	}
	if cat == catTask && w.chance(a.p.wrongID) {
		act := w.compose(a, m, true)
		act.tag, act.at = "wrong_id", now.Add(delay)
		w.schedule(act)
		if w.chance(0.4) {
			return // and never the right one
		}
		delay += w.quick(cat)
	}
	if w.chance(a.p.ooo) && len(a.history) > 1 {
		old := a.history[w.rng.IntN(len(a.history)-1)]
		for i := len(a.history) - 2; i >= 0; i-- {
			if h := a.history[i]; h.ID == m.ID && h.Attempt < m.Attempt {
				old = h // a retry's earlier send
				break
			}
		}
		act := w.compose(a, old, false)
		act.tag, act.at = "out_of_order", now.Add(delay+w.between(time.Millisecond, w.scale(cat)))
		w.schedule(act)
	}
	act := w.compose(a, m, false)
	act.tag, act.at = tag, now.Add(delay)
	w.schedule(act)
	if w.chance(a.p.dup) {
		for n := 1 + w.rng.IntN(2); n > 0; n-- {
			dup := act
			dup.tag, dup.at = "duplicate", act.at.Add(w.quick(cat))
			w.schedule(dup)
		}
	}
	if w.chance(a.p.late) {
		old := oneOf(w, a.history)
		act := w.compose(a, old, false)
		act.tag, act.at = "late", now.Add(2*w.slow(cat))
		w.schedule(act)
	}
}

// compose writes an agent's answer to m.
func (w *world) compose(a *agent, m core.InboxMessage, wrongID bool) action {
	switch cat := category(m.Type); {
	case cat == catTask, m.TaskID != "" && m.OperationID == "":
		return w.composeTask(a, m, wrongID)
	case cat == catInstruction:
		return w.composeInstruction(a, m)
	case cat == catOperation, m.OperationID != "":
		return w.composeOperation(a, m)
	}
	return w.composeConversation(a, m)
}

func (w *world) reply(a *agent, m core.InboxMessage, text string) action {
	in := core.ReplyInput{Agent: a.name, Text: text}
	if w.chance(0.5) {
		in.InReplyTo = m.ID
	}
	return action{kind: actReply, agent: a.name, in: in}
}

// replyJSON sends a JSON form as such, or inside prose.
func (w *world) replyJSON(a *agent, m core.InboxMessage, typ string, fields map[string]any) action {
	fields["type"] = typ
	data, err := json.Marshal(fields)
	if err != nil {
		w.failf("marshal %v: %v", fields, err)
	}
	act := w.reply(a, m, "")
	switch w.pick(5, 1, 4) {
	case 0:
		act.in.Type, act.in.Data = typ, data
	case 1:
		act.in.Data = data // the type is read from the data
	default:
		act.in.Text = "Here is my answer:\n```json\n" + string(data) + "\n```\nThanks."
	}
	return act
}

var criteriaPool = []string{
	"parser handles nested brackets",
	"tests cover empty input",
	"CLI prints usage on error",
	"config reloads without restart",
	"errors wrap their cause",
	"benchmarks stay under budget",
	"docs describe every flag",
	"migration keeps existing rows",
}

func (w *world) understanding(t *task, good bool) string {
	if t == nil || !good {
		return oneOf(w, []string{"Will look into it.", "Refactor the logging package", ""})
	}
	return t.desc + ": " + strings.Join(t.criteria, "; ")
}

// otherTaskID is a task id that is not id: another task's, or one never
// delegated.
func (w *world) otherTaskID(id string) string {
	if len(w.tasks) > 1 && w.chance(0.6) {
		for range 4 {
			if t := oneOf(w, w.tasks); t.id != id {
				return t.id
			}
		}
	}
	return fmt.Sprintf("T-%d", 900+w.rng.IntN(100))
}

func (w *world) composeTask(a *agent, m core.InboxMessage, wrongID bool) action {
	t := w.taskByID[m.TaskID]
	id := m.TaskID
	if wrongID {
		id = w.otherTaskID(m.TaskID)
	}
	good := w.chance(0.7) || m.Type == "correction" && w.chance(0.6)
	under := w.understanding(t, good)
	switch {
	case m.Type == "followup" && w.chance(0.6):
		return w.replyJSON(a, m, "checkpoint-ack", map[string]any{"task_id": id, "checkpoint": 1, "status": "started", "summary": "work has begun", "next_checkpoint": 2})
	case m.Type == "task_clarification" && w.chance(0.6):
		return w.replyJSON(a, m, "task-acknowledgment", map[string]any{"task_id": id, "status": "confirmed", "understanding": w.understanding(t, true)})
	}
	choice := w.pick(15, 35, 15, 12, 7, 6, 5, 5)
	if wrongID && choice != 2 {
		choice = 1
	}
	switch choice {
	case 0:
		return action{kind: actAgentAck, agent: a.name, id: m.ID}
	case 1:
		return w.reply(a, m, w.ackText(id, under))
	case 2:
		status := oneOf(w, []string{"received", "received", "received", "needs-clarification", "confirmed", "rejected", "queued", "queued"})
		f := map[string]any{"task_id": id, "status": status}
		if under != "" {
			f["understanding"] = under
		}
		if status == "needs-clarification" {
			f["questions"] = []string{"Which database?", "Is a migration needed?"}
		}
		return w.replyJSON(a, m, "task-acknowledgment", f)
	case 3:
		return w.replyJSON(a, m, "task-acknowledgment-error", w.ackErrorForm(id))
	case 4:
		return w.replyJSON(a, m, "checkpoint-ack", map[string]any{"task_id": id, "checkpoint": 1 + w.rng.IntN(3), "status": "completed", "summary": "tests written"})
	case 5:
		return w.replyJSON(a, m, "task-complete", map[string]any{"task_id": id, "status": oneOf(w, []string{"success", "success", "failure", "blocked", "impossible"}), "summary": "done"})
	case 6:
		return w.reply(a, m, oneOf(w, []string{"Looking into it now, will report back.", "I have a question about the build.", "On it!"}))
	}
	broken := oneOf(w, []string{
		"[ACK] {task_id} - RECEIVED",
		"[ACK] " + id + " - MAYBE",
		`{"type":"task-acknowledgment","task_id":"` + id + `"}`,
		`{"type":"task-acknowledgment-error","task_id":"` + id + `","error_code":"OOPS"}`,
		`{"type":"checkpoint-ack","task_id":"` + id + `","checkpoint":-1}`,
	})
	return w.reply(a, m, broken)
}

// ackText is an [ACK] line as agents write it, in one of its many
// forms, with an Understanding and what its status asks for.
func (w *world) ackText(id, under string) string {
	status := oneOf(w, [][]string{
		{"RECEIVED", "received", "Received"}, {"RECEIVED"}, {"RECEIVED"},
		{"CLARIFICATION_NEEDED", "Clarification needed", "needs-clarification"},
		{"REJECTED", "rejected"},
		{"QUEUED", "queued"}, {"QUEUED"},
		{"CONFIRMED"},
	})
	word := oneOf(w, status)
	head := oneOf(w, []string{"[ACK] %s - %s", "**[ACK]** %s – %s", "Sure thing.\n\n> `[ACK] %s — %s`", "ACK: %s - %s", "- [ack] %s: %s", "### [ACK] `%s` - %s"})
	text := fmt.Sprintf(head, id, word)
	if under != "" {
		text += oneOf(w, []string{"\nUnderstanding: ", "\n**Understanding:** "}) + under
	}
	switch status[0] {
	case "CLARIFICATION_NEEDED":
		text += "\nQuestions:\n1. Should the output be JSON?\n2. Which platforms matter?"
	case "REJECTED":
		text += "\nNote: not my area"
	case "QUEUED":
		text += "\nNote: finishing another task first"
	}
	return text
}

// ackErrorForm is a task-acknowledgment-error form, with or without a
// retry_after_minutes.
func (w *world) ackErrorForm(id string) map[string]any {
	f := map[string]any{"task_id": id, "error_code": oneOf(w, []string{"RESOURCE_UNAVAILABLE", "CAPABILITY_MISMATCH", "NETWORK_ERROR", "INVALID_TASK_FORMAT", "AGENT_SHUTTING_DOWN"}), "error_message": "cannot take it now"}
	switch w.pick(4, 1, 2, 2, 1) {
	case 1:
		f["retry_after_minutes"] = 0
	case 2:
		f["retry_after_minutes"] = 0.05
	case 3:
		f["retry_after_minutes"] = 0.5
	case 4:
		f["retry_after_minutes"] = 15
	}
	return f
}

var reDone = regexp.MustCompile(`DONE-\d+`)

func (w *world) composeInstruction(a *agent, m core.InboxMessage) action {
	token := reDone.FindString(m.Body)
	other := fmt.Sprintf("DONE-%d", 1+w.rng.IntN(max(w.nInstr, 1)))
	switch w.pick(25, 45, 15, 10, 5) {
	case 0:
		return action{kind: actAgentAck, agent: a.name, id: m.ID}
	case 1:
		return w.reply(a, m, "Finished. "+token)
	case 2:
		return w.reply(a, m, "Working on it.")
	case 3:
		return w.reply(a, m, "Done: "+other)
	}
	return w.reply(a, m, "Done with both: "+token+" and "+other)
}

func (w *world) composeConversation(a *agent, m core.InboxMessage) action {
	if w.chance(0.25) {
		return action{kind: actAgentAck, agent: a.name, id: m.ID}
	}
	return w.reply(a, m, oneOf(w, []string{"Thanks, here is my answer.", "I think the second option is better.", "No idea, sorry."}))
}

func (w *world) composeOperation(a *agent, m core.InboxMessage) action {
	switch w.pick(40, 18, 5, 10, 12, 8, 4) {
	case 0:
		return w.reply(a, m, oneOf(w, []string{"ok", "OK", "okay", "ready", "**ok**", "ok, ready to go!"}))
	case 1:
		return w.reply(a, m, oneOf(w, []string{"wait", "not ready", "need more time", "hold on", "ready in 5 minutes"}))
	case 2:
		return w.reply(a, m, oneOf(w, []string{"cancel", "abort"}))
	case 3:
		return w.reply(a, m, oneOf(w, []string{"what is this about?", "not ok", "ok?", "I am in the middle of a refactor"}))
	case 4:
		f := oneOf(w, []map[string]any{
			{"message": "ok", "ready": true},
			{"ready": true},
			{"ready": false},
			{"message": "need a minute", "ready": false},
			{"message": "cancel"},
		})
		return w.replyJSON(a, m, "acknowledgment", f)
	case 5:
		return action{kind: actAgentAck, agent: a.name, id: m.ID}
	}
	return w.replyJSON(a, m, "acknowledgment", map[string]any{"message": "ok", "ready": false})
}
