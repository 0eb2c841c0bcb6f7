package dispatch

import (
	"context"
	"testing"

	execadapter "wilco/adapter/exec"
	"wilco/core"
)

func TestARestartOfAMailboxAgentSaysWilcoRunsNoProgramForIt(t *testing.T) {
	t.Parallel()
	d := open(t, notGit(t))
	res, _, _ := d.PerformOperation(context.Background(), core.RunOperation{ID: "O-1", Name: core.OpRestart, Agents: []string{"remote"}}, nil)
	if len(res) != 1 || !res[0].Done || res[0].Status != core.Available || res[0].Action != "nothing to restart: wilco runs no program for it (it fetches its own messages)" {
		t.Fatalf("the restart of a mailbox agent: %+v", res)
	}
}

func TestAMailboxAgentIsMarkedHibernatingAndAvailable(t *testing.T) {
	t.Parallel()
	d := open(t, notGit(t))
	res, _, _ := d.PerformOperation(context.Background(), core.RunOperation{ID: "O-1", Name: core.OpHibernate, Agents: []string{"remote"}}, nil)
	if len(res) != 1 || !res[0].Done || res[0].Status != core.Hibernating || res[0].Action != "marked hibernating" {
		t.Fatalf("the hibernate of a mailbox agent: %+v", res)
	}
	res, _, _ = d.PerformOperation(context.Background(), core.RunOperation{ID: "O-2", Name: core.OpWake, Agents: []string{"remote"}}, nil)
	if len(res) != 1 || !res[0].Done || res[0].Status != core.Available || res[0].Action != "marked available" {
		t.Fatalf("the wake of a mailbox agent: %+v", res)
	}
}

func TestMaintenanceSaysOnceWhatItDidToAnExecAgent(t *testing.T) {
	t.Parallel()
	d := open(t, notGit(t))
	if err := d.Exec().Add(execadapter.AgentConfig{Name: "sh", Command: []string{"true"}}); err != nil {
		t.Fatal(err)
	}
	run := func(context.Context, string, []string) (int, string) { return 0, "" }
	res, code, _ := d.PerformOperation(context.Background(), core.RunOperation{ID: "O-1", Name: core.OpMaintenance, Agents: []string{"sh"}, Command: []string{"true"}}, run)
	want := "marked hibernating (it runs nothing between turns); maintenance command exited 0; marked available"
	if code != 0 || len(res) != 1 || !res[0].Done || res[0].Action != want || res[0].Status != core.Available {
		t.Fatalf("maintenance of an exec agent: %+v, want the action %q", res, want)
	}
}
