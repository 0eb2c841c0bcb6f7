package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Error codes of the API, as they appear in
// APIError.Code.
const (
	CodeInvalidArgument  = "invalid_argument"
	CodeUnauthenticated  = "unauthenticated"
	CodePermissionDenied = "permission_denied"
	CodeNotFound         = "not_found"
	CodeConflict         = "conflict"
	CodeTooLarge         = "too_large"
	// CodeInternal, CodeUnavailable and CodeUnknown are given to answers
	// that carry no API error body.
	CodeInternal    = "internal"
	CodeUnavailable = "unavailable"
	CodeUnknown     = "unknown"
)

// APIError is an error the server answered with: the HTTP status, and the
// code and message of the API's error body
// {"error": {"code": "...", "message": "..."}}.
type APIError struct {
	Status  int
	Code    string
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
		return e.Code
	}
	return e.Code + ": " + e.Message
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
func IsCode(err error, code string) bool {
	var e *APIError
	return errors.As(err, &e) && e.Code == code
}

// IsNotFound reports whether err is an *APIError with code not_found.
func IsNotFound(err error) bool { return IsCode(err, CodeNotFound) }

// codeForStatus is the API's code for a status, for answers without
// an error body.
func codeForStatus(status int) string {
	switch status {
	case http.StatusBadRequest:
		return CodeInvalidArgument
	case http.StatusUnauthorized:
		return CodeUnauthenticated
	case http.StatusForbidden:
		return CodePermissionDenied
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		return CodeNotFound
	case http.StatusConflict:
		return CodeConflict
	case http.StatusRequestEntityTooLarge:
		return CodeTooLarge
	case http.StatusServiceUnavailable, http.StatusBadGateway, http.StatusGatewayTimeout:
		return CodeUnavailable
	}
	if status >= 500 {
		return CodeInternal
	}
	return CodeUnknown
}

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 64 << 10

// decodeError builds the APIError of a non-2xx answer from its body.
func decodeError(method, path string, status int, body []byte) *APIError {
	e := &APIError{Status: status, Method: method, Path: path}
	var wire struct {
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &wire) == nil && wire.Error != nil && wire.Error.Code != "" {
		e.Code, e.Message, e.Structured = wire.Error.Code, wire.Error.Message, true
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
