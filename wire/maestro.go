package wire

import "encoding/json"

// AI Maestro compatibility: the bodies of /api/messages and
// /api/hosts/identity as AI Maestro serves them (23blocks-OS/ai-maestro,
// lib/messageQueue.ts and app/api/messages/route.ts), so that its agents'
// scripts work unchanged. Their field names are AI Maestro's.

// MaestroMessage is a message in AI Maestro's shape (lib/messageQueue.ts,
// Message).
type MaestroMessage struct {
	ID        string            `json:"id"`
	From      string            `json:"from"`
	FromAlias string            `json:"fromAlias,omitempty"`
	FromHost  string            `json:"fromHost,omitempty"`
	To        string            `json:"to"`
	ToAlias   string            `json:"toAlias,omitempty"`
	ToHost    string            `json:"toHost,omitempty"`
	Timestamp string            `json:"timestamp" format:"date-time" doc:"JavaScript's toISOString: RFC 3339 with milliseconds."`
	Subject   string            `json:"subject"`
	Priority  MaestroPriority   `json:"priority"`
	Status    MaestroStatus     `json:"status"`
	Content   MaestroRawContent `json:"content"`
	InReplyTo string            `json:"inReplyTo,omitempty"`
}

// MaestroSummary is an entry of a listing (lib/messageQueue.ts,
// MessageSummary).
type MaestroSummary struct {
	ID        string          `json:"id"`
	From      string          `json:"from"`
	FromAlias string          `json:"fromAlias,omitempty"`
	FromHost  string          `json:"fromHost,omitempty"`
	To        string          `json:"to"`
	ToAlias   string          `json:"toAlias,omitempty"`
	ToHost    string          `json:"toHost,omitempty"`
	Timestamp string          `json:"timestamp" format:"date-time"`
	Subject   string          `json:"subject"`
	Priority  MaestroPriority `json:"priority"`
	Status    MaestroStatus   `json:"status"`
	Type      string          `json:"type" doc:"The content's type."`
	Preview   string          `json:"preview" doc:"The content's message, cut to 100 characters."`
}

// MaestroContent is a message's content: what it is, its text, and a
// context of the sender's. Agents may add fields of their own.
type MaestroContent struct {
	Type    string          `json:"type"`
	Message string          `json:"message"`
	Context json.RawMessage `json:"context,omitempty"`
}

// AdditionalProperties says that a content may carry fields it does not
// name: they are kept.
func (MaestroContent) AdditionalProperties() bool { return true }

// MaestroRawContent is a MaestroContent kept as it was sent, with the
// fields an agent added.
type MaestroRawContent json.RawMessage

// MarshalJSON writes the content as it is.
func (c MaestroRawContent) MarshalJSON() ([]byte, error) { return json.RawMessage(c).MarshalJSON() }

// UnmarshalJSON keeps the content as it is.
func (c *MaestroRawContent) UnmarshalJSON(b []byte) error {
	return (*json.RawMessage)(c).UnmarshalJSON(b)
}

// JSONSchema is MaestroContent's.
func (MaestroRawContent) JSONSchema(s *Schemas) map[string]any { return s.Ref(MaestroContent{}) }

// MaestroSend is POST /api/messages's body (AI Maestro's
// SendMessageParams).
type MaestroSend struct {
	From         string            `json:"from"`
	To           string            `json:"to"`
	Subject      string            `json:"subject"`
	Content      MaestroRawContent `json:"content"`
	Priority     MaestroPriority   `json:"priority,omitempty"`
	InReplyTo    string            `json:"inReplyTo,omitempty"`
	FromHost     string            `json:"fromHost,omitempty"`
	ToHost       string            `json:"toHost,omitempty"`
	FromAlias    string            `json:"fromAlias,omitempty"`
	ToAlias      string            `json:"toAlias,omitempty"`
	FromLabel    string            `json:"fromLabel,omitempty"`
	ToLabel      string            `json:"toLabel,omitempty"`
	FromVerified *bool             `json:"fromVerified,omitempty"`
}

// AdditionalProperties says that fields it does not name are ignored, as
// AI Maestro does: its scripts send more than it reads.
func (MaestroSend) AdditionalProperties() bool { return true }

// MaestroSent is the answer to POST /api/messages.
type MaestroSent struct {
	Message      MaestroMessage  `json:"message"`
	Notified     bool            `json:"notified"`
	Interpreted  *Interpretation `json:"interpreted,omitempty" doc:"What wilco took a message to the orchestrator to mean (as POST /v1/inbox/replies)."`
	WilcoMessage *Message        `json:"wilco_message,omitempty" doc:"A message sent as the orchestrator: wilco's message (as POST /v1/messages)."`
}

// MaestroList is a listing of an inbox or sent box: GET
// /api/messages?agent=.
type MaestroList struct {
	Messages []MaestroSummary `json:"messages"`
	Limit    int              `json:"limit"`
}

// MaestroAgent is an agent as AI Maestro resolves it.
type MaestroAgent struct {
	AgentID     string `json:"agentId"`
	Alias       string `json:"alias"`
	DisplayName string `json:"displayName"`
	SessionName string `json:"sessionName"`
	HostID      string `json:"hostId"`
	HostURL     string `json:"hostUrl"`
	Name        string `json:"name,omitempty" doc:"action=search only."`
	Label       string `json:"label,omitempty" doc:"action=search only."`
}

// MaestroResolved is GET /api/messages?action=resolve.
type MaestroResolved struct {
	Resolved MaestroAgent `json:"resolved"`
}

// MaestroUnresolved is GET /api/messages?action=resolve of an agent
// nobody knows (404).
type MaestroUnresolved struct {
	Error    string        `json:"error"`
	Code     Code          `json:"code"`
	Resolved *MaestroAgent `json:"resolved" doc:"Always null."`
}

// MaestroSearch is GET /api/messages?action=search.
type MaestroSearch struct {
	Query   string         `json:"query"`
	Count   int            `json:"count"`
	Results []MaestroAgent `json:"results"`
}

// MaestroCount is GET /api/messages?action=unread-count or sent-count.
type MaestroCount struct {
	Count int `json:"count"`
}

// MaestroStats is GET /api/messages?action=stats.
type MaestroStats struct {
	Unread     int            `json:"unread"`
	Total      int            `json:"total"`
	ByPriority map[string]int `json:"byPriority"`
}

// MaestroOwners is GET /api/messages?action=agents (or sessions): the
// agents whose inbox holds messages.
type MaestroOwners struct {
	Agents   []string `json:"agents"`
	Sessions []string `json:"sessions"`
}

// MaestroIdentity is GET /api/hosts/identity.
type MaestroIdentity struct {
	Host MaestroHost `json:"host"`
}

// MaestroHost is this host as AI Maestro describes one.
type MaestroHost struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	URL         string `json:"url"`
	Description string `json:"description"`
	Version     string `json:"version"`
	Tailscale   bool   `json:"tailscale"`
	IsSelf      bool   `json:"isSelf"`
}

// MaestroSuccess is the answer to PATCH and DELETE /api/messages.
type MaestroSuccess struct {
	Success bool `json:"success"`
}

// MaestroError is an error in AI Maestro's shape, with wilco's code
// beside it.
type MaestroError struct {
	Error string `json:"error"`
	Code  Code   `json:"code"`
}
