package jsonschema

import (
	"encoding/json"
	"strings"
	"testing"
)

func mustJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestValidateReportsEveryProblemWithItsPlace(t *testing.T) {
	t.Parallel()
	schema := mustJSON(t, `{
		"type": "object", "additionalProperties": false, "required": ["name"],
		"properties": {
			"name": {"type": "string", "pattern": "^[a-z]+$"},
			"mode": {"enum": ["a", "b"]},
			"n": {"type": "integer", "minimum": 1},
			"list": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/dur"}},
			"q": {"anyOf": [{"enum": ["all"]}, {"type": "integer", "minimum": 1}]}
		},
		"$defs": {"dur": {"type": "string", "pattern": "^[0-9]+s$"}}
	}`)
	good := map[string]any{"name": "abc", "mode": "b", "n": 2, "list": []any{"5s"}, "q": 3}
	if errs := Validate(schema, good); len(errs) > 0 {
		t.Fatalf("a good document: %v", errs)
	}
	bad := map[string]any{"mode": "c", "n": 1.5, "list": []any{"5m"}, "q": "most", "extra": true}
	errs := Validate(schema, bad)
	var all []string
	for _, e := range errs {
		all = append(all, e.Error())
	}
	text := strings.Join(all, "\n")
	for _, want := range []string{`"name" is required`, "mode: must be one of", "n: must be integer",
		`list[0]: "5m" does not match`, "q: matches none", "extra: unknown key"} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in\n%s", want, text)
		}
	}
	if len(Validate(schema, map[string]any{"name": "x", "n": 0})) != 1 {
		t.Errorf("minimum: %v", Validate(schema, map[string]any{"name": "x", "n": 0}))
	}
}

func TestValidateRefusesKeywordsItDoesNotKnow(t *testing.T) {
	t.Parallel()
	errs := Validate(mustJSON(t, `{"type": "string", "maxLength": 3}`), "abcd")
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `"maxLength"`) {
		t.Fatalf("%v", errs)
	}
	errs = Validate(mustJSON(t, `{"$ref": "#/$defs/missing"}`), "x")
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "does not resolve") {
		t.Fatalf("%v", errs)
	}
}
