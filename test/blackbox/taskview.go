package blackbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"wilco/client"
	"wilco/taskview"
	"wilco/wire"
)

var TaskviewEvents = flag.String("taskview.events", "", "write the event logs of the scenarios that call watchFold into this directory (the repository keeps them in taskview/testdata)")

// watchFold is called at the end of a scenario. It checks that what
// `wilco watch` makes of the scenario's events (package taskview's fold)
// says of every task what the server says of it: its state and phase,
// its attempt out of its hard stop, its milestone. With -taskview.events
// it writes the scenario's whole event log as name.jsonl, one event per
// line, with the directories of this run replaced by fixed names.
func (in *Instance) WatchFold(name string) {
	in.T.Helper()
	cl := client.New(in.Url, AdminToken)
	var evs []wire.Event
	var differs string
	if !Eventually(15*time.Second, 50*time.Millisecond, func() bool {
		evs, differs = nil, ""
		err := cl.EachEvent(context.Background(), client.EventQuery{}, func(ev wire.Event) error {
			evs = append(evs, ev)
			return nil
		})
		if err != nil {
			differs = err.Error()
			return false
		}
		differs = FoldDiffers(cl, evs)
		return differs == ""
	}) {
		in.T.Fatalf("the fold of the events differs from the server: %s", differs)
	}
	if *TaskviewEvents == "" {
		return
	}
	agents, err := filepath.Abs(Testdata(in.T, "agents"))
	if err != nil {
		in.T.Fatal(err)
	}
	scrub := strings.NewReplacer(in.Dir, "/repo", agents, "/agents", filepath.Dir(in.Dir), "/scratch")
	var b bytes.Buffer
	for _, ev := range evs {
		line, err := json.Marshal(ev)
		if err != nil {
			in.T.Fatal(err)
		}
		b.WriteString(scrub.Replace(string(line)))
		b.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(*TaskviewEvents, name+".jsonl"), b.Bytes(), 0o644); err != nil {
		in.T.Fatal(err)
	}
}

// FoldDiffers folds evs and says how a task's view differs from the
// server's task ("" when none does). A task the server does not know (a
// queued task cancelled, a delegation sent with a task id of the
// caller's) is left out.
func FoldDiffers(cl *client.Client, evs []wire.Event) string {
	v := taskview.New()
	var ids []string
	for _, ev := range evs {
		if t, _ := v.Apply(ev); t != nil && !slices.Contains(ids, t.ID) {
			ids = append(ids, t.ID)
		}
	}
	for _, id := range ids {
		st, err := cl.Task(context.Background(), id)
		var ae *client.APIError
		if errors.As(err, &ae) && ae.Status == 404 {
			continue
		}
		if err != nil {
			return err.Error()
		}
		t := v.Task(id)
		shown := func(state wire.TaskState, phase wire.Phase, attempt, maxAttempts int, milestone string) string {
			s := fmt.Sprintf("%s/%s attempt %d", state, phase, attempt)
			if attempt > 0 {
				// The hard stop is shown with an attempt only (a task that
				// failed before its first has none).
				s += fmt.Sprintf("/%d", maxAttempts)
			}
			return s + fmt.Sprintf(" milestone %q", milestone)
		}
		got := shown(t.State, t.Phase, t.Attempt, t.MaxAttempts, t.Milestone)
		var phase wire.Phase
		if st.Phase != nil {
			phase = *st.Phase
		}
		want := shown(st.State, phase, st.Attempt, st.MaxAttempts, st.Milestone)
		if got != want {
			return fmt.Sprintf("%s: the events say %s, the server %s", id, got, want)
		}
	}
	return ""
}
