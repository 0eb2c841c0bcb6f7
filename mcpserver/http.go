package mcpserver

import (
	"mime"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxBody bounds the body of one request over HTTP.
const maxBody = 1 << 20

// Handler serves wilco's MCP tools over MCP's streamable HTTP transport to
// one request, for the agent whose replies rep sends and its task (wilco
// authenticated the request and found them before).
//
// The server is stateless: no session (any node of wilco's, or a restarted
// one, answers any request), the protocol version negotiated by initialize
// and checked from the MCP-Protocol-Version header, and every answer one
// JSON response (wilco's tools send nothing to the client between a
// request and its answer). A notification gets 202; GET (a stream of the
// server's own messages) is not offered. A client that asks for JSON only,
// or names no media type, gets JSON as every other client: the transport
// asks clients to accept an event stream too, which this server never
// sends.
//
// The SDK's protection against DNS rebinding (a non-local Host on a
// loopback connection is refused) is off: every request carries an agent's
// token, which a page a browser was tricked into loading does not have,
// and wilco may be reached through a proxy on the same host.
func Handler(rep Replier, task Task, version string) http.Handler {
	opts := &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, DisableLocalhostProtection: true, MaxRequestBodyBytes: maxBody}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			if jsonOK, streamOK := accepts(r.Header.Values("Accept")); !streamOK && (jsonOK || r.Header.Get("Accept") == "") {
				r.Header.Set("Accept", "application/json, text/event-stream")
			}
		}
		srv := New(rep, task, version)
		mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, opts).ServeHTTP(w, r)
	})
}

// accepts says whether an Accept header takes JSON and an event stream.
func accepts(values []string) (jsonOK, streamOK bool) {
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			switch mt {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}
