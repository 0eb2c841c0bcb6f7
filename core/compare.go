package core

import (
	"encoding/json"
	"fmt"
	"slices"
)

// StateDiff compares two cores entity by entity, as the store would keep
// them, and describes the first difference ("" when equal). The seeded
// simulation uses it to check that replaying the log rebuilds the state.
func StateDiff(a, b *State) string {
	if a.seq != b.seq {
		return fmt.Sprintf("seq %d != %d", a.seq, b.seq)
	}
	ra, rb := a.Entities(), b.Entities()
	if len(ra) != len(rb) {
		return fmt.Sprintf("%d entities != %d", len(ra), len(rb))
	}
	for i := range ra {
		if ra[i] != rb[i] {
			return fmt.Sprintf("entity %v != %v", ra[i], rb[i])
		}
		ea, _ := a.Entity(ra[i])
		eb, _ := b.Entity(rb[i])
		ja, _ := json.Marshal(ea.Value)
		jb, _ := json.Marshal(eb.Value)
		if string(ja) != string(jb) {
			return fmt.Sprintf("%s %s:\n  live:     %s\n  rebuilt:  %s", ra[i].Kind, ra[i].ID, ja, jb)
		}
		if ea.State != eb.State || ea.Agent != eb.Agent || ea.TaskID != eb.TaskID {
			return fmt.Sprintf("%s %s: columns differ", ra[i].Kind, ra[i].ID)
		}
	}
	if ha, hb := a.byTask.holds(), b.byTask.holds(); ha != hb {
		return fmt.Sprintf("task holds %s != %s", ha, hb)
	}
	if oa, ob := openIDs(a), openIDs(b); oa != ob {
		return fmt.Sprintf("open deliveries by agent %s != %s", oa, ob)
	}
	// The index must also agree with the deliveries themselves, and what
	// ended without a timer must be kept compactly (endedSet), not live.
	for _, c := range []*State{a, b} {
		for _, d := range c.deliveries {
			if _, in := c.open[d.To][d.ID]; in == d.State.Terminal() {
				return fmt.Sprintf("delivery %s (%s) is wrongly %v in the open index", d.ID, d.State, in)
			}
			if d.State.Terminal() && d.TimerAt.IsZero() {
				return fmt.Sprintf("delivery %s ended (%s) but is kept live", d.ID, d.State)
			}
		}
	}
	return ""
}

func openIDs(s *State) string {
	ids := map[string][]string{}
	for agent, m := range s.open {
		for id := range m {
			ids[agent] = append(ids[agent], id)
		}
		slices.Sort(ids[agent])
		if len(ids[agent]) == 0 {
			delete(ids, agent)
		}
	}
	return fmt.Sprint(ids)
}
