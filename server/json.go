package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"wilco/wire"
)

// MaxBody is the largest request body accepted.
const MaxBody = 1 << 20

var errEmptyBody = &Error{Code: wire.CodeInvalidArgument, Msg: "the request body is empty: send a JSON object"}

// DecodeJSON reads the request body into v strictly: one JSON object, no
// unknown field (the error names it), no trailing data, at most MaxBody
// bytes. Its errors map to invalid_argument or too_large.
func DecodeJSON(r *http.Request, v any) error {
	return decodeJSON(r, v, true)
}

func decodeJSON(r *http.Request, v any, strict bool) error {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return err
		}
		return invalidf("reading the request body: %v", err)
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return errEmptyBody
	}
	if trimmed[0] != '{' {
		return invalidf("the request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return invalidf("the request body has data after its JSON object")
	}
	return nil
}

// jsonError says what was wrong with a body in the client's terms.
func jsonError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return invalidf("malformed JSON at byte %d: %s", syn.Offset, strings.TrimPrefix(syn.Error(), "json: "))
	case errors.As(err, &typ):
		field := typ.Field
		if typ.Type == reflect.TypeFor[wire.Duration]() {
			return invalidf("%s: want a Go duration such as \"30s\", got %s", field, strings.TrimPrefix(typ.Value, "string "))
		}
		if field == "" {
			return invalidf("malformed JSON: a %s where %s was expected", typ.Value, typeName(typ.Type))
		}
		return invalidf("field %q: want %s, got %s", field, typeName(typ.Type), typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return invalidf("malformed JSON: the body ends in the middle of its object")
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if strings.HasPrefix(msg, "unknown field ") {
		return invalidf("%s (see /openapi.json for the fields this request takes)", msg)
	}
	return invalidf("malformed JSON: %s", msg)
}

func typeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16,
		reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return typeName(t.Elem())
	}
	return t.String()
}

// WriteJSON writes v as the response body with the status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		data = []byte(`{"error":{"code":"internal","message":"encoding the response failed"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(data, '\n'))
}

// duration parses a Go duration string of a request field or parameter.
func duration(field, s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, invalidf("%s: want a Go duration such as \"30s\", got %q", field, s)
	}
	if d < 0 {
		return 0, invalidf("%s: must not be negative, got %q", field, s)
	}
	return d, nil
}

// nonNegative is a request field's duration, refused when negative.
func nonNegative(field string, d wire.Duration) (time.Duration, error) {
	if d < 0 {
		return 0, invalidf("%s: must not be negative, got %q", field, d.String())
	}
	return time.Duration(d), nil
}

// uintParam reads a non-negative integer query parameter; def when absent.
func uintParam(r *http.Request, name string, def uint64) (uint64, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, invalidf("%s: want a non-negative integer, got %q", name, s)
	}
	return n, nil
}

// boolParam reads true/false (also 1/0); def when absent.
func boolParam(r *http.Request, name string, def bool) (bool, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, invalidf("%s: want true or false, got %q", name, s)
	}
	return b, nil
}

// checkQuery refuses query parameters a route does not know: a typo must
// not silently widen a listing.
func checkQuery(r *http.Request, known ...string) error {
	for k := range r.URL.Query() {
		found := false
		for _, n := range known {
			if k == n {
				found = true
				break
			}
		}
		if !found {
			if len(known) == 0 {
				return invalidf("unknown query parameter %q: this route takes none", k)
			}
			return invalidf("unknown query parameter %q (known: %s)", k, strings.Join(known, ", "))
		}
	}
	return nil
}
