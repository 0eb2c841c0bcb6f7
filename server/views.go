package server

import (
	"encoding/json"
	"time"

	"wilco/core"
	"wilco/store"
)

// AgentView is an agent as the API shows it (name, adapter, capabilities,
// status). The token hash is never shown.
type AgentView struct {
	Name         string           `json:"name"`
	Adapter      string           `json:"adapter"`
	Capabilities []string         `json:"capabilities"`
	Status       core.AgentStatus `json:"status"`
	// Pull agents fetch their messages (mailbox); the others are handed them.
	Pull bool `json:"pull"`
	// HasToken says whether the agent has a token (POST .../token gives one).
	HasToken bool `json:"has_token"`
	// Waiting counts the messages and instructions waiting for the agent's
	// next dispatch cycle; Unacknowledged the instructions sent and not yet
	// acknowledged.
	Waiting        int `json:"waiting"`
	Unacknowledged int `json:"unacknowledged"`
	// Polling says whether the agent is long-polling its inbox right now.
	Polling bool `json:"polling"`
	// FromConfig: the agent comes from wilco.yaml; Removed: it was taken
	// out of service (no more work, its token refused).
	FromConfig bool `json:"from_config"`
	Removed    bool `json:"removed"`
	// LastSeen is when wilco last heard from the agent: a poll, an
	// answer, the end of its turn (null: never).
	LastSeen *time.Time `json:"last_seen"`
	// CurrentTask is the task it holds now; FinishedTasks the tasks it
	// ended, FirstAttemptSuccess those that succeeded at attempt 1.
	CurrentTask         string `json:"current_task,omitempty"`
	FinishedTasks       int    `json:"finished_tasks"`
	FirstAttemptSuccess int    `json:"first_attempt_success"`
	// Usage is what its turns cost, as its CLI reported it.
	Usage core.Usage `json:"usage"`
	// Role is "scout" for a read-only helper agents consult.
	Role string `json:"role,omitempty"`
	// Context is what the last context probe learned of the agent's side.
	Context *core.AgentContext `json:"context,omitempty"`
}

func (s *Server) agentView(a core.Agent) AgentView {
	return AgentView{
		Name: a.Name, Adapter: a.Adapter, Capabilities: nonNil(a.Capabilities), Status: a.Status, Pull: a.Pull, Role: a.Role, Context: a.Context,
		HasToken: a.TokenHash != "", Waiting: len(a.Inbox) + len(a.Pending), Unacknowledged: len(a.Unacked),
		Polling: s.waiting(a.Name), FromConfig: a.FromConfig, Removed: a.Removed, LastSeen: timePtr(a.LastSeen),
	}
}

// agentViews renders agents with their records and usage, from one pass
// over the tasks; run it on the loop.
func (s *Server) agentViews(c *core.State, agents ...core.Agent) []AgentView {
	records := c.AgentRecords()
	usage := c.UsageTotals(nil).ByAgent
	out := make([]AgentView, 0, len(agents))
	for _, a := range agents {
		v := s.agentView(a)
		r := records[a.Name]
		v.CurrentTask, v.FinishedTasks, v.FirstAttemptSuccess = r.CurrentTask, r.Finished, r.FirstAttemptSuccess
		v.Usage = usage[a.Name]
		out = append(out, v)
	}
	return out
}

// MessageView is a delivery as the API shows it.
type MessageView struct {
	ID             string             `json:"id"`
	From           string             `json:"from"`
	To             string             `json:"to"`
	Type           core.MessageType   `json:"type"`
	Policy         core.Policy        `json:"policy"`
	Subject        string             `json:"subject"`
	Body           string             `json:"body"`
	TaskID         string             `json:"task_id,omitempty"`
	OperationID    string             `json:"operation_id,omitempty"`
	State          core.DeliveryState `json:"state"`
	Attempts       int                `json:"attempts"`
	Answer         string             `json:"answer,omitempty"`
	Understanding  string             `json:"understanding,omitempty"`
	Questions      []string           `json:"questions,omitempty"`
	Reason         string             `json:"reason,omitempty"`
	CreatedAt      time.Time          `json:"created_at"`
	SentAt         *time.Time         `json:"sent_at"`
	AcknowledgedAt *time.Time         `json:"acknowledged_at"`
	FailedAt       *time.Time         `json:"failed_at"`
	CancelledAt    *time.Time         `json:"cancelled_at"`
}

func messageView(d core.Delivery, orch string) MessageView {
	from := d.From
	if from == core.Orchestrator {
		from = orch
	}
	return MessageView{
		ID: d.ID, From: from, To: d.To, Type: d.Type, Policy: d.Policy, Subject: d.Subject, Body: d.Body,
		TaskID: d.TaskID, OperationID: d.OperationID, State: d.State, Attempts: d.Sends, Answer: d.Answer,
		Understanding: d.Understanding(), Questions: d.Questions(), Reason: d.Reason,
		CreatedAt: d.CreatedAt, SentAt: timePtr(d.SentAt), AcknowledgedAt: timePtr(d.AcknowledgedAt()),
		FailedAt: timePtr(d.FailedAt()), CancelledAt: timePtr(d.CancelledAt()),
	}
}

// InstructionView is an instruction.
type InstructionView struct {
	ID             string             `json:"id"`
	Agent          string             `json:"agent"`
	Content        string             `json:"content"`
	State          core.DeliveryState `json:"state"`
	RetryCount     int                `json:"retry_count"`
	MaxRetries     int                `json:"max_retries"`
	AckWhen        *core.Matcher      `json:"ack_when,omitempty"`
	Reason         string             `json:"reason,omitempty"`
	CreatedAt      time.Time          `json:"created_at"`
	SentAt         *time.Time         `json:"sent_at"`
	AcknowledgedAt *time.Time         `json:"acknowledged_at"`
	FailedAt       *time.Time         `json:"failed_at"`
	CancelledAt    *time.Time         `json:"cancelled_at"`
}

func instructionView(d core.Delivery) InstructionView {
	return InstructionView{
		ID: d.ID, Agent: d.To, Content: d.Body, State: d.State, RetryCount: d.RetryCount(), MaxRetries: d.MaxRetries,
		AckWhen: d.Matcher, Reason: d.Reason, CreatedAt: d.CreatedAt, SentAt: timePtr(d.SentAt),
		AcknowledgedAt: timePtr(d.AcknowledgedAt()), FailedAt: timePtr(d.FailedAt()), CancelledAt: timePtr(d.CancelledAt()),
	}
}

// OperationView is an operation.
type OperationView struct {
	ID                     string               `json:"id"`
	Operation              string               `json:"operation"`
	State                  core.OperationState  `json:"state"`
	Message                string               `json:"message,omitempty"`
	Command                []string             `json:"command,omitempty"`
	Agents                 []OperationAgentView `json:"agents"`
	RemindersSent          int                  `json:"reminders_sent"`
	AcknowledgmentReceived bool                 `json:"acknowledgment_received"`
	TimeoutOccurred        bool                 `json:"timeout_occurred"`
	ProceededAnyway        bool                 `json:"proceeded_anyway"`
	Reason                 string               `json:"reason,omitempty"`
	ExitCode               *int                 `json:"exit_code"`
	Output                 string               `json:"output,omitempty"`
	Timeout                string               `json:"timeout"`
	Reminders              []string             `json:"reminders"`
	Extension              string               `json:"extension"`
	ProceedOnTimeout       bool                 `json:"proceed_on_timeout"`
	Quorum                 core.Quorum          `json:"quorum"`
	CreatedAt              time.Time            `json:"created_at"`
	FinishedAt             *time.Time           `json:"finished_at"`
}

// OperationAgentView is one agent's part in an operation.
type OperationAgentView struct {
	Name string `json:"name"`
	// Message is the delivery of the pre-operation request to this agent.
	Message string `json:"message"`
	// Response is "ok", "wait" (an extension was granted and no "ok"
	// followed), "cancel", "timeout", or null while nothing came.
	Response    *string    `json:"response"`
	RespondedAt *time.Time `json:"responded_at"`
	Extended    bool       `json:"extended"`
}

func operationView(o core.Operation, c *core.State) OperationView {
	v := OperationView{
		ID: o.ID, Operation: o.Name, State: o.State, Message: o.Message, Command: o.Command,
		RemindersSent: o.RemindersSent, TimeoutOccurred: o.TimeoutOccurred, ProceededAnyway: o.ProceededAnyway,
		Reason: o.Reason, ExitCode: o.ExitCode, Output: o.Output, CreatedAt: o.CreatedAt, FinishedAt: timePtr(o.FinishedAt),
		Timeout: o.Policy.Timeout.String(), Extension: o.Policy.Extension.String(),
		ProceedOnTimeout: o.Policy.ProceedOnTimeout, Quorum: o.Policy.Quorum, Reminders: []string{},
	}
	for _, r := range o.Policy.Reminders {
		v.Reminders = append(v.Reminders, r.String())
	}
	acked := 0
	for i, name := range o.Agents {
		av := OperationAgentView{Name: name}
		if i < len(o.Deliveries) {
			av.Message = o.Deliveries[i]
			if d, ok := c.Delivery(o.Deliveries[i]); ok {
				av.Extended = d.Wait != nil && d.Wait.Extended
				var resp string
				switch {
				case d.State == core.Acknowledged:
					resp = "ok"
					if d.Answer != "" {
						resp = d.Answer
					}
					av.RespondedAt = timePtr(d.AcknowledgedAt())
					acked++
				case d.State == core.Failed && d.Reason == "timeout":
					resp = "timeout"
				case d.State == core.Cancelled && o.Reason == "cancelled at the request of "+name:
					resp = "cancel"
					av.RespondedAt = timePtr(d.CancelledAt())
				case av.Extended:
					resp = "wait"
				}
				if resp != "" {
					av.Response = &resp
				}
			}
		}
		v.Agents = append(v.Agents, av)
	}
	v.AcknowledgmentReceived = len(o.Agents) > 0 && acked == len(o.Agents)
	return v
}

// EventView is one event of the log.
type EventView struct {
	Seq    uint64          `json:"seq"`
	Time   time.Time       `json:"time"`
	Type   string          `json:"type"`
	TaskID string          `json:"task_id,omitempty"`
	Agent  string          `json:"agent,omitempty"`
	Data   json.RawMessage `json:"data"`
}

func eventView(ev store.Event) EventView {
	data := json.RawMessage(ev.Data)
	if len(data) == 0 {
		data = json.RawMessage("{}")
	}
	return EventView{Seq: ev.Seq, Time: ev.Time.UTC(), Type: ev.Type, TaskID: ev.TaskID, Agent: ev.Agent, Data: data}
}
