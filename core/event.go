package core

import (
	"encoding/json"
	"fmt"
	"time"
)

// Event is one numbered state change. Seq starts at 1 and has no gaps; Time
// is the time the command that caused it was stepped with.
type Event struct {
	Seq    uint64
	Time   time.Time
	Type   string
	TaskID string
	Agent  string
	Data   EventData
}

// EventData is the typed payload of an event.
type EventData interface {
	EventType() string
}

// Event types. The names are the wire names of the event stream.
const (
	TypePoliciesSet          = "config.policies"
	TypeAgentRegistered      = "agent.registered"
	TypeAgentStatus          = "agent.status"
	TypeAgentCycle           = "agent.cycle"
	TypeAgentToken           = "agent.token"
	TypeAgentRemoved         = "agent.removed"
	TypeAgentPermission      = "agent.permission"
	TypeAgentSessionEnded    = "agent.session_ended"
	TypeDeliveryQueued       = "delivery.queued"
	TypeDeliverySent         = "delivery.sent"
	TypeDeliveryRetried      = "delivery.retried"
	TypeDeliveryNotice       = "delivery.notice"
	TypeDeliveryDeferred     = "delivery.deferred"
	TypeDeliveryAcknowledged = "delivery.acknowledged"
	TypeDeliveryClarifying   = "delivery.clarifying"
	TypeDeliveryReply        = "delivery.reply"
	TypeDeliveryFailed       = "delivery.failed"
	TypeDeliveryCancelled    = "delivery.cancelled"
	TypeDeliveryReassigned   = "delivery.reassigned"
	TypeDeliveryEscalated    = "delivery.escalated"
	TypeOperationStarted     = "operation.started"
	TypeOperationReminder    = "operation.reminder"
	TypeOperationReply       = "operation.reply"
	TypeOperationState       = "operation.state"
)

// PoliciesSet records the policies the core decides with from now on.
type PoliciesSet struct {
	Policies Policies `json:"policies"`
}

// AgentRegistered records a new agent or a change to one.
type AgentRegistered struct {
	Name         string   `json:"name"`
	Adapter      string   `json:"adapter"`
	Capabilities []string `json:"capabilities,omitempty"`
	// Pull agents fetch their messages in dispatch cycles (mailbox); push
	// agents are handed each message as a Deliver effect (exec, tmux…).
	Pull      bool            `json:"pull"`
	Handshake string          `json:"handshake,omitempty"`
	Settings  json.RawMessage `json:"settings,omitempty"`
	// FromConfig: the agent comes from wilco.yaml (not the API), so it
	// is removed when it leaves the file.
	FromConfig bool `json:"from_config,omitempty"`
	// Role is "" or RoleScout.
	Role string `json:"role,omitempty"`
	// Instances is how many tasks the agent works at once (0: one).
	Instances int `json:"instances,omitempty"`
}

// AgentStatusChanged records an agent's new status.
type AgentStatusChanged struct {
	From   AgentStatus `json:"from"`
	To     AgentStatus `json:"to"`
	Reason string      `json:"reason"`
	// Conversation is kept with a hibernation: the conversation to resume.
	Conversation string `json:"conversation,omitempty"`
}

// AgentPermission records a permission question an agent asked in its
// pane (a tool it wants to use), and how it was answered: "allowed" or
// "denied" by its allow list, or "" when it waits for the user.
type AgentPermission struct {
	TaskID string `json:"task_id,omitempty"`
	Tool   string `json:"tool,omitempty"`
	Text   string `json:"text"`
	Answer string `json:"answer,omitempty"`
}

// AgentTokenSet records the hash of an agent's new token; the previous one
// stops working. The token itself is never recorded.
type AgentTokenSet struct {
	TokenHash string `json:"token_hash"`
}

// AgentRemoved records an agent taken out of service: removed from
// wilco.yaml, or by the user. It gets no more work and its token stops
// working; registering it again brings it back.
type AgentRemoved struct {
	Reason string `json:"reason"`
}

// AgentSessionEnded records the end of the session a removed agent's
// adapter kept for it (see StopSession); Error says why it could not be
// ended.
type AgentSessionEnded struct {
	Error string `json:"error,omitempty"`
}

// AgentCycle records a pull agent's dispatch cycle that fetched messages
// waiting in its inbox.
type AgentCycle struct {
	Fetched int `json:"fetched"`
}

// DeliveryQueued records an instruction waiting for its agent's next
// dispatch cycle.
type DeliveryQueued struct {
	Message Message `json:"message"`
}

// Send is what every send of a delivery records.
type Send struct {
	ID string `json:"id"`
	// Attempt is the send's number among the sends that ask for an answer.
	Attempt int      `json:"attempt"`
	Kind    SendKind `json:"kind"`
	// Subject and Body are the text of this send when it is not the
	// message's own (an ACK request, a reminder, a correction…).
	Subject string `json:"subject,omitempty"`
	Body    string `json:"body,omitempty"`
	// Round is the attempt within the current ACK round (backoff policy):
	// a correction or a clarification starts a new round.
	Round int `json:"round,omitempty"`
	// Correction counts this send against max_corrections.
	Correction bool `json:"correction,omitempty"`
	// TimerAt is when the delivery's timer fires next; zero for none.
	TimerAt time.Time `json:"timer_at,omitzero"`
	// Message is set when this send creates the delivery.
	Message *Message `json:"message,omitempty"`
}

// DeliverySent records the first send of a delivery.
type DeliverySent struct{ Send }

// DeliveryRetried records a later send of a delivery that asks again for
// an answer.
type DeliveryRetried struct{ Send }

// DeliveryNotice records a send that asks for nothing: a timeout notice, a
// cancel, an extension granted, a follow-up.
type DeliveryNotice struct{ Send }

// DeliveryDeferred records that a delivery waits before its next send
// (RESOURCE_UNAVAILABLE with retry_after, NETWORK_ERROR).
type DeliveryDeferred struct {
	ID      string    `json:"id"`
	Reason  string    `json:"reason"`
	TimerAt time.Time `json:"timer_at"`
	// Resend means the next send restarts the ACK round.
	Resend bool `json:"resend,omitempty"`
}

// DeliveryAcknowledged records the end of a delivery: it was received.
type DeliveryAcknowledged struct {
	ID string `json:"id"`
	// By is who acknowledged: "caller" (an explicit acknowledge), "matcher"
	// (the agent's reply matched), "agent" (an ACK or an "ok").
	By            string `json:"by"`
	Status        string `json:"status,omitempty"`
	Understanding string `json:"understanding,omitempty"`
	Note          string `json:"note,omitempty"`
	// TimerAt is the follow-up of a QUEUED acknowledgment.
	TimerAt time.Time `json:"timer_at,omitzero"`
}

// DeliveryClarifying records an agent's questions; the delivery waits for
// the user's answers.
type DeliveryClarifying struct {
	ID            string   `json:"id"`
	Questions     []string `json:"questions,omitempty"`
	Understanding string   `json:"understanding,omitempty"`
}

// DeliveryReply records a reply that changed nothing else: information
// while waiting, a checkpoint, a task-complete.
type DeliveryReply struct {
	ID   string `json:"id,omitempty"`
	Kind string `json:"kind"`
	Text string `json:"text,omitempty"`
	// Started is set when the reply shows that work has begun (a checkpoint
	// or completion), which ends a QUEUED follow-up.
	Started bool `json:"started,omitempty"`
	// Released is set when the reply ends the agent's hold on its task.
	Released bool `json:"released,omitempty"`
	// Understanding is what an ACK that was answered with a correction
	// said the agent understood: the next check judges it with the rest.
	Understanding string `json:"understanding,omitempty"`
}

// DeliveryFailed records the end of a delivery that was never acknowledged.
type DeliveryFailed struct {
	ID       string `json:"id"`
	Reason   string `json:"reason"`
	Attempts int    `json:"attempts"`
}

// DeliveryCancelled records a delivery ended by the caller, the operation
// or the rule that one task has one assignee.
type DeliveryCancelled struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// DeliveryReassigned records a task delegation passed to another agent; a
// DeliverySent for NewID follows.
type DeliveryReassigned struct {
	ID    string `json:"id"`
	From  string `json:"from"`
	To    string `json:"to"`
	NewID string `json:"new_id"`
}

// DeliveryEscalated records a delivery the user must decide about.
type DeliveryEscalated struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// OperationStarted records a new operation; a DeliverySent per agent
// follows.
type OperationStarted struct {
	Operation Operation `json:"operation"`
}

// OperationReminder records a reminder sent to one agent of an operation.
type OperationReminder struct {
	ID        string        `json:"id"`
	Delivery  string        `json:"delivery"`
	Number    int           `json:"number"`
	Tone      string        `json:"tone"`
	Remaining time.Duration `json:"remaining"`
}

// OperationReply records an agent's answer to an operation.
type OperationReply struct {
	ID       string `json:"id"`
	Delivery string `json:"delivery"`
	Answer   string `json:"answer"`
	Text     string `json:"text,omitempty"`
	// Deadline is the agent's new deadline after a granted extension.
	Deadline time.Time `json:"deadline,omitzero"`
}

// OperationStateChanged records an operation's new state.
type OperationStateChanged struct {
	ID              string         `json:"id"`
	From            OperationState `json:"from"`
	To              OperationState `json:"to"`
	Reason          string         `json:"reason,omitempty"`
	TimeoutOccurred bool           `json:"timeout_occurred,omitempty"`
	ProceededAnyway bool           `json:"proceeded_anyway,omitempty"`
	ExitCode        *int           `json:"exit_code,omitempty"`
	Output          string         `json:"output,omitempty"`
	// Results say what an operation on agents did to each.
	Results []OperationResult `json:"results,omitempty"`
}

func (PoliciesSet) EventType() string           { return TypePoliciesSet }
func (AgentRegistered) EventType() string       { return TypeAgentRegistered }
func (AgentStatusChanged) EventType() string    { return TypeAgentStatus }
func (AgentTokenSet) EventType() string         { return TypeAgentToken }
func (AgentRemoved) EventType() string          { return TypeAgentRemoved }
func (AgentSessionEnded) EventType() string     { return TypeAgentSessionEnded }
func (AgentCycle) EventType() string            { return TypeAgentCycle }
func (AgentPermission) EventType() string       { return TypeAgentPermission }
func (DeliveryQueued) EventType() string        { return TypeDeliveryQueued }
func (DeliverySent) EventType() string          { return TypeDeliverySent }
func (DeliveryRetried) EventType() string       { return TypeDeliveryRetried }
func (DeliveryNotice) EventType() string        { return TypeDeliveryNotice }
func (DeliveryDeferred) EventType() string      { return TypeDeliveryDeferred }
func (DeliveryAcknowledged) EventType() string  { return TypeDeliveryAcknowledged }
func (DeliveryClarifying) EventType() string    { return TypeDeliveryClarifying }
func (DeliveryReply) EventType() string         { return TypeDeliveryReply }
func (DeliveryFailed) EventType() string        { return TypeDeliveryFailed }
func (DeliveryCancelled) EventType() string     { return TypeDeliveryCancelled }
func (DeliveryReassigned) EventType() string    { return TypeDeliveryReassigned }
func (DeliveryEscalated) EventType() string     { return TypeDeliveryEscalated }
func (OperationStarted) EventType() string      { return TypeOperationStarted }
func (OperationReminder) EventType() string     { return TypeOperationReminder }
func (OperationReply) EventType() string        { return TypeOperationReply }
func (OperationStateChanged) EventType() string { return TypeOperationState }

var decoders = map[string]func([]byte) (EventData, error){}

func register[T EventData]() {
	var zero T
	decoders[zero.EventType()] = func(b []byte) (EventData, error) {
		var v T
		err := json.Unmarshal(b, &v)
		return v, err
	}
}

func init() {
	register[PoliciesSet]()
	register[AgentRegistered]()
	register[AgentStatusChanged]()
	register[AgentTokenSet]()
	register[AgentRemoved]()
	register[AgentSessionEnded]()
	register[AgentCycle]()
	register[AgentPermission]()
	register[DeliveryQueued]()
	register[DeliverySent]()
	register[DeliveryRetried]()
	register[DeliveryNotice]()
	register[DeliveryDeferred]()
	register[DeliveryAcknowledged]()
	register[DeliveryClarifying]()
	register[DeliveryReply]()
	register[DeliveryFailed]()
	register[DeliveryCancelled]()
	register[DeliveryReassigned]()
	register[DeliveryEscalated]()
	register[OperationStarted]()
	register[OperationReminder]()
	register[OperationReply]()
	register[OperationStateChanged]()
}

// DecodeEventData decodes the JSON payload of an event of the given type.
func DecodeEventData(typ string, data []byte) (EventData, error) {
	decode, ok := decoders[typ]
	if !ok {
		return nil, fmt.Errorf("core: unknown event type %q", typ)
	}
	v, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("core: decode %s: %w", typ, err)
	}
	return v, nil
}
