package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"wilco/wire"
)

type fakeReplier struct {
	mu    sync.Mutex
	got   []wire.Reply
	asked []string
	// taskID is the task wilco takes each reply for ("": the one it names).
	taskID string
}

func (f *fakeReplier) Ask(_ context.Context, scout, question string, _ time.Duration) (*wire.Consultation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, scout+": "+question)
	if scout == "silent" {
		return &wire.Consultation{ID: "M-9", Scout: scout, State: "failed", Error: "the scout changed files"}, nil
	}
	return &wire.Consultation{ID: "M-8", Scout: scout, State: "answered", Answer: "In calc.go."}, nil
}

func (f *fakeReplier) Reply(_ context.Context, r wire.Reply) (*wire.Interpretation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, r)
	return &wire.Interpretation{Kind: "ack", Action: "acknowledged: work may begin", TaskID: f.taskID}, nil
}

func (f *fakeReplier) replies() []wire.Reply {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]wire.Reply(nil), f.got...)
}

// converse runs Serve as a client on the other end of standard input and
// output would: it writes each line, and waits for the answer to each
// request (a line with an id) before it writes the next. It returns every
// line the server wrote once its input ended.
func converse(t *testing.T, rep Replier, task Task, lines ...string) []map[string]any {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := Serve(context.Background(), inR, outW, rep, task, "test")
		_ = outW.Close()
		done <- err
	}()
	answers := make(chan map[string]any, 64)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 8<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = map[string]any{"unreadable": sc.Text()}
			}
			answers <- m
		}
		close(answers)
	}()
	var out []map[string]any
	for _, l := range lines {
		if _, err := io.WriteString(inW, l+"\n"); err != nil {
			t.Fatal(err)
		}
		var req map[string]any
		if json.Unmarshal([]byte(l), &req) != nil || req["id"] == nil {
			continue // a notification, or no message: nothing to wait for
		}
		select {
		case m := <-answers:
			out = append(out, m)
		case <-time.After(10 * time.Second):
			t.Fatalf("no answer to %s", l)
		}
	}
	_ = inW.Close()
	for m := range answers {
		out = append(out, m)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return out
}

// toolText is the text of a tools/call answer, and whether it is an error.
func toolText(t *testing.T, resp map[string]any) (string, bool) {
	t.Helper()
	res, _ := resp["result"].(map[string]any)
	if res == nil {
		t.Fatalf("no result: %v", resp)
	}
	content, _ := res["content"].([]any)
	if len(content) != 1 {
		t.Fatalf("content %v", res)
	}
	text, _ := content[0].(map[string]any)["text"].(string)
	return text, res["isError"] == true
}

func TestToolCallsAreSentAsTheAgentsReplies(t *testing.T) {
	t.Parallel()
	rep := &fakeReplier{}
	resps := converse(t, rep, Task{ID: "T-3", MessageID: "M-7"},
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"wilco_ack","arguments":{"status":"CLARIFICATION_NEEDED","questions":["Which file?"]}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"wilco_complete","arguments":{"status":"success","summary":"done"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"nope"}`,
		`not json`,
	)
	if len(resps) != 6 {
		t.Fatalf("%d answers (the notification gets none): %v", len(resps), resps)
	}
	if v := resps[0]["result"].(map[string]any)["protocolVersion"]; v != "2025-03-26" {
		t.Fatalf("protocol version %v", v)
	}
	if tools := resps[1]["result"].(map[string]any)["tools"].([]any); len(tools) != 4 {
		t.Fatalf("tools %v", tools)
	}
	got := rep.replies()
	if len(got) != 2 || got[0].InReplyTo != "M-7" || got[0].Text != "[ACK] T-3 - CLARIFICATION_NEEDED\nQuestions:\n1. Which file?\n" {
		t.Fatalf("replies %+v", got)
	}
	var data map[string]any
	if err := json.Unmarshal(got[1].Data, &data); err != nil || data["type"] != "task-complete" || data["task_id"] != "T-3" || data["status"] != "success" {
		t.Fatalf("completion %s", got[1].Data)
	}
	if resps[4]["error"].(map[string]any)["code"].(float64) != -32601 || resps[5]["error"].(map[string]any)["code"].(float64) != -32700 {
		t.Fatalf("errors %v %v", resps[4], resps[5])
	}
}

// initialize is the start of every conversation with the server.
var initialize = []string{
	`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
}

// wilco_ask asks a scout through wilco and gives the model its answer, or
// the reason there is none.
func TestAskToolGivesTheScoutsAnswer(t *testing.T) {
	t.Parallel()
	rep := &fakeReplier{}
	resps := converse(t, rep, Task{ID: "T-3", MessageID: "M-7"}, append(initialize,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wilco_ask","arguments":{"scout":"scout-a","question":"Where is Add?"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wilco_ask","arguments":{"scout":"silent","question":"q"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"wilco_ask","arguments":{"scout":"scout-a"}}}`,
	)...)
	b, _ := json.Marshal(resps)
	got := string(b)
	for _, want := range []string{`"text":"In calc.go."`, `the scout silent gave no answer: the scout changed files`, `wilco_ask needs a scout and a question`} {
		if !strings.Contains(got, want) {
			t.Fatalf("no %q in:\n%s", want, got)
		}
	}
	if len(rep.asked) != 2 || rep.asked[0] != "scout-a: Where is Add?" {
		t.Fatalf("asked %v", rep.asked)
	}
}

// A call names its task (task_id) when the server was started for another
// — a TUI that outlives its first turn started it once: the reply names
// that task and leaves its message to wilco, or names the message given
// too. An id that cannot be a task's is refused before anything is sent,
// and a reply wilco took for another task than the one named is an error.
func TestAToolCallNamesItsTask(t *testing.T) {
	t.Parallel()
	rep := &fakeReplier{}
	resps := converse(t, rep, Task{ID: "T-3", MessageID: "M-7"}, append(initialize,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wilco_ack","arguments":{"status":"RECEIVED","understanding":"Fix it","task_id":"T-4"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wilco_checkpoint","arguments":{"checkpoint":1,"summary":"half","task_id":"T-4","message_id":"M-9"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"wilco_complete","arguments":{"status":"success","task_id":"[ACK] T-4"}}}`,
	)...)
	got := rep.replies()
	if len(got) != 2 || got[0].InReplyTo != "" || got[0].Text != "[ACK] T-4 - RECEIVED\nUnderstanding: Fix it\n" {
		t.Fatalf("replies %+v", got)
	}
	var data map[string]any
	if err := json.Unmarshal(got[1].Data, &data); err != nil || got[1].InReplyTo != "M-9" || data["task_id"] != "T-4" || data["message_id"] != nil || data["type"] != "checkpoint-ack" {
		t.Fatalf("checkpoint %+v %s", got[1], got[1].Data)
	}
	if text, isErr := toolText(t, resps[1]); isErr || !strings.Contains(text, "Go on with the task now") {
		t.Fatalf("the ACK of T-4: %q", text)
	}
	if text, isErr := toolText(t, resps[3]); !isErr || !strings.Contains(text, `task_id: task id "[ACK] T-4" has the character`) {
		t.Fatalf("a broken task id: %q (error %v)", text, isErr)
	}

	// wilco took the ACK for T-3 (the only task delegated to the agent):
	// T-5 is no task of its.
	rep = &fakeReplier{taskID: "T-3"}
	resps = converse(t, rep, Task{ID: "T-3", MessageID: "M-7"}, append(initialize,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wilco_ack","arguments":{"status":"RECEIVED","task_id":"T-5"}}}`,
	)...)
	if text, isErr := toolText(t, resps[1]); !isErr || !strings.HasPrefix(text, "T-5 is not the task of that message, or not a task wilco gave you") {
		t.Fatalf("a wrong task id: %q (error %v)", text, isErr)
	}
}

// A client that writes its requests and closes its end at once gets every
// answer: Serve returns once the calls it read are answered.
func TestServeAnswersTheCallsReadBeforeItsInputEnded(t *testing.T) {
	t.Parallel()
	in := strings.Join(append(initialize,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wilco_ask","arguments":{"scout":"scout-a","question":"Where is Add?"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wilco_ack","arguments":{"status":"RECEIVED"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
		`{"foo":1}`,
	), "\n")
	var out strings.Builder
	if err := Serve(context.Background(), strings.NewReader(in), &out, &fakeReplier{}, Task{ID: "T-3", MessageID: "M-7"}, "test"); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for l := range strings.SplitSeq(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		b, _ := json.Marshal(m["id"])
		ids[string(b)] = true
		if m["id"] == nil && m["error"].(map[string]any)["code"].(float64) != -32600 {
			t.Fatalf("a line that is no JSON-RPC message: %v", m)
		}
	}
	if len(ids) != 5 || !ids["0"] || !ids["1"] || !ids["2"] || !ids["3"] || !ids["null"] {
		t.Fatalf("answers %v:\n%s", ids, out.String())
	}
}

// Whatever line a client writes, the server answers it or ignores it and
// goes on: the request after it is answered, and Serve returns once the
// input ends.
func FuzzServeGoesOnAfterAnyLine(f *testing.F) {
	for _, seed := range []string{
		`not json`, `{"foo":1}`, `[]`, `[{"jsonrpc":"2.0","id":7,"method":"ping"}]`, `{"jsonrpc":"2.0","id":7,"result":{}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wilco_ack","arguments":{"task_id":"T-4"}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wilco_ack","arguments":[1]}}`,
		`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}`, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`,
		`{"jsonrpc":"1.0","id":7,"method":"ping"}`, `"x"`, `7`, `null`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "\r\n") || strings.Contains(line, "99") {
			return // one line, which does not answer for the request after it
		}
		in := strings.Join(append(initialize, line, `{"jsonrpc":"2.0","id":99,"method":"ping"}`), "\n")
		var out strings.Builder
		done := make(chan error, 1)
		go func() {
			done <- Serve(context.Background(), strings.NewReader(in), &out, &fakeReplier{}, Task{ID: "T-3", MessageID: "M-7"}, "test")
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Serve did not return after %q", line)
		}
		if !strings.Contains(out.String(), `"id":99,"result":{}`) {
			t.Fatalf("the ping after %q got no answer:\n%s", line, out.String())
		}
	})
}
