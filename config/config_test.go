package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"wilco/core"
)

func TestLoadReferenceExample(t *testing.T) {
	t.Parallel()
	c, err := Load("testdata/reference.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Store = ".wilco/wilco.db"
	want.Agents = []Agent{
		{Name: "claude", Adapter: "exec", Preset: "claude-code", Command: []string{"claude"}, Prompt: "stdin", Handshake: "inline",
			Env: map[string]string{"KEY": "value"}, Capabilities: []string{"go"}, Timeout: 30 * time.Minute, IdleTimeout: 10 * time.Minute, Instances: 2},
		{Name: "scout-1", Adapter: "exec", Command: []string{"claude", "-p"}, Prompt: "stdin", Handshake: "inline", Role: "scout"},
		{Name: "remote-1", Adapter: "mailbox", Capabilities: []string{"go"}},
		{Name: "tui", Adapter: "tmux", Command: []string{"python3", "my_agent.py"}, Tmux: &Tmux{Session: "wilco-tui", Socket: "/tmp/tmux-1000/default",
			Ready: `^>\s*$`, Busy: "working", Permission: `Allow\?`, Submit: "Enter", Interrupt: []string{"Escape"}, Clear: []string{"C-u"},
			Approve: []string{"y", "Enter"}, Deny: []string{"n", "Enter"}, Allow: []string{"Write", "Edit"}, Width: 200, Height: 50,
			Settle: 1500 * time.Millisecond, SubmitTries: 3}},
	}
	want.Review = core.ReviewPolicy{Agent: "remote-1", Timeout: 10 * time.Minute}
	want.Package = "services/api"
	want.Transport = "nats://127.0.0.1:4222"
	want.Land = Land{To: "main", How: "commit", Order: "verified", Merge: "manual", MergeMethod: "squash", CITimeout: time.Hour, Poll: 30 * time.Second}
	want.Forge = &Forge{Kind: "github", API: "https://api.github.com", Repo: "acme/widget", Remote: "origin", Token: "${GITHUB_TOKEN}", WebhookSecret: "${WILCO_WEBHOOK_SECRET}"}
	want.Intake = &Intake{Label: "wilco", Poll: time.Minute}
	want.Verify.Steps = []Step{{Name: "unit", Run: "go test ./...", Timeout: 10 * time.Minute}}
	want.Prices = map[string]core.Price{"gpt-5.5": {InputPerMTok: 1.25, OutputPerMTok: 10, CachedPerMTok: 0.125}}
	written := []core.NotifyEvent{"escalated", "stuck", "clarification", "blocked", "unresponsive", "operation", "success", "failed"}
	want.Notify.Webhooks = []Webhook{{Name: "ops", URL: "https://hooks.example.com/wilco", Secret: "a-long-random-secret", Events: written, Format: "json"}}
	want.Notify.Desktop, want.Notify.BaseURL = true, "http://127.0.0.1:7777"
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("loaded:\n%+v\nwant:\n%+v", c, want)
	}
	if p := c.Policies(); !reflect.DeepEqual(p.Prices, want.Prices) {
		t.Fatalf("prices %+v", p.Prices)
	}
	if hooks := c.Policies().Notify.Hooks; !reflect.DeepEqual(hooks, []core.NotifyHook{{Name: "ops", Events: written}, {Name: DesktopHook, Events: core.DefaultNotifyEvents()}}) {
		t.Fatalf("hooks %+v", hooks)
	}
	c.Prices, c.Review, c.Package, c.Notify, c.Land = nil, core.ReviewPolicy{}, "", Default().Notify, Default().Land
	c.Forge, c.Intake = nil, nil
	p := c.Policies()
	if want := []string{"go"}; !reflect.DeepEqual(p.Probe.Needed, want) || p.Probe.OnRegister {
		t.Fatalf("probe %+v", p.Probe)
	}
	p.Probe = core.ProbePolicy{}
	defaults := core.DefaultPolicies()
	// The file's defaults of a pull request's landing are the core's
	// (for "" and 0), written out.
	defaults.Land.Merge, defaults.Land.CITimeout = core.MergeManual, core.DefaultCITimeout
	if !reflect.DeepEqual(p, defaults) {
		t.Fatalf("policies %+v, want the documented defaults", p)
	}
}

func TestLoadBadFileNamesLineAndKey(t *testing.T) {
	t.Parallel()
	_, err := Load("testdata/bad.yaml")
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`testdata/bad.yaml:7: policy.ack.timeouts[1]: must be positive, got "0s"`,
		`testdata/bad.yaml:8: policy.ack.retries: unknown key`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error\n%v\ndoes not contain\n%s", err, want)
		}
	}
	var ce *Error
	if !errors.As(err, &ce) || ce.Line == 0 || ce.Key == "" {
		t.Fatalf("want a *Error with a line and a key, got %#v", ce)
	}
}

func TestParseGood(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		yaml  string
		check func(t *testing.T, c *Config)
	}{
		{"minimal mailbox", "agents: [{name: a, adapter: mailbox}]", func(t *testing.T, c *Config) {
			if c.Listen != DefaultListen || c.Orchestrator != core.Orchestrator || c.Policy.Instruction.MaxRetries != core.DefaultMaxRetries {
				t.Errorf("defaults not applied: %+v", c)
			}
			if c.Compat.AIMaestro {
				t.Error("aimaestro on by default")
			}
		}},
		{"exec defaults prompt and handshake", "agents:\n  - {name: x, adapter: exec, command: [x, --print]}\n", func(t *testing.T, c *Config) {
			a := c.Agents[0]
			if a.Prompt != "stdin" || a.Handshake != "inline" {
				t.Errorf("exec defaults: prompt %q handshake %q", a.Prompt, a.Handshake)
			}
		}},
		{"exec preset without command", "agents: [{name: c, adapter: exec, preset: codex, handshake: session}]", nil},
		{"tmux with a preset and env", "agents: [{name: t, adapter: tmux, preset: claude-code, env: {A: b}, timeout: 1h}]", nil},
		{"tmux with a command and its keys", "agents: [{name: t, adapter: tmux, command: [python3, a.py], tmux: {ready: '^>\\s*$', busy: working, permission: 'Allow\\?', submit: C-m, interrupt: Escape, approve: [y, Enter], allow: [Write, 'Bash\\(go test']}}]", nil},
		{"tmux attached to a session", "agents: [{name: t, adapter: tmux, tmux: {session: wilco-tui, socket: /tmp/s.sock, ready: '^> ?$'}}]", nil},
		{"short ack timeouts", "agents: [{name: a, adapter: mailbox}]\npolicy:\n  ack: {timeouts: [200ms, 200ms], backoff: {base: 50ms, max: 100ms}}\n", func(t *testing.T, c *Config) {
			p := c.Policies().Ack
			if !reflect.DeepEqual(p.Timeouts, []time.Duration{200 * time.Millisecond, 200 * time.Millisecond}) || p.BackoffBase != 50*time.Millisecond {
				t.Errorf("ack policy %+v", p)
			}
			if p.QueuedFollowup != core.DefaultQueuedFollowup {
				t.Errorf("unset key lost its default: %+v", p)
			}
		}},
		{"quorum number and majority", "agents: [{name: a, adapter: mailbox}]\npolicy: {operation: {quorum: \"2\", proceed_on_timeout: false, reminders: []}}\n", func(t *testing.T, c *Config) {
			if c.Policy.Operation.Quorum != "2" || c.Policy.Operation.ProceedOnTimeout || len(c.Policy.Operation.Reminders) != 0 {
				t.Errorf("operation %+v", c.Policy.Operation)
			}
		}},
		{"anchors and aliases", "x: &caps [go, rust]\n", nil}, // replaced below: unknown key x
		{"null values keep defaults", "agents: [{name: a, adapter: mailbox}]\npolicy:\n  ack:\n    timeouts:\nlogs:\n", func(t *testing.T, c *Config) {
			if !reflect.DeepEqual(c.Policy.Ack.Timeouts, core.DefaultAckTimeouts()) {
				t.Errorf("timeouts %v", c.Policy.Ack.Timeouts)
			}
		}},
		{"compat aimaestro", "agents: [{name: a, adapter: mailbox}]\ncompat: {aimaestro: true}\norchestrator: chief-of-staff\n", func(t *testing.T, c *Config) {
			if !c.Compat.AIMaestro || c.Orchestrator != "chief-of-staff" {
				t.Errorf("compat %+v orchestrator %q", c.Compat, c.Orchestrator)
			}
		}},
		{"listen any port", "listen: \"[::1]:0\"\nagents: [{name: a, adapter: mailbox}]", nil},
		{"notify defaults", "agents: []\nnotify:\n  webhooks:\n    - url: http://127.0.0.1:9/hook\n    - {url: \"https://hooks.slack.com/services/T0/B0/x\", format: slack, events: [success]}\n  base_url: https://wilco.example.com/\n", func(t *testing.T, c *Config) {
			w := c.Notify.Webhooks
			if len(w) != 2 || w[0].Name != "127.0.0.1:9" || w[0].Format != "json" || !reflect.DeepEqual(w[0].Events, core.DefaultNotifyEvents()) ||
				w[1].Name != "hooks.slack.com" || w[1].Format != "slack" || !reflect.DeepEqual(w[1].Events, []core.NotifyEvent{core.NotifySuccess}) {
				t.Errorf("webhooks %+v", w)
			}
			if c.Notify.BaseURL != "https://wilco.example.com" || c.Notify.Desktop || c.Notify.Retry != Default().Notify.Retry {
				t.Errorf("notify %+v", c.Notify)
			}
			if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "notify.webhooks[0].secret: none: the notifications to 127.0.0.1:9 are not signed") {
				t.Errorf("warnings %q", c.Warnings)
			}
		}},
	}
	i := 0
	for i < len(tests) && tests[i].name != "anchors and aliases" {
		i++
	}
	tests[i].yaml = "agents:\n  - {name: a, adapter: mailbox, capabilities: &caps [go, rust]}\n  - {name: b, adapter: mailbox, capabilities: *caps}\n"
	tests[i].check = func(t *testing.T, c *Config) {
		if !reflect.DeepEqual(c.Agents[1].Capabilities, []string{"go", "rust"}) {
			t.Errorf("alias: %v", c.Agents[1].Capabilities)
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := Parse("wilco.yaml", []byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if tt.check != nil {
				tt.check(t, c)
			}
		})
	}
}

func TestParseBad(t *testing.T) {
	t.Parallel()
	const agent = "agents: [{name: a, adapter: mailbox}]\n"
	tests := []struct {
		name string
		yaml string
		want []string // each must appear in the error
	}{
		{"empty file", "", []string{"wilco.yaml: agents: required"}},
		{"no agents", "listen: 127.0.0.1:1\n", []string{"wilco.yaml: agents: required"}},
		{"agents not a list", "agents: 3\n", []string{"wilco.yaml:1: agents: must be a list of agents"}},
		{"not yaml", "agents: [\n", []string{"wilco.yaml:", "not valid YAML"}},
		{"not a mapping", "- a\n- b\n", []string{"wilco.yaml:1: must be a mapping"}},
		{"unknown top key", agent + "lisen: x\n", []string{"wilco.yaml:2: lisen: unknown key (known keys here: agents, compat, done, forge, intake, land, listen"}},
		{"repeated key", agent + "listen: 127.0.0.1:1\nlisten: 127.0.0.1:2\n", []string{"wilco.yaml:3: listen: repeated key"}},
		{"bad version", "version: 2\n" + agent, []string{"wilco.yaml:1: version: must be 1"}},
		{"bad transport", agent + "transport: http://nats:4222\n", []string{`wilco.yaml:2: transport: must be a NATS server URL such as nats://127.0.0.1:4222`}},
		{"a transport without a host", agent + "transport: \"nats://a:4222, tls://\"\n", []string{`wilco.yaml:2: transport: must be a NATS server URL`}},
		{"version string", "version: one\n" + agent, []string{`wilco.yaml:1: version: must be an integer, got "one"`}},
		{"bad listen", "listen: localhost\n" + agent, []string{"wilco.yaml:1: listen: must be host:port"}},
		{"bad port", "listen: 127.0.0.1:99999\n" + agent, []string{"wilco.yaml:1: listen: port must be a number"}},
		{"bad orchestrator", "orchestrator: \"a b\"\n" + agent, []string{`wilco.yaml:1: orchestrator: "a b": use 1 to 64`}},
		{"agent named like orchestrator", "agents: [{name: wilco, adapter: mailbox}]\n", []string{`wilco.yaml:1: agents[0].name: "wilco" is the orchestrator's name`}},
		{"agents not a list", "agents: {name: a}\n", []string{"wilco.yaml:1: agents: must be a list of agents, got a mapping"}},
		{"agent without name", "agents:\n  - adapter: mailbox\n", []string{"wilco.yaml:2: agents[0].name: required"}},
		{"agent bad name", "agents:\n  - {name: \"x/y\", adapter: mailbox}\n", []string{`wilco.yaml:2: agents[0].name: "x/y": use 1 to 64`}},
		{"duplicate agent", "agents:\n  - {name: a, adapter: mailbox}\n  - {name: a, adapter: mailbox}\n", []string{`wilco.yaml:3: agents[1].name: "a" is already the name of the agent on line 2`}},
		{"agent without adapter", "agents:\n  - name: a\n", []string{"wilco.yaml:2: agents[0].adapter: required: one of exec, mailbox, tmux"}},
		{"unknown adapter", "agents:\n  - name: a\n    adapter: ssh\n", []string{`wilco.yaml:3: agents[0].adapter: must be one of exec, mailbox, tmux, got "ssh"`}},
		{"unknown preset", "agents:\n  - name: a\n    adapter: exec\n    preset: cursor\n", []string{`wilco.yaml:4: agents[0].preset: must be one of claude-code, codex, gemini, aider, opencode, got "cursor"`}},
		{"exec without command or preset", "agents:\n  - {name: a, adapter: exec}\n", []string{"wilco.yaml:2: agents[0].command: required for adapter exec without a preset"}},
		{"bad prompt", "agents:\n  - {name: a, adapter: exec, command: [a], prompt: pipe}\n", []string{`agents[0].prompt: must be one of stdin, arg, file, got "pipe"`}},
		{"bad handshake", "agents:\n  - {name: a, adapter: exec, command: [a], handshake: twice}\n", []string{`agents[0].handshake: must be one of inline, session, none, got "twice"`}},
		{"session without preset", "agents:\n  - {name: a, adapter: exec, command: [a], handshake: session}\n", []string{"wilco.yaml:2: agents[0].handshake: session needs a preset"}},
		{"mailbox with exec fields", "agents:\n  - name: a\n    adapter: mailbox\n    preset: codex\n    command: [x]\n", []string{
			"wilco.yaml:4: agents[0].preset: applies to adapters exec and tmux only",
			"wilco.yaml:5: agents[0].command: applies to adapter exec and tmux only",
		}},
		{"tmux with prompt", "agents:\n  - {name: a, adapter: tmux, preset: codex, prompt: arg}\n", []string{"agents[0].prompt: applies to adapter exec only"}},
		{"tmux without ready", "agents:\n  - {name: a, adapter: tmux, command: [a]}\n", []string{"wilco.yaml:2: agents[0].tmux: tmux.ready is required without a preset"}},
		{"tmux without command", "agents:\n  - {name: a, adapter: tmux, tmux: {ready: x}}\n", []string{"agents[0].command: required for adapter tmux without a preset or a tmux.session"}},
		{"tmux bad pattern", "agents:\n  - name: a\n    adapter: tmux\n    command: [a]\n    tmux:\n      ready: '^> ('\n", []string{"wilco.yaml:6: agents[0].tmux.ready: not a regular expression"}},
		{"tmux bad allow", "agents:\n  - name: a\n    adapter: tmux\n    preset: claude-code\n    tmux: {allow: [ok, '(']}\n", []string{"agents[0].tmux.allow[1]: not a regular expression"}},
		{"tmux block on exec", "agents:\n  - {name: a, adapter: exec, command: [a], tmux: {ready: x}}\n", []string{"agents[0].tmux: applies to adapter tmux only"}},
		{"command not a list", "agents:\n  - {name: a, adapter: exec, command: claude}\n", []string{`agents[0].command: must be a list such as [a, b], got "claude"`}},
		{"bad env name", "agents:\n  - name: a\n    adapter: exec\n    command: [a]\n    env: {\"1X\": y}\n", []string{"wilco.yaml:5: agents[0].env.1X: not a valid environment variable name"}},
		{"bad capability", "agents:\n  - {name: a, adapter: mailbox, capabilities: [go, \"c++\"]}\n", []string{`agents[0].capabilities[1]: "c++": use 1 to 64`}},
		{"bad agent timeout", "agents:\n  - {name: a, adapter: exec, command: [a], timeout: 30}\n", []string{`agents[0].timeout: must be a Go duration such as "30s" or "5m", got "30"`}},
		{"idle above timeout", "agents:\n  - {name: a, adapter: exec, command: [a], timeout: 1m, idle_timeout: 2m}\n", []string{"agents[0].idle_timeout: must not exceed timeout"}},
		{"unknown agent key", "agents:\n  - {name: a, adapter: mailbox, capability: [go]}\n", []string{"wilco.yaml:2: agents[0].capability: unknown key"}},
		{"step without run", agent + "verify:\n  steps:\n    - {name: unit}\n", []string{"wilco.yaml:4: verify.steps[0].run: required"}},
		{"duplicate step", agent + "verify:\n  steps:\n    - {name: u, run: a}\n    - {name: u, run: b}\n", []string{`wilco.yaml:5: verify.steps[1].name: "u" is already the name of another step`}},
		{"step bad timeout", agent + "verify:\n  steps:\n    - {run: a, timeout: -1s}\n", []string{`verify.steps[0].timeout: must not be negative, got "-1s"`}},
		{"zero ack timeout", agent + "policy:\n  ack:\n    timeouts: [5m, 0s, 1m]\n", []string{`wilco.yaml:4: policy.ack.timeouts[1]: must be positive, got "0s"`}},
		{"ack timeouts empty", agent + "policy:\n  ack:\n    timeouts: []\n", []string{"wilco.yaml:4: policy.ack.timeouts: must list at least one timeout"}},
		{"ack timeouts scalar", agent + "policy:\n  ack:\n    timeouts: 5m\n", []string{"policy.ack.timeouts: must be a list of Go durations"}},
		{"backoff max below base", agent + "policy:\n  ack:\n    backoff:\n      base: 1m\n      max: 30s\n", []string{"wilco.yaml:6: policy.ack.backoff.max: must not be below base"}},
		{"bad on_unresponsive", agent + "policy: {ack: {on_unresponsive: retry}}\n", []string{`policy.ack.on_unresponsive: must be one of reassign, escalate, got "retry"`}},
		{"negative corrections", agent + "policy: {ack: {max_corrections: -1}}\n", []string{"policy.ack.max_corrections: must not be negative, got -1"}},
		{"negative max_retries", agent + "policy:\n  instruction:\n    max_retries: -2\n", []string{"wilco.yaml:4: policy.instruction.max_retries: must not be negative, got -2"}},
		{"max_retries float", agent + "policy: {instruction: {max_retries: 1.5}}\n", []string{`policy.instruction.max_retries: must be an integer, got "1.5"`}},
		{"zero hard_stop", agent + "policy: {loop: {hard_stop: 0}}\n", []string{"policy.loop.hard_stop: must be at least 1, got 0"}},
		{"reminder after timeout", agent + "policy:\n  operation:\n    timeout: 60s\n", []string{"wilco.yaml:4: policy.operation.reminders[1]: must come before the timeout"}},
		{"reminders out of order", agent + "policy:\n  operation:\n    reminders: [60s, 30s]\n", []string{"wilco.yaml:4: policy.operation.reminders[1]: must come after the reminder before it"}},
		{"bad quorum", agent + "policy: {operation: {quorum: most}}\n", []string{`policy.operation.quorum: must be "all", "majority" or a number of agents, got "most"`}},
		{"proceed not bool", agent + "policy: {operation: {proceed_on_timeout: yes}}\n", []string{`policy.operation.proceed_on_timeout: must be true or false, got "yes"`}},
		{"unknown policy", agent + "policy:\n  acks: {}\n", []string{"wilco.yaml:3: policy.acks: unknown key (known keys here: ack, budget, instruction, loop, operation)"}},
		{"bad retention", agent + "logs: {retry_log_retention: 7d}\n", []string{`logs.retry_log_retention: must be a Go duration such as "30s" or "5m", got "7d"`}},
		{"compat not bool", agent + "compat: {aimaestro: 1}\n", []string{`compat.aimaestro: must be true or false, got "1"`}},
		{"unknown notify key", agent + "notify:\n  slack: true\n", []string{"wilco.yaml:3: notify.slack: unknown key (known keys here: base_url, desktop, retry, webhooks)"}},
		{"webhook without url", agent + "notify:\n  webhooks:\n    - {secret: s}\n", []string{"wilco.yaml:4: notify.webhooks[0].url: required"}},
		{"webhook bad url", agent + "notify:\n  webhooks:\n    - url: ftp://x/y\n", []string{`wilco.yaml:4: notify.webhooks[0].url: must be an http:// or https:// URL such as https://hooks.example.com/wilco, got "ftp://x/y"`}},
		{"webhook unknown key", agent + "notify:\n  webhooks:\n    - url: http://x/\n      sign: true\n", []string{"wilco.yaml:5: notify.webhooks[0].sign: unknown key (known keys here: events, format, name, secret, url)"}},
		{"webhook bad format", agent + "notify:\n  webhooks:\n    - {url: http://x/, format: xml}\n", []string{`wilco.yaml:4: notify.webhooks[0].format: must be one of json, slack, got "xml"`}},
		{"webhook bad event", agent + "notify:\n  webhooks:\n    - url: http://x/\n      events: [stuck, exploded]\n", []string{`wilco.yaml:5: notify.webhooks[0].events[1]: must be one of escalated, clarification, blocked, stuck, unresponsive, operation, permission, success, failed, acknowledged, pull_request, ended, got "exploded"`}},
		{"webhook event twice", agent + "notify:\n  webhooks:\n    - {url: http://x/, events: [stuck, stuck]}\n", []string{`notify.webhooks[0].events[1]: "stuck" is named twice`}},
		{"webhook no events", agent + "notify:\n  webhooks:\n    - {url: http://x/, events: []}\n", []string{"notify.webhooks[0].events: must name at least one event"}},
		{"webhooks of one host", agent + "notify:\n  webhooks:\n    - url: https://hooks.slack.com/a\n    - url: https://hooks.slack.com/b\n", []string{`wilco.yaml:5: notify.webhooks[1].name: "hooks.slack.com" is already the name of notify.webhooks[0] (a webhook's name is its URL's host unless given): give each a name`}},
		{"webhook named desktop", agent + "notify:\n  webhooks:\n    - {url: http://x/, name: desktop}\n", []string{`notify.webhooks[0].name: "desktop" is the desktop notifications' name`}},
		{"webhook bad name", agent + "notify:\n  webhooks:\n    - {url: http://x/, name: \"a b\"}\n", []string{`notify.webhooks[0].name: "a b": use 1 to 64`}},
		{"webhooks not a list", agent + "notify: {webhooks: http://x/}\n", []string{"notify.webhooks: must be a list of webhooks"}},
		{"desktop not bool", agent + "notify: {desktop: yes}\n", []string{`notify.desktop: must be true or false, got "yes"`}},
		{"bad base_url", agent + "notify: {base_url: localhost:7777}\n", []string{`notify.base_url: must be an http:// or https:// URL`}},
		{"zero max_attempts", agent + "notify:\n  retry: {max_attempts: 0}\n", []string{"wilco.yaml:3: notify.retry.max_attempts: must be at least 1, got 0"}},
		{"notify backoff max below base", agent + "notify:\n  retry:\n    backoff: {base: 1m, max: 1s}\n", []string{"wilco.yaml:4: notify.retry.backoff.max: must not be below base (1s < 1m0s)"}},
		{"notify timeout zero", agent + "notify: {retry: {timeout: 0s}}\n", []string{`notify.retry.timeout: must be positive, got "0s"`}},
		{"secret from an unset variable", agent + "notify:\n  webhooks:\n    - {url: http://x/, secret: \"${WILCO_TEST_UNSET_SECRET}\"}\n", []string{"wilco.yaml:4: notify.webhooks[0].secret: the environment variable WILCO_TEST_UNSET_SECRET is not set"}},
		{"several errors at once", "listen: x\nagents:\n  - {name: a, adapter: nope}\npolicy: {instruction: {max_retries: -1}}\n", []string{
			"wilco.yaml:1: listen:", "wilco.yaml:3: agents[0].adapter:", "wilco.yaml:4: policy.instruction.max_retries:",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := Parse("wilco.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatalf("no error; loaded %+v", c)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\ndoes not contain\n%s", err, w)
				}
			}
		})
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	t.Parallel()
	c, err := Load("testdata/reference.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c.Compat.AIMaestro = true
	c.Policy.Ack.Timeouts = []time.Duration{90 * time.Second, 250 * time.Millisecond}
	data, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse("encoded.yaml", data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if !reflect.DeepEqual(back, c) {
		t.Fatalf("round trip changed the config:\n%s\nback: %+v\nwant: %+v", data, back, c)
	}
	if strings.Contains(string(data), "0s") && strings.Contains(string(data), "m0s") {
		t.Errorf("durations written with zero units:\n%s", data)
	}
}

func TestDefaultWithAgentLoads(t *testing.T) {
	t.Parallel()
	c := Default()
	c.Agents = []Agent{{Name: "claude", Adapter: "exec", Preset: "claude-code", Prompt: "stdin", Handshake: "inline"}}
	data, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "wilco.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if !reflect.DeepEqual(back, c) {
		t.Fatalf("got %+v want %+v", back, c)
	}
}

func TestPath(t *testing.T) {
	t.Setenv(EnvConfig, "")
	if p := Path(""); p != DefaultFile {
		t.Errorf("Path() = %q", p)
	}
	t.Setenv(EnvConfig, "/etc/wilco.yaml")
	if p := Path(""); p != "/etc/wilco.yaml" {
		t.Errorf("Path() with env = %q", p)
	}
	if p := Path("x.yaml"); p != "x.yaml" {
		t.Errorf("Path(flag) = %q", p)
	}
}

func TestFormatDuration(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		5 * time.Minute: "5m", time.Hour: "1h", 90 * time.Minute: "1h30m", 30 * time.Second: "30s",
		250 * time.Millisecond: "250ms", 168 * time.Hour: "168h", 2*time.Minute + 30*time.Second: "2m30s",
	} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestLoadMissingFile(t *testing.T) {
	t.Parallel()
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v", err)
	}
}

func TestReplanAfterAboveHardStopIsValidWithAWarning(t *testing.T) {
	t.Parallel()
	c, err := Parse("wilco.yaml", []byte("agents:\n  - {name: a, adapter: mailbox}\npolicy:\n  loop: {replan_after: 13}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Policy.Loop.ReplanAfter != 13 || len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "wilco.yaml:4: policy.loop.replan_after: 13 is more than hard_stop (12): the hard stop comes first") {
		t.Fatalf("replan_after %d, warnings %q", c.Policy.Loop.ReplanAfter, c.Warnings)
	}
}

// ${NAME} in a webhook's url and secret reads the environment: the file
// keeps the reference, Resolve gives the values.
func TestWebhookURLAndSecretReadTheEnvironment(t *testing.T) {
	t.Setenv("WILCO_TEST_HOOK_HOST", "hooks.example.com")
	t.Setenv("WILCO_TEST_HOOK_SECRET", "s3cr3t")
	c, err := Parse("wilco.yaml", []byte("agents: []\nnotify:\n  webhooks:\n    - {url: \"https://${WILCO_TEST_HOOK_HOST}/wilco\", secret: \"${WILCO_TEST_HOOK_SECRET}\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	w := c.Notify.Webhooks[0]
	if w.Name != "hooks.example.com" || w.Secret != "${WILCO_TEST_HOOK_SECRET}" {
		t.Fatalf("webhook %+v", w)
	}
	u, secret, err := w.Resolve()
	if err != nil || u != "https://hooks.example.com/wilco" || secret != "s3cr3t" {
		t.Fatalf("resolved %q %q %v", u, secret, err)
	}
	data, err := c.Encode()
	if err != nil || !strings.Contains(string(data), "${WILCO_TEST_HOOK_SECRET}") || strings.Contains(string(data), "s3cr3t") {
		t.Fatalf("encoded %v:\n%s", err, data)
	}
}

// The programs a context probe asks about are the commands the verify
// steps run, each once: not test's operand, nor echo or exit.
func TestTheProbeAsksOnlyAboutTheProgramsTheStepsRun(t *testing.T) {
	t.Parallel()
	v := Verify{Steps: []Step{
		{Name: "fixed", Run: `test -f fixed.txt || { echo "fixed.txt is missing"; exit 1; }`},
		{Name: "unit", Run: "go test ./... && go vet ./..."},
		{Name: "lint", Run: "sh -c 'gofmt -l . | grep . && exit 1 || true'"},
		{Name: "repo", Run: "./check.sh"},
	}}
	if got, want := v.Programs(), []string{"go", "gofmt", "grep"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Programs = %q, want %q", got, want)
	}
}

func TestALandingThisVersionDoesNotRunIsRefusedWithItsLine(t *testing.T) {
	t.Parallel()
	const agent = "agents: [{name: a, adapter: mailbox}]\n"
	for _, c := range []struct{ yaml, want string }{
		{agent + "land:\n  how: merge\n", "wilco.yaml:3: land.how: merge needs each task in a worktree of its own (parallel > 1): use commit or none, or set parallel"},
		{agent + "parallel: 3\nland:\n  how: commit\n", "wilco.yaml:4: land.how: commit lands in the checkout itself, where tasks worked in parallel (parallel 3) do not work: use merge, rebase or squash"},
		{agent + "land: {how: pr}\nparallel: 2\n", "wilco.yaml:2: land.how: pr needs a forge section"},
		{agent + "parallel: 2\nforge: {kind: github}\nland: {how: pr, poll: 10ms}\n", "wilco.yaml:4: land.poll: must be at least 1s"},
		{agent + "parallel: 0\n", "wilco.yaml:2: parallel: must be at least 1 (tasks worked at once), got 0"},
		{"agents: [{name: a, adapter: exec, command: [x], instances: 0}]\n", "wilco.yaml:1: agents[0].instances: must be at least 1 (tasks the agent works at once), got 0"},
		{agent + "land: {how: pr}\n", "wilco.yaml:2: land.how: pr needs each task in a worktree of its own (parallel > 1)"},
		{agent + "land:\n  to: main\n  how: fast\n", `wilco.yaml:4: land.how: must be one of merge, rebase, squash, commit, none, pr, got "fast"`},
		{agent + "land:\n  order: fifo\n", `wilco.yaml:3: land.order: must be one of verified, submission, got "fifo"`},
		{agent + "land:\n  to: \"my branch\"\n", `wilco.yaml:3: land.to: "my branch" is not a branch name`},
		{agent + "land:\n  hwo: commit\n", "wilco.yaml:3: land.hwo: unknown key (known keys here: ci_timeout, how, merge, merge_method, order, poll, to)"},
	} {
		_, err := Parse("wilco.yaml", []byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v\nwant %s", c.yaml, err, c.want)
		}
	}
	cfg, err := Parse("wilco.yaml", []byte(agent+"land: {to: release/2, how: commit, order: submission}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.Policies().Land; p != (core.LandPolicy{To: "release/2", How: core.LandCommit, Order: "submission", Merge: core.MergeManual, CITimeout: core.DefaultCITimeout}) {
		t.Fatalf("policies: %+v", p)
	}
}

func TestParallelMakesMergeTheDefaultLanding(t *testing.T) {
	t.Parallel()
	cfg, err := Parse("wilco.yaml", []byte("agents: [{name: a, adapter: exec, command: [x], instances: 3}]\nparallel: 4\n"))
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Policies()
	if p.Parallel != 4 || p.Land.How != core.LandMerge || cfg.Agents[0].Spec().Instances != 3 {
		t.Fatalf("parallel %d, land.how %q, instances %d", p.Parallel, p.Land.How, cfg.Agents[0].Spec().Instances)
	}
	for _, how := range []string{core.LandMerge, core.LandRebase, core.LandSquash, core.LandNone} {
		if _, err := Parse("wilco.yaml", []byte("agents: [{name: a, adapter: mailbox}]\nland: {how: "+how+"}\nparallel: 2\n")); err != nil {
			t.Errorf("%s with parallel 2: %v", how, err)
		}
	}
	cfg, err = Parse("wilco.yaml", []byte("agents: [{name: a, adapter: mailbox}]\n"))
	if err != nil || cfg.Policies().Land.How != core.LandNone || cfg.Policies().Parallel != 0 {
		t.Fatalf("one at a time: %v %+v", err, cfg.Policies())
	}
}

func TestTmuxAndMailboxAgentsTakeInstances(t *testing.T) {
	t.Parallel()
	cfg, err := Parse("wilco.yaml", []byte("parallel: 4\nagents:\n  - {name: a, adapter: tmux, command: [x], tmux: {ready: '^> $'}, instances: 2}\n  - {name: b, adapter: mailbox, instances: 3}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := cfg.Agents[0].Spec().Instances, cfg.Agents[1].Spec().Instances; a != 2 || b != 3 {
		t.Fatalf("instances %d and %d, want 2 and 3", a, b)
	}
}
