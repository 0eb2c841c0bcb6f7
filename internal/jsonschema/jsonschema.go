// Package jsonschema checks a document against the part of JSON Schema
// (2020-12) that wilco's own schemas use: type, properties, required,
// additionalProperties, items, minItems, enum, const, pattern, minimum,
// anyOf and local $ref to #/$defs. A keyword outside that part is an
// error, so that a schema never silently checks less than it says.
//
// Documents are what encoding/json or a YAML decoder give: maps with
// string keys, slices, strings, bools, and integer or float numbers.
package jsonschema

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// known are the keywords Validate understands; annotations are ignored.
var known = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true, "items": true,
	"minItems": true, "enum": true, "const": true, "pattern": true, "minimum": true, "anyOf": true, "$ref": true,
	// annotations
	"$schema": true, "$id": true, "$defs": true, "title": true, "description": true, "default": true,
	"examples": true, "markdownDescription": true,
}

// Validate checks doc against schema and returns every problem, each
// naming where it is ("policy.ack.timeouts[1]").
func Validate(schema map[string]any, doc any) []error {
	v := &validator{root: schema}
	v.check(schema, doc, "")
	return v.errs
}

type validator struct {
	root map[string]any
	errs []error
}

func (v *validator) fail(at, format string, args ...any) {
	if at == "" {
		at = "(the document)"
	}
	v.errs = append(v.errs, fmt.Errorf("%s: %s", at, fmt.Sprintf(format, args...)))
}

func join(at, key string) string {
	if at == "" {
		return key
	}
	return at + "." + key
}

func (v *validator) check(s map[string]any, doc any, at string) {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !known[k] {
			v.fail(at, "the schema uses %q, which this checker does not know", k)
		}
	}
	if ref, ok := s["$ref"].(string); ok {
		name, found := strings.CutPrefix(ref, "#/$defs/")
		defs, _ := v.root["$defs"].(map[string]any)
		target, _ := defs[name].(map[string]any)
		if !found || target == nil {
			v.fail(at, "the schema's $ref %q does not resolve", ref)
			return
		}
		v.check(target, doc, at)
	}
	if t, ok := s["type"]; ok && !typeMatches(t, doc) {
		v.fail(at, "must be %v, got %s", t, describe(doc))
		return
	}
	if e, ok := s["enum"].([]any); ok && !slices.ContainsFunc(e, func(x any) bool { return equal(x, doc) }) {
		v.fail(at, "must be one of %v, got %v", e, doc)
	}
	if c, ok := s["const"]; ok && !equal(c, doc) {
		v.fail(at, "must be %v, got %v", c, doc)
	}
	if p, ok := s["pattern"].(string); ok {
		if str, ok := doc.(string); ok {
			re, err := regexp.Compile(p)
			if err != nil {
				v.fail(at, "the schema's pattern %q: %v", p, err)
			} else if !re.MatchString(str) {
				v.fail(at, "%q does not match %s", str, p)
			}
		}
	}
	if m, ok := number(s["minimum"]); ok {
		if n, isNum := number(doc); isNum && n < m {
			v.fail(at, "must be at least %v, got %v", m, n)
		}
	}
	if alts, ok := s["anyOf"].([]any); ok {
		matched := false
		var first []error
		for _, alt := range alts {
			sub := &validator{root: v.root}
			sub.check(alt.(map[string]any), doc, at)
			if len(sub.errs) == 0 {
				matched = true
				break
			}
			if first == nil {
				first = sub.errs
			}
		}
		if !matched {
			v.fail(at, "matches none of the allowed forms (%v)", first)
		}
	}
	switch d := doc.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		for _, r := range asList(s["required"]) {
			if _, ok := d[r]; !ok {
				v.fail(at, "%q is required", r)
			}
		}
		names := make([]string, 0, len(d))
		for k := range d {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			if ps, ok := props[k].(map[string]any); ok {
				v.check(ps, d[k], join(at, k))
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if !ap {
					v.fail(join(at, k), "unknown key")
				}
			case map[string]any:
				v.check(ap, d[k], join(at, k))
			}
		}
	case []any:
		if m, ok := number(s["minItems"]); ok && float64(len(d)) < m {
			v.fail(at, "must have at least %v items, got %d", m, len(d))
		}
		if is, ok := s["items"].(map[string]any); ok {
			for i, item := range d {
				v.check(is, item, fmt.Sprintf("%s[%d]", at, i))
			}
		}
	}
}

func asList(x any) []string {
	var out []string
	if l, ok := x.([]any); ok {
		for _, e := range l {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

func typeMatches(t any, doc any) bool {
	switch t := t.(type) {
	case string:
		return isType(t, doc)
	case []any:
		return slices.ContainsFunc(t, func(x any) bool { s, _ := x.(string); return isType(s, doc) })
	}
	return false
}

func isType(t string, doc any) bool {
	switch t {
	case "object":
		_, ok := doc.(map[string]any)
		return ok
	case "array":
		_, ok := doc.([]any)
		return ok
	case "string":
		_, ok := doc.(string)
		return ok
	case "boolean":
		_, ok := doc.(bool)
		return ok
	case "null":
		return doc == nil
	case "number":
		_, ok := number(doc)
		return ok
	case "integer":
		n, ok := number(doc)
		return ok && n == math.Trunc(n)
	}
	return false
}

func number(x any) (float64, bool) {
	switch n := x.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func equal(a, b any) bool {
	if x, ok := number(a); ok {
		y, ok := number(b)
		return ok && x == y
	}
	return fmt.Sprint(a) == fmt.Sprint(b) && describe(a) == describe(b)
}

func describe(x any) string {
	switch x.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "nothing"
	}
	if _, ok := number(x); ok {
		return "a number"
	}
	return fmt.Sprintf("a %T", x)
}
