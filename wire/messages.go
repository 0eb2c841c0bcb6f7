package wire

import "time"

// SendMessage sends a message: POST /v1/messages. Without Type the server
// classifies the body; a task delegation is tracked under the ack policy.
type SendMessage struct {
	To      string      `json:"to"`
	Type    MessageType `json:"type,omitempty" enum:"task_delegation,conversation"`
	Subject string      `json:"subject,omitempty"`
	Body    string      `json:"body"`
	TaskID  string      `json:"task_id,omitempty"`
	// For a task delegation: what reassignment and the understanding
	// check need.
	Capabilities       []string `json:"capabilities,omitempty"`
	AcceptanceCriteria []string `json:"acceptance_criteria,omitempty"`
	Description        string   `json:"description,omitempty"`
}

// Message is a message sent to or from an agent, and where its delivery
// stands.
type Message struct {
	ID             string        `json:"id"`
	From           string        `json:"from"`
	To             string        `json:"to"`
	Type           MessageType   `json:"type"`
	Policy         Policy        `json:"policy"`
	Subject        string        `json:"subject"`
	Body           string        `json:"body"`
	TaskID         string        `json:"task_id,omitempty"`
	OperationID    string        `json:"operation_id,omitempty"`
	State          DeliveryState `json:"state"`
	Attempts       int           `json:"attempts"`
	Answer         string        `json:"answer,omitempty"`
	Understanding  string        `json:"understanding,omitempty"`
	Questions      []string      `json:"questions,omitempty"`
	Reason         string        `json:"reason,omitempty"`
	CreatedAt      time.Time     `json:"created_at"`
	SentAt         *time.Time    `json:"sent_at"`
	AcknowledgedAt *time.Time    `json:"acknowledged_at"`
	FailedAt       *time.Time    `json:"failed_at"`
	CancelledAt    *time.Time    `json:"cancelled_at"`
}

// MessageList is GET /v1/messages.
type MessageList struct {
	Messages []Message `json:"messages"`
}

// Reason says why, when cancelling: POST /v1/messages/{id}/cancel and
// /v1/operations/{id}/cancel (the body may be left out).
type Reason struct {
	Reason string `json:"reason,omitempty"`
}

// Matcher acknowledges an instruction when the agent's reply contains a
// text or matches a regular expression.
type Matcher struct {
	Contains string `json:"contains,omitempty"`
	Regex    string `json:"regex,omitempty"`
}

// CreateInstruction queues an instruction: POST /v1/instructions.
// MaxRetries nil takes the server's policy (3: four sends).
type CreateInstruction struct {
	Agent      string   `json:"agent"`
	Content    string   `json:"content"`
	MaxRetries *int     `json:"max_retries,omitempty"`
	AckWhen    *Matcher `json:"ack_when,omitempty"`
}

// Instruction is a delivery under the cycles policy.
type Instruction struct {
	ID             string        `json:"id"`
	Agent          string        `json:"agent"`
	Content        string        `json:"content"`
	State          DeliveryState `json:"state" enum:"pending,sent,acknowledged,failed,cancelled"`
	RetryCount     int           `json:"retry_count"`
	MaxRetries     int           `json:"max_retries"`
	AckWhen        *Matcher      `json:"ack_when,omitempty"`
	Reason         string        `json:"reason,omitempty"`
	CreatedAt      time.Time     `json:"created_at"`
	SentAt         *time.Time    `json:"sent_at"`
	AcknowledgedAt *time.Time    `json:"acknowledged_at"`
	FailedAt       *time.Time    `json:"failed_at"`
	CancelledAt    *time.Time    `json:"cancelled_at"`
}

// InstructionList is GET /v1/instructions.
type InstructionList struct {
	Instructions []Instruction `json:"instructions"`
}
