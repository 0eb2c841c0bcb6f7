package ack

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// FormatAck writes r as a text ACK, the form Parse reads:
//
//	[ACK] {task_id} - {STATUS}
//	Understanding: {understanding}
//	Questions:
//	1. {question}
//	Note: {note}
//
// Lines with nothing to say are left out; each value is flattened to one line.
// Only the ACK fields of r are written, whatever its Kind, and nothing is
// validated: for a valid task id (ValidateTaskID) and a valid status,
// Parse(FormatAck(r)) gives back r's id, status and flattened values.
func FormatAck(r Reply) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[ACK] %s - %s", r.TaskID, r.Status.word())
	if u := flatten(r.Understanding); u != "" {
		b.WriteString("\nUnderstanding: " + u)
	}
	n := 0
	for _, q := range r.Questions {
		if q = flatten(q); q == "" {
			continue
		}
		if n == 0 {
			b.WriteString("\nQuestions:")
		}
		n++
		fmt.Fprintf(&b, "\n%d. %s", n, q)
	}
	if note := flatten(r.Note); note != "" {
		b.WriteString("\nNote: " + note)
	}
	return b.String()
}

// FormatJSON writes r in the JSON form of its Kind — the form an agent
// sends and ParseJSON reads: KindAck as task-acknowledgment, KindAckError as
// task-acknowledgment-error, KindCheckpoint as checkpoint-ack, KindComplete
// as task-complete, KindOperationReply as acknowledgment. A KindMessage has
// no JSON form and is an error. RetryAfter is written in minutes.
func FormatJSON(r Reply) ([]byte, error) {
	type field struct {
		key   string
		value any
	}
	var fields []field
	add := func(key string, value any, keep bool) {
		if keep {
			fields = append(fields, field{key, value})
		}
	}
	switch r.Kind {
	case KindAck:
		add("type", TypeTaskAcknowledgment, true)
		add("task_id", r.TaskID, true)
		add("status", r.Status.jsonValue(), true)
		add("understanding", r.Understanding, r.Understanding != "")
		add("questions", r.Questions, len(r.Questions) > 0)
		add("note", r.Note, r.Note != "")
		add("estimated_checkpoints", r.EstimatedCheckpoints, len(r.EstimatedCheckpoints) > 0)
	case KindAckError:
		add("type", TypeTaskAcknowledgmentError, true)
		add("task_id", r.TaskID, true)
		add("error_code", r.ErrorCode, true)
		add("error_message", r.ErrorMessage, r.ErrorMessage != "")
		add("retry_after_minutes", json.Number(strconv.FormatFloat(r.RetryAfter.Minutes(), 'g', -1, 64)), r.RetryAfter != 0)
		add("alternative_agents", r.AlternativeAgents, len(r.AlternativeAgents) > 0)
	case KindCheckpoint:
		add("type", TypeCheckpointAck, true)
		add("task_id", r.TaskID, true)
		add("checkpoint", r.Checkpoint, true)
		add("status", r.CheckpointStatus, r.CheckpointStatus != "")
		add("summary", r.Summary, r.Summary != "")
		add("next_checkpoint", r.NextCheckpoint, r.NextCheckpoint != 0)
	case KindComplete:
		add("type", TypeTaskComplete, true)
		add("task_id", r.TaskID, r.TaskID != "")
		add("status", r.Complete, r.Complete != "")
		add("summary", r.Summary, r.Summary != "")
		add("reason", r.Reason, r.Reason != "")
		add("files_modified", r.FilesModified, len(r.FilesModified) > 0)
		add("error", r.Error, r.Error != "")
		add("verification", r.Verification, r.Verification != nil)
	case KindOperationReply:
		add("type", TypeAcknowledgment, true)
		add("task_id", r.TaskID, r.TaskID != "")
		add("message", string(r.Answer), true)
		add("ready", r.Answer == AnswerOK, r.Answer == AnswerOK || r.Answer == AnswerWait)
		add("notes", r.Note, r.Note != "")
	default:
		return nil, fmt.Errorf("ack: a reply of kind %q has no JSON form", r.Kind)
	}
	// Write the fields in the protocol's order (a map would sort them).
	var b strings.Builder
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.key)
		v, err := json.Marshal(f.value)
		if err != nil {
			return nil, fmt.Errorf("ack: %s: field %q: %w", r.Kind, f.key, err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}
