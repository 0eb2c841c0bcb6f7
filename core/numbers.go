package core

import "time"

// DayNumbers are one UTC day's numbers over the tasks: what the retry
// summary counts, by the day it happened, for charts over time.
type DayNumbers struct {
	// Day is the UTC day, YYYY-MM-DD.
	Day string `json:"day"`
	// Finished counts the tasks that ended that day (any end state);
	// Success, FirstAttemptSuccess (success at attempt 1), Retried (more
	// than one attempt) and RetrySuccess (success after a retry) count
	// among them, as RetrySummary does.
	Finished            int `json:"finished"`
	Success             int `json:"success"`
	FirstAttemptSuccess int `json:"first_attempt_success"`
	Retried             int `json:"retried"`
	RetrySuccess        int `json:"retry_success"`
	// Escalations counts the tasks whose last escalation was that day.
	Escalations int `json:"escalations"`
	// Failures counts the failure records of that day by failure type.
	Failures map[string]int `json:"failures"`
	// Usage is what the agents' turns of that day cost.
	Usage Usage `json:"usage"`
}

// Daily returns the numbers of every UTC day from from's day to to's day,
// oldest first (none when to is before from).
func (s *State) Daily(from, to time.Time) []DayNumbers {
	first, last := usageDay(from), usageDay(to)
	if last < first {
		return []DayNumbers{}
	}
	var out []DayNumbers
	index := map[string]int{}
	for d := from.UTC(); usageDay(d) <= last; d = d.AddDate(0, 0, 1) {
		index[usageDay(d)] = len(out)
		out = append(out, DayNumbers{Day: usageDay(d), Failures: map[string]int{}})
	}
	at := func(t time.Time) *DayNumbers {
		if t.IsZero() {
			return nil
		}
		if i, ok := index[usageDay(t)]; ok {
			return &out[i]
		}
		return nil
	}
	for _, t := range s.tasks {
		if n := at(t.FinishedAt); n != nil && t.State.Terminal() {
			n.Finished++
			retried := t.Attempt > 1
			if t.State == Success {
				n.Success++
				if retried {
					n.RetrySuccess++
				} else {
					n.FirstAttemptSuccess++
				}
			}
			if retried {
				n.Retried++
			}
		}
		if t.Escalation != nil {
			if n := at(t.Escalation.At); n != nil {
				n.Escalations++
			}
		}
		for _, f := range t.Failures {
			if n := at(f.Timestamp); n != nil {
				n.Failures[f.FailureType]++
			}
		}
		for _, u := range t.Usages {
			if i, ok := index[u.Day]; ok {
				out[i].Usage.Add(u.Usage)
			}
		}
	}
	return out
}

// AgentRecord is what an agent did with the tasks: the task it holds now,
// and of the tasks it ended, how many succeeded at the first attempt.
type AgentRecord struct {
	CurrentTask         string
	Finished            int
	FirstAttemptSuccess int
}

// AgentRecords returns every agent's record that has one, by name, in one
// pass over the tasks. A task counts for the agent that held it last.
func (s *State) AgentRecords() map[string]AgentRecord {
	out := map[string]AgentRecord{}
	for _, t := range s.tasks {
		if t.Agent == "" {
			continue
		}
		r := out[t.Agent]
		switch {
		case t.State.Holds():
			r.CurrentTask = t.ID
		case t.State.Terminal():
			r.Finished++
			if t.State == Success && t.Attempt <= 1 {
				r.FirstAttemptSuccess++
			}
		}
		out[t.Agent] = r
	}
	return out
}
