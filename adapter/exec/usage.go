package exec

import (
	"encoding/json"
	"strings"

	"wilco/core"
)

// usageOf reads one line of an agent CLI's JSON output for what its turn
// cost, in the shapes of the presets' formats: Claude Code's result event
// (usage, total_cost_usd, num_turns, modelUsage), Codex's turn.completed
// (usage), Gemini CLI's result event (stats: input_tokens, output_tokens,
// cached, models) and opencode's step_finish part (tokens, cost), one per
// model step.
func usageOf(line string) (core.Usage, bool) {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "{") || !strings.Contains(line, "token") {
		return core.Usage{}, false
	}
	var ev struct {
		Type  string `json:"type"`
		Usage *struct {
			InputTokens       int64 `json:"input_tokens"`
			OutputTokens      int64 `json:"output_tokens"`
			CacheReadTokens   int64 `json:"cache_read_input_tokens"`
			CachedInputTokens int64 `json:"cached_input_tokens"`
		} `json:"usage"`
		TotalCostUSD float64                    `json:"total_cost_usd"`
		NumTurns     int                        `json:"num_turns"`
		ModelUsage   map[string]json.RawMessage `json:"modelUsage"`
		Stats        *struct {
			InputTokens  int64                      `json:"input_tokens"`
			OutputTokens int64                      `json:"output_tokens"`
			Cached       int64                      `json:"cached"`
			Models       map[string]json.RawMessage `json:"models"`
		} `json:"stats"`
		Part *struct {
			Type   string  `json:"type"`
			Cost   float64 `json:"cost"`
			Tokens *struct {
				Input  int64 `json:"input"`
				Output int64 `json:"output"`
				Cache  struct {
					Read int64 `json:"read"`
				} `json:"cache"`
			} `json:"tokens"`
		} `json:"part"`
	}
	if json.Unmarshal([]byte(line), &ev) != nil {
		return core.Usage{}, false
	}
	firstKey := func(m map[string]json.RawMessage) string {
		for k := range m {
			return k // one model in the common case; any is as good
		}
		return ""
	}
	switch {
	case ev.Type == "result" && ev.Usage != nil:
		return core.Usage{InputTokens: ev.Usage.InputTokens, OutputTokens: ev.Usage.OutputTokens, CachedTokens: ev.Usage.CacheReadTokens,
			CostUSD: ev.TotalCostUSD, Turns: ev.NumTurns, Model: firstKey(ev.ModelUsage)}, true
	case ev.Type == "turn.completed" && ev.Usage != nil:
		return core.Usage{InputTokens: ev.Usage.InputTokens, OutputTokens: ev.Usage.OutputTokens, CachedTokens: ev.Usage.CachedInputTokens, Turns: 1}, true
	case ev.Type == "result" && ev.Stats != nil:
		return core.Usage{InputTokens: ev.Stats.InputTokens, OutputTokens: ev.Stats.OutputTokens, CachedTokens: ev.Stats.Cached,
			Turns: 1, Model: firstKey(ev.Stats.Models)}, true
	case ev.Type == "step_finish" && ev.Part != nil && ev.Part.Tokens != nil:
		return core.Usage{InputTokens: ev.Part.Tokens.Input, OutputTokens: ev.Part.Tokens.Output, CachedTokens: ev.Part.Tokens.Cache.Read,
			CostUSD: ev.Part.Cost, Turns: 1}, true
	}
	return core.Usage{}, false
}

// stepUsage estimates what a turn has spent while it runs, from the usage
// of each model call its output reports before the turn's total: Claude
// Code's assistant events (message.usage, repeated for each content block
// of one message: counted once per message id). The total, when it comes,
// supersedes the estimate.
type stepUsage struct {
	seen  map[string]bool
	total core.Usage
}

// line reads one line and reports whether the estimate grew.
func (e *stepUsage) line(line string) bool {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, `{"type":"assistant"`) || !strings.Contains(line, "usage") {
		return false
	}
	var ev struct {
		Message struct {
			ID    string `json:"id"`
			Model string `json:"model"`
			Usage *struct {
				InputTokens     int64 `json:"input_tokens"`
				OutputTokens    int64 `json:"output_tokens"`
				CacheReadTokens int64 `json:"cache_read_input_tokens"`
			} `json:"usage"`
		} `json:"message"`
	}
	if json.Unmarshal([]byte(line), &ev) != nil || ev.Message.Usage == nil || ev.Message.ID == "" || e.seen[ev.Message.ID] {
		return false
	}
	if e.seen == nil {
		e.seen = map[string]bool{}
	}
	e.seen[ev.Message.ID] = true
	u := ev.Message.Usage
	e.total.Add(core.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CachedTokens: u.CacheReadTokens, Turns: 1, Model: ev.Message.Model})
	return true
}
