package taskview

import "encoding/json"

// decode reads an event's data into a T. A field of another type is left
// zero and the others are read; data that are no JSON give a zero T. The
// error says what could not be read.
func decode[T any](data json.RawMessage) (T, error) {
	var v T
	if len(data) == 0 {
		return v, nil
	}
	err := json.Unmarshal(data, &v)
	return v, err
}

// read is decode without the error: what the view shows of an event it
// cannot read whole.
func read[T any](data json.RawMessage) T {
	v, _ := decode[T](data)
	return v
}
