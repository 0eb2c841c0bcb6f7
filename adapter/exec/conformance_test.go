//go:build unix

package exec_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"wilco/adapter"
	"wilco/adapter/adaptertest"
	execadapter "wilco/adapter/exec"
)

// scriptedAgent is the exec adapter's scripted program of the conformance
// suite: a shell script that takes its orders from the words of its
// prompt (see package adaptertest), and writes its process id into
// $PIDS/<task>.pid when it starts on a task.
const scriptedAgent = `#!/bin/sh
prompt=$(cat)
task=$(printf '%s\n' "$prompt" | sed -n 's/.*Reply with \[ACK\] \([^ ]*\) - RECEIVED.*/\1/p' | head -n 1)
if [ -z "$task" ]; then
	echo noted
	exit 0
fi
echo $$ > "$PIDS/$task.pid"
echo "[ACK] $task - RECEIVED"
echo "Understanding: will do the task as it is described"
case "$prompt" in
*CRASH*)
	echo "starting the work"
	echo "panic: scripted crash"
	exit 3
	;;
*IDLE*)
	echo "thinking"
	while :; do sleep 1; done
	;;
esac
file=$(printf '%s\n' "$prompt" | sed -n 's/.*[Ww]rite \([A-Za-z0-9._/-]*\.txt\).*/\1/p' | head -n 1)
if [ -n "$file" ]; then
	case "$prompt" in
	*"<retry_context"*) echo "fixed $task" > "$file" ;;
	*) echo "attempt 1" > "$file" ;;
	esac
	echo "Wrote $file."
fi
echo "Status: complete"
echo "Summary: did what the task asked"
`

func TestTheExecAdapterPassesTheConformanceSuite(t *testing.T) {
	t.Parallel()
	adaptertest.Run(t, adaptertest.Harness{Start: func(t *testing.T, r adapter.Reporter) adaptertest.Started {
		dir, bin, pids := t.TempDir(), t.TempDir(), t.TempDir()
		script := filepath.Join(bin, "agent.sh")
		if err := os.WriteFile(script, []byte(scriptedAgent), 0o755); err != nil {
			t.Fatal(err)
		}
		a, err := execadapter.New(execadapter.Options{Dir: dir, Report: r, KillGrace: 300 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = a.Close() })
		if err := a.Add(execadapter.AgentConfig{Name: "sh", Command: []string{script}, Env: map[string]string{"PIDS": pids}}); err != nil {
			t.Fatal(err)
		}
		return adaptertest.Started{Adapter: a, Agent: "sh", Dir: dir, Gone: func(task string) bool {
			b, err := os.ReadFile(filepath.Join(pids, task+".pid"))
			if err != nil {
				return false
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			return err == nil && syscall.Kill(pid, 0) == syscall.ESRCH
		}}
	}})
}
