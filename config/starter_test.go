package config

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"wilco/core"
)

// starterConfigs are configurations EncodeStarter is asked to write:
// what `wilco init` makes (the defaults, with or without agents and verify
// steps), the reference file, and one that changes a little of every
// section.
func starterConfigs(t *testing.T) map[string]*Config {
	t.Helper()
	initial := Default()
	withAgents := Default()
	withAgents.Agents = []Agent{
		{Name: "claude", Adapter: "exec", Preset: "claude-code", Command: []string{"claude"}},
		{Name: "aider", Adapter: "exec", Preset: "aider", Command: []string{"aider"}},
	}
	withAgents.Verify.Steps = []Step{{Name: "go", Run: "go test ./...", Timeout: 10 * time.Minute}, {Name: "npm", Run: "npm test", Timeout: 10 * time.Minute}}
	reference, err := Load("testdata/reference.yaml")
	if err != nil {
		t.Fatal(err)
	}
	changed := Default()
	changed.Agents = []Agent{{Name: "remote-1", Adapter: "mailbox"}}
	changed.Orchestrator = "boss"
	changed.Policy.Loop.HardStop = 6
	changed.Logs.RetryLogRetention = 48 * time.Hour
	changed.Compat.AIMaestro = true
	changed.Done.Tests = core.CheckBlock
	changed.Probe = true
	changed.Notify.Desktop = true
	return map[string]*Config{"init": initial, "init with agents and steps": withAgents, "reference": reference, "changed": changed}
}

// TestTheStarterFileReadsBackAsEncodesDoes: what `wilco init` writes
// (EncodeStarter) is one wilco.yaml that Parse reads back to the
// configuration it reads back from Encode's file — the configuration
// itself for one Parse made.
func TestTheStarterFileReadsBackAsEncodesDoes(t *testing.T) {
	t.Parallel()
	for name, c := range starterConfigs(t) {
		starter, err := c.EncodeStarter()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		full, err := c.Encode()
		if err != nil {
			t.Fatal(err)
		}
		want, err := Parse("full.yaml", full)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, full)
		}
		got, err := Parse("starter.yaml", starter)
		if err != nil {
			t.Fatalf("%s: the starter file does not load: %v\n%s", name, err, starter)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the starter file reads back otherwise than Encode's:\n%s\ngot  %+v\nwant %+v", name, starter, got, want)
		}
		if name == "reference" && !reflect.DeepEqual(got, c) {
			t.Errorf("the reference file read back from the starter file differs:\n%s", starter)
		}
	}
}

// commentedKey is a commented line that names a key (not a sentence).
var commentedKey = regexp.MustCompile(`^# ( *(- )?\{?[a-z_]+:.*)$`)

// TestTheStarterFilesCommentsAreTheDefaults: switched on, the keys the
// starter file shows commented (not its examples) read as the default
// configuration does: the file says what the defaults are.
func TestTheStarterFilesCommentsAreTheDefaults(t *testing.T) {
	t.Parallel()
	for name, c := range starterConfigs(t) {
		starter, err := c.EncodeStarter()
		if err != nil {
			t.Fatal(err)
		}
		var on []string
		examples, switched := false, 0
		for line := range strings.SplitSeq(string(starter), "\n") {
			examples = examples && line != "" || strings.HasPrefix(line, "# Examples")
			if m := commentedKey.FindStringSubmatch(line); m != nil && !examples {
				line = m[1]
				switched++
			}
			on = append(on, line)
		}
		if switched < 10 && name == "init" {
			t.Fatalf("%s: %d commented keys switched on:\n%s", name, switched, starter)
		}
		got, err := Parse("on.yaml", []byte(strings.Join(on, "\n")))
		if err != nil {
			t.Fatalf("%s: the starter file with its defaults switched on does not load: %v\n%s", name, err, strings.Join(on, "\n"))
		}
		want, err := Parse("starter.yaml", starter)
		if err != nil {
			t.Fatal(err)
		}
		// The store's line names the file the default (none) stands for.
		if want.Store == "" && got.Store == ".wilco/wilco.db" {
			got.Store = ""
		}
		// With no verify step, the file shows an example of one.
		if len(want.Verify.Steps) == 0 && len(got.Verify.Steps) == 1 && got.Verify.Steps[0].Run == "make test" {
			got.Verify = want.Verify
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: switched on, the commented keys are not the defaults:\n%s\ngot  %+v\nwant %+v", name, strings.Join(on, "\n"), got, want)
		}
	}
}

// TestTheStarterFileSaysWhatIsMissing: no agent is `agents: []` with
// examples and what it means; no verify step, an example and what it
// means.
func TestTheStarterFileSaysWhatIsMissing(t *testing.T) {
	t.Parallel()
	data, err := Default().EncodeStarter()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\nagents: []\n", "#   - name: claude", "every task is refused", `each ends "unverified"`,
		"# verify:\n#   steps:\n", "#   webhooks:\n", "budget: {task: {max_cost_usd: 0, max_tokens: 0}, day: {max_cost_usd: 0, max_tokens: 0}} # 0: no limit\n"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("lacks %q:\n%s", want, data)
		}
	}
}
