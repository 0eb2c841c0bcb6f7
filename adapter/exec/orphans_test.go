//go:build linux

package exec

import (
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"wilco/proc"
)

func TestKillOrphansStopsTheAgentsOfADeadWilcoAndNothingElse(t *testing.T) {
	t.Parallel()
	runs := t.TempDir()
	start := func(run string, env bool) *osexec.Cmd {
		dir := filepath.Join(runs, run)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := osexec.Command("sh", "-c", "sleep 60 & wait")
		if env {
			cmd.Env = append(os.Environ(), "WILCO_RUN_DIR="+dir)
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
		if err := os.WriteFile(filepath.Join(dir, PidFileName), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	orphan := start("T-1-a1", true)
	stranger := start("T-2-a1", false) // a reused pid: not wilco's agent
	a, err := New(Options{Dir: t.TempDir(), RunsDir: runs, Report: newReporter()})
	if err != nil {
		t.Fatal(err)
	}
	if n := a.KillOrphans(); n != 1 {
		t.Fatalf("stopped %d groups, want 1", n)
	}
	_ = orphan.Wait()
	// SIGKILL is delivered asynchronously: the whole group must be gone soon.
	for deadline := time.Now().Add(5 * time.Second); !proc.GroupGone(orphan.Process.Pid); {
		if time.Now().After(deadline) {
			t.Fatal("the orphan agent's group still runs")
		}
		<-time.After(10 * time.Millisecond)
	}
	if proc.GroupGone(stranger.Process.Pid) {
		t.Fatal("a process that is not wilco's agent was stopped")
	}
	if _, err := os.Stat(filepath.Join(runs, "T-1-a1", PidFileName)); err == nil {
		t.Fatal("the pid file was kept")
	}
}
