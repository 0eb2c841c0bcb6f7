package core

import (
	"errors"
	"fmt"
)

// Code classifies why the core refused a command. The server maps each
// code to one HTTP status and error code (one table, in package server).
type Code string

// Refusal codes.
const (
	Invalid          Code = "invalid_argument"  // the command itself is malformed
	NotFound         Code = "not_found"         // it names something that does not exist
	Conflict         Code = "conflict"          // the current state does not allow it
	PermissionDenied Code = "permission_denied" // the caller may not do it
)

// Error is a refused command. Its message says what was wrong.
type Error struct {
	Code Code
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// CodeOf returns the code of a core error, or "" for any other error.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func invalidf(format string, args ...any) error {
	return &Error{Code: Invalid, Msg: fmt.Sprintf(format, args...)}
}

func notFoundf(format string, args ...any) error {
	return &Error{Code: NotFound, Msg: fmt.Sprintf(format, args...)}
}

func conflictf(format string, args ...any) error {
	return &Error{Code: Conflict, Msg: fmt.Sprintf(format, args...)}
}

func deniedf(format string, args ...any) error {
	return &Error{Code: PermissionDenied, Msg: fmt.Sprintf(format, args...)}
}

// within is err said of a part of a command (tasks[2]: …), with its code.
func within(part string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return &Error{Code: e.Code, Msg: part + ": " + e.Msg}
	}
	return fmt.Errorf("%s: %w", part, err)
}
