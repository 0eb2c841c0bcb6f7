package test

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"

	"wilco/test/blackbox"
)

// The README's main job: `wilco demo` makes a sample repository, drives
// the scripted agent through ACK, a failed verification, a retry whose
// prompt carries the failure, and success, and exits 0.
func TestDemoSucceedsAfterARetryThatCarriesTheFailure(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(blackbox.WilcoBin, "demo")
	cmd.Dir = t.TempDir()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("wilco demo: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	took := time.Since(start)
	text := out.String()
	for _, want := range []string{
		"Waiting for acknowledgment...",
		"[ACK] T-1 - RECEIVED",
		"attempt 1 failed (verification_failed)",
		"TestAdd",
		"attempt 2 sent with a <retry_context> carrying the failure",
		"T-1 succeeded after 2 attempts",
		"How it was verified: go test ./... passed in run T-1-a2",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, text)
		}
	}
	t.Logf("wilco demo took %s", took.Round(time.Millisecond))
}

// wilco demo --scout: the editor consults a scout, the reviewer rejects
// the first verified change with a reason that reaches the retry, and
// approves the second.
func TestDemoWithAScoutAndAReviewer(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(blackbox.WilcoBin, "demo", "--scout")
	cmd.Dir = t.TempDir()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("wilco demo --scout: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	text := out.String()
	for _, want := range []string{
		`editor asks scout scout: "What must Add return, and which test checks it?"`,
		"Querying Scout scout...",
		"the scout answers:",
		"Waiting for the reviewer...",
		"the reviewer's verdict: REJECTED",
		"attempt 1 failed (architect_rejected)",
		"the reviewer's verdict: APPROVED",
		"T-1 succeeded after 2 attempts",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, text)
		}
	}
}
