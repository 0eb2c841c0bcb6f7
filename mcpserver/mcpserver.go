// Package mcpserver is wilco's MCP server for agents: tools an agent calls
// to acknowledge its task, ask for clarification, report a checkpoint,
// ask a scout and report completion. Each call is sent to wilco as the
// agent's reply (POST /v1/inbox/replies with the agent's token), so a
// tool-call ACK passes the same checks as a text one.
//
// The server is bound to a task (WILCO_TASK_ID and WILCO_MESSAGE_ID in the
// agent's environment, or the task the agent holds over HTTP); a call may
// name another with its task_id and message_id arguments — an agent whose
// program outlives its first turn (a TUI in tmux) started the server once,
// with that turn's ids.
//
// It speaks the Model Context Protocol through the official Go SDK: over
// standard input and output (Serve, `wilco mcp`) and over streamable HTTP
// (Handler, POST /mcp), with the protocol version negotiated at initialize.
package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"wilco/ack"
	"wilco/wire"
)

// Replier sends an agent's reply to wilco, and asks scouts for it.
type Replier interface {
	Reply(ctx context.Context, r wire.Reply) (*wire.Interpretation, error)
	Ask(ctx context.Context, scout, question string, wait time.Duration) (*wire.Consultation, error)
}

// askWait is how long wilco_ask waits for a scout's answer.
const askWait = 10 * time.Minute

// Task is what the server knows of the agent's task: its id and the
// message that delegated it.
type Task struct {
	ID, MessageID string
}

// New returns wilco's MCP server for one agent: its tools, sent through rep
// for task (the default of each call), version being wilco's.
func New(rep Replier, task Task, version string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "wilco", Version: version}, &mcp.ServerOptions{
		Instructions: "Tools to talk to wilco about your task " + task.ID + ": acknowledge it (wilco_ack) before you work, " +
			"report checkpoints (wilco_checkpoint) and completion (wilco_complete).",
		// Tools only: their list never changes, and nothing is logged to
		// the client.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	for _, t := range tools() {
		s.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args map[string]any
			if len(req.Params.Arguments) > 0 {
				if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: " + err.Error()}
				}
			}
			return call(ctx, t.Name, args, rep, task), nil
		})
	}
	return s
}

// tools are wilco's tools, with their input schemas.
func tools() []*mcp.Tool {
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	// Every tool reports on a task: the server's, or the one it names.
	withTask := func(props map[string]any) map[string]any {
		props["task_id"] = str("The id of the task this is about (as in \"[ACK] T-3\" of your prompt). Give it when you work on another task than the one this server was started for.")
		props["message_id"] = str("The id of the message that delegated the task, when you know it (optional).")
		return props
	}
	schema := func(required []string, props map[string]any) json.RawMessage {
		s := map[string]any{"type": "object", "properties": props}
		if required != nil {
			s["required"] = required
		}
		b, _ := json.Marshal(s)
		return b
	}
	return []*mcp.Tool{
		{Name: "wilco_ack", Description: "Acknowledge your task to wilco before you work on it: your status and your understanding of what to do (or your questions).",
			InputSchema: schema([]string{"status"}, withTask(map[string]any{
				"status":        map[string]any{"type": "string", "enum": []string{"RECEIVED", "CLARIFICATION_NEEDED", "REJECTED", "QUEUED", "CONFIRMED"}},
				"understanding": str("One or two sentences: what you will do, naming the acceptance criteria."),
				"questions":     map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "With CLARIFICATION_NEEDED: what you need to know."},
				"reason":        str("With REJECTED or QUEUED: why."),
			}))},
		{Name: "wilco_checkpoint", Description: "Report progress on your task to wilco.",
			InputSchema: schema([]string{"checkpoint", "summary"}, withTask(map[string]any{
				"checkpoint": map[string]any{"type": "integer", "description": "The checkpoint's number, from 1."},
				"status":     str("in_progress, completed or blocked."),
				"summary":    str("What is done so far."),
			}))},
		{Name: "wilco_ask", Description: "Ask a scout (a read-only helper agent wilco runs beside you) a question about the code, and get its answer. The scouts are named in your task.",
			InputSchema: schema([]string{"scout", "question"}, map[string]any{
				"scout":    str("The scout's name."),
				"question": str("What you want to know."),
			})},
		{Name: "wilco_complete", Description: "Report the end of your work on the task to wilco; its verification decides whether it succeeded.",
			InputSchema: schema(nil, withTask(map[string]any{
				"status":         map[string]any{"type": "string", "enum": []string{"success", "failure", "blocked", "impossible"}},
				"summary":        str("What you changed and why."),
				"reason":         str("With blocked, impossible or failure: why."),
				"files_modified": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			}))},
	}
}

// target is the task a call reports on: the one it names (task_id, and
// message_id when given), else the server's. A call that names a task
// without its message leaves the message to wilco, which finds the task's
// delegation to the agent: the server's message is of its own task, and
// may be of an attempt that ended.
func target(args map[string]any, task Task) (Task, bool, error) {
	t, named := task, false
	if id := argString(args, "task_id"); id != "" {
		if err := ack.ValidateTaskID(id); err != nil {
			return t, true, fmt.Errorf("task_id: %w", err)
		}
		t, named = Task{ID: id}, true
	}
	if m := argString(args, "message_id"); m != "" {
		t.MessageID, named = m, true
	}
	return t, named, nil
}

func argString(args map[string]any, k string) string {
	v, _ := args[k].(string)
	return strings.TrimSpace(v)
}

// call sends a tool call to wilco as the agent's reply, and says what
// wilco made of it.
func call(ctx context.Context, name string, args map[string]any, rep Replier, task Task) *mcp.CallToolResult {
	s := func(k string) string { return argString(args, k) }
	if name == "wilco_ask" {
		if s("scout") == "" || s("question") == "" {
			return toolResult("wilco_ask needs a scout and a question", true)
		}
		q, err := rep.Ask(ctx, s("scout"), s("question"), askWait)
		switch {
		case err != nil:
			return toolResult("wilco refused the question: "+err.Error(), true)
		case q.State == "answered":
			return toolResult(q.Answer, false)
		case q.State == "failed":
			return toolResult("the scout "+q.Scout+" gave no answer: "+q.Error, true)
		}
		return toolResult("the scout "+q.Scout+" has not answered yet (question "+q.ID+"); go on without it", true)
	}
	t, named, err := target(args, task)
	if err != nil {
		return toolResult("wilco refused it: "+err.Error(), true)
	}
	r := wire.Reply{InReplyTo: t.MessageID}
	switch name {
	case "wilco_ack":
		status := strings.ToUpper(strings.ReplaceAll(s("status"), " ", "_"))
		if status == "" {
			status = "RECEIVED"
		}
		text := fmt.Sprintf("[ACK] %s - %s\n", t.ID, status)
		if u := s("understanding"); u != "" {
			text += "Understanding: " + u + "\n"
		}
		if qs, _ := args["questions"].([]any); len(qs) > 0 {
			text += "Questions:\n"
			for i, q := range qs {
				text += fmt.Sprintf("%d. %v\n", i+1, q)
			}
		}
		if why := s("reason"); why != "" {
			text += "Reason: " + why + "\n"
		}
		r.Text = text
	case "wilco_checkpoint", "wilco_complete":
		data := map[string]any{}
		for k, v := range args {
			data[k] = v
		}
		delete(data, "message_id")
		data["task_id"] = t.ID
		data["type"] = map[string]string{"wilco_checkpoint": "checkpoint-ack", "wilco_complete": "task-complete"}[name]
		r.Data, _ = json.Marshal(data)
	default:
		return toolResult("unknown tool "+name+": use wilco_ack, wilco_checkpoint, wilco_ask or wilco_complete", true)
	}
	if t.ID == "" {
		return toolResult("no task: wilco starts this server for an agent working on a task (WILCO_TASK_ID is not set); name the task with task_id", true)
	}
	in, err := rep.Reply(ctx, r)
	if err != nil {
		msg := "wilco refused it: " + err.Error()
		if !named {
			msg += ". If you work on another task than " + t.ID + " now, name it: task_id"
		}
		return toolResult(msg, true)
	}
	msg := fmt.Sprintf("wilco took it as %s: %s", in.Kind, in.Action)
	if in.TaskID != "" && in.TaskID != t.ID {
		// wilco read it as a reply about another task (a message of
		// another task, or a task never delegated to the agent while it
		// has one open): the ids named are wrong.
		return toolResult(fmt.Sprintf("%s is not the task of that message, or not a task wilco gave you: %s", t.ID, msg), true)
	}
	if name == "wilco_ack" && in.Kind == "ack" && !strings.Contains(strings.ToLower(in.Action), "correct") {
		msg += ". Go on with the task now."
	}
	return toolResult(msg, false)
}

func toolResult(text string, isError bool) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isError}
}
