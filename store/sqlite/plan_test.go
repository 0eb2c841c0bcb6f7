package sqlite

import (
	"path/filepath"
	"strings"
	"testing"

	"wilco/store"
)

// TestFiltersUseIndexes checks the query plans of the reads that must not
// scan the whole log or every record.
func TestFiltersUseIndexes(t *testing.T) {
	t.Parallel()
	s, err := Open(filepath.Join(t.TempDir(), "wilco.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	type query struct {
		sql  string
		args []any
	}
	events := func(f store.Filter) query {
		q, args := eventsQuery(f)
		return query{q, args}
	}
	for _, tc := range []struct {
		name string
		q    query
		want string
	}{
		{"events after", events(store.Filter{After: 10, Limit: 5}), "USING INTEGER PRIMARY KEY (rowid>?)"},
		{"events of a task", events(store.Filter{TaskID: "t", After: 10}), "INDEX events_task (task_id=? AND rowid>?)"},
		// No index on agent: it cost a tenth of the delivery throughput; an
		// agent's events are read from a seq on (a stream resumes).
		{"events of an agent", events(store.Filter{Agent: "a", After: 10}), "USING INTEGER PRIMARY KEY (rowid>?)"},
		{"events of a task and an agent", events(store.Filter{TaskID: "t", Agent: "a"}), "INDEX events_"},
		{"scan chunk", query{scanQuery, []any{1, 2, 3}}, "USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"},
		{"records of a kind", query{recordsQuery, []any{"delivery"}}, "USING INDEX records_key (kind=?)"},
		{"records of a kind and state", query{recordsByStateQuery, []any{"delivery", "open"}}, "USING INDEX records_key (kind=?)"},
		{"deletes", query{`DELETE FROM records WHERE (kind, id) IN (VALUES (?, ?))`, []any{"delivery", "d1"}}, "INDEX records_key (kind=? AND id=?)"},
	} {
		rows, err := s.r.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+tc.q.sql, tc.q.args...)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		got := strings.Join(plan, "; ")
		if !strings.Contains(got, tc.want) || strings.Contains(got, "SCAN events") || strings.Contains(got, "SCAN records") ||
			strings.Contains(got, "TEMP B-TREE") {
			t.Errorf("%s: plan %q, want %q", tc.name, got, tc.want)
		}
	}
}
