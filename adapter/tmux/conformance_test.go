package tmux_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"wilco/adapter"
	"wilco/adapter/adaptertest"
	tmuxadapter "wilco/adapter/tmux"
)

func TestTheTmuxAdapterPassesTheConformanceSuite(t *testing.T) {
	t.Parallel()
	if err := tmuxadapter.Available(""); err != nil {
		t.Skipf("tmux is not installed (apt-get install tmux): %v", err)
	}
	adaptertest.Run(t, adaptertest.Harness{Start: func(t *testing.T, r adapter.Reporter) adaptertest.Started {
		dir := t.TempDir()
		state := filepath.Join(dir, ".wilco")
		a, err := tmuxadapter.New(tmuxadapter.Options{Dir: dir, StateDir: state, Report: r, Poll: 50 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = a.Close()
			a.KillSessions(context.Background())
			srv, _ := tmuxadapter.PrivateServer("", state, nil)
			_ = srv.KillServer(context.Background())
		})
		if err := a.Add(tmuxadapter.AgentConfig{Name: "tui", Command: []string{tmuxadapter.ScriptedAgent()}, Ready: `^> ?$`, Busy: `working…|thinking`,
			Permission: `Allow .*\? \(y/n\)`, Settle: 400 * time.Millisecond, Width: 120, Height: 30}); err != nil {
			t.Fatal(err)
		}
		return adaptertest.Started{Adapter: a, Agent: "tui", Dir: dir, Gone: func(string) bool {
			// Interrupted: the pane shows the program ready, working on
			// nothing.
			st, ok := a.State("tui")
			return ok && st.State == "ready" && st.Working == ""
		}}
	}})
}
