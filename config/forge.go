package config

import (
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"wilco/core"
	"wilco/forge"
)

// Forge is the forge section: the forge the repository lives on. Token and
// WebhookSecret are references to environment variables (${NAME}), never
// the values: wilco.yaml is committed with the repository.
type Forge struct {
	Kind string // github | gitea
	// API is the API's root; the kind's default (GitHub's) when the file
	// does not say.
	API string
	// Repo is owner/name; "" to read it from Remote's URL.
	Repo   string
	Remote string
	// Token and WebhookSecret are as written: ${NAME}.
	Token, WebhookSecret string
}

// Intake is the intake section: open issues with Label become tasks,
// polled every Poll.
type Intake struct {
	Label string
	Poll  time.Duration
}

// Defaults of the forge, land (pull requests) and intake sections.
const (
	DefaultForgeRemote = "origin"
	DefaultLandMerge   = core.MergeManual
	// DefaultLandMergeMethod is the forge's own default.
	DefaultLandMergeMethod = "merge"
	DefaultLandCITimeout   = core.DefaultCITimeout
	DefaultLandPoll        = 30 * time.Second
	// MinLandPoll bounds land.poll from below: each poll asks the forge
	// about every open pull request, counted against its rate limit.
	MinLandPoll        = time.Second
	DefaultIntakeLabel = "wilco"
	DefaultIntakePoll  = 60 * time.Second
	// MinIntakePoll bounds intake.poll from below: each poll is a
	// request to the forge, counted against its rate limit.
	MinIntakePoll = 10 * time.Second
)

// LandMergeMethods are the values of land.merge_method: the ways both
// forges merge a pull request.
var LandMergeMethods = forge.MergeMethods

// LandMerges are the values of land.merge.
var LandMerges = []string{core.MergeManual, core.MergeAuto}

// DefaultForgeToken is the variable forge.token names by default for a
// kind.
func DefaultForgeToken(kind string) string {
	if kind == string(forge.Gitea) {
		return "${GITEA_TOKEN}"
	}
	return "${GITHUB_TOKEN}"
}

// onlyEnvRef is a value that is one ${NAME} and nothing else.
var onlyEnvRef = regexp.MustCompile(`^\$\{[A-Za-z_][A-Za-z0-9_]*\}$`)

// Secrets returns the token and the webhook secret from the environment
// variables they name; a variable unset or empty is an error that names
// it (never its value). The secret is "" when the file names none.
func (f Forge) Secrets(getenv func(string) string) (token, webhookSecret string, err error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if token, err = expand(f.Token, getenv); err != nil {
		return "", "", fmt.Errorf("forge.token: %w", err)
	}
	if webhookSecret, err = expand(f.WebhookSecret, getenv); err != nil {
		return "", "", fmt.Errorf("forge.webhook_secret: %w", err)
	}
	return token, webhookSecret, nil
}

// Options is what a client of the forge is made with (forge.New, the
// token from the environment): the repository is forge.repo, else the one
// remoteURL (the URL of forge.remote) names.
func (f Forge) Options(remoteURL string, getenv func(string) string) (forge.Options, error) {
	token, _, err := f.Secrets(getenv)
	if err != nil {
		return forge.Options{}, err
	}
	var repo forge.Repo
	if f.Repo != "" {
		repo, err = forge.ParseRepo(f.Repo)
	} else {
		_, repo, err = forge.RepoFromRemote(remoteURL)
		if err != nil {
			err = fmt.Errorf("forge.repo is not set and the remote %s does not say it: %w", f.Remote, err)
		}
	}
	if err != nil {
		return forge.Options{}, err
	}
	return forge.Options{Kind: forge.Kind(f.Kind), API: f.API, Repo: repo, Token: token}, nil
}

// forge decodes the forge section.
func (d *decoder) forge(n *yaml.Node, k string, c *Config) {
	f := &Forge{Remote: DefaultForgeRemote}
	var kindNode *yaml.Node
	d.mapping(n, k, map[string]func(*yaml.Node, string){
		"kind": func(n *yaml.Node, k string) {
			var kinds []string
			for _, kd := range forge.Kinds {
				kinds = append(kinds, string(kd))
			}
			oneOf(d, n, k, kinds, &f.Kind)
			kindNode = n
		},
		"api": func(n *yaml.Node, k string) {
			d.str(n, k, &f.API)
			if n.Kind != yaml.ScalarNode {
				return
			}
			u, err := url.Parse(f.API)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
				d.fail(n, k, "must be the API's http:// or https:// address such as https://api.github.com, https://github.example.com/api/v3 or https://gitea.example.com/api/v1, got %q", f.API)
				return
			}
			f.API = strings.TrimRight(f.API, "/")
		},
		"repo": func(n *yaml.Node, k string) {
			d.str(n, k, &f.Repo)
			if n.Kind == yaml.ScalarNode {
				if _, err := forge.ParseRepo(f.Repo); err != nil {
					d.fail(n, k, "must be owner/name such as acme/widget, got %q", f.Repo)
				}
			}
		},
		"remote": func(n *yaml.Node, k string) {
			d.str(n, k, &f.Remote)
			if n.Kind == yaml.ScalarNode && (f.Remote == "" || strings.HasPrefix(f.Remote, "-") || strings.ContainsAny(f.Remote, " \t\n/:")) {
				d.fail(n, k, "must be the name of a git remote such as origin, got %q", f.Remote)
			}
		},
		"token": func(n *yaml.Node, k string) { d.envOnly(n, k, &f.Token, "${GITHUB_TOKEN}", "the token") },
		"webhook_secret": func(n *yaml.Node, k string) {
			d.envOnly(n, k, &f.WebhookSecret, "${WILCO_WEBHOOK_SECRET}", "the secret")
		},
	})
	if n = resolve(n); n.Kind != yaml.MappingNode {
		return
	}
	if f.Kind == "" {
		if kindNode == nil {
			d.fail(n, k+".kind", "required: github (github.com and GitHub Enterprise) or gitea (Gitea and Forgejo)")
		}
		return
	}
	if f.API == "" {
		f.API = forge.DefaultAPI(forge.Kind(f.Kind))
		if f.API == "" {
			d.fail(n, k+".api", "required for %s: the address of the server's API, such as https://gitea.example.com/api/v1", f.Kind)
		}
	}
	if f.Token == "" {
		f.Token = DefaultForgeToken(f.Kind)
	}
	c.Forge = f
}

// envOnly reads a value that must be a reference to an environment
// variable (${NAME}) and nothing else.
func (d *decoder) envOnly(n *yaml.Node, k string, to *string, example, what string) {
	d.str(n, k, to)
	if n.Kind == yaml.ScalarNode && !onlyEnvRef.MatchString(*to) {
		*to = ""
		d.fail(n, k, "must name an environment variable, such as %s: %s is never written in wilco.yaml, which is committed with the repository", example, what)
	}
}

// intake decodes the intake section.
func (d *decoder) intake(n *yaml.Node, k string, c *Config) {
	in := &Intake{Label: DefaultIntakeLabel, Poll: DefaultIntakePoll}
	d.mapping(n, k, map[string]func(*yaml.Node, string){
		"label": func(n *yaml.Node, k string) {
			d.str(n, k, &in.Label)
			if n.Kind == yaml.ScalarNode && (strings.TrimSpace(in.Label) == "" || strings.Contains(in.Label, ",")) {
				d.fail(n, k, "must be one label's name, such as wilco, got %q", in.Label)
			}
		},
		"poll": func(n *yaml.Node, k string) {
			d.duration(n, k, &in.Poll, true)
			if in.Poll > 0 && in.Poll < MinIntakePoll {
				d.fail(n, k, "must be at least %s (each poll is a request to the forge, counted against its rate limit), got %q", MinIntakePoll, n.Value)
			}
		},
	})
	if resolve(n).Kind == yaml.MappingNode {
		c.Intake = in
		d.intakeNode = n
	}
}

// checkForge checks what needs the forge section: intake names no forge
// without it.
func (d *decoder) checkForge(c *Config) {
	if c.Intake != nil && c.Forge == nil {
		d.fail(d.intakeNode, "intake", "needs a forge section: the forge whose issues become tasks (forge: {kind: github})")
	}
}
