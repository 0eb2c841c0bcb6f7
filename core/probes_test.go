package core

import (
	"strings"
	"testing"
)

func TestParseProbeReadsTheLinesAgentsWrite(t *testing.T) {
	t.Parallel()
	c, ok := ParseProbe("Here is my environment:\n\n- **os**: Debian 12\ncli: claude 2.1.331\n`tool git: 2.39.5`\ntool go: missing\ntool node = v20.20.2\nTool Cargo: not installed\n")
	if !ok || c.OS != "Debian 12" || c.CLI != "claude 2.1.331" || c.Tools["git"] != "2.39.5" || c.Tools["go"] != Missing ||
		c.Tools["node"] != "v20.20.2" || c.Tools["cargo"] != Missing {
		t.Fatalf("%v %+v", ok, c)
	}
	if _, ok := ParseProbe("I cannot tell."); ok {
		t.Fatal("an answer without the lines was read as a probe's")
	}
}

func FuzzParseProbe(f *testing.F) {
	for _, s := range []string{"os: x\ntool go: missing", "tool : x", "- **tool git**: 2", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, ok := ParseProbe(s)
		if !ok && (c.OS != "" || c.CLI != "" || len(c.Tools) > 0) {
			t.Fatalf("%q: not a probe, yet %+v", s, c)
		}
		for k, v := range c.Tools {
			if k == "" || len(v) > 200 {
				t.Fatalf("%q: tool %q %q", s, k, v)
			}
		}
	})
}

func probeBundle(t *testing.T) *testBundle {
	b := setup(t)
	p := DefaultPolicies()
	p.Probe = ProbePolicy{OnRegister: true, Tools: []string{"go", "git"}, Needed: []string{"go"}}
	b.ok(b.c.Configure(b.now, p))
	return b
}

func TestAProbeFillsTheAgentsContextWhenItRegisters(t *testing.T) {
	t.Parallel()
	b := probeBundle(t)
	b.agent("claude", "exec", "go")
	probes := b.delivered("claude")
	if len(probes) != 1 || probes[0].Type != string(TypeProbe) || !strings.Contains(probes[0].Body, "tool go: <its version, or missing>") {
		t.Fatalf("the probe: %+v", probes)
	}
	in := reply(b, "claude", probes[0].ID, "os: Linux\ncli: claude 2.1\ntool go: go1.26\ntool git: 2.39")
	a, _ := b.c.Agent("claude")
	if in.Kind != "probe" || a.Context == nil || a.Context.Tools["go"] != "go1.26" || a.Context.OS != "Linux" {
		t.Fatalf("%+v %+v", in, a.Context)
	}
	// Registered again unchanged (a restart): no new probe.
	b.agent("claude", "exec", "go")
	if n := len(b.delivered("claude")); n != 1 {
		t.Fatalf("%d probes", n)
	}
}

func TestATaskIsRefusedForAToolTheAgentsSideLacks(t *testing.T) {
	t.Parallel()
	b := probeBundle(t)
	b.agent("claude", "exec", "go")
	reply(b, "claude", b.delivered("claude")[0].ID, "os: Linux\ntool go: missing\ntool git: 2.39")
	_, err := b.c.SubmitTask(b.now, TaskSpec{Description: "x"})
	if CodeOf(err) != Conflict || !strings.Contains(err.Error(), "claude lacks go") {
		t.Fatalf("submitted: %v", err)
	}
	_, err = b.c.SubmitTask(b.now, TaskSpec{Description: "x", Agent: "claude"})
	if CodeOf(err) != Conflict || !strings.Contains(err.Error(), "agent claude lacks go") {
		t.Fatalf("submitted to claude: %v", err)
	}
	b.collect()
	// Another agent has it: the task goes there, never to claude.
	b.agent("codex", "exec", "go")
	reply(b, "codex", b.delivered("codex")[0].ID, "os: Linux\ntool go: go1.26\ntool git: 2.39")
	tk := submit(b, TaskSpec{Description: "x"})
	if got := b.task(tk.ID); got.Agent != "codex" {
		t.Fatalf("the task went to %s", got.Agent)
	}
}

func TestAProbeNotAnsweredInTimeFails(t *testing.T) {
	t.Parallel()
	b := probeBundle(t)
	b.agent("claude", "exec", "go")
	id := b.delivered("claude")[0].ID
	b.advance(DefaultProbeTimeout)
	if d := b.delivery(id); d.State != Failed {
		t.Fatalf("%s", d.State)
	}
	if a, _ := b.c.Agent("claude"); a.Context != nil {
		t.Fatal("a context without an answer")
	}
}
