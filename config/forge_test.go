package config

import (
	"strings"
	"testing"
	"time"

	"wilco/core"
	"wilco/forge"
)

const oneAgent = "agents: [{name: a, adapter: mailbox}]\n"

func TestForgeKeysAreCheckedWithTheirLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"forge:\n  api: https://api.github.com\n", "wilco.yaml:3: forge.kind: required: github (github.com and GitHub Enterprise) or gitea (Gitea and Forgejo)"},
		{"forge:\n  kind: gitlab\n", `wilco.yaml:3: forge.kind: must be one of github, gitea, got "gitlab"`},
		{"forge:\n  kind: gitea\n", "wilco.yaml:3: forge.api: required for gitea: the address of the server's API, such as https://gitea.example.com/api/v1"},
		{"forge:\n  kind: github\n  api: ftp://example.com\n", `wilco.yaml:4: forge.api: must be the API's http:// or https:// address`},
		{"forge:\n  kind: github\n  api: https://user:pw@example.com/api/v3\n", `wilco.yaml:4: forge.api: must be the API's http:// or https:// address`},
		{"forge:\n  kind: github\n  repo: widget\n", `wilco.yaml:4: forge.repo: must be owner/name such as acme/widget, got "widget"`},
		{"forge:\n  kind: github\n  remote: \"my remote\"\n", `wilco.yaml:4: forge.remote: must be the name of a git remote such as origin, got "my remote"`},
		{"forge:\n  kind: github\n  tokn: x\n", "wilco.yaml:4: forge.tokn: unknown key"},
		{"intake: {label: wilco}\n", "wilco.yaml:2: intake: needs a forge section"},
		{"forge: {kind: github}\nintake:\n  poll: 5s\n", `wilco.yaml:4: intake.poll: must be at least 10s (each poll is a request to the forge, counted against its rate limit), got "5s"`},
		{"forge: {kind: github}\nintake:\n  label: \"a,b\"\n", `wilco.yaml:4: intake.label: must be one label's name, such as wilco, got "a,b"`},
		{"land:\n  merge: sometimes\n", `wilco.yaml:3: land.merge: must be one of manual, auto, got "sometimes"`},
		{"land:\n  ci_timeout: 0s\n", `wilco.yaml:3: land.ci_timeout: must be positive, got "0s"`},
	} {
		_, err := Parse("wilco.yaml", []byte(oneAgent+tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s", tc.in, err, tc.want)
		}
	}
}

func TestATokenWrittenInTheFileIsRefused(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"token", "webhook_secret"} {
		for _, v := range []string{"ghp_0123456789abcdef", "\"${GITHUB_TOKEN}x\"", "\"Bearer ${T}\"", "$GITHUB_TOKEN", "\"\""} {
			_, err := Parse("wilco.yaml", []byte(oneAgent+"forge:\n  kind: github\n  "+key+": "+v+"\n"))
			want := "wilco.yaml:4: forge." + key + ": must name an environment variable, such as ${"
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %s: got %v", key, v, err)
			}
			if err != nil && strings.Contains(err.Error(), "0123456789abcdef") {
				t.Errorf("the refusal shows the token: %v", err)
			}
		}
	}
}

func TestForgeDefaultsByKind(t *testing.T) {
	t.Parallel()
	c, err := Parse("wilco.yaml", []byte(oneAgent+"forge: {kind: github}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if *c.Forge != (Forge{Kind: "github", API: "https://api.github.com", Remote: "origin", Token: "${GITHUB_TOKEN}"}) {
		t.Fatalf("github: %+v", *c.Forge)
	}
	c, err = Parse("wilco.yaml", []byte(oneAgent+"forge: {kind: gitea, api: \"https://git.example.com/api/v1/\", remote: upstream}\nintake: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if *c.Forge != (Forge{Kind: "gitea", API: "https://git.example.com/api/v1", Remote: "upstream", Token: "${GITEA_TOKEN}"}) {
		t.Fatalf("gitea: %+v", *c.Forge)
	}
	if *c.Intake != (Intake{Label: "wilco", Poll: time.Minute}) {
		t.Fatalf("intake: %+v", *c.Intake)
	}
	if c.Land.Merge != "manual" || c.Land.CITimeout != time.Hour {
		t.Fatalf("land: %+v", c.Land)
	}
	c, err = Parse("wilco.yaml", []byte(oneAgent))
	if err != nil || c.Forge != nil || c.Intake != nil {
		t.Fatalf("no forge: %+v %+v %v", c.Forge, c.Intake, err)
	}
}

func TestIntakeIsReadWithItsLabelAndPoll(t *testing.T) {
	t.Parallel()
	c, err := Parse("wilco.yaml", []byte(oneAgent+"forge: {kind: github}\nintake: {label: todo, poll: 30s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Intake == nil || *c.Intake != (Intake{Label: "todo", Poll: 30 * time.Second}) {
		t.Fatalf("intake: %+v", c.Intake)
	}
}

func TestLandingByPullRequestNeedsAForgeAndPassesItToThePolicy(t *testing.T) {
	t.Parallel()
	c, err := Parse("wilco.yaml", []byte(oneAgent+"parallel: 2\nforge: {kind: github}\nland:\n  how: pr\n  merge: auto\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Policies().Land; p.How != "pr" || !p.Forge || c.Land.Poll != DefaultLandPoll {
		t.Fatalf("land policy %+v, poll %s", p, c.Land.Poll)
	}
	_, err = Parse("wilco.yaml", []byte(oneAgent+"parallel: 2\nland:\n  how: pr\n"))
	if err == nil || !strings.Contains(err.Error(), "wilco.yaml:4: land.how: pr needs a forge section") {
		t.Fatalf("got %v", err)
	}
}

func TestTheForgesOptionsTakeTheTokenFromTheEnvironment(t *testing.T) {
	t.Parallel()
	f := Forge{Kind: "github", API: "https://api.github.com", Remote: "origin", Token: "${GH_T}", WebhookSecret: "${GH_S}"}
	env := map[string]string{"GH_T": "secret-token", "GH_S": "hook-secret"}
	o, err := f.Options("git@github.com:acme/widget.git", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if o.Kind != forge.GitHub || o.Repo != (forge.Repo{Owner: "acme", Name: "widget"}) || o.Token != "secret-token" || o.API != "https://api.github.com" {
		t.Fatalf("options %+v", o)
	}
	if _, s, _ := f.Secrets(func(k string) string { return env[k] }); s != "hook-secret" {
		t.Fatalf("secret %q", s)
	}
	f.Repo = "other/repo"
	if o, _ := f.Options("/not/a/forge", func(k string) string { return env[k] }); o.Repo.String() != "other/repo" {
		t.Fatalf("forge.repo is not what counts: %+v", o.Repo)
	}
	f.Repo = ""
	if _, err := f.Options("/srv/widget.git", func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "forge.repo is not set and the remote origin does not say it") {
		t.Fatalf("a remote naming no repository: %v", err)
	}
	_, err = f.Options("git@github.com:acme/widget.git", func(string) string { return "" })
	if err == nil || err.Error() != "forge.token: the environment variable GH_T is not set" {
		t.Fatalf("unset: %v", err)
	}
}

func TestTheLandingPolicyCarriesThePullRequestKeysAndWhetherThereIsAForge(t *testing.T) {
	t.Parallel()
	c, err := Parse("wilco.yaml", []byte(oneAgent+"parallel: 2\nforge: {kind: github}\nland: {how: merge, merge: auto, ci_timeout: 20m}\n"))
	if err != nil {
		t.Fatal(err)
	}
	p := c.Policies().Land
	if p.Merge != core.MergeAuto || p.CITimeout != 20*time.Minute || !p.Forge {
		t.Fatalf("land policy %+v", p)
	}
	c, _ = Parse("wilco.yaml", []byte(oneAgent))
	if c.Policies().Land.Forge {
		t.Fatal("a forge without a forge section")
	}
}
