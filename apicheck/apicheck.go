// Package apicheck checks the HTTP API's answers against its OpenAPI
// document: each answer's body against the schema of its operation's
// response (a closed object refuses a field it does not name, and a
// missing required field fails), its media type against those the
// response lists, and its status against those the operation documents.
// The server's tests and the black-box tests run every answer they get
// through it. Test support, in no binary.
package apicheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// docURL is where the compiler keeps the document.
const docURL = "urn:wilco:openapi"

// Checker checks answers against one OpenAPI document.
type Checker struct {
	doc      map[string]any
	mux      *http.ServeMux
	mu       sync.Mutex
	compiler *jsonschema.Compiler
	schemas  map[string]*jsonschema.Schema
}

// New reads an OpenAPI document (GET /openapi.json).
func New(doc []byte) (*Checker, error) {
	c := &Checker{mux: http.NewServeMux(), compiler: jsonschema.NewCompiler(), schemas: map[string]*jsonschema.Schema{}}
	if err := json.Unmarshal(doc, &c.doc); err != nil {
		return nil, fmt.Errorf("apicheck: the document: %w", err)
	}
	res, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("apicheck: the document: %w", err)
	}
	c.compiler.DefaultDraft(jsonschema.Draft2020)
	c.compiler.AssertFormat()
	if err := c.compiler.AddResource(docURL, res); err != nil {
		return nil, fmt.Errorf("apicheck: the document: %w", err)
	}
	paths, _ := c.doc["paths"].(map[string]any)
	for path, item := range paths {
		ops, _ := item.(map[string]any)
		pattern := path
		if strings.HasSuffix(pattern, "/") {
			pattern += "{$}" // the document leaves out the mux's end-of-path mark
		}
		for method := range ops {
			c.mux.HandleFunc(strings.ToUpper(method)+" "+pattern, func(http.ResponseWriter, *http.Request) {})
		}
	}
	return c, nil
}

// Check checks one answer to method on urlPath (the request's path, such
// as /v1/tasks/T-1): nil when it is what the document says, else what is
// not. An answer of no documented operation (a path no route serves, a
// method the path does not take) is not checked.
func (c *Checker) Check(method, urlPath string, status int, header http.Header, body []byte) error {
	_, pattern := c.mux.Handler(httptest.NewRequest(method, urlPath, nil))
	m, path, ok := strings.Cut(pattern, " ")
	if !ok {
		return nil
	}
	path = strings.ReplaceAll(path, "{$}", "")
	op, _ := c.doc["paths"].(map[string]any)[path].(map[string]any)[strings.ToLower(m)].(map[string]any)
	route := m + " " + path
	responses, _ := op["responses"].(map[string]any)
	code := strconv.Itoa(status)
	media, _, err := mime.ParseMediaType(header.Get("Content-Type"))
	if err != nil && len(bytes.TrimSpace(body)) > 0 {
		return fmt.Errorf("%s answered %d with the Content-Type %q", route, status, header.Get("Content-Type"))
	}
	resp, documented := responses[code].(map[string]any)
	if !documented {
		if status < 400 {
			return fmt.Errorf("%s answered %d, a status it does not document", route, status)
		}
		// An error the route does not list (a 503 while wilco stops, a
		// 500) has one of the route's error bodies.
		if code = errorOf(responses, media); code == "" {
			return fmt.Errorf("%s answered %d with %s, and documents no error of that media type", route, status, media)
		}
		resp = responses[code].(map[string]any)
	}
	content, _ := resp["content"].(map[string]any)
	if len(bytes.TrimSpace(body)) == 0 && (content == nil || method == http.MethodHead) {
		return nil
	}
	if _, ok := content[media]; !ok {
		return fmt.Errorf("%s answered %d with %s, which it does not document (%v)", route, status, media, keys(content))
	}
	if media != "application/json" {
		return nil
	}
	sch, err := c.schema("/paths/" + escape(path) + "/" + strings.ToLower(m) + "/responses/" + code + "/content/application~1json/schema")
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s answered %d with JSON that does not parse: %w", route, status, err)
	}
	if err := sch.Validate(v); err != nil {
		return fmt.Errorf("%s answered %d with a body its schema refuses: %w\n%s", route, status, err, body)
	}
	return nil
}

// schema compiles (once) the schema at a JSON pointer of the document.
func (c *Checker) schema(pointer string) (*jsonschema.Schema, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.schemas[pointer]; ok {
		return s, nil
	}
	s, err := c.compiler.Compile(docURL + "#" + pointer)
	if err != nil {
		return nil, fmt.Errorf("apicheck: the schema at %s: %w", pointer, err)
	}
	c.schemas[pointer] = s
	return s, nil
}

// errorOf is the lowest error status a route documents with a body of
// the media type.
func errorOf(responses map[string]any, media string) string {
	var codes []int
	for k, r := range responses {
		content, _ := r.(map[string]any)["content"].(map[string]any)
		if n, err := strconv.Atoi(k); err == nil && n >= 400 && content[media] != nil {
			codes = append(codes, n)
		}
	}
	if len(codes) == 0 {
		return ""
	}
	return strconv.Itoa(slices.Min(codes))
}

// escape is a path as a JSON pointer token.
func escape(s string) string { return strings.NewReplacer("~", "~0", "/", "~1").Replace(s) }

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
