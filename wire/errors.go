package wire

// Code is the error.code of an error answer.
type Code string

// Error codes. The first six are the API's general ones; the others name
// particular conditions.
const (
	CodeInvalidArgument  Code = "invalid_argument"
	CodeUnauthenticated  Code = "unauthenticated"
	CodePermissionDenied Code = "permission_denied"
	CodeNotFound         Code = "not_found"
	CodeConflict         Code = "conflict"
	CodeTooLarge         Code = "too_large"
	CodeMethodNotAllowed Code = "method_not_allowed"
	CodeUnavailable      Code = "unavailable"
	CodeInternal         Code = "internal"
	// CodeNotActive is a standby node's redirect (307) to the active node
	// of a PostgreSQL store.
	CodeNotActive Code = "not_active"
)

// Values are the error codes.
func (Code) Values() []string {
	return values(CodeInvalidArgument, CodeUnauthenticated, CodePermissionDenied, CodeNotFound, CodeConflict, CodeTooLarge,
		CodeMethodNotAllowed, CodeUnavailable, CodeInternal, CodeNotActive)
}

// Error is the API's error answer: {"error": {"code", "message"}}.
type Error struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail says what went wrong.
type ErrorDetail struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
}

// NewError is the error answer of code with message.
func NewError(code Code, message string) Error {
	return Error{Error: ErrorDetail{Code: code, Message: message}}
}
