package apicheck

import (
	"net/http"
	"strings"
	"testing"
)

// doc is a document of two routes: a JSON answer with its errors, and a
// text one.
const doc = `{"openapi": "3.1.0", "paths": {
  "/v1/things/{id}": {"get": {"responses": {
    "200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}},
    "204": {"description": "No Content"},
    "404": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}}}},
  "/": {"get": {"responses": {"200": {"content": {"text/html": {"schema": {"type": "string"}}}}}}}},
 "components": {"schemas": {
  "Thing": {"type": "object", "properties": {"id": {"type": "string"}, "at": {"type": "string", "format": "date-time"}},
    "required": ["id"], "additionalProperties": false},
  "Error": {"type": "object", "properties": {"error": {"type": "string"}}, "required": ["error"], "additionalProperties": false}}}}`

func checker(t *testing.T) *Checker {
	t.Helper()
	c, err := New([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var jsonHeader = http.Header{"Content-Type": {"application/json"}}

// An answer is checked against the schema of its route and status: a
// field the schema lacks, a required one missing, a date-time that is
// none, all fail.
func TestAnAnswerIsCheckedAgainstTheSchemaOfItsRouteAndStatus(t *testing.T) {
	t.Parallel()
	c := checker(t)
	for body, want := range map[string]string{
		`{"id":"a","at":"2026-01-26T14:30:00Z"}`: "",
		`{"id":"a","extra":1}`:                   "extra",
		`{"at":"2026-01-26T14:30:00Z"}`:          "id",
		`{"id":"a","at":"yesterday"}`:            "date-time",
		`not json`:                               "does not parse",
	} {
		err := c.Check("GET", "/v1/things/a", 200, jsonHeader, []byte(body))
		if (err == nil) != (want == "") || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
	if err := c.Check("GET", "/v1/things/a", 404, jsonHeader, []byte(`{"error":"no thing a"}`)); err != nil {
		t.Errorf("a documented error: %v", err)
	}
}

// A success status the route does not document fails; an error it does
// not document (a 503, a 500) has one of the route's error bodies of its
// media type.
func TestAnUndocumentedStatusFailsUnlessItIsAnErrorOfTheRoutesErrorBody(t *testing.T) {
	t.Parallel()
	c := checker(t)
	if err := c.Check("GET", "/v1/things/a", 201, jsonHeader, []byte(`{"id":"a"}`)); err == nil || !strings.Contains(err.Error(), "does not document") {
		t.Errorf("an undocumented 201: %v", err)
	}
	if err := c.Check("GET", "/v1/things/a", 503, jsonHeader, []byte(`{"error":"stopping"}`)); err != nil {
		t.Errorf("a 503 with the route's error body: %v", err)
	}
	if err := c.Check("GET", "/v1/things/a", 503, jsonHeader, []byte(`{"message":"stopping"}`)); err == nil {
		t.Error("a 503 with another body passed")
	}
	if err := c.Check("GET", "/v1/things/a", 503, http.Header{"Content-Type": {"text/plain"}}, []byte("stopping")); err == nil {
		t.Error("a 503 of a media type the route's errors do not have passed")
	}
	if err := c.Check("GET", "/v1/things/a", 204, nil, nil); err != nil {
		t.Errorf("a documented answer without a body: %v", err)
	}
}

// An answer of a media type its response does not list fails; one of no
// documented route is not checked.
func TestAnAnswerOfAnotherMediaTypeFailsAndOneOfNoRouteIsNotChecked(t *testing.T) {
	t.Parallel()
	c := checker(t)
	if err := c.Check("GET", "/v1/things/a", 200, http.Header{"Content-Type": {"text/plain; charset=utf-8"}}, []byte("a")); err == nil {
		t.Error("text/plain where JSON is documented passed")
	}
	if err := c.Check("GET", "/", 200, http.Header{"Content-Type": {"text/html; charset=utf-8"}}, []byte("<html>")); err != nil {
		t.Errorf("the page: %v", err)
	}
	if err := c.Check("GET", "/nowhere/else", 404, jsonHeader, []byte(`{"anything":1}`)); err != nil {
		t.Errorf("no route: %v", err)
	}
	if err := c.Check("DELETE", "/v1/things/a", 405, jsonHeader, []byte(`{}`)); err != nil {
		t.Errorf("a method the path does not take: %v", err)
	}
}
