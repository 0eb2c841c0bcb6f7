package server

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"wilco/core"
)

func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{aimaestro: true})
	var doc map[string]any
	b.must(200, b.call("GET", "/openapi.json", "", nil), &doc)
	if doc["openapi"] != "3.1.0" {
		t.Fatalf("openapi %v", doc["openapi"])
	}
	documented := DocumentedRoutes(doc)
	var registered []string
	for _, rt := range b.srv.Routes() {
		registered = append(registered, DocPath(rt.Pattern()))
	}
	slices.Sort(registered)
	if !slices.Equal(documented, registered) {
		t.Fatalf("documented %v\nregistered %v", documented, registered)
	}
	for _, want := range []string{"GET /v1/agents", "POST /v1/inbox/replies", "GET /v1/events", "PATCH /api/messages", "GET /healthz"} {
		if !slices.Contains(documented, want) {
			t.Errorf("%s is not documented", want)
		}
	}
	// Every $ref points to a schema that exists.
	data, _ := json.Marshal(doc)
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	for _, m := range regexp.MustCompile(`"#/components/schemas/([A-Za-z]+)"`).FindAllStringSubmatch(string(data), -1) {
		if _, ok := schemas[m[1]]; !ok {
			t.Errorf("$ref to missing schema %s", m[1])
		}
	}
}

// Every documented route answers: nothing in the document is a 404 or a
// 405 of the router, and nothing answers a server error.
func TestOpenAPIEveryDocumentedRouteAnswers(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{aimaestro: true})
	agentTok := b.agent("alpha")
	// The examples of the document name these.
	b.must(201, b.call("POST", "/v1/messages", adminToken, map[string]any{"to": "alpha", "body": "hello"}))                   // M-1
	b.must(201, b.call("POST", "/v1/instructions", adminToken, map[string]any{"agent": "alpha", "content": "Report the OS"})) // I-1
	b.must(201, b.call("POST", "/v1/operations", adminToken, map[string]any{"operation": "restart", "agents": []string{"alpha"}}))
	b.must(201, b.call("POST", "/v1/tasks", adminToken, map[string]any{"description": "Add a flag", "id": "T-1"}))
	b.must(201, b.call("POST", "/v1/plans", adminToken, map[string]any{"id": "03-01", "tasks": []any{map[string]any{"description": "a step"}}}))

	doc := b.srv.OpenAPI()
	paths := doc["paths"].(map[string]any)
	for _, route := range DocumentedRoutes(doc) {
		method, path, _ := strings.Cut(route, " ")
		op := paths[path].(map[string]any)[strings.ToLower(method)].(map[string]any)
		target := path
		query := url.Values{}
		params, _ := op["parameters"].([]any)
		for _, p := range params {
			p := p.(map[string]any)
			if p["in"] == "path" {
				target = strings.ReplaceAll(target, "{"+p["name"].(string)+"}", p["example"].(string))
			}
			if p["in"] == "query" && p["name"] == "follow" {
				query.Set("follow", "false") // a page, not a stream
			}
		}
		if strings.HasPrefix(path, "/api/") {
			query.Set("agent", "alpha")
			if method == "PATCH" || method == "DELETE" {
				query.Set("id", "msg-0")
				query.Set("action", "read")
			}
		}
		if len(query) > 0 {
			target += "?" + query.Encode()
		}
		var body any
		if rb, ok := op["requestBody"].(map[string]any); ok {
			body = rb["content"].(map[string]any)["application/json"].(map[string]any)["example"]
		}
		token := ""
		if sec, _ := op["security"].([]any); len(sec) > 0 {
			if _, ok := sec[0].(map[string]any)["agent"]; ok {
				token = agentTok
			} else {
				token = adminToken
			}
		}
		r := b.call(method, target, token, body)
		if path == "/v1/agents/{name}/token" && r.status == 200 {
			agentTok = r.json(t)["token"].(string) // the example agent's token was rotated
		}
		if method == "DELETE" && path == "/v1/agents/{name}" && r.status == 200 {
			agentTok = b.agent("alpha") // the example agent was removed: add it back
		}
		if r.status == 405 || r.status == 404 && strings.Contains(r.text(), "no route") {
			t.Errorf("%s answers %d: %s", route, r.status, r.body)
		}
		if r.status >= 500 {
			t.Errorf("%s answers %d: %s", route, r.status, r.body)
		}
		if r.status == 401 || r.status == 403 {
			t.Errorf("%s: the documented security is wrong: %d %s", route, r.status, r.body)
		}
	}
}

// PluginIn and PluginOut are the bodies of a plug-in route.
type (
	PluginIn struct {
		Description string `json:"description"`
	}
	PluginOut struct {
		ID string `json:"id,omitempty"`
	}
)

// Routes of other packages (tasks, plans, runs) get the same
// authentication, error table and documentation.
func TestPluginRoutes(t *testing.T) {
	t.Parallel()
	route := Route{Method: "POST", Path: "/v1/plugin", Auth: Admin, Summary: "A plug-in route.", Request: PluginIn{},
		Responses: map[int]any{201: PluginOut{}},
		Handler: func(w http.ResponseWriter, r *http.Request) error {
			var req PluginIn
			if err := DecodeJSON(r, &req); err != nil {
				return err
			}
			if req.Description == "" {
				return &core.Error{Code: core.Invalid, Msg: "description: required"}
			}
			WriteJSON(w, http.StatusCreated, PluginOut{ID: "T-1"})
			return nil
		}}
	b := setup(t, setupOpts{routes: []Route{route}})
	b.must(201, b.call("POST", "/v1/plugin", adminToken, map[string]any{"description": "x"}))
	if r := b.call("POST", "/v1/plugin", "", map[string]any{"description": "x"}); r.status != 401 {
		t.Fatalf("no token: %d", r.status)
	}
	if r := b.call("POST", "/v1/plugin", adminToken, map[string]any{}); r.status != 400 || r.code(t) != "invalid_argument" {
		t.Fatalf("refused: %d %s", r.status, r.body)
	}
	doc := b.srv.OpenAPI()
	if !slices.Contains(DocumentedRoutes(doc), "POST /v1/plugin") {
		t.Fatal("the plug-in route is not documented")
	}
	for _, name := range []string{"SubmitTask", "PluginIn", "PluginOut"} {
		if _, ok := doc["components"].(map[string]any)["schemas"].(map[string]any)[name]; !ok {
			t.Fatalf("the schema %s is not documented", name)
		}
	}
	_, err := New(Options{Runtime: b.rt, Store: b.st, Routes: []Route{{Method: "GET", Path: "/v1/agents", Handler: route.Handler}}})
	if err == nil || !strings.Contains(err.Error(), "registered twice") {
		t.Fatalf("a clash with a route of the server: %v", err)
	}
}
