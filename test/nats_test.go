package test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"wilco/test/blackbox"
)

// natsAgentScript is a remote agent on the NATS mailbox, made of the CLI
// alone: `wilco inbox --follow` prints each message as it is pushed, and
// the agent answers every task delegation with an ACK and, once the file
// $GATE exists, a task-complete, both with `wilco reply` over NATS.
const natsAgentScript = `#!/usr/bin/env bash
set -u
"$WILCO" inbox --follow | while IFS= read -r line; do
  case "$line" in
    "--- "*)
      id=${line#--- }; id=${id%% *}
      task=$(sed -n 's/.*  task \([^ ]*\)  .*/\1/p' <<<"$line")
      [ -n "$task" ] || continue
      echo "agent: got $id for $task" >&2
      "$WILCO" reply --to "$id" "[ACK] $task - RECEIVED
Understanding: list the files" >&2
      while [ ! -e "$GATE" ]; do sleep 0.05; done
      "$WILCO" reply --type task-complete --data "{\"task_id\":\"$task\",\"status\":\"success\",\"summary\":\"listed\"}" >&2
      ;;
  esac
done
`

// embeddedNATS is a NATS server with JetStream in this process, restartable
// on the same port and store.
type embeddedNATS struct {
	t    *testing.T
	dir  string
	port int
	srv  *server.Server
}

func (n *embeddedNATS) up() {
	n.t.Helper()
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: n.port, JetStream: true, StoreDir: n.dir, NoLog: true, NoSigs: true})
	if err != nil {
		n.t.Fatal(err)
	}
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		n.t.Fatal("nats server not ready")
	}
	n.srv = srv
}

func (n *embeddedNATS) down() {
	if n.srv != nil {
		n.srv.Shutdown()
		n.srv.WaitForShutdown()
		n.srv = nil
	}
}

// TestAnAgentProcessOnNATSAcknowledgesAndCompletesATaskAcrossANATSRestart
// runs wilco serve with --transport on an embedded JetStream server and a
// remote agent process that knows only the NATS mailbox (through the
// CLI): the task is pushed to it, it acknowledges it, the NATS server is
// restarted while the agent works, and its completion still lands: the
// task ends in success, verified.
func TestAnAgentProcessOnNATSAcknowledgesAndCompletesATaskAcrossANATSRestart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ns := &embeddedNATS{t: t, dir: t.TempDir(), port: ln.Addr().(*net.TCPAddr).Port}
	ln.Close()
	ns.up()
	t.Cleanup(ns.down)
	url := fmt.Sprintf("nats://127.0.0.1:%d", ns.port)

	t.Setenv("WILCO_TRANSPORT", url)
	in := blackbox.Serve(t, `agents:
  - {name: far1, adapter: mailbox, capabilities: [go]}
verify:
  steps:
    - {name: check, run: "true", timeout: 30s}
`)
	var tok struct{ Token string }
	in.Must(200, in.Call("POST", "/v1/agents/far1/token", blackbox.AdminToken, nil), &tok)

	work := t.TempDir()
	script := filepath.Join(work, "agent.sh")
	if err := os.WriteFile(script, []byte(natsAgentScript), 0o700); err != nil {
		t.Fatal(err)
	}
	gate := filepath.Join(work, "gate")
	agentOut := &blackbox.LockedBuffer{}
	agent := exec.Command("bash", script)
	agent.Dir = work
	agent.Env = append(os.Environ(), "WILCO="+blackbox.WilcoBin, "GATE="+gate, "WILCO_AGENT=far1", "WILCO_AGENT_TOKEN="+tok.Token,
		"WILCO_REPOSITORY="+filepath.Base(in.Dir), "WILCO_ADDR=http://127.0.0.1:1")
	agent.Stdout, agent.Stderr = agentOut, agentOut
	agent.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-agent.Process.Pid, syscall.SIGKILL); _ = agent.Wait() })

	var task struct{ ID string }
	in.Must(201, in.Call("POST", "/v1/tasks", blackbox.AdminToken, map[string]any{"description": "list the files", "agent": "far1"}), &task)
	waitTask := func(want string) {
		t.Helper()
		var tk struct{ State string }
		if !blackbox.Eventually(60*time.Second, 20*time.Millisecond, func() bool {
			in.Must(200, in.Call("GET", "/v1/tasks/"+task.ID, blackbox.AdminToken, nil), &tk)
			return tk.State == want
		}) {
			t.Fatalf("task %s is %s, want %s\nagent:\n%s\nwilco:\n%s", task.ID, tk.State, want, agentOut, blackbox.Tail(in.Stderr.String(), 30))
		}
	}
	waitTask("running") // acknowledged over NATS

	ns.down()
	// wilco saw it go: the restart is a real one, not a blip no one noticed.
	in.Until("wilco to see NATS go", 30*time.Second, func() bool { return strings.Contains(in.Stderr.String(), "NATS disconnected") })
	ns.up()
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitTask("success")
	if !strings.Contains(agentOut.String(), "interpreted as complete") {
		t.Errorf("the agent's completion was not answered over NATS:\n%s", agentOut)
	}
}
