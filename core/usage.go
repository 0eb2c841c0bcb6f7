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
	b := s.policies.Budget
	if why := b.Task.over(t.Usage, "task "+t.ID); why != "" {
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
	return b.Day.over(total, "today's tasks ("+day+", UTC)")
}

// usagePtr is u, or nil when nothing was reported.
func usagePtr(u Usage) *Usage {
	if u.Zero() && u.Model == "" {
		return nil
	}
	return &u
}
