package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"wilco/wire"
)

// CodeUnknown is the code of an answer that carries no API error body
// and whose status says nothing more (the API's own codes are wire.Code's).
const CodeUnknown wire.Code = "unknown"

// APIError is an error the server answered with: the HTTP status, and the
// code and message of the API's error body
// {"error": {"code": "...", "message": "..."}}.
type APIError struct {
	Status  int
	Code    wire.Code
	Message string
	// Method and Path are the request that failed.
	Method string
	Path   string
	// Structured is false when the answer carried no API error body
	// (a proxy's page, a route this server does not serve); Code is then
	// derived from Status and Message is the body's text.
	Structured bool
}

func (e *APIError) Error() string {
	if e.Message == "" {
		return string(e.Code)
	}
	return string(e.Code) + ": " + e.Message
}

// NoRoute reports whether the server has no such route at all, as an
// older server answers a newer client, rather than a missing resource: a
// 404 without the API's error body, or one whose message says "no
// route" (wilco's own server), or a 405.
func (e *APIError) NoRoute() bool {
	switch e.Status {
	case http.StatusMethodNotAllowed:
		return true
	case http.StatusNotFound:
		return !e.Structured || strings.HasPrefix(e.Message, "no route ")
	}
	return false
}

// IsCode reports whether err is an *APIError with the given code.
func IsCode(err error, code wire.Code) bool {
	var e *APIError
	return errors.As(err, &e) && e.Code == code
}

// IsNotFound reports whether err is an *APIError with code not_found.
func IsNotFound(err error) bool { return IsCode(err, wire.CodeNotFound) }

// codeForStatus is the API's code for a status, for answers without
// an error body.
func codeForStatus(status int) wire.Code {
	switch status {
	case http.StatusBadRequest:
		return wire.CodeInvalidArgument
	case http.StatusUnauthorized:
		return wire.CodeUnauthenticated
	case http.StatusForbidden:
		return wire.CodePermissionDenied
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		return wire.CodeNotFound
	case http.StatusConflict:
		return wire.CodeConflict
	case http.StatusRequestEntityTooLarge:
		return wire.CodeTooLarge
	case http.StatusServiceUnavailable, http.StatusBadGateway, http.StatusGatewayTimeout:
		return wire.CodeUnavailable
	}
	if status >= 500 {
		return wire.CodeInternal
	}
	return CodeUnknown
}

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 64 << 10

// decodeError builds the APIError of a non-2xx answer from its body.
func decodeError(method, path string, status int, body []byte) *APIError {
	e := &APIError{Status: status, Method: method, Path: path}
	var answer wire.Error
	if json.Unmarshal(body, &answer) == nil && answer.Error.Code != "" {
		e.Code, e.Message, e.Structured = answer.Error.Code, answer.Error.Message, true
		return e
	}
	e.Code = codeForStatus(status)
	msg := strings.TrimSpace(string(body))
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	e.Message = msg
	return e
}

// ErrNoToken is returned by FromEnv when no admin token is found.
var ErrNoToken = errors.New(`client: no admin token: set WILCO_TOKEN or run "wilco init" (it writes .wilco/token)`)

// ErrNoAgentToken is returned by AgentFromEnv when WILCO_AGENT_TOKEN is not set.
var ErrNoAgentToken = errors.New("client: no agent token: set WILCO_AGENT_TOKEN")

// TransportError is a request that got no answer from the server: it could
// not connect, or the connection broke.
type TransportError struct {
	Addr string
	Err  error
}

func (e *TransportError) Error() string {
	return fmt.Sprintf("cannot reach wilco at %s: %v", e.Addr, e.Err)
}

func (e *TransportError) Unwrap() error { return e.Err }
