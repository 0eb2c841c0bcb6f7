package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"wilco/core"
	"wilco/runtime"
	"wilco/store"
	"wilco/wire"
)

// errorTable is the one place that maps every error to its HTTP status and
// error.code: core refusals by their core.Code, the server's own errors by
// theirs, an oversize body, a stopped runtime, and anything else (a bug or
// an I/O failure) as internal.
var errorTable = []struct {
	code   wire.Code
	status int
	match  func(error) bool
}{
	{wire.CodeInvalidArgument, http.StatusBadRequest, isCode(core.Invalid, wire.CodeInvalidArgument)},
	{wire.CodeUnauthenticated, http.StatusUnauthorized, isCode("", wire.CodeUnauthenticated)},
	{wire.CodePermissionDenied, http.StatusForbidden, isCode(core.PermissionDenied, wire.CodePermissionDenied)},
	{wire.CodeNotFound, http.StatusNotFound, isCode(core.NotFound, wire.CodeNotFound)},
	{wire.CodeMethodNotAllowed, http.StatusMethodNotAllowed, isCode("", wire.CodeMethodNotAllowed)},
	{wire.CodeConflict, http.StatusConflict, isCode(core.Conflict, wire.CodeConflict)},
	{wire.CodeTooLarge, http.StatusRequestEntityTooLarge, func(err error) bool {
		var mb *http.MaxBytesError
		return errors.As(err, &mb) || isCode("", wire.CodeTooLarge)(err)
	}},
	{wire.CodeUnavailable, http.StatusServiceUnavailable, func(err error) bool {
		return errors.Is(err, runtime.ErrClosed) || errors.Is(err, runtime.ErrStopped) || errors.Is(err, runtime.ErrStandby) ||
			errors.Is(err, store.ErrLeaseLost) || errors.Is(err, context.Canceled) ||
			errors.Is(err, context.DeadlineExceeded) || isCode("", wire.CodeUnavailable)(err)
	}},
}

// isCode matches a core refusal of code c, or a server error of code s.
func isCode(c core.Code, s wire.Code) func(error) bool {
	return func(err error) bool {
		if c != "" && core.CodeOf(err) == c {
			return true
		}
		var e *Error
		return errors.As(err, &e) && e.Code == s
	}
}

// classify returns the status and code of err.
func classify(err error) (int, wire.Code) {
	for _, row := range errorTable {
		if row.match(err) {
			return row.status, row.code
		}
	}
	return http.StatusInternalServerError, wire.CodeInternal
}

// Error is an error of the server's own, with its code. Handlers (and the
// routes other packages plug in) may also return a *core.Error, which the
// table maps by its core.Code.
type Error struct {
	Code wire.Code
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Errorf returns an *Error of the given code.
func Errorf(code wire.Code, format string, args ...any) error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

func invalidf(format string, args ...any) error {
	return Errorf(wire.CodeInvalidArgument, format, args...)
}

func notFoundf(format string, args ...any) error { return Errorf(wire.CodeNotFound, format, args...) }

// message is what the client is told. An internal error's text may hold
// paths or driver messages: it goes to the log, not to the client.
func message(err error, code wire.Code) string {
	switch code {
	case wire.CodeInternal:
		return "internal error; see the server log"
	case wire.CodeTooLarge:
		return fmt.Sprintf("request body is larger than %d bytes", MaxBody)
	case wire.CodeUnavailable:
		if errors.Is(err, runtime.ErrClosed) {
			return "wilco is shutting down"
		}
		if errors.Is(err, runtime.ErrStandby) {
			return "this node is a standby: it answers reads, and changes go to the active node"
		}
		if errors.Is(err, store.ErrLeaseLost) {
			return "this node lost the repository's lease to another node: send the request again (the client follows the active node)"
		}
		if errors.Is(err, runtime.ErrStopped) {
			// The failure itself may name files or the database: it is
			// in the server's log.
			return "wilco's loop stopped after a failure (see the server's log; GET /healthz answers 503 too): restart wilco"
		}
	}
	return err.Error()
}

// WriteError writes err as the API's error response, with the status
// and code of the error table.
func WriteError(w http.ResponseWriter, err error) {
	status, code := classify(err)
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="wilco"`)
	}
	WriteJSON(w, status, wire.NewError(code, message(err, code)))
}
