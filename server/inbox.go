package server

import (
	"context"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"wilco/core"
	"wilco/prompt"
	"wilco/wire"
)

// wakes are the server's own inbox signals, for what the core queues
// without a Wake effect (an instruction waits for the agent's next
// dispatch cycle, and an agent long-polling is waiting for that cycle).
type wakes struct {
	mu sync.Mutex
	ch map[string]chan struct{}
	// parked counts the long-polls waiting, per agent.
	parked map[string]int
}

func newWakes() *wakes { return &wakes{ch: map[string]chan struct{}{}, parked: map[string]int{}} }

func (w *wakes) park(agent string, n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.parked[agent] += n
}

// waiting reports whether a long-poll of the agent is waiting.
func (s *Server) waiting(agent string) bool {
	s.wakes.mu.Lock()
	defer s.wakes.mu.Unlock()
	return s.wakes.parked[agent] > 0
}

func (w *wakes) signal(agent string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	ch, ok := w.ch[agent]
	if !ok {
		ch = make(chan struct{})
		w.ch[agent] = ch
	}
	return ch
}

func (w *wakes) wake(agent string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ch, ok := w.ch[agent]; ok {
		close(ch)
		delete(w.ch, agent)
	}
}

// inbox is one dispatch cycle of the calling agent: what waits
// in its inbox, its new instructions, then its unacknowledged ones again.
// When the cycle finds nothing it waits up to ?wait= for something to
// arrive, and runs the cycle again then. The signals are taken before each
// cycle, so that nothing arriving between the cycle and the wait is missed.
func (s *Server) inbox(w http.ResponseWriter, r *http.Request) error {
	wait, err := s.waitParam(r)
	if err != nil {
		return err
	}
	agent := AgentName(r.Context())
	msgs, err := s.poll(r, agent, wait)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, wire.Inbox{Messages: inboxMessages(s.whereToWork(msgs), s.orch)})
	return nil
}

// Push hands over what waits for agent, as a transport that pushes an
// agent's messages (package natsbox) does when one lands: core.Push, not
// the agent asking, so that the agent is not counted as heard from.
func (s *Server) Push(ctx context.Context, agent string) ([]wire.InboxMessage, error) {
	msgs, err := do(ctx, s, func(c *core.State, now time.Time) ([]core.InboxMessage, error) {
		return c.Push(now, agent)
	})
	return inboxMessages(s.whereToWork(msgs), s.orch), err
}

// whereToWork tells a mailbox agent where a task worked in parallel works:
// each of the task's messages (its delegation, a retry, a reminder, a
// correction; a scout's question and a review asked from it) begins with
// the worktree's absolute path and its branch, and what the agent must do
// there — the agent runs in its own environment, which wilco does not
// start in the worktree as it does an exec or a tmux agent.
func (s *Server) whereToWork(msgs []core.InboxMessage) []core.InboxMessage {
	for i, m := range msgs {
		if m.Worktree == "" || m.TaskID == "" || m.Type == string(core.SendCancel) {
			continue
		}
		dir := m.Worktree
		if s.root != "" {
			dir = filepath.Join(s.root, filepath.FromSlash(m.Worktree))
		}
		read := m.Type == string(core.TypeScoutQuery) || m.Type == string(core.TypeReview)
		msgs[i].Body = prompt.Worktree(dir, core.TaskBranch(m.TaskID), m.TaskID, read) + "\n\n" + m.Body
	}
	return msgs
}

// poll runs dispatch cycles for agent until one returns messages or wait
// has passed.
func (s *Server) poll(r *http.Request, agent string, wait time.Duration) ([]core.InboxMessage, error) {
	var timer <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timer = t.C
	}
	for {
		coreSig, ownSig := s.rt.InboxSignal(agent), s.wakes.signal(agent)
		msgs, err := do(r.Context(), s, func(c *core.State, now time.Time) ([]core.InboxMessage, error) {
			return c.Cycle(now, agent)
		})
		if err != nil || len(msgs) > 0 || timer == nil {
			return msgs, err
		}
		if stop, err := s.park(r, agent, coreSig, ownSig, timer); stop {
			return nil, err
		}
	}
}

// park waits for a signal; stop says the poll is over.
func (s *Server) park(r *http.Request, agent string, coreSig, ownSig <-chan struct{}, timer <-chan time.Time) (stop bool, err error) {
	s.wakes.park(agent, 1)
	defer s.wakes.park(agent, -1)
	select {
	case <-coreSig:
	case <-ownSig:
	case <-timer:
		return true, nil
	case <-s.stopping:
		return true, nil
	case <-r.Context().Done():
		return true, r.Context().Err()
	}
	return false, nil
}

// reply interprets the calling agent's answer with the acknowledgment
// language (core.Reply): it may answer only what was sent to it.
func (s *Server) reply(w http.ResponseWriter, r *http.Request) error {
	var req wire.Reply
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	data := req.Data
	if string(data) == "null" {
		data = nil
	}
	if len(data) > 0 && data[0] != '{' {
		return invalidf("data: want a JSON object of one of the reply forms")
	}
	in, err := s.interpret(r, core.ReplyInput{
		Agent: AgentName(r.Context()), InReplyTo: req.InReplyTo, Text: req.Text, Type: string(req.Type), Data: data,
	})
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusAccepted, wire.Interpreted{Interpreted: interpretation(in)})
	return nil
}

// interpret runs an agent's reply ahead of any backlog (it is what the
// sender waits for).
func (s *Server) interpret(r *http.Request, in core.ReplyInput) (core.Interpretation, error) {
	v, err := s.rt.DoUrgent(r.Context(), func(c *core.State, now time.Time) (any, error) {
		return c.Reply(now, in)
	})
	if err != nil {
		return core.Interpretation{}, err
	}
	return v.(core.Interpretation), nil
}

// waitParam is a long-poll's ?wait= (its only query parameter): a Go
// duration, 0 when absent, at most Options.MaxWait.
func (s *Server) waitParam(r *http.Request) (time.Duration, error) {
	if err := checkQuery(r, "wait"); err != nil {
		return 0, err
	}
	v := r.URL.Query().Get("wait")
	if v == "" {
		return 0, nil
	}
	wait, err := duration("wait", v)
	if err != nil {
		return 0, err
	}
	if wait > s.opts.MaxWait {
		return 0, invalidf("wait: at most %s, got %q", s.opts.MaxWait, v)
	}
	return wait, nil
}
