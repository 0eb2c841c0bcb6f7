package wire

import (
	"encoding/json"
	"time"
)

// Event is one numbered state change, the envelope of the event stream.
// Data is the event's payload, whose shape depends on Type: it is core's
// event type of that name.
type Event struct {
	Seq    uint64          `json:"seq"`
	Time   time.Time       `json:"time"`
	Type   string          `json:"type"`
	TaskID string          `json:"task_id,omitempty"`
	Agent  string          `json:"agent,omitempty"`
	Data   json.RawMessage `json:"data" doc:"The event's payload; its fields depend on type."`
}

// EventPage is one page of the stored event log: GET
// /v1/events?follow=false.
type EventPage struct {
	Events []Event `json:"events"`
	Next   uint64  `json:"next" doc:"the seq to pass as after for the next page"`
}
