package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestRunFollowsToSuccess(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	b.mux.Handle("GET /healthz", respond(200, `{"status":"ok"}`))
	b.mux.Handle("POST /v1/tasks", respond(201, `{"id":"T-3","description":"Fix the login timeout","state":"queued","position":1,"created_at":"2026-01-26T14:30:00Z"}`))
	// The first GET (before following) sees it running, the last its end.
	var mu sync.Mutex
	gets := 0
	serveCanned(t, b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gets++
		n := gets
		mu.Unlock()
		if n == 1 {
			respond(200, `{"id":"T-3","state":"running","attempt":1,"created_at":"2026-01-26T14:30:00Z"}`)(w, r)
			return
		}
		respond(200, `{"id":"T-3","state":"success","attempt":2,"summary":{"files":["a.go"],"why":"","run_id":"R-2","text":"Raised the timeout to 60s; verified by run R-2."},"created_at":"2026-01-26T14:30:00Z"}`)(w, r)
	}))
	if code := b.run("run", "Fix the login timeout", "--criteria", "tests pass"); code != 0 {
		t.Fatalf("exit %d: %s", code, b.errb)
	}
	out := b.out.String()
	if !strings.HasPrefix(out, "T-3 queued\n") || !strings.Contains(out, "state running → success") ||
		!strings.HasSuffix(out, "\nRaised the timeout to 60s; verified by run R-2.\n") {
		t.Errorf("printed\n%s", out)
	}
	if got := b.body("POST /v1/tasks"); got != `{"description":"Fix the login timeout","acceptance_criteria":["tests pass"]}` {
		t.Errorf("body %s", got)
	}
}

func TestRunExitsOneUnlessSuccess(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	b.mux.Handle("GET /healthz", respond(200, `{"status":"ok"}`))
	b.mux.Handle("POST /v1/tasks", respond(201, `{"id":"T-9","state":"queued","created_at":"2026-01-26T14:30:00Z"}`))
	b.mux.Handle("GET /v1/tasks/T-9", respond(200, `{"id":"T-9","state":"stuck","attempt":12,"stuck_report":{"hypotheses":["the test is flaky"],"run_ids":["R-12"],"path":".wilco/stuck/T-9.md","markdown":"Hypotheses: the test is flaky."},"created_at":"2026-01-26T14:30:00Z"}`))
	b.mux.Handle("GET /v1/events", respond(200, `{"events":[],"next":0}`))
	if code := b.run("run", "Fix the flaky test"); code != exitFailure {
		t.Errorf("exit %d, want 1 for a stuck task", code)
	}
	if !strings.Contains(b.out.String(), "wilco resume T-9") || !strings.Contains(b.out.String(), "Hypotheses: the test is flaky.") {
		t.Errorf("printed\n%s", b.out)
	}
}

// TestRunStartsAnInProcessServer runs a real server in the process when
// none answers; until the server serves tasks, run says so.
func TestRunStartsAnInProcessServer(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	noServer(t, b)
	code := b.run("run", "Fix it")
	if code != exitOK || !strings.Contains(b.errb.String(), "serving in this process at http://127.0.0.1:") {
		t.Errorf("exit %d, stderr %s\nstdout %s", code, b.errb, b.out.String())
	}
	if fi, err := os.Stat(filepath.Join(b.c.wd, ".wilco", "token")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the in-process server's token: %v %v", fi, err)
	}
}

// The in-process server of wilco run keeps its state where WILCO_STORE
// says, as wilco serve does.
func TestRunsInProcessServerUsesWilcoStore(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	noServer(t, b)
	elsewhere := filepath.Join(t.TempDir(), "state.db")
	b.env["WILCO_STORE"] = elsewhere
	if code := b.run("run", "Fix it"); code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, b.errb)
	}
	if _, err := os.Stat(elsewhere); err != nil {
		t.Errorf("the store WILCO_STORE names: %v", err)
	}
	if _, err := os.Stat(filepath.Join(b.c.wd, ".wilco", "wilco.db")); err == nil {
		t.Error("the in-process server also wrote the default store")
	}
}

// noServer makes the working directory a repository where no server
// answers, with a scripted exec agent and a verify step it passes.
func noServer(t *testing.T, b *cliBundle) {
	t.Helper()
	b.env["WILCO_ADDR"] = "http://127.0.0.1:1"
	delete(b.env, "WILCO_TOKEN")
	agent := "#!/bin/sh\ncat >/dev/null\necho \"[ACK] $WILCO_TASK_ID - RECEIVED\"\necho done > out.txt\n"
	if err := os.WriteFile(filepath.Join(b.c.wd, "agent.sh"), []byte(agent), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := "version: 1\nlisten: 127.0.0.1:0\nagents:\n  - {name: script, adapter: exec, command: [./agent.sh]}\nverify:\n  steps:\n    - {name: check, run: \"grep -q done out.txt\"}\n"
	if err := os.WriteFile(filepath.Join(b.c.wd, "wilco.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestServeReportsABadConfiguration(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	if err := os.WriteFile(filepath.Join(b.c.wd, "wilco.yaml"), []byte("version: 1\nagents: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := b.run("serve"); code != exitFailure || !strings.Contains(b.errb.String(), "agents") {
		t.Errorf("exit %d, stderr %s", code, b.errb)
	}
}
