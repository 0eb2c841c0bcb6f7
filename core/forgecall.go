package core

import "time"

// The forge's traffic on record: every call that wrote to the forge (a
// pull request opened or merged, a comment) and every call that failed (no
// answer, an error status, a rate limit) is an event. The reads that went
// well are not, one by one — following a pull request is a few of them
// every land.poll — but what they saw is, as the events it caused (a
// check failed, a review, a comment taken).

// Forge event types.
const (
	// TypeForgeCall: a call to the forge's API that wrote or failed.
	TypeForgeCall = "forge.call"
)

// ForgeCall is one call to the forge's API: its method and path (never
// the token), the answer's status (0 for none), which attempt it was, how
// long it took, and the error when it failed.
type ForgeCall struct {
	Method     string `json:"method"`
	Path       string `json:"path"`
	Status     int    `json:"status,omitempty"`
	Attempt    int    `json:"attempt"`
	DurationMS int64  `json:"duration_ms"`
	Error      string `json:"error,omitempty"`
}

func (ForgeCall) EventType() string { return TypeForgeCall }

func init() { register[ForgeCall]() }

// ForgeCalled reports a call to the forge's API.
type ForgeCalled struct {
	Call ForgeCall
}

func (ForgeCalled) isOutcome() {}

// IsForgeRecord says whether a call to the forge is recorded: it wrote, or
// it failed (no answer, or a status of 400 or more).
func IsForgeRecord(method string, status int, failed bool) bool {
	return failed || status == 0 || status >= 400 || method != "GET"
}

// forgeCalled records a call to the forge; it changes nothing else.
func (s *State) forgeCalled(now time.Time, o ForgeCalled) error {
	if o.Call.Method == "" || o.Call.Path == "" {
		return invalidf("a forge call needs its method and path")
	}
	s.emit(norm(now), "", "", o.Call)
	return nil
}
