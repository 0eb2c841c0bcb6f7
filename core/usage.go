package core

import "time"

// Usage is what an agent's turns cost, as its CLI reports it: tokens, the
// cost in US dollars (0 when the CLI reports none), the model's turns
// within them, and the model.
type Usage struct {
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CachedTokens int64   `json:"cached_tokens"`
	CostUSD      float64 `json:"cost_usd"`
	Turns        int     `json:"turns,omitempty"`
	Model        string  `json:"model,omitempty"`
	// Priced: the cost comes from wilco.yaml's prices, the CLI reported
	// none.
	Priced bool `json:"priced,omitempty"`
}

// Add adds u to the total; the model is the last one named.
func (t *Usage) Add(u Usage) {
	t.InputTokens += u.InputTokens
	t.OutputTokens += u.OutputTokens
	t.CachedTokens += u.CachedTokens
	t.CostUSD += u.CostUSD
	t.Turns += u.Turns
	if u.Model != "" {
		t.Model = u.Model
	}
	t.Priced = t.Priced || u.Priced
}

// priced is u with its cost from the prices (by model, else by agent)
// when its CLI reported none.
func (s *State) priced(u Usage, agent string) Usage {
	if u.CostUSD != 0 || u.Zero() {
		return u
	}
	p, ok := s.policies.Prices[u.Model]
	if !ok || u.Model == "" {
		p, ok = s.policies.Prices[agent]
	}
	if ok {
		u.CostUSD, u.Priced = p.cost(u), true
	}
	return u
}

// Zero reports whether nothing was used (or reported).
func (t Usage) Zero() bool {
	return t.InputTokens == 0 && t.OutputTokens == 0 && t.CachedTokens == 0 && t.CostUSD == 0 && t.Turns == 0
}

// UsageRecord is the usage of one attempt's turn: by whom and on which day
// (UTC), so that totals per agent and per day can be made.
type UsageRecord struct {
	Attempt int    `json:"attempt"`
	Agent   string `json:"agent"`
	Day     string `json:"day"`
	Usage   Usage  `json:"usage"`
}

// UsageTotals are usage totals over tasks: all, per agent and per day.
type UsageTotals struct {
	Total   Usage            `json:"total"`
	ByAgent map[string]Usage `json:"by_agent"`
	ByDay   map[string]Usage `json:"by_day"`
}

// UsageTotals sums the usage of the tasks keep accepts (nil: all).
func (s *State) UsageTotals(keep func(*Task) bool) UsageTotals {
	out := UsageTotals{ByAgent: map[string]Usage{}, ByDay: map[string]Usage{}}
	for _, t := range s.tasks {
		if keep != nil && !keep(t) {
			continue
		}
		for _, r := range t.Usages {
			out.Total.Add(r.Usage)
			a, d := out.ByAgent[r.Agent], out.ByDay[r.Day]
			a.Add(r.Usage)
			d.Add(r.Usage)
			out.ByAgent[r.Agent], out.ByDay[r.Day] = a, d
		}
	}
	return out
}

func usageDay(now time.Time) string { return now.UTC().Format("2006-01-02") }

// overBudget says how the task, or the day's tasks, crossed the budget
// ("" when neither did).
func (s *State) overBudget(now time.Time, t *Task) string {
	return s.overBudgetWith(now, t, Usage{})
}

// overBudgetWith is overBudget with what the task's running turn has spent
// so far (not yet recorded) counted.
func (s *State) overBudgetWith(now time.Time, t *Task, running Usage) string {
	b := s.policies.Budget
	spent := t.Usage
	spent.Add(running)
	if why := b.Task.over(spent, "task "+t.ID); why != "" {
		return why
	}
	if b.Day.MaxCostUSD == 0 && b.Day.MaxTokens == 0 {
		return ""
	}
	day := usageDay(now)
	var total Usage
	for _, x := range s.tasks {
		for _, r := range x.Usages {
			if r.Day == day {
				total.Add(r.Usage)
			}
		}
	}
	total.Add(running)
	return b.Day.over(total, "today's tasks ("+day+", UTC)")
}

// budgetAdvice is what an escalation over budget tells the user to do.
const budgetAdvice = ". To go on, raise policy.budget in wilco.yaml (and restart wilco), then answer retry; or skip or abort"

// NoteSpend checks what the agent of a running attempt has spent so far in
// its turn (as its CLI's output reports it, while the turn runs) against
// the budget. Crossing the task's or the day's budget stops the agent at
// once — not when its turn ends — records what the turn spent, and
// escalates with it. It reports whether the turn was stopped; a spend of
// another attempt, or of a task no longer executing, changes nothing.
func (s *State) NoteSpend(now time.Time, taskID string, attempt int, spent Usage) (bool, error) {
	now = norm(now)
	t, ok := s.tasks[taskID]
	if !ok {
		return false, notFoundf("no task %q", taskID)
	}
	b := s.policies.Budget
	if t.Attempt != attempt || !(t.State == AwaitingAck || t.State == Running && t.Phase == Executing) ||
		b.Task == (Budget{}) && b.Day == (Budget{}) {
		return false, nil
	}
	spent = s.priced(spent, t.Agent)
	why := s.overBudgetWith(now, t, spent)
	if why == "" {
		return false, nil
	}
	s.emit(now, t.ID, t.Agent, TaskTurnEnded{Attempt: attempt, ExitCode: -1, Status: "stopped",
		Summary: "stopped by wilco: over budget", Usage: usagePtr(spent)})
	s.effect(StopTurn{TaskID: t.ID, Reason: "over budget"})
	s.escalateTask(now, t, "budget: "+why+budgetAdvice)
	return true, nil
}

// usagePtr is u, or nil when nothing was reported.
func usagePtr(u Usage) *Usage {
	if u.Zero() && u.Model == "" {
		return nil
	}
	return &u
}
