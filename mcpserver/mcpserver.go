// Package mcpserver is wilco's MCP server for agents: tools an agent calls
// to acknowledge its task, ask for clarification, report a checkpoint and
// report completion, bound to the task wilco gave it (WILCO_TASK_ID and
// WILCO_MESSAGE_ID in its environment). Each call is sent to wilco as the
// agent's reply (POST /v1/inbox/replies with the agent's token), so a
// tool-call ACK passes the same checks as a text one.
//
// It speaks the Model Context Protocol's JSON-RPC 2.0 over a stream of
// newline-delimited messages (the stdio transport: `wilco mcp`):
// initialize, tools/list, tools/call and ping.
package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"wilco/client"
)

// Replier sends an agent's reply to wilco, and asks scouts for it.
type Replier interface {
	Reply(ctx context.Context, r client.Reply) (*client.Interpretation, error)
	Ask(ctx context.Context, scout, question string, wait time.Duration) (*client.Consultation, error)
}

// askWait is how long wilco_ask waits for a scout's answer.
const askWait = 10 * time.Minute

// Task is what the server knows of the agent's task: its id and the
// message that delegated it.
type Task struct {
	ID, MessageID string
}

// ProtocolVersion is the newest MCP version the server speaks; it answers
// a client with the client's own version when it asks for another.
const ProtocolVersion = "2025-06-18"

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// Handle answers one JSON-RPC message (the streamable HTTP transport: one
// POST, one answer). It returns nil for a notification, which gets none.
func Handle(ctx context.Context, body []byte, rep Replier, task Task, version string) []byte {
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": rpcError{-32700, "parse error: " + err.Error()}})
		return b
	}
	result, rerr := handle(ctx, req, rep, task, version)
	if len(req.ID) == 0 {
		return nil
	}
	resp := map[string]any{"jsonrpc": "2.0", "id": req.ID}
	if rerr != nil {
		resp["error"] = rerr
	} else {
		resp["result"] = result
	}
	b, _ := json.Marshal(resp)
	return b
}

// Serve answers the messages of r on w until r ends or ctx does.
func Serve(ctx context.Context, r io.Reader, w io.Writer, rep Replier, task Task, version string) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	enc := json.NewEncoder(w)
	for sc.Scan() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var req request
		if err := json.Unmarshal([]byte(line), &req); err != nil {
			_ = enc.Encode(map[string]any{"jsonrpc": "2.0", "id": nil, "error": rpcError{-32700, "parse error: " + err.Error()}})
			continue
		}
		result, rerr := handle(ctx, req, rep, task, version)
		if len(req.ID) == 0 {
			continue // a notification
		}
		resp := map[string]any{"jsonrpc": "2.0", "id": req.ID}
		if rerr != nil {
			resp["error"] = rerr
		} else {
			resp["result"] = result
		}
		if err := enc.Encode(resp); err != nil {
			return err
		}
	}
	return sc.Err()
}

func handle(ctx context.Context, req request, rep Replier, task Task, version string) (any, *rpcError) {
	switch req.Method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(req.Params, &p)
		v := ProtocolVersion
		if p.ProtocolVersion != "" {
			v = p.ProtocolVersion
		}
		return map[string]any{"protocolVersion": v, "capabilities": map[string]any{"tools": map[string]any{}},
			"serverInfo": map[string]any{"name": "wilco", "version": version},
			"instructions": "Tools to talk to wilco about your task " + task.ID + ": acknowledge it (wilco_ack) before you work, " +
				"report checkpoints (wilco_checkpoint) and completion (wilco_complete)."}, nil
	case "ping":
		return map[string]any{}, nil
	case "tools/list":
		return map[string]any{"tools": tools()}, nil
	case "tools/call":
		var p struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
		}
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, &rpcError{-32602, "invalid params: " + err.Error()}
		}
		return call(ctx, p.Name, p.Arguments, rep, task), nil
	}
	if strings.HasPrefix(req.Method, "notifications/") {
		return nil, nil
	}
	return nil, &rpcError{-32601, "method not found: " + req.Method}
}

func tools() []any {
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	return []any{
		map[string]any{"name": "wilco_ack", "description": "Acknowledge your task to wilco before you work on it: your status and your understanding of what to do (or your questions).",
			"inputSchema": map[string]any{"type": "object", "required": []string{"status"}, "properties": map[string]any{
				"status":        map[string]any{"type": "string", "enum": []string{"RECEIVED", "CLARIFICATION_NEEDED", "REJECTED", "QUEUED", "CONFIRMED"}},
				"understanding": str("One or two sentences: what you will do, naming the acceptance criteria."),
				"questions":     map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "With CLARIFICATION_NEEDED: what you need to know."},
				"reason":        str("With REJECTED or QUEUED: why."),
			}}},
		map[string]any{"name": "wilco_checkpoint", "description": "Report progress on your task to wilco.",
			"inputSchema": map[string]any{"type": "object", "required": []string{"checkpoint", "summary"}, "properties": map[string]any{
				"checkpoint": map[string]any{"type": "integer", "description": "The checkpoint's number, from 1."},
				"status":     str("in_progress, completed or blocked."),
				"summary":    str("What is done so far."),
			}}},
		map[string]any{"name": "wilco_ask", "description": "Ask a scout (a read-only helper agent wilco runs beside you) a question about the code, and get its answer. The scouts are named in your task.",
			"inputSchema": map[string]any{"type": "object", "required": []string{"scout", "question"}, "properties": map[string]any{
				"scout":    str("The scout's name."),
				"question": str("What you want to know."),
			}}},
		map[string]any{"name": "wilco_complete", "description": "Report the end of your work on the task to wilco; its verification decides whether it succeeded.",
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{
				"status":         map[string]any{"type": "string", "enum": []string{"success", "failure", "blocked", "impossible"}},
				"summary":        str("What you changed and why."),
				"reason":         str("With blocked, impossible or failure: why."),
				"files_modified": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			}}},
	}
}

// call sends a tool call to wilco as the agent's reply, and says what
// wilco made of it.
func call(ctx context.Context, name string, args map[string]any, rep Replier, task Task) map[string]any {
	s := func(k string) string { v, _ := args[k].(string); return strings.TrimSpace(v) }
	r := client.Reply{InReplyTo: task.MessageID}
	switch name {
	case "wilco_ask":
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
	case "wilco_ack":
		status := strings.ToUpper(strings.ReplaceAll(s("status"), " ", "_"))
		if status == "" {
			status = "RECEIVED"
		}
		text := fmt.Sprintf("[ACK] %s - %s\n", task.ID, status)
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
		data := map[string]any{"task_id": task.ID}
		for k, v := range args {
			data[k] = v
		}
		data["type"] = map[string]string{"wilco_checkpoint": "checkpoint-ack", "wilco_complete": "task-complete"}[name]
		r.Data, _ = json.Marshal(data)
	default:
		return toolResult("unknown tool "+name+": use wilco_ack, wilco_checkpoint, wilco_ask or wilco_complete", true)
	}
	if task.ID == "" {
		return toolResult("no task: wilco starts this server for an agent working on a task (WILCO_TASK_ID is not set)", true)
	}
	in, err := rep.Reply(ctx, r)
	if err != nil {
		return toolResult("wilco refused it: "+err.Error(), true)
	}
	msg := fmt.Sprintf("wilco took it as %s: %s", in.Kind, in.Action)
	if name == "wilco_ack" && in.Kind == "ack" && !strings.Contains(strings.ToLower(in.Action), "correct") {
		msg += ". Go on with the task now."
	}
	return toolResult(msg, false)
}

func toolResult(text string, isError bool) map[string]any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}, "isError": isError}
}
