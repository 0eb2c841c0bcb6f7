package core

import (
	"fmt"
	"strings"
	"time"
)

// TypeAgentSeen is the wire name of AgentSeen.
const TypeAgentSeen = "agent.seen"

// AgentSeen records the first sign of life of a pull agent: its first
// dispatch cycle (a poll of its inbox) or its first reply. Until then a
// task delegated to it says that it waits for an agent never seen.
type AgentSeen struct {
	How string `json:"how"`
}

// EventType implements EventData.
func (AgentSeen) EventType() string { return TypeAgentSeen }

func init() { register[AgentSeen]() }

// neverSeen is the note of a milestone of a task waiting for a pull agent
// that never polled its inbox.
const neverSeen = ": never seen (it has not polled its inbox yet)"

// waitMilestone is the milestone of a task that waits for agent's ACK: the
// base text, or, for a pull agent never seen, that the task waits for an
// agent nobody has seen.
func (s *State) waitMilestone(agent, base string) string {
	a := s.agents[agent]
	if a == nil || !a.Pull || a.Seen {
		return base
	}
	if base == MilestoneWaitingAck {
		return "Waiting for agent " + agent + neverSeen
	}
	return base + " waiting for agent " + agent + neverSeen
}

// firstSeen records a pull agent's first sign of life, and tells the tasks
// that wait for it.
func (s *State) firstSeen(now time.Time, a *Agent, how string) {
	if !a.Pull || a.Seen {
		return
	}
	s.emit(now, "", a.Name, AgentSeen{How: how})
	for _, t := range s.Tasks(func(t *Task) bool {
		return t.Agent == a.Name && t.State == AwaitingAck && strings.HasSuffix(t.Milestone, neverSeen)
	}) {
		s.emit(now, t.ID, a.Name, TaskMilestone{Text: fmt.Sprintf("Agent %s is here (%s). %s", a.Name, how, MilestoneWaitingAck)})
	}
}

// neverSeenNote is what a failed wait for agent adds when the agent is a
// pull agent that never showed up: "" for any other.
func (s *State) neverSeenNote(agent string) string {
	if a := s.agents[agent]; a != nil && a.Pull && !a.Seen {
		return " (agent " + agent + " was never seen: it has not polled its inbox; start it, or give the task to another agent)"
	}
	return ""
}
