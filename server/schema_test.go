package server

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// driftOut is the body a drifting route documents: one required field.
type driftOut struct {
	ID    string `json:"id"`
	State string `json:"state,omitempty"`
}

// A handler that answers a field its body's type does not have, or lacks
// a field the type requires, fails the check every server test runs on
// every answer (the schemas are closed and generated from the types).
func TestAnAnswerWithAFieldItsSchemaLacksOrWithoutARequiredOneFailsTheCheck(t *testing.T) {
	t.Parallel()
	answers := map[string]string{
		"/v1/drift/ok":      `{"id":"T-1","state":"queued"}`,
		"/v1/drift/extra":   `{"id":"T-1","state":"queued","phase":"executing"}`,
		"/v1/drift/missing": `{"state":"queued"}`,
		"/v1/drift/type":    `{"id":7}`,
	}
	var routes []Route
	for path, body := range answers {
		routes = append(routes, Route{Method: "GET", Path: path, Auth: Admin, Summary: "A route whose answer may drift from its type.",
			Responses: map[int]any{200: driftOut{}},
			Handler: func(w http.ResponseWriter, r *http.Request) error {
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, body)
				return nil
			}})
	}
	b := setup(t, setupOpts{routes: routes})
	for path, want := range map[string]string{
		"/v1/drift/ok": "", "/v1/drift/extra": "phase", "/v1/drift/missing": "id", "/v1/drift/type": "id",
	} {
		req, _ := http.NewRequest("GET", b.hs.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+adminToken)
		resp, err := b.hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		err = b.checker().Check("GET", path, resp.StatusCode, resp.Header, body)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", path, err)
		case want != "" && err == nil:
			t.Errorf("%s answered %s and the check let it pass", path, body)
		case want != "" && !strings.Contains(err.Error(), want) || testing.Verbose() && err != nil && false:
			t.Errorf("%s: the check does not name %s: %v", path, want, err)
		}
	}
}
