package exec

import (
	"context"
	"slices"
	"sync"

	"wilco/ack"
	"wilco/adapter"
	"wilco/core"
)

// fakeReporter records what the adapter reports and signals each call.
type fakeReporter struct {
	mu     sync.Mutex
	calls  []string // "reply" or "end", in order
	accept func(core.ReplyInput) (core.Interpretation, error)

	replies chan core.ReplyInput
	ends    chan core.TurnResult
}

func newReporter() *fakeReporter {
	return &fakeReporter{replies: make(chan core.ReplyInput, 64), ends: make(chan core.TurnResult, 64)}
}

// acceptReceived acknowledges an ACK that says RECEIVED, CONFIRMED or
// QUEUED, as the core does for an Understanding it finds right.
func acceptReceived(in core.ReplyInput) (core.Interpretation, error) {
	r, err := ack.Parse(in.Text)
	if err != nil {
		return core.Interpretation{}, err
	}
	out := core.Interpretation{Kind: string(r.Kind), Status: string(r.Status)}
	if r.Kind == ack.KindAck && (r.Status == ack.Received || r.Status == ack.Confirmed || r.Status == ack.Queued) {
		out.Acknowledged = []string{in.InReplyTo}
	}
	return out, nil
}

func (f *fakeReporter) Reply(_ context.Context, in core.ReplyInput) (core.Interpretation, error) {
	f.mu.Lock()
	f.calls = append(f.calls, "reply")
	accept := f.accept
	f.mu.Unlock()
	f.replies <- in
	if accept == nil {
		accept = acceptReceived
	}
	return accept(in)
}

// Report records the ends of turns; the rest of the reports are not
// looked at.
func (f *fakeReporter) Report(_ context.Context, rep adapter.Report) error {
	e, ok := rep.(adapter.TurnEnded)
	if !ok {
		return nil
	}
	r := e.Result
	f.mu.Lock()
	f.calls = append(f.calls, "end")
	f.mu.Unlock()
	f.ends <- r
	return nil
}

func (f *fakeReporter) callList() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}
