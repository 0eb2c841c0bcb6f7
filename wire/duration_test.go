package wire

import (
	"encoding/json"
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	t.Parallel()
	var d struct {
		A Duration `json:"a"`
		B Duration `json:"b"`
	}
	if err := json.Unmarshal([]byte(`{"a":"1m30s","b":2000000000}`), &d); err != nil {
		t.Fatal(err)
	}
	if time.Duration(d.A) != 90*time.Second || time.Duration(d.B) != 2*time.Second {
		t.Errorf("got %v %v", time.Duration(d.A), time.Duration(d.B))
	}
	if err := json.Unmarshal([]byte(`{"a":"soon"}`), &d); err == nil {
		t.Error("a bad duration was accepted")
	}
}
