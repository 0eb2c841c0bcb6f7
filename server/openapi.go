package server

import (
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// OpenAPI builds the OpenAPI 3.1 document of every route the server
// answers, from the route table: a route cannot be served without being
// documented.
func (s *Server) OpenAPI() map[string]any {
	schemas := componentSchemas()
	paths := map[string]any{}
	for _, rt := range s.routes {
		maps.Copy(schemas, rt.Schemas)
		path := DocPath(rt.Path)
		item, _ := paths[path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[path] = item
		}
		item[strings.ToLower(rt.Method)] = operationDoc(rt)
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":   "wilco",
			"version": "1",
			"description": "wilco delegates tasks to coding agents and proves every step. Errors are " +
				"{\"error\": {\"code\", \"message\"}} with the codes invalid_argument (400), unauthenticated (401), " +
				"permission_denied (403), not_found (404), conflict (409), too_large (413). Request bodies are strict " +
				"JSON objects of at most 1 MiB. Durations are Go duration strings; times are RFC 3339 with nanoseconds.",
		},
		"paths": paths,
		"components": map[string]any{
			"schemas": schemas,
			"securitySchemes": map[string]any{
				"admin": map[string]any{"type": "http", "scheme": "bearer", "description": "The admin token (.wilco/token or WILCO_TOKEN)."},
				"agent": map[string]any{"type": "http", "scheme": "bearer", "description": "An agent's token (POST /v1/agents or /v1/agents/{name}/token)."},
				"session": map[string]any{"type": "apiKey", "in": "cookie", "name": s.sessionCookieName(),
					"description": "The page's session cookie (POST /v1/session), in place of the admin token; a state-changing request made with it carries the session's CSRF token in X-CSRF-Token."},
			},
		},
	}
}

func (s *Server) openapi(w http.ResponseWriter, r *http.Request) error {
	WriteJSON(w, http.StatusOK, s.OpenAPI())
	return nil
}

// DocPath is a route's path as the OpenAPI document writes it: the mux's
// end-of-path mark "{$}" ("/{$}" is "/" and nothing under it) left out.
func DocPath(p string) string { return strings.ReplaceAll(p, "{$}", "") }

var pathParam = regexp.MustCompile(`\{([a-z_]+)\}`)

func operationDoc(rt Route) map[string]any {
	op := map[string]any{
		"summary":     rt.Summary,
		"operationId": operationID(rt),
		"tags":        []string{tag(rt.Path)},
	}
	switch rt.Auth {
	case Admin:
		op["security"] = []any{map[string]any{"admin": []string{}}, map[string]any{"session": []string{}}}
	case AgentOnly:
		op["security"] = []any{map[string]any{"agent": []string{}}}
	case Loopback:
		// The agent's token (as AMP clients send their API key), or the
		// admin token.
		op["security"] = []any{map[string]any{"agent": []string{}}, map[string]any{"admin": []string{}}}
	default:
		op["security"] = []any{}
	}
	var params []any
	for _, m := range pathParam.FindAllStringSubmatch(rt.Path, -1) {
		p := map[string]any{"name": m[1], "in": "path", "required": true, "schema": map[string]any{"type": "string"}}
		if ex, ok := rt.Examples[m[1]]; ok {
			p["example"] = ex
		}
		params = append(params, p)
	}
	for _, q := range rt.Query {
		params = append(params, map[string]any{"name": q.Name, "in": "query", "description": q.Description,
			"schema": map[string]any{"type": q.Type}})
	}
	if len(params) > 0 {
		op["parameters"] = params
	}
	if rt.Request != "" {
		body := map[string]any{"required": rt.Method == "POST" && rt.Request != "Reason",
			"content": map[string]any{"application/json": mediaSchema(rt.Request)}}
		op["requestBody"] = body
	}
	responses := map[string]any{}
	for status, schema := range rt.Responses {
		r := map[string]any{"description": http.StatusText(status)}
		if schema != "" {
			content := map[string]any{}
			for part := range strings.SplitSeq(schema, "|") {
				if strings.Contains(part, "/") {
					content[part] = map[string]any{"schema": map[string]any{"type": "string"}}
				} else {
					content["application/json"] = mediaSchema(part)
				}
			}
			r["content"] = content
		}
		responses[strconv.Itoa(status)] = r
	}
	errs := []int{400, 404}
	switch rt.Auth {
	case Admin, AgentOnly:
		errs = append(errs, 401, 403)
	case Loopback:
		errs = append(errs, 401, 403)
	}
	if rt.Method == "POST" || rt.Method == "PATCH" {
		errs = append(errs, 409, 413)
	}
	if rt.Method == "POST" && rt.Path == "/v1/session" {
		errs = append(errs, 401, 403) // an unknown code or token; an agent's token
	}
	if rt.Path == "/healthz" || rt.Path == "/openapi.json" || rt.Path == "/metrics" || rt.Path == "/{$}" {
		errs = errs[2:]
	}
	errSchema := "Error"
	if rt.Auth == Loopback {
		errSchema = "MaestroError"
	}
	for _, st := range errs {
		responses[strconv.Itoa(st)] = map[string]any{"description": http.StatusText(st),
			"content": map[string]any{"application/json": mediaSchema(errSchema)}}
	}
	op["responses"] = responses
	return op
}

func mediaSchema(name string) map[string]any {
	m := map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/" + name}}
	if ex, ok := requestExamples[name]; ok {
		m["example"] = ex
	}
	return m
}

func operationID(rt Route) string {
	p := pathParam.ReplaceAllString(rt.Path, "by_$1")
	p = strings.NewReplacer("/", "_", ".", "_", "-", "_").Replace(strings.Trim(p, "/"))
	return strings.ToLower(rt.Method) + "_" + p
}

func tag(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) >= 2 && (parts[0] == "v1" || parts[0] == "api") {
		if parts[0] == "api" {
			return "aimaestro"
		}
		return parts[1]
	}
	return "server"
}

// DocumentedRoutes lists "METHOD /path" of every operation in an OpenAPI
// document, sorted.
func DocumentedRoutes(doc map[string]any) []string {
	var out []string
	paths, _ := doc["paths"].(map[string]any)
	for p, item := range paths {
		ops, _ := item.(map[string]any)
		for m := range ops {
			out = append(out, strings.ToUpper(m)+" "+p)
		}
	}
	slices.Sort(out)
	return out
}

// --- schemas --------------------------------------------------------------------

func obj(required []string, props map[string]any) map[string]any {
	o := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

func ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

func arr(items any) map[string]any { return map[string]any{"type": "array", "items": items} }

func typ(t string, desc ...string) map[string]any {
	m := map[string]any{"type": t}
	if len(desc) > 0 {
		m["description"] = desc[0]
	}
	return m
}

func enum(values ...string) map[string]any { return map[string]any{"type": "string", "enum": values} }

func nullable(t string) map[string]any { return map[string]any{"type": []string{t, "null"}} }

var (
	str      = typ("string")
	integer  = typ("integer")
	boolean  = typ("boolean")
	dateTime = map[string]any{"type": "string", "format": "date-time"}
	nullTime = map[string]any{"type": []string{"string", "null"}, "format": "date-time"}
	strs     = arr(typ("string"))
	dur      = typ("string", "Go duration, such as \"30s\"")
)

// requestExamples are the request bodies the document shows (and the test
// that every documented route answers sends).
var requestExamples = map[string]any{
	"CreateAgent":       map[string]any{"name": "remote-2", "adapter": "mailbox", "capabilities": []string{"go"}},
	"SendMessage":       map[string]any{"to": "alpha", "body": "How is the build going?"},
	"Reason":            map[string]any{"reason": "not needed any more"},
	"Clarify":           map[string]any{"answers": []string{"24 hours with refresh tokens"}},
	"CreateInstruction": map[string]any{"agent": "alpha", "content": "Check if the OpenSpec CLI is available", "max_retries": 3, "ack_when": map[string]any{"contains": "openspec"}},
	"Reply":             map[string]any{"text": "[ACK] T-1 - RECEIVED\nUnderstanding: add the flag and its tests"},
	"StartOperation":    map[string]any{"operation": "restart", "agents": []string{"alpha"}, "message": "restart your session", "timeout": "2m"},
	"MaestroSend": map[string]any{"from": "alpha", "to": "wilco", "subject": "RE: restart", "priority": "high",
		"content": map[string]any{"type": "acknowledgment", "message": "ok"}},
}

func componentSchemas() map[string]any {
	agentStatus := enum("available", "busy", "unresponsive", "hibernating", "offline")
	deliveryState := enum("pending", "sent", "clarifying", "acknowledged", "failed", "cancelled")
	return map[string]any{
		"Error": obj([]string{"error"}, map[string]any{"error": obj([]string{"code", "message"}, map[string]any{
			"code":    enum("invalid_argument", "unauthenticated", "permission_denied", "not_found", "conflict", "too_large", "method_not_allowed", "unavailable", "internal"),
			"message": str,
		})}),
		"Health":  obj([]string{"status", "seq"}, map[string]any{"status": str, "seq": integer}),
		"OpenAPI": typ("object", "An OpenAPI 3.1 document."),
		"Agent": obj([]string{"name", "adapter", "capabilities", "status"}, map[string]any{
			"name": str, "adapter": enum("exec", "mailbox", "tmux"), "capabilities": strs, "status": agentStatus,
			"pull": boolean, "has_token": boolean, "waiting": integer, "unacknowledged": integer, "polling": boolean,
			"from_config": boolean, "removed": boolean, "conversation": typ("string", "The conversation a hibernated agent resumes at its wake."),
			"pane": obj([]string{"state", "session", "attach", "queued"}, map[string]any{
				"state":   enum("ready", "busy", "permission", "dialog", "typing", "dead", "not started", "hibernating"),
				"session": str, "attach": strs, "queued": integer, "working": str, "conversation": str,
			}),
			"role": typ("string", "scout: a read-only helper agents consult; it takes no task."),
			"context": obj([]string{"at"}, map[string]any{"os": str, "cli": str, "at": dateTime, "raw": str,
				"tools": map[string]any{"type": "object", "additionalProperties": str, "description": "Each tool asked about: its version, or missing."}}),
			"last_seen":    map[string]any{"type": []string{"string", "null"}, "format": "date-time", "description": "When wilco last heard from the agent: a poll, an answer, the end of its turn."},
			"current_task": typ("string", "The task the agent holds now."), "finished_tasks": typ("integer", "The tasks it ended."),
			"first_attempt_success": typ("integer", "Of finished_tasks, those that succeeded at the first attempt."),
			"usage":                 ref("Usage"),
		}),
		"AgentList": obj([]string{"agents", "next"}, map[string]any{"agents": arr(ref("Agent")),
			"next": obj([]string{"agent", "why"}, map[string]any{"agent": typ("string", "The agent the next task that names none goes to (\"\" when none is in service)."), "why": str})}),
		"CreateAgent": obj([]string{"name", "adapter"}, map[string]any{
			"name": str, "adapter": enum("exec", "mailbox", "tmux"), "capabilities": strs,
			"preset": enum("claude-code", "codex", "gemini", "aider", "opencode"), "command": strs,
			"prompt": enum("stdin", "arg", "file"), "handshake": enum("inline", "session", "none"),
			"env": map[string]any{"type": "object", "additionalProperties": str}, "timeout": dur, "idle_timeout": dur,
			"tmux": obj(nil, map[string]any{
				"session": str, "socket": str, "ready": str, "busy": str, "permission": str, "submit": str,
				"interrupt": strs, "clear": strs, "approve": strs, "deny": strs, "allow": strs,
				"width": integer, "height": integer, "settle": dur, "submit_tries": integer,
			}),
			"role": enum("scout"),
		}),
		"Ask": obj([]string{"scout", "question"}, map[string]any{"scout": str, "question": str}),
		"Consultation": obj([]string{"id", "task_id", "from", "scout", "question", "state", "asked_at"}, map[string]any{
			"id": str, "task_id": str, "attempt": integer, "from": str, "scout": str, "question": str,
			"state": enum("pending", "answered", "failed"), "answer": str, "error": str, "asked_at": dateTime, "ended_at": dateTime}),
		"CreatedAgent": obj([]string{"agent", "token"}, map[string]any{"agent": ref("Agent"), "token": typ("string", "The agent's token; shown once.")}),
		"Token":        obj([]string{"token"}, map[string]any{"token": str}),
		"SendMessage": obj([]string{"to", "body"}, map[string]any{
			"to": str, "type": enum("task_delegation", "conversation"), "subject": str, "body": str, "task_id": str,
			"capabilities": strs, "acceptance_criteria": strs, "description": str,
		}),
		"Message": obj([]string{"id", "from", "to", "type", "subject", "body", "state", "attempts", "created_at", "acknowledged_at"}, map[string]any{
			"id": str, "from": str, "to": str, "type": enum("instruction", "task_delegation", "conversation", "pre_operation", "task_turn", "review", "scout_query", "context_probe"),
			"policy": enum("none", "cycles", "backoff", "reminders"), "subject": str, "body": str, "task_id": str,
			"operation_id": str, "state": deliveryState, "attempts": integer, "answer": str, "understanding": str,
			"questions": strs, "reason": str, "created_at": dateTime, "sent_at": nullTime, "acknowledged_at": nullTime,
			"failed_at": nullTime, "cancelled_at": nullTime,
		}),
		"MessageList": obj([]string{"messages"}, map[string]any{"messages": arr(ref("Message"))}),
		"Reason":      obj(nil, map[string]any{"reason": str}),
		"Clarify":     obj([]string{"answers"}, map[string]any{"answers": strs}),
		"Matcher":     obj(nil, map[string]any{"contains": str, "regex": str}),
		"CreateInstruction": obj([]string{"agent", "content"}, map[string]any{
			"agent": str, "content": str, "max_retries": integer, "ack_when": ref("Matcher"),
		}),
		"Instruction": obj([]string{"id", "agent", "content", "state", "retry_count", "max_retries", "sent_at", "acknowledged_at", "failed_at"}, map[string]any{
			"id": str, "agent": str, "content": str, "state": enum("pending", "sent", "acknowledged", "failed", "cancelled"),
			"retry_count": integer, "max_retries": integer, "ack_when": ref("Matcher"), "reason": str, "created_at": dateTime,
			"sent_at": nullTime, "acknowledged_at": nullTime, "failed_at": nullTime, "cancelled_at": nullTime,
		}),
		"InstructionList": obj([]string{"instructions"}, map[string]any{"instructions": arr(ref("Instruction"))}),
		"InboxMessage": obj([]string{"id", "from", "type", "body", "attempt", "created_at"}, map[string]any{
			"id": str, "from": str, "subject": str, "body": str, "task_id": str, "instruction_id": str,
			"operation_id": str, "attempt": integer, "created_at": dateTime, "task_attempt": integer,
			"type": typ("string", "What this send is: the message's own type the first time (instruction, task_delegation, "+
				"conversation, context_probe, scout_query, review, pre_operation), then the kind of each later send of the same id "+
				"(retry of an instruction; ack_request, resend, wrong_id, correction, task_clarification, followup, cancel of a "+
				"delegation; reminder, extension_granted, timeout_notice, operation_outcome of an operation's request)."),
		}),
		"Inbox": obj([]string{"messages"}, map[string]any{"messages": arr(ref("InboxMessage"))}),
		"Reply": obj(nil, map[string]any{
			"in_reply_to": str, "type": enum("task-acknowledgment", "task-acknowledgment-error", "checkpoint-ack", "task-complete", "acknowledgment"),
			"text": str, "data": typ("object", "The JSON form named by type."),
		}),
		"Interpreted": obj([]string{"interpreted"}, map[string]any{"interpreted": obj([]string{"kind", "action"}, map[string]any{
			"kind": enum("ack", "ack_error", "checkpoint", "complete", "operation_reply", "message"), "delivery_id": str,
			"task_id": str, "operation_id": str, "status": str, "understanding": str, "questions": strs, "action": str,
			"acknowledged": strs,
		})}),
		"StartOperation": obj([]string{"operation", "agents"}, map[string]any{
			"operation": str, "agents": strs, "message": str, "timeout": dur, "reminders": arr(dur), "extension": dur,
			"proceed_on_timeout": boolean, "quorum": typ("string", "all, majority or a number"), "command": strs,
			"target": typ("string", "install-skill and install-plugin: the path of what is installed"),
		}),
		"Operation": obj([]string{"id", "operation", "state", "agents", "reminders_sent", "acknowledgment_received", "timeout_occurred", "proceeded_anyway", "created_at", "finished_at"}, map[string]any{
			"id": str, "operation": str, "state": enum("waiting", "proceeding", "done", "cancelled", "aborted", "failed"),
			"message": str, "command": strs,
			"agents": arr(obj([]string{"name", "response", "responded_at", "extended"}, map[string]any{
				"name": str, "message": str, "response": nullable("string"), "responded_at": nullTime, "extended": boolean,
			})),
			"reminders_sent": integer, "acknowledgment_received": boolean, "timeout_occurred": boolean,
			"proceeded_anyway": boolean, "reason": str, "exit_code": nullable("integer"), "output": str,
			"timeout": dur, "reminders": arr(dur), "extension": dur, "proceed_on_timeout": boolean, "quorum": str,
			"created_at": dateTime, "finished_at": nullTime, "target": str,
			"results": arr(obj([]string{"agent", "done"}, map[string]any{
				"agent": str, "done": boolean, "action": str, "error": str, "status": agentStatus, "conversation": str,
			})),
			"log": arr(obj([]string{"seq", "time", "type", "text"}, map[string]any{
				"seq": integer, "time": dateTime, "type": str, "agent": str, "text": str,
			})),
		}),
		"Notification": obj([]string{"id", "hook", "event", "task_id", "state", "attempts", "last_error", "last_status", "created_at", "delivered_at"}, map[string]any{
			"id": str, "hook": str, "event": enum("escalated", "clarification", "blocked", "stuck", "unresponsive", "operation", "permission", "success", "failed"),
			"task_id": typ("string", "The task the event is about (\"\" for an operation, or an agent without a task)."), "agent": str,
			"operation_id": str, "subject": typ("string", "The task's first line (the operation's name)."),
			"task_state": typ("string", "The state the event left the task in (the agent's status, the operation's state)."), "reason": str,
			"state": enum("pending", "delivered", "failed"), "attempts": typ("integer", "Attempts that ended."), "max_attempts": integer,
			"last_error": typ("string", "Why the last attempt failed (\"\" when none did)."), "last_status": nullable("integer"),
			"created_at": dateTime, "last_attempt_at": nullTime, "next_attempt_at": nullTime, "delivered_at": nullTime, "failed_at": nullTime,
		}),
		"NotificationList": obj([]string{"notifications"}, map[string]any{"notifications": arr(ref("Notification"))}),
		"OperationList":    obj([]string{"operations"}, map[string]any{"operations": arr(ref("Operation"))}),
		"Event": obj([]string{"seq", "time", "type", "data"}, map[string]any{
			"seq": integer, "time": dateTime, "type": str, "task_id": str, "agent": str, "data": typ("object"),
		}),
		"EventPage": obj([]string{"events", "next"}, map[string]any{"events": arr(ref("Event")),
			"next": typ("integer", "the seq to pass as after for the next page")}),

		"MaestroError":   obj([]string{"error"}, map[string]any{"error": str, "code": str}),
		"MaestroSuccess": obj([]string{"success"}, map[string]any{"success": boolean}),
		"MCPMessage":     typ("object", "A JSON-RPC 2.0 message of the Model Context Protocol (initialize, tools/list, tools/call, ping)."),
		"MaestroContent": obj([]string{"type", "message"}, map[string]any{"type": str, "message": str, "context": typ("object")}),
		"MaestroSend": obj([]string{"from", "to", "subject", "content"}, map[string]any{
			"from": str, "to": str, "subject": str, "priority": enum("low", "normal", "high", "urgent"),
			"content": ref("MaestroContent"), "inReplyTo": str, "fromAlias": str, "toAlias": str, "fromHost": str,
			"toHost": str, "fromLabel": str, "toLabel": str, "fromVerified": boolean,
		}),
		"MaestroMessage": obj([]string{"id", "from", "to", "timestamp", "subject", "priority", "status", "content"}, map[string]any{
			"id": str, "from": str, "fromAlias": str, "fromHost": str, "to": str, "toAlias": str, "toHost": str,
			"timestamp": dateTime, "subject": str, "priority": enum("low", "normal", "high", "urgent"),
			"status": enum("unread", "read", "archived"), "content": ref("MaestroContent"), "inReplyTo": str,
		}),
		"MaestroSummary": obj([]string{"id", "from", "to", "subject", "priority", "status", "timestamp", "type", "preview"}, map[string]any{
			"id": str, "from": str, "fromAlias": str, "fromHost": str, "to": str, "toAlias": str, "toHost": str,
			"subject": str, "priority": str, "status": str, "timestamp": dateTime, "type": str, "preview": str,
		}),
		"MaestroGet": typ("object", "Depends on the parameters: {messages: [MaestroSummary], limit} for a listing, "+
			"a MaestroMessage with id, {resolved} with action=resolve, {count} with action=unread-count or sent-count, "+
			"{unread, total, byPriority} with action=stats."),
		"MaestroIdentity": obj([]string{"host"}, map[string]any{"host": obj([]string{"id", "url"}, map[string]any{
			"id": str, "name": str, "url": str, "description": str, "version": str, "tailscale": boolean, "isSelf": boolean,
		})}),
		"MaestroSent": obj([]string{"message", "notified"}, map[string]any{
			"message": ref("MaestroMessage"), "notified": boolean,
			"interpreted": typ("object", "What wilco took a message to the orchestrator to mean (as POST /v1/inbox/replies)."),
		}),
	}
}
