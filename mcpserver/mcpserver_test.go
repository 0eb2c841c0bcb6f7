package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"wilco/client"
)

type fakeReplier struct {
	got   []client.Reply
	asked []string
}

func (f *fakeReplier) Ask(_ context.Context, scout, question string, _ time.Duration) (*client.Consultation, error) {
	f.asked = append(f.asked, scout+": "+question)
	if scout == "silent" {
		return &client.Consultation{ID: "M-9", Scout: scout, State: "failed", Error: "the scout changed files"}, nil
	}
	return &client.Consultation{ID: "M-8", Scout: scout, State: "answered", Answer: "In calc.go."}, nil
}

func (f *fakeReplier) Reply(_ context.Context, r client.Reply) (*client.Interpretation, error) {
	f.got = append(f.got, r)
	return &client.Interpretation{Kind: "ack", Action: "acknowledged: work may begin"}, nil
}

func TestToolCallsAreSentAsTheAgentsReplies(t *testing.T) {
	t.Parallel()
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"wilco_ack","arguments":{"status":"CLARIFICATION_NEEDED","questions":["Which file?"]}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"wilco_complete","arguments":{"status":"success","summary":"done"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"nope"}`,
		`not json`,
	}, "\n")
	var out bytes.Buffer
	rep := &fakeReplier{}
	if err := Serve(context.Background(), strings.NewReader(in), &out, rep, Task{ID: "T-3", MessageID: "M-7"}, "test"); err != nil {
		t.Fatal(err)
	}
	var resps []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		resps = append(resps, m)
	}
	if len(resps) != 6 {
		t.Fatalf("%d answers (the notification gets none): %s", len(resps), out.String())
	}
	if v := resps[0]["result"].(map[string]any)["protocolVersion"]; v != "2025-03-26" {
		t.Fatalf("protocol version %v", v)
	}
	if tools := resps[1]["result"].(map[string]any)["tools"].([]any); len(tools) != 4 {
		t.Fatalf("tools %v", tools)
	}
	if len(rep.got) != 2 || rep.got[0].InReplyTo != "M-7" || rep.got[0].Text != "[ACK] T-3 - CLARIFICATION_NEEDED\nQuestions:\n1. Which file?\n" {
		t.Fatalf("replies %+v", rep.got)
	}
	var data map[string]any
	if err := json.Unmarshal(rep.got[1].Data, &data); err != nil || data["type"] != "task-complete" || data["task_id"] != "T-3" || data["status"] != "success" {
		t.Fatalf("completion %s", rep.got[1].Data)
	}
	if resps[4]["error"].(map[string]any)["code"].(float64) != -32601 || resps[5]["error"].(map[string]any)["code"].(float64) != -32700 {
		t.Fatalf("errors %v %v", resps[4], resps[5])
	}
}

// wilco_ask asks a scout through wilco and gives the model its answer, or
// the reason there is none.
func TestAskToolGivesTheScoutsAnswer(t *testing.T) {
	t.Parallel()
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wilco_ask","arguments":{"scout":"scout-a","question":"Where is Add?"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wilco_ask","arguments":{"scout":"silent","question":"q"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"wilco_ask","arguments":{"scout":"scout-a"}}}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	rep := &fakeReplier{}
	if err := Serve(context.Background(), strings.NewReader(in), &out, rep, Task{ID: "T-3", MessageID: "M-7"}, "test"); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{`"text":"In calc.go."`, `the scout silent gave no answer: the scout changed files`, `wilco_ask needs a scout and a question`} {
		if !strings.Contains(got, want) {
			t.Fatalf("no %q in:\n%s", want, got)
		}
	}
	if len(rep.asked) != 2 || rep.asked[0] != "scout-a: Where is Add?" {
		t.Fatalf("asked %v", rep.asked)
	}
}
