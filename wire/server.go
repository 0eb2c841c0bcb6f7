package wire

import "time"

// Health is the answer of GET /healthz.
type Health struct {
	Status string `json:"status" doc:"ok while the server runs; standby on a standby node of a PostgreSQL store."`
	Seq    uint64 `json:"seq" doc:"The seq of the last durable event: following the event stream after it shows what happens from now on."`
	Node   string `json:"node,omitempty" doc:"A standby node: its id."`
	Active string `json:"active,omitempty" doc:"A standby node: the URL of the active node, when one holds the lease."`
}

// Login logs in to the page: POST /v1/session.
type Login struct {
	Code  string `json:"code,omitempty" doc:"The code of a one-time login link (after #login= in its URL)."`
	Token string `json:"token,omitempty" doc:"The admin token."`
}

// Session is the caller's session.
type Session struct {
	Via       SessionVia `json:"via"`
	CSRFToken string     `json:"csrf_token,omitempty" doc:"Send it as X-CSRF-Token with every state-changing request made with the cookie."`
	ExpiresAt *time.Time `json:"expires_at"`
}

// LoginLink is a one-time login link to the page: POST /v1/session/links.
type LoginLink struct {
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expires_at"`
}

// OpenAPI is an OpenAPI 3.1 document: GET /openapi.json.
type OpenAPI map[string]any

// JSONSchema is an object.
func (OpenAPI) JSONSchema(*Schemas) map[string]any {
	return map[string]any{"type": "object", "description": "An OpenAPI 3.1 document."}
}

// MCPMessage is a JSON-RPC 2.0 message of the Model Context Protocol:
// POST /mcp.
type MCPMessage map[string]any

// JSONSchema is an object.
func (MCPMessage) JSONSchema(*Schemas) map[string]any {
	return map[string]any{"type": "object", "description": "A JSON-RPC 2.0 message of the Model Context Protocol (initialize, tools/list, tools/call, ping)."}
}
