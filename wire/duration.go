package wire

import (
	"encoding/json"
	"reflect"
	"strconv"
	"time"
)

// Duration is a time.Duration carried as a Go duration string ("90s",
// "5m"), the API's form. It also accepts a number of nanoseconds.
type Duration time.Duration

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads a duration string or a number of nanoseconds. What
// it cannot read is a *json.UnmarshalTypeError, which the decoder gives
// the field's name.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return &json.UnmarshalTypeError{Value: "string " + strconv.Quote(s), Type: reflect.TypeFor[Duration]()}
		}
		*d = Duration(v)
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return &json.UnmarshalTypeError{Value: string(b), Type: reflect.TypeFor[Duration]()}
	}
	*d = Duration(n)
	return nil
}

// String is the Go duration string.
func (d Duration) String() string { return time.Duration(d).String() }

// JSONSchema is a Go duration string.
func (Duration) JSONSchema(*Schemas) map[string]any {
	return map[string]any{"type": "string", "description": "Go duration, such as \"30s\""}
}
