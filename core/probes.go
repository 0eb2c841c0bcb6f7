package core

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
)

// A context probe asks an agent what its side has: its OS, the tools and
// their versions (git, the verify steps' programs, the language
// toolchains) and its CLI's own version. The answers are kept in the
// agent's record; a task whose verify steps need a tool an agent's side
// lacks does not go to that agent, and is refused up front when no agent
// that takes tasks has it.

// TypeProbe is the message that asks an agent for its context.
const TypeProbe MessageType = "context_probe"

// DefaultProbeTimeout is how long an agent has to answer a probe.
const DefaultProbeTimeout = 10 * time.Minute

// ProbePolicy says when agents are probed.
type ProbePolicy struct {
	// OnRegister probes each agent when it registers (and agents
	// registered before, once, at start).
	OnRegister bool `json:"on_register,omitempty"`
	// Tools are the tools asked about; Needed those the verify steps run
	// (a task is not given to an agent whose side lacks one).
	Tools  []string `json:"tools,omitempty"`
	Needed []string `json:"needed,omitempty"`
}

// AgentContext is what a probe learned of an agent's side.
type AgentContext struct {
	OS  string `json:"os,omitempty"`
	CLI string `json:"cli,omitempty"`
	// Tools maps each tool asked about to its version, or "missing".
	Tools map[string]string `json:"tools,omitempty"`
	At    time.Time         `json:"at"`
	// Raw is the answer as the agent gave it.
	Raw string `json:"raw,omitempty"`
}

// Missing is the value of a tool the agent's side does not have.
const Missing = "missing"

// Lacks returns the tools of need the context says are missing.
func (c *AgentContext) Lacks(need []string) []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, n := range need {
		if v, ok := c.Tools[n]; ok && v == Missing {
			out = append(out, n)
		}
	}
	return out
}

// Probe events.
const (
	TypeAgentProbed = "agent.probed"
)

// AgentProbed records what a probe learned.
type AgentProbed struct {
	Context AgentContext `json:"context"`
}

func (AgentProbed) EventType() string { return TypeAgentProbed }

func init() { register[AgentProbed]() }

// ProbeText is the probe an agent is sent: the lines to answer.
func ProbeText(tools []string) string {
	var b strings.Builder
	b.WriteString("## Context probe\n\nwilco asks what your environment has, to give you only tasks you can carry out. " +
		"Do not change any file. Answer with these lines only, filled in, then stop:\n\n")
	b.WriteString("os: <operating system and version>\ncli: <your own program and its version>\n")
	for _, t := range tools {
		fmt.Fprintf(&b, "tool %s: <its version, or missing>\n", t)
	}
	return b.String()
}

var probeLine = regexp.MustCompile(`(?i)^\s*[-*>]*\s*(?:\*\*)?(os|cli|tool\s+[A-Za-z0-9._+-]+)(?:\*\*)?\s*[:=]\s*(.*?)\s*$`)

// ParseProbe reads a probe's answer. ok is false when it holds none of the
// lines asked for.
func ParseProbe(text string) (AgentContext, bool) {
	c := AgentContext{Tools: map[string]string{}}
	found := false
	for _, l := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		m := probeLine.FindStringSubmatch(strings.Trim(l, "`"))
		if m == nil {
			continue
		}
		key, val := strings.ToLower(m[1]), strings.Trim(strings.TrimSpace(m[2]), "`*")
		if len(val) > 200 {
			val = val[:200]
		}
		found = true
		switch {
		case key == "os":
			c.OS = val
		case key == "cli":
			c.CLI = val
		default:
			tool := strings.TrimSpace(strings.TrimPrefix(key, "tool"))
			low := strings.ToLower(val)
			if low == "" || low == "missing" || low == "none" || low == "not installed" || low == "not found" || low == "n/a" || strings.HasPrefix(low, "missing") {
				val = Missing
			}
			c.Tools[tool] = val
		}
	}
	return c, found
}

// ProbeAgent sends agent a context probe.
func (s *State) ProbeAgent(now time.Time, agent string) (Delivery, error) {
	now = norm(now)
	a, ok := s.agents[agent]
	if !ok || a.Removed {
		return Delivery{}, notFoundf("no agent %q", agent)
	}
	return s.probe(now, a), nil
}

func (s *State) probe(now time.Time, a *Agent) Delivery {
	if d := s.onlyOpen(a.Name, TypeProbe); d != nil {
		return d.copy() // one probe at a time
	}
	m := Message{ID: s.nextID("M"), From: Orchestrator, To: a.Name, Type: TypeProbe, Policy: PolicyNone,
		Subject: "Context probe", Body: ProbeText(s.policies.Probe.Tools)}
	s.emit(now, "", a.Name, DeliverySent{Send{ID: m.ID, Attempt: 1, Kind: SendFirst, Round: 1, TimerAt: now.Add(DefaultProbeTimeout), Message: &m}})
	return s.find(m.ID).copy()
}

// ProbeUnprobed probes the agents never probed, when probes are on.
func (s *State) ProbeUnprobed(now time.Time) {
	now = norm(now)
	if !s.policies.Probe.OnRegister {
		return
	}
	names := make([]string, 0, len(s.agents))
	for n, a := range s.agents {
		if !a.Removed && a.Context == nil {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		s.probe(now, s.agents[n])
	}
}

// probeAnswer records an agent's answer to its probe.
func (s *State) probeAnswer(now time.Time, a *Agent, d *Delivery, text string) (Interpretation, error) {
	in := Interpretation{Kind: KindProbe, DeliveryID: d.ID}
	if d.State.Terminal() {
		return in, s.settled(d)
	}
	s.seen(now, a, "replied")
	c, ok := ParseProbe(text)
	if !ok {
		s.emit(now, "", a.Name, DeliveryReply{ID: d.ID, Kind: "message", Text: text})
		in.Action = "logged: a probe's answer has lines such as \"os: …\" and \"tool git: …\""
		return in, nil
	}
	c.At, c.Raw = now, strings.TrimSpace(text)
	if len(c.Raw) > 4096 {
		c.Raw = c.Raw[:4096]
	}
	s.emit(now, "", a.Name, DeliveryAcknowledged{ID: d.ID, By: "reply"})
	s.emit(now, "", a.Name, AgentProbed{Context: c})
	in.Acknowledged, in.Action = []string{d.ID}, "recorded in the agent's context"
	return in, nil
}

// probeTimedOut ends a probe its agent did not answer in time.
func (s *State) probeTimedOut(now time.Time, d *Delivery) {
	s.emit(now, "", d.To, DeliveryFailed{ID: d.ID, Reason: fmt.Sprintf("no answer to the context probe within %s", DefaultProbeTimeout), Attempts: d.Sends})
}

// lacksFor returns the tools the verify steps need that agent's side lacks,
// as its probe says.
func (s *State) lacksFor(a *Agent) []string {
	return a.Context.Lacks(s.policies.Probe.Needed)
}

// noAgentHasTheTools says why no agent can verify a task's work on its side
// (the agent asked for, or every agent that takes tasks, lacks a tool the
// verify steps need, as their probes say); "" when one can, or when no
// probe says otherwise.
func (s *State) noAgentHasTheTools(requested string) string {
	need := s.policies.Probe.Needed
	if len(need) == 0 {
		return ""
	}
	if requested != "" {
		if a := s.agents[requested]; a != nil {
			if lacks := s.lacksFor(a); len(lacks) > 0 {
				return fmt.Sprintf("agent %s lacks %s, which the verify steps need (its context probe of %s says so): install it on the agent's side and probe it again (wilco agents probe %s), or give the task to another agent",
					a.Name, strings.Join(lacks, ", "), a.Context.At.Format(time.RFC3339), a.Name)
			}
		}
		return ""
	}
	var why []string
	for _, n := range slices.Sorted(maps.Keys(s.agents)) {
		a := s.agents[n]
		if !s.takesTasks(a) {
			continue
		}
		lacks := s.lacksFor(a)
		if len(lacks) == 0 {
			return ""
		}
		why = append(why, a.Name+" lacks "+strings.Join(lacks, ", "))
	}
	if len(why) == 0 {
		return ""
	}
	return "no agent has the tools the verify steps need, as their context probes say (" + strings.Join(why, "; ") +
		"): install them on an agent's side and probe it again (wilco agents probe NAME)"
}
