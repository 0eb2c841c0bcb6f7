package server

import (
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"wilco/wire"
)

// OpenAPI builds the OpenAPI 3.1 document of every route the server
// answers, from the route table: a route cannot be served without being
// documented. The schemas are generated from the bodies' Go types
// (wire.Schemas).
func (s *Server) OpenAPI() map[string]any {
	doc, _ := s.document() // New checked that it builds
	return doc
}

// document is the OpenAPI document, or why its schemas cannot be made.
func (s *Server) document() (map[string]any, error) {
	schemas := wire.NewSchemas(schemaRef)
	paths := map[string]any{}
	for _, rt := range s.routes {
		path := DocPath(rt.Path)
		item, _ := paths[path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[path] = item
		}
		item[strings.ToLower(rt.Method)] = operationDoc(rt, schemas)
	}
	components, err := schemas.Components()
	if err != nil {
		return nil, fmt.Errorf("server: the OpenAPI document's schemas: %w", err)
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
			"schemas": components,
			"securitySchemes": map[string]any{
				"admin": map[string]any{"type": "http", "scheme": "bearer", "description": "The admin token (.wilco/token or WILCO_TOKEN)."},
				"agent": map[string]any{"type": "http", "scheme": "bearer", "description": "An agent's token (POST /v1/agents or /v1/agents/{name}/token)."},
				"session": map[string]any{"type": "apiKey", "in": "cookie", "name": s.sessionCookieName(),
					"description": "The page's session cookie (POST /v1/session), in place of the admin token; a state-changing request made with it carries the session's CSRF token in X-CSRF-Token."},
			},
		},
	}, nil
}

// schemaRef is where the document's component schemas are.
const schemaRef = "#/components/schemas/"

func (s *Server) openapi(w http.ResponseWriter, r *http.Request) error {
	WriteJSON(w, http.StatusOK, wire.OpenAPI(s.OpenAPI()))
	return nil
}

// DocPath is a route's path as the OpenAPI document writes it: the mux's
// end-of-path mark "{$}" ("/{$}" is "/" and nothing under it) left out.
func DocPath(p string) string { return strings.ReplaceAll(p, "{$}", "") }

var pathParam = regexp.MustCompile(`\{([a-z_]+)\}`)

func operationDoc(rt Route, schemas *wire.Schemas) map[string]any {
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
	if rt.Request != nil {
		op["requestBody"] = map[string]any{"required": rt.Method == "POST" && !rt.OptionalBody,
			"content": map[string]any{"application/json": mediaSchema(schemas, rt.Request)}}
	}
	responses := map[string]any{}
	for status, body := range rt.Responses {
		r := map[string]any{"description": http.StatusText(status)}
		if c := content(schemas, body); c != nil {
			r["content"] = c
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
	switch rt.Path {
	case "/healthz", "/openapi.json", "/metrics":
		errs = errs[2:]
	case "/{$}":
		errs = errs[1:] // a server without a page answers 404
	}
	var errBody any = wire.Error{}
	if rt.Auth == Loopback {
		errBody = wire.MaestroError{}
	}
	for _, st := range errs {
		if _, declared := rt.Responses[st]; declared {
			continue
		}
		responses[strconv.Itoa(st)] = map[string]any{"description": http.StatusText(st),
			"content": map[string]any{"application/json": mediaSchema(schemas, errBody)}}
	}
	op["responses"] = responses
	return op
}

// content is the content of a documented body (see Route.Responses): its
// media types and their schemas; nil for no body.
func content(schemas *wire.Schemas, body any) map[string]any {
	parts := []any{body}
	if list, ok := body.([]any); ok {
		parts = list
	}
	out := map[string]any{}
	var jsons []any
	for _, p := range parts {
		switch p := p.(type) {
		case nil:
		case string:
			for media := range strings.SplitSeq(p, "|") {
				out[media] = map[string]any{"schema": map[string]any{"type": "string"}}
			}
		default:
			jsons = append(jsons, p)
		}
	}
	switch len(jsons) {
	case 0:
	case 1:
		out["application/json"] = mediaSchema(schemas, jsons[0])
	default:
		var alts []any
		for _, v := range jsons {
			alts = append(alts, schemas.Ref(v))
		}
		out["application/json"] = map[string]any{"schema": map[string]any{"anyOf": alts}}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// mediaSchema is the JSON content of a body of v's type, with its example
// when the document has one.
func mediaSchema(schemas *wire.Schemas, v any) map[string]any {
	m := map[string]any{"schema": schemas.Ref(v)}
	for _, ex := range requestExamples {
		if reflect.TypeOf(ex) == reflect.TypeOf(v) {
			m["example"] = ex
		}
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

// requestExamples are the request bodies the document shows (and the
// tests that every documented route answers send).
var requestExamples = []any{
	wire.CreateAgent{Name: "remote-2", Adapter: wire.AdapterMailbox, Capabilities: []string{"go"}},
	wire.SendMessage{To: "alpha", Body: "How is the build going?"},
	wire.Reason{Reason: "not needed any more"},
	wire.Clarify{Answers: []string{"24 hours with refresh tokens"}},
	wire.CreateInstruction{Agent: "alpha", Content: "Check if the OpenSpec CLI is available", MaxRetries: ptr(3),
		AckWhen: &wire.Matcher{Contains: "openspec"}},
	wire.Reply{Text: "[ACK] T-1 - RECEIVED\nUnderstanding: add the flag and its tests"},
	wire.StartOperation{Operation: "restart", Agents: []string{"alpha"}, Message: "restart your session", Timeout: wire.Duration(2 * time.Minute)},
	wire.MaestroSend{From: "alpha", To: "wilco", Subject: "RE: restart", Priority: wire.PriorityHigh,
		Content: wire.MaestroRawContent(`{"type":"acknowledgment","message":"ok"}`)},
}

func ptr[T any](v T) *T { return &v }
