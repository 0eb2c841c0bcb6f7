package server

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"wilco/config"
)

// goConstants reads the string constants of the Go package in dir: by
// declared type ("TaskState") and, for untyped ones, by the first line of
// their block's comment ("Failure types."). Reading the source rather than
// a hand-kept list is the point: a value added to Go shows up here.
func goConstants(t *testing.T, dir string) map[string][]string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			for _, decl := range f.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != token.CONST {
					continue
				}
				block := ""
				if gd.Doc != nil {
					block, _, _ = strings.Cut(strings.TrimSpace(gd.Doc.Text()), "\n")
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					key := block
					if id, ok := vs.Type.(*ast.Ident); ok {
						key = id.Name
					}
					for _, v := range vs.Values {
						lit, ok := v.(*ast.BasicLit)
						if !ok || lit.Kind != token.STRING {
							continue
						}
						s, err := strconv.Unquote(lit.Value)
						if err != nil {
							t.Fatal(err)
						}
						out[key] = append(out[key], s)
					}
				}
			}
		}
	}
	return out
}

// schemaAt follows a path of property names from a component schema:
// "Task", "state" is the state property of Task.
func schemaAt(t *testing.T, doc map[string]any, path ...string) map[string]any {
	t.Helper()
	schemas, _ := doc["components"].(map[string]any)["schemas"].(map[string]any)
	// deref follows a reference to a component, a nullable one to what
	// it is when not null, an array to its items and a map to its values.
	deref := func(s map[string]any) map[string]any {
		for s != nil {
			if ref, ok := s["$ref"].(string); ok {
				s, _ = schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
				continue
			}
			if alts, ok := s["anyOf"].([]any); ok && len(alts) > 0 {
				s, _ = alts[0].(map[string]any)
				continue
			}
			if items, ok := s["items"].(map[string]any); ok {
				s = items
				continue
			}
			if values, ok := s["additionalProperties"].(map[string]any); ok {
				s = values
				continue
			}
			break
		}
		return s
	}
	s, _ := schemas[path[0]].(map[string]any)
	for _, p := range path[1:] {
		s = deref(s)
		if s == nil {
			break
		}
		props, _ := s["properties"].(map[string]any)
		s, _ = props[p].(map[string]any)
	}
	if s == nil {
		t.Fatalf("the OpenAPI document has no schema %s", strings.Join(path, "."))
	}
	return s
}

func enumOf(s map[string]any) []string {
	var out []string
	switch e := s["enum"].(type) {
	case []string:
		out = slices.Clone(e)
	case []any:
		for _, v := range e {
			if v, ok := v.(string); ok {
				out = append(out, v)
			}
		}
	}
	return out
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// The enumerations the OpenAPI document gives are exactly the values the
// Go code serves and accepts, so that neither can change without the other.
func TestOpenAPIEnumsAreGoValues(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{aimaestro: true})
	doc := b.srv.OpenAPI()
	core := goConstants(t, "../core")
	ack := goConstants(t, "../ack")
	wire := goConstants(t, "../wire")
	for _, c := range []struct {
		schema []string
		goName string
		values []string
	}{
		{[]string{"Message", "type"}, "core.MessageType", core["MessageType"]},
		{[]string{"Message", "policy"}, "core.Policy", core["Policy"]},
		{[]string{"Message", "state"}, "core.DeliveryState", core["DeliveryState"]},
		{[]string{"Agent", "status"}, "core.AgentStatus", core["AgentStatus"]},
		{[]string{"Operation", "state"}, "core.OperationState", core["OperationState"]},
		{[]string{"Task", "state"}, "core.TaskState", core["TaskState"]},
		{[]string{"TaskBrief", "state"}, "core.TaskState", core["TaskState"]},
		{[]string{"Task", "phase"}, "core.Phase", core["Phase"]},
		{[]string{"TaskBrief", "phase"}, "core.Phase", core["Phase"]},
		{[]string{"Task", "consultations", "state"}, "core's consultation states", core["Consultation states."]},
		{[]string{"Task", "review", "verdict"}, "ack.ReviewVerdict", ack["ReviewVerdict"]},
		{[]string{"Stats", "retry_state", "task_retries", "failures", "failure_type"}, "core's failure types", core["Failure types."]},
		{[]string{"Operation", "results", "status"}, "core.AgentStatus", core["AgentStatus"]},
		{[]string{"Plan", "state"}, "core.PlanState", core["PlanState"]},
		{[]string{"Notification", "state"}, "core.NotificationState", core["NotificationState"]},
		{[]string{"Notification", "event"}, "core.NotifyEvent", core["NotifyEvent"]},
		{[]string{"FailureRecord", "failure_type"}, "core's failure types", core["Failure types."]},
		{[]string{"Respond", "action"}, "core's responses", core["Responses to an escalated or blocked task."]},
		{[]string{"Error", "error", "code"}, "wire.Code", wire["Code"]},
		{[]string{"MaestroError", "code"}, "wire.Code", wire["Code"]},
		{[]string{"Interpreted", "interpreted", "kind"}, "ack.Kind and core's interpretation kinds",
			append(slices.Clone(ack["Kind"]), core["Interpretation kinds of core's own."]...)},
		{[]string{"Agent", "adapter"}, "config.Adapters", config.Adapters},
		{[]string{"CreateAgent", "adapter"}, "config.Adapters", config.Adapters},
		{[]string{"CreateAgent", "preset"}, "config.Presets", config.Presets},
		{[]string{"CreateAgent", "prompt"}, "config.Prompts", config.Prompts},
		{[]string{"CreateAgent", "handshake"}, "config.Handshakes", config.Handshakes},
	} {
		if len(c.values) == 0 {
			t.Errorf("%s: no values found in the Go source", c.goName)
			continue
		}
		if got := enumOf(schemaAt(t, doc, c.schema...)); !sameSet(got, c.values) {
			t.Errorf("OpenAPI %s enum %v, Go %s %v", strings.Join(c.schema, "."), got, c.goName, c.values)
		}
	}
}

// Every route registered on the server's mux is in the OpenAPI document and
// every documented route is one the mux serves with its own pattern.
func TestOpenAPIMatchesTheMux(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{aimaestro: true})
	documented := DocumentedRoutes(b.srv.OpenAPI())
	registered := slices.DeleteFunc(slices.Clone(b.srv.muxPatterns), func(p string) bool { return p == "/" })
	for i, p := range registered {
		registered[i] = DocPath(p)
	}
	slices.Sort(registered)
	if !slices.Equal(documented, registered) {
		t.Fatalf("documented %v\nregistered on the mux %v", documented, registered)
	}
	for _, route := range documented {
		method, path, _ := strings.Cut(route, " ")
		target := pathParam.ReplaceAllString(path, "x")
		_, pattern := b.srv.mux.Handler(httptest.NewRequest(method, target, nil))
		if DocPath(pattern) != route {
			t.Errorf("%s %s is served by the mux pattern %q, not %q", method, target, pattern, route)
		}
	}
}

// docs/API.md lists every route the server serves and every event type of
// the event stream, and nothing else.
func TestAPIDocListsEveryRouteAndEventType(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../docs/API.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	b := setup(t, setupOpts{aimaestro: true})
	routes := DocumentedRoutes(b.srv.OpenAPI())
	var listed []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([A-Z]+ /[^`]*)` \\|").FindAllStringSubmatch(doc, -1) {
		listed = append(listed, m[1])
	}
	slices.Sort(listed)
	if !slices.Equal(routes, listed) {
		t.Errorf("docs/API.md's routes differ from the server's:\nserved %v\nlisted %v", routes, listed)
	}

	var types []string
	files, _ := filepath.Glob("../core/*.go")
	eventType := regexp.MustCompile(`(?m)^\s*Type\w+\s*=\s*"([a-z_]+\.[a-z_]+)"`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range eventType.FindAllStringSubmatch(string(src), -1) {
			types = append(types, m[1])
		}
	}
	if len(types) < 30 {
		t.Fatalf("found only %d event types in core", len(types))
	}
	_, section, _ := strings.Cut(doc, "The event types:")
	section, _, _ = strings.Cut(section, "\n\n`")
	var inDoc []string
	for _, m := range regexp.MustCompile("`([a-z_]+\\.[a-z_]+)`").FindAllStringSubmatch(section, -1) {
		inDoc = append(inDoc, m[1])
	}
	slices.Sort(types)
	slices.Sort(inDoc)
	if !slices.Equal(types, inDoc) {
		t.Errorf("docs/API.md's event types differ from core's:\ncore %v\ndoc  %v", types, inDoc)
	}
}

// Every body type of package wire is in the OpenAPI document (those of
// GET /v1/cluster are in a PostgreSQL node's; Schemas is the generator):
// the package holds the API's bodies and nothing the API does not answer
// or take.
func TestEveryWireBodyIsInTheOpenAPIDocument(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, "../wire", func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := setup(t, setupOpts{aimaestro: true})
	schemas := b.srv.OpenAPI()["components"].(map[string]any)["schemas"].(map[string]any)
	notABody := map[string]bool{"ClusterView": true, "ClusterNode": true, "ClusterLease": true, "Schemas": true}
	n := 0
	for _, f := range pkgs["wire"].Files {
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				if _, isStruct := ts.Type.(*ast.StructType); !isStruct || !ts.Name.IsExported() || notABody[ts.Name.Name] {
					continue
				}
				n++
				if _, ok := schemas[ts.Name.Name]; !ok {
					t.Errorf("wire.%s is in no route's body", ts.Name.Name)
				}
			}
		}
	}
	if n < 60 {
		t.Fatalf("found only %d body types in package wire", n)
	}
}
