package retrylog

import (
	"fmt"
	"time"

	"wilco/core"
	"wilco/store"
)

// deliveryLines are the records of an event of a delivery (an
// instruction, a delegation, a question, an operation's request) or an
// operation's reminder: its sends, its waits and how it ended. Their key
// is the task, else the message (or the operation), else the agent.
func deliveryLines(ev store.Event, data core.EventData) []Line {
	line := func(id, text string, fields map[string]any) []Line {
		key := ev.TaskID
		if key == "" {
			key = id
		}
		if key == "" {
			key = ev.Agent
		}
		return []Line{{Key: key, Text: text, Fields: fields}}
	}
	switch e := data.(type) {
	case core.DeliverySent:
		text, fields := sendLine("sent", e.Send, ev.Agent)
		return line(e.ID, text, fields)
	case core.DeliveryRetried:
		text, fields := sendLine("retried", e.Send, ev.Agent)
		return line(e.ID, text, fields)
	case core.DeliveryDeferred:
		return line(e.ID, fmt.Sprintf("deferred message=%s reason=%s", e.ID, Quote(e.Reason)),
			map[string]any{"event": "delivery_deferred", "message": e.ID, "reason": e.Reason, "until": e.TimerAt.Format(time.RFC3339Nano)})
	case core.DeliveryAcknowledged:
		text := fmt.Sprintf("resolved status=acknowledged message=%s by=%s", e.ID, orDash(e.By))
		fields := map[string]any{"event": "delivery_resolved", "resolution": "acknowledged", "message": e.ID, "by": e.By}
		if e.Status != "" {
			text += " ack=" + e.Status
			fields["ack"] = e.Status
		}
		return line(e.ID, text, fields)
	case core.DeliveryClarifying:
		return line(e.ID, fmt.Sprintf("clarification_needed message=%s questions=%d", e.ID, len(e.Questions)),
			map[string]any{"event": "delivery_clarifying", "message": e.ID, "questions": len(e.Questions)})
	case core.DeliveryFailed:
		return line(e.ID, fmt.Sprintf("resolved status=failed message=%s attempts=%d reason=%s", e.ID, e.Attempts, Quote(e.Reason)),
			map[string]any{"event": "delivery_resolved", "resolution": "failed", "message": e.ID, "attempts": e.Attempts, "reason": e.Reason})
	case core.DeliveryCancelled:
		return line(e.ID, fmt.Sprintf("resolved status=cancelled message=%s reason=%s", e.ID, Quote(e.Reason)),
			map[string]any{"event": "delivery_resolved", "resolution": "cancelled", "message": e.ID, "reason": e.Reason})
	case core.DeliveryReassigned:
		return line(e.ID, fmt.Sprintf("reassigning message=%s from=%s to=%s new_message=%s", e.ID, e.From, e.To, e.NewID),
			map[string]any{"event": "delivery_reassigned", "message": e.ID, "from": e.From, "to": e.To, "new_message": e.NewID})
	case core.DeliveryEscalated:
		return line(e.ID, fmt.Sprintf("escalating message=%s reason=%s", e.ID, Quote(e.Reason)),
			map[string]any{"event": "delivery_escalated", "message": e.ID, "reason": e.Reason})
	case core.OperationReminder:
		remaining := e.Remaining.String()
		return line(e.ID, fmt.Sprintf("reminder operation=%s number=%d tone=%s remaining=%s", e.ID, e.Number, e.Tone, remaining),
			map[string]any{"event": "operation_reminder", "operation": e.ID, "number": e.Number, "tone": e.Tone, "remaining": remaining, "agent": ev.Agent})
	}
	return nil
}

// sendLine is the record of a send that asks for an answer: the first
// ("sent") or a later one ("retried").
func sendLine(status string, s core.Send, agent string) (string, map[string]any) {
	kind := string(s.Kind)
	text := fmt.Sprintf("attempt=%d status=%s kind=%s message=%s", s.Attempt, status, orDash(kind), s.ID)
	fields := map[string]any{"event": "delivery_" + status, "attempt": s.Attempt, "kind": kind, "message": s.ID}
	if s.Message != nil && s.Message.Type != "" {
		text += " type=" + string(s.Message.Type)
		fields["type"] = string(s.Message.Type)
	}
	if agent != "" {
		text += " agent=" + agent
		fields["agent"] = agent
	}
	return text, fields
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
