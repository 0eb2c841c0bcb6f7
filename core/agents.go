package core

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"time"
)

// Adapters the core knows. Mailbox agents pull their messages in dispatch
// cycles; the others are handed each message (a Deliver effect).
var adapters = map[string]bool{"exec": false, "mailbox": true, "tmux": false, "sim": false}

// AgentSpec describes an agent to register.
type AgentSpec struct {
	Name         string
	Adapter      string
	Capabilities []string
	// Handshake of an exec agent: inline (default), session or none.
	// Other adapters acknowledge by message.
	Handshake string
	// Settings are the adapter's own settings (command, preset…), kept
	// for the shell as they are: an agent created through the API keeps
	// them across restarts.
	Settings []byte
	// FromConfig: the agent comes from wilco.yaml, and is removed when it
	// leaves the file (see RemoveAgentsNotIn).
	FromConfig bool
	// Role is "" for an agent that takes tasks, or RoleScout.
	Role string
	// Instances is how many tasks the agent works at once when tasks are
	// worked in parallel (0: one).
	Instances int
}

// RoleScout is the role of a read-only helper that the agents working on
// tasks consult (wilco ask): it never gets a task.
const RoleScout = "scout"

// Handshakes of exec agents.
const (
	HandshakeInline  = "inline"
	HandshakeSession = "session"
	HandshakeNone    = "none"
)

// validName reports whether s is a usable name or id: 1 to 64 of
// A-Z a-z 0-9 . _ : -.
func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == ':', c == '-':
		default:
			return false
		}
	}
	return true
}

// ValidID reports whether s may name a task, an agent or a plan: 1 to 64
// characters of A-Z a-z 0-9 . _ : -.
func ValidID(s string) bool { return validName(s) }

// Configure sets the policies the core decides with from now on. Open
// deliveries keep the timers they have.
func (s *State) Configure(now time.Time, p Policies) error {
	now = norm(now)
	if err := p.Validate(); err != nil {
		return err
	}
	p.Ack.Timeouts = slices.Clone(p.Ack.Timeouts)
	p.Operation.Reminders = slices.Clone(p.Operation.Reminders)
	if reflect.DeepEqual(p, s.policies) {
		return nil
	}
	s.emit(now, "", "", PoliciesSet{Policies: p})
	return nil
}

// RegisterAgent adds an agent, or updates its adapter and capabilities.
// Registering an agent exactly as it is changes nothing.
func (s *State) RegisterAgent(now time.Time, spec AgentSpec) error {
	now = norm(now)
	if !validName(spec.Name) {
		return invalidf("agent name %q: use 1 to 64 of A-Z a-z 0-9 . _ : -", spec.Name)
	}
	pull, ok := adapters[spec.Adapter]
	if !ok {
		return invalidf("agent %s: adapter %q: must be exec, mailbox, tmux or sim", spec.Name, spec.Adapter)
	}
	for i, c := range spec.Capabilities {
		if !validName(c) {
			return invalidf("agent %s: capabilities[%d] %q: use 1 to 64 of A-Z a-z 0-9 . _ : -", spec.Name, i, c)
		}
	}
	switch spec.Handshake {
	case "":
		if spec.Adapter == "exec" {
			spec.Handshake = HandshakeInline
		}
	case HandshakeInline, HandshakeSession, HandshakeNone:
	default:
		return invalidf("agent %s: handshake %q: must be inline, session or none", spec.Name, spec.Handshake)
	}
	if spec.Role != "" && spec.Role != RoleScout {
		return invalidf("agent %s: role %q: must be scout or nothing", spec.Name, spec.Role)
	}
	if spec.Instances < 0 {
		return invalidf("agent %s: instances must be at least 1, got %d", spec.Name, spec.Instances)
	}
	if len(spec.Settings) > 0 && !json.Valid(spec.Settings) {
		return invalidf("agent %s: settings are not JSON", spec.Name)
	}
	if a, ok := s.agents[spec.Name]; ok && !a.Removed && a.FromConfig == spec.FromConfig && a.Adapter == spec.Adapter && slices.Equal(a.Capabilities, spec.Capabilities) && a.Handshake == spec.Handshake && bytes.Equal(a.Settings, spec.Settings) && a.Role == spec.Role && a.Instances == spec.Instances {
		return nil
	}
	s.emit(now, "", spec.Name, AgentRegistered{Name: spec.Name, Adapter: spec.Adapter, Capabilities: slices.Clone(spec.Capabilities), Pull: pull,
		Handshake: spec.Handshake, Settings: bytes.Clone(spec.Settings), FromConfig: spec.FromConfig, Role: spec.Role, Instances: spec.Instances})
	if a := s.agents[spec.Name]; s.policies.Probe.OnRegister && a.Context == nil {
		s.probe(now, a)
	}
	if s.parallel() {
		// A new agent, or more instances: a queued task waiting for an
		// instance free starts.
		s.schedule(now)
	}
	return nil
}

// SetAgentStatus sets an agent's status by hand (an operator, or an
// operation that hibernates it).
func (s *State) SetAgentStatus(now time.Time, name string, to AgentStatus, reason string) error {
	now = norm(now)
	a, ok := s.agents[name]
	if !ok {
		return notFoundf("no agent %q", name)
	}
	if !to.Valid() {
		return invalidf("status %q: must be available, busy, unresponsive, hibernating or offline", to)
	}
	s.setStatus(now, a, to, reason)
	return nil
}

// RemoveAgent takes an agent out of service: it gets no more work, its
// open deliveries are cancelled, its token stops working, and the task it
// works on (if any) fails its attempt as an execution error, so that the
// debug loop gives it to another agent. Registering the agent again (it is
// back in wilco.yaml, or added over HTTP) brings it back. Removing a
// removed agent changes nothing.
func (s *State) RemoveAgent(now time.Time, name, reason string) error {
	now = norm(now)
	a, ok := s.agents[name]
	if !ok {
		return notFoundf("no agent %q", name)
	}
	if a.Removed {
		return nil
	}
	s.emit(now, "", name, AgentRemoved{Reason: reason})
	if a.EndSession {
		s.effect(StopSession{Agent: name})
	}
	for _, d := range s.openOf(name) {
		if t := s.tasks[d.TaskID]; t != nil && t.Delivery == d.ID && t.State.Holds() {
			continue // the task's own delegation ends with its attempt, below
		}
		s.cancel(now, d, "agent "+name+" was removed")
	}
	for _, h := range s.Holding() {
		t := s.tasks[h.ID]
		if t.Agent != name || !(t.State == AwaitingAck || t.State == TaskClarifying || t.State == Running) || t.Phase == Landing || t.Phase == Preparing {
			continue
		}
		s.effect(StopTurn{TaskID: t.ID, Reason: "agent removed"})
		if d := s.find(t.Delivery); d != nil && !d.State.Terminal() {
			s.cancel(now, d, "agent "+name+" was removed")
		}
		s.failure(now, t, FailureRecord{Attempt: t.Attempt, Timestamp: now, FailureType: ExecutionError,
			ExecutorOutput: ExecutorOutput{Status: "failure", FilesModified: []string{}, Error: "agent " + name + " was removed (" + reason + ") while it worked on the task"}})
	}
	return nil
}

// SetAgentToken records the hash of an agent's new token. A removed agent
// gets none (its token stops working with its removal) until it is
// registered again.
func (s *State) SetAgentToken(now time.Time, name, hash string) error {
	now = norm(now)
	a, ok := s.agents[name]
	if !ok {
		return notFoundf("no agent %q", name)
	}
	if a.Removed {
		return conflictf("agent %q was removed: register it again to give it a token", name)
	}
	if hash == "" {
		return invalidf("agent %s: empty token hash", name)
	}
	s.emit(now, "", name, AgentTokenSet{TokenHash: hash})
	return nil
}

func (s *State) setStatus(now time.Time, a *Agent, to AgentStatus, reason string) {
	if a.Status == to {
		return
	}
	s.emit(now, "", a.Name, AgentStatusChanged{From: a.Status, To: to, Reason: reason})
}

// seen notes that an agent showed a sign of life: an agent marked
// unresponsive, offline or hibernating is available again.
func (s *State) seen(now time.Time, a *Agent, how string) {
	s.firstSeen(now, a, how)
	switch a.Status {
	case Unresponsive, Offline, Hibernating:
		s.setStatus(now, a, Available, how)
	}
}

// pickAgent chooses who takes over a delegation: the first agent by name,
// other than its current and earlier assignees, that is available and has
// every capability the delegation needs — for a task worked in parallel,
// one with an instance free. "" when there is none.
func (s *State) pickAgent(d *Delivery) string {
	names := make([]string, 0, len(s.agents))
	for n := range s.agents {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		a := s.agents[n]
		if n == d.To || a.Removed || slices.Contains(d.Tried(), n) || a.Status != Available || !a.Capable(d.Capabilities()) ||
			d.Type == TypeDelegation && !s.takesTasks(a) {
			continue
		}
		if t := s.tasks[d.TaskID]; d.Type == TypeDelegation && t != nil && t.Worktree != "" && !s.freeInstance(a, t.ID) {
			// A task worked in parallel goes only to an agent with an
			// instance free.
			continue
		}
		return n
	}
	return ""
}

// takesTasks reports whether tasks may go to the agent unasked: not a
// removed agent, nor the reviewer (review.agent), which judges the work of
// the others.
func (s *State) takesTasks(a *Agent) bool {
	return !a.Removed && a.Name != s.policies.Review.Agent && a.Role != RoleScout
}

// openOf is the agent's open deliveries, in id order (the core decides
// the same way every time).
func (s *State) openOf(agent string) []*Delivery {
	out := make([]*Delivery, 0, len(s.open[agent]))
	for _, d := range s.open[agent] {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b *Delivery) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// inService counts the agents not removed.
func (s *State) inService() int {
	n := 0
	for _, a := range s.agents {
		if !a.Removed {
			n++
		}
	}
	return n
}

// RemoveAgentsNotIn removes the agents that came from wilco.yaml and are
// no longer in it (names), in name order, and returns their names.
// Agents added over the API are kept.
func (s *State) RemoveAgentsNotIn(now time.Time, names []string) []string {
	var gone []string
	for n, a := range s.agents {
		if a.FromConfig && !a.Removed && !slices.Contains(names, n) {
			gone = append(gone, n)
		}
	}
	slices.Sort(gone)
	for _, n := range gone {
		_ = s.RemoveAgent(now, n, "no longer in wilco.yaml")
	}
	return gone
}

// NextTaskAgent says which agent the next task that names none would go
// to, and why — the choice the queue makes: the first agent by name that
// is available; when none is, the first in service (the task waits for
// it).
func (s *State) NextTaskAgent() (name, why string) {
	names := make([]string, 0, len(s.agents))
	for n, a := range s.agents {
		if !a.Removed {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "", "no agent is in service: a task is refused until one is added to wilco.yaml or with POST /v1/agents"
	}
	slices.Sort(names)
	var skipped []string
	for _, n := range names {
		if a := s.agents[n]; a.Status == Available {
			why = n + " is available and first by name"
			if len(skipped) > 0 {
				why += " among the available agents (" + strings.Join(skipped, ", ") + " not available)"
			}
			return n, why
		}
		skipped = append(skipped, n+" "+string(s.agents[n].Status))
	}
	return names[0], "no agent is available (" + strings.Join(skipped, ", ") + "): the task waits for " + names[0] + ", first by name"
}
