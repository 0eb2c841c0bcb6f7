package daemon

import (
	"fmt"
	"os/exec"
	"strings"

	"wilco/forge"
	"wilco/prland"
	"wilco/prwatch"
	"wilco/server"
)

// openForge makes, when a forge is configured, the client of its API,
// what pushes and opens the pull requests of tasks landing as ones, and
// the webhook's receiver; the follower of pull requests is made once the
// runtime is open (startForge).
func (d *Daemon) openForge(base string) (*prland.Lander, error) {
	f := d.Config.Forge
	if f == nil {
		return nil, nil
	}
	out, err := exec.Command("git", "-C", base, "remote", "get-url", f.Remote).Output()
	if err != nil && f.Repo == "" {
		return nil, fmt.Errorf("daemon: the forge's remote %s: %w", f.Remote, err)
	}
	opts, err := f.Options(strings.TrimSpace(string(out)), nil)
	if err != nil {
		return nil, fmt.Errorf("daemon: the forge: %w", err)
	}
	_, secret, err := f.Secrets(nil)
	if err != nil {
		return nil, fmt.Errorf("daemon: the forge: %w", err)
	}
	log := d.log.With("component", "forge")
	opts.Observe = func(c forge.Call) {
		log.Debug("forge call", "method", c.Method, "path", c.Path, "status", c.Status, "attempt", c.Attempt, "duration", c.Duration, "err", c.Err)
	}
	client, err := forge.New(opts)
	if err != nil {
		return nil, fmt.Errorf("daemon: the forge: %w", err)
	}
	d.forge = client
	d.forgeHook = &server.ForgeHook{Kind: opts.Kind, Secret: secret, Events: []func(forge.Event){d.forgeEvent}}
	return &prland.Lander{Forge: client, Remote: f.Remote, Token: opts.Token, Log: log}, nil
}

// startForge starts the follower of the tasks' pull requests, nudged by
// the forge's webhooks.
func (d *Daemon) startForge() {
	if d.forge == nil {
		return
	}
	d.prwatch = prwatch.New(d.forge, d.Runtime, d.Config.Land.Poll, d.log.With("component", "prwatch"))
	d.prwatch.Start()
}

// forgeEvent is told of each webhook that passed: one about a pull
// request, its checks or its reviews has the follower look at once.
func (d *Daemon) forgeEvent(ev forge.Event) {
	switch ev.Kind {
	case forge.EventCheck, forge.EventReview, forge.EventReviewComment, forge.EventPullClosed, forge.EventComment:
		if w := d.prwatch; w != nil {
			w.Nudge()
		}
	}
}
