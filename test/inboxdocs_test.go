package test

// What a mailbox agent's inbox holds: every type of message, made by a real
// server, against the samples docs/AGENTS.md and docs/API.md show.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"wilco/test/blackbox"
)

// inboxTypes are the types of message a mailbox agent's inbox can hold: a
// message's own type on its first send, the kind of a later send of it.
var inboxTypes = []string{
	"task_delegation", "ack_request", "wrong_id", "correction", "task_clarification", "followup", "resend", "cancel",
	"instruction", "retry", "conversation", "context_probe", "scout_query", "review",
	"pre_operation", "reminder", "extension_granted", "timeout_notice", "operation_outcome",
}

// inboxCollector polls agents' inboxes and keeps the first message of
// each type, as the server wrote it.
type inboxCollector struct {
	in   *blackbox.Instance
	seen map[string]map[string]any
}

// poll runs one dispatch cycle of the agent with token tok (long-polled
// for up to wait) and keeps what it brings.
func (c *inboxCollector) poll(tok string, wait time.Duration) []map[string]any {
	c.in.T.Helper()
	path := "/v1/inbox"
	if wait > 0 {
		path += "?wait=" + wait.String()
	}
	var out struct{ Messages []map[string]any }
	c.in.Must(200, c.in.Call("GET", path, tok, nil), &out)
	for _, m := range out.Messages {
		typ, _ := m["type"].(string)
		if _, ok := c.seen[typ]; !ok {
			c.seen[typ] = m
		}
	}
	return out.Messages
}

// await polls the agent's inbox until a message of type typ comes for it
// (matching, when given) and returns it.
func (c *inboxCollector) await(tok, typ string, match func(map[string]any) bool) map[string]any {
	c.in.T.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, m := range c.poll(tok, time.Second) {
			if m["type"] == typ && (match == nil || match(m)) {
				return m
			}
		}
	}
	c.in.T.Fatalf("no message of type %s came in 30s:\n%s", typ, c.in.Problems())
	return nil
}

// reply sends an agent's reply and returns how wilco interpreted it.
func (c *inboxCollector) reply(tok, inReplyTo, text string) map[string]any {
	c.in.T.Helper()
	return c.in.ReplyAs(tok, map[string]any{"in_reply_to": inReplyTo, "text": text})
}

func ofTask(id string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["task_id"] == id }
}

// inboxSamples makes a message of every type in inboxTypes through a real
// server, and returns the collector that holds the first of each type, and
// the token of the agent that takes tasks (alpha).
func inboxSamples(t *testing.T) (*inboxCollector, string) {
	dir := blackbox.NewRepo(t, `agents:
  - {name: alpha, adapter: mailbox, capabilities: [go]}
  - {name: reviewer, adapter: mailbox, capabilities: [review]}
  - {name: scout, adapter: mailbox, role: scout}
review: {agent: reviewer, timeout: 1m}
policy:
  ack: {timeouts: [2s, 2s, 2s, 2s, 2s, 2s, 2s, 2s], backoff: {base: 100ms, max: 200ms}, queued_followup: 500ms, max_corrections: 5}
`+blackbox.CheckStep)
	in := blackbox.ServeRepo(t, dir)
	token := func(name string) string {
		var out struct{ Token string }
		in.Must(200, in.Call("POST", "/v1/agents/"+name+"/token", blackbox.AdminToken, nil), &out)
		return out.Token
	}
	alpha, reviewer, scout := token("alpha"), token("reviewer"), token("scout")
	c := &inboxCollector{in: in, seen: map[string]map[string]any{}}

	// A task's delegation, and what follows it before work begins.
	in.Submit(map[string]any{"id": "T-1", "description": "Make the parser accept empty input",
		"acceptance_criteria": []string{"the parser returns an empty list for empty input"}})
	d := c.await(alpha, "task_delegation", ofTask("T-1"))
	id := d["id"].(string)
	c.await(alpha, "ack_request", ofTask("T-1")) // no ACK in time
	c.reply(alpha, id, "[ACK] T-9 - RECEIVED\nUnderstanding: the parser returns an empty list for empty input")
	c.await(alpha, "wrong_id", ofTask("T-1"))
	c.reply(alpha, id, "[ACK] T-1 - RECEIVED\nUnderstanding: I will rename a variable")
	c.await(alpha, "correction", ofTask("T-1"))
	c.reply(alpha, id, "[ACK] T-1 - CLARIFICATION_NEEDED\nUnderstanding: the parser returns an empty list for empty input\nQuestions:\n1. Is whitespace alone empty input?")
	in.WaitTask("T-1", 30*time.Second, "clarifying")
	in.Must(200, in.Call("POST", "/v1/tasks/T-1/clarify", blackbox.AdminToken, map[string]any{"answers": []string{"yes"}}))
	c.await(alpha, "task_clarification", ofTask("T-1"))
	in.Must(200, in.Call("POST", "/v1/tasks/T-1/cancel", blackbox.AdminToken, nil))
	c.await(alpha, "cancel", ofTask("T-1"))
	in.WaitTask("T-1", 30*time.Second, "cancelled")

	// A delegation sent again after the agent was busy, then queued
	// behind its work; a scout's question; the reviewer's request.
	in.Submit(map[string]any{"id": "T-2", "description": "Write the fix into file.txt"})
	d = c.await(alpha, "task_delegation", ofTask("T-2"))
	id = d["id"].(string)
	in.Must(202, in.Call("POST", "/v1/inbox/replies", alpha, map[string]any{"in_reply_to": id, "type": "task-acknowledgment-error",
		"data": map[string]any{"task_id": "T-2", "error_code": "RESOURCE_UNAVAILABLE", "retry_after_minutes": 0.01}}))
	c.await(alpha, "resend", ofTask("T-2"))
	c.reply(alpha, id, "[ACK] T-2 - QUEUED\nUnderstanding: Will write the fix into file.txt")
	c.await(alpha, "followup", ofTask("T-2"))
	in.Must(202, in.Call("POST", "/v1/inbox/replies", alpha, map[string]any{"in_reply_to": id, "type": "checkpoint-ack",
		"data": map[string]any{"task_id": "T-2", "checkpoint": 1, "status": "in-progress", "summary": "started"}}))
	in.WaitTask("T-2", 30*time.Second, "running")
	in.Must(201, in.Call("POST", "/v1/ask", alpha, map[string]any{"scout": "scout", "question": "Which test checks file.txt?"}))
	q := c.await(scout, "scout_query", ofTask("T-2"))
	c.reply(scout, q["id"].(string), "check.sh does")
	in.Fix("T-2")
	c.reply(alpha, id, "Status: complete\nSummary: wrote the fix into file.txt")
	r := c.await(reviewer, "review", ofTask("T-2"))
	c.reply(reviewer, r["id"].(string), "APPROVED")
	in.WaitTask("T-2", 30*time.Second, "success")

	// An instruction, and its next dispatch cycle before it is answered.
	var instr struct{ ID string }
	in.Must(201, in.Call("POST", "/v1/instructions", blackbox.AdminToken, map[string]any{"agent": "alpha", "content": "Run go fmt ./... and commit the result"}), &instr)
	c.await(alpha, "instruction", nil)
	c.await(alpha, "retry", nil)
	c.reply(alpha, instr.ID, "ok, done")

	// A conversation; a context probe.
	in.Must(201, in.Call("POST", "/v1/messages", blackbox.AdminToken, map[string]any{"to": "alpha", "type": "conversation", "subject": "Branch", "body": "Which branch are you on?"}))
	c.await(alpha, "conversation", nil)
	in.Must(202, in.Call("POST", "/v1/agents/alpha/probe", blackbox.AdminToken, nil))
	c.await(alpha, "context_probe", nil)

	// An operation: its request, a reminder, the extension a "wait"
	// gets, and its outcome once the agent said "ok"; another that times
	// out.
	var op struct{ ID string }
	in.Must(201, in.Call("POST", "/v1/operations", blackbox.AdminToken, map[string]any{"operation": "deploy", "agents": []string{"alpha"},
		"message": "deploy the new build to staging", "timeout": "10s", "reminders": []string{"300ms"}, "extension": "5s", "command": []string{"true"}}), &op)
	p := c.await(alpha, "pre_operation", nil)
	c.await(alpha, "reminder", nil)
	c.reply(alpha, p["id"].(string), "wait")
	c.await(alpha, "extension_granted", nil)
	c.reply(alpha, p["id"].(string), "ok")
	c.await(alpha, "operation_outcome", nil)
	in.Must(201, in.Call("POST", "/v1/operations", blackbox.AdminToken, map[string]any{"operation": "restart-db", "agents": []string{"alpha"},
		"timeout": "1s", "reminders": []string{"500ms"}, "command": []string{"true"}}), &op)
	c.await(alpha, "timeout_notice", nil)
	in.WatchFold("inbox")
	return c, alpha
}

// docSection is the text of the section of a page of docs/ under heading
// (a line "## …" or "### …"), up to the next heading of its level or
// above.
func docSection(t *testing.T, page, heading string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "docs", page))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	start, level := -1, 0
	for i, l := range lines {
		h := strings.TrimLeft(l, "#")
		n := len(l) - len(h)
		switch {
		case start < 0 && n > 0 && strings.TrimSpace(h) == heading:
			start, level = i+1, n
		case start >= 0 && n > 0 && n <= level && strings.HasPrefix(h, " "):
			return strings.Join(lines[start:i], "\n")
		}
	}
	if start < 0 {
		t.Fatalf("docs/%s has no heading %q", page, heading)
	}
	return strings.Join(lines[start:], "\n")
}

var jsonBlock = regexp.MustCompile("(?s)```json\n(.*?)\n```")

// jsonKinds maps each key of a JSON object to the kind of its value.
func jsonKinds(m map[string]any) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		switch v.(type) {
		case string:
			out[k] = "string"
		case float64:
			out[k] = "number"
		case bool:
			out[k] = "boolean"
		default:
			out[k] = "other"
		}
	}
	return out
}

// TestTheInboxSamplesOfTheDocsAreTheServers: the sample messages that
// docs/AGENTS.md and docs/API.md show of an agent's inbox have the fields
// (and the kinds of values) a real server's messages of the same type
// have, and docs/AGENTS.md shows and explains every type an inbox can hold.
func TestTheInboxSamplesOfTheDocsAreTheServers(t *testing.T) {
	t.Parallel()
	c, alpha := inboxSamples(t)
	real := c.seen
	for _, typ := range inboxTypes {
		if real[typ] == nil {
			t.Errorf("the server made no message of type %s", typ)
		}
	}
	for typ := range real {
		if !slices.Contains(inboxTypes, typ) {
			t.Errorf("the server made a message of type %s, which the test does not know of: add it to inboxTypes and to the docs", typ)
		}
	}
	for _, doc := range []struct{ page, heading string }{{"AGENTS.md", "What the inbox holds"}, {"API.md", "The agent's inbox"}} {
		section := docSection(t, doc.page, doc.heading)
		shown := map[string]bool{}
		for _, block := range jsonBlock.FindAllStringSubmatch(section, -1) {
			var sample map[string]any
			if err := json.Unmarshal([]byte(block[1]), &sample); err != nil {
				t.Errorf("docs/%s: a sample is not a JSON object: %v\n%s", doc.page, err, block[1])
				continue
			}
			typ, _ := sample["type"].(string)
			shown[typ] = true
			m, ok := real[typ]
			if !ok {
				t.Errorf("docs/%s shows a message of type %q, which the server never sent", doc.page, typ)
				continue
			}
			if got, want := jsonKinds(sample), jsonKinds(m); !reflect.DeepEqual(got, want) {
				t.Errorf("docs/%s: the %s sample has the fields %v, the server's %s has %v", doc.page, typ, got, typ, want)
			}
		}
		if len(shown) == 0 {
			t.Errorf("docs/%s shows no inbox message under %q", doc.page, doc.heading)
		}
		if doc.page != "AGENTS.md" {
			continue
		}
		for _, typ := range inboxTypes {
			if !shown[typ] {
				t.Errorf("docs/%s shows no message of type %s", doc.page, typ)
			}
			if !strings.Contains(section, "| `"+typ+"` |") {
				t.Errorf("docs/%s's table does not explain the type %s", doc.page, typ)
			}
		}
	}

	// wilco inbox --json prints the messages as the API gives them.
	c.in.Submit(map[string]any{"id": "T-3", "description": "Write the fix into file.txt"})
	c.in.Must(201, c.in.Call("POST", "/v1/instructions", blackbox.AdminToken, map[string]any{"agent": "alpha", "content": "Run go vet ./..."}))
	printed := map[string]bool{}
	for try := 0; try < 20 && !(printed["task_delegation"] && printed["instruction"]); try++ {
		cmd := exec.Command(blackbox.WilcoBin, "inbox", "--json", "--wait", "2s")
		cmd.Dir = c.in.Dir
		cmd.Env = append(os.Environ(), "WILCO_ADDR="+c.in.Url, "WILCO_AGENT_TOKEN="+alpha)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("wilco inbox --json: %v\n%s", err, out)
		}
		var got struct{ Messages []map[string]any }
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("wilco inbox --json printed %s: %v", out, err)
		}
		for _, m := range got.Messages {
			typ, _ := m["type"].(string)
			printed[typ] = true
			if want := real[typ]; want != nil && !reflect.DeepEqual(jsonKinds(m), jsonKinds(want)) {
				t.Errorf("wilco inbox --json printed a %s with the fields %v, the API's has %v", typ, jsonKinds(m), jsonKinds(want))
			}
		}
	}
	if !printed["task_delegation"] || !printed["instruction"] {
		t.Errorf("wilco inbox --json printed no task delegation or no instruction: %v", printed)
	}
}
