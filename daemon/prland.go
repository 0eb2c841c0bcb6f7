package daemon

import (
	"fmt"
	"os"

	"wilco/core"
	"wilco/forge"
	"wilco/prland"
	"wilco/prwatch"
	"wilco/server"
	"wilco/store"
)

// prLander makes, when the forge is open, what pushes and opens the pull
// requests of tasks landing as ones, and the receiver of the forge's
// webhooks; the follower of pull requests is started once the runtime
// runs (startPRWatch).
func (d *Daemon) prLander() (*prland.Lander, error) {
	f := d.Config.Forge
	if f == nil || d.forge == nil {
		return nil, nil
	}
	token, secret, err := f.Secrets(os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("daemon: the forge: %w", err)
	}
	d.forgeHook = &server.ForgeHook{Kind: d.forge.Kind(), Secret: secret, Events: []func(forge.Event){d.forgeEvent}}
	return &prland.Lander{Forge: d.forge, Remote: f.Remote, Token: token, Method: d.Config.Land.MergeMethod, Log: d.log.With("component", "prland")}, nil
}

// startPRWatch starts the follower of the tasks' pull requests, nudged
// by the forge's webhooks.
func (d *Daemon) startPRWatch() {
	if d.forge == nil {
		return
	}
	w := prwatch.New(d.forge, d.Runtime, d.Config.Land.Poll, d.log.With("component", "prwatch"))
	w.Start()
	d.prwatch.Store(w)
}

// forgeEvent is told of each webhook that passed: one about a pull
// request, its checks or its reviews has the follower look at once; one
// about an issue or a comment has the intake poll at once.
func (d *Daemon) forgeEvent(ev forge.Event) {
	switch ev.Kind {
	case forge.EventCheck, forge.EventReview, forge.EventReviewComment, forge.EventPullClosed:
		d.nudgePRWatch()
	case forge.EventIssue, forge.EventComment:
		d.Nudge()
		if ev.IssueIsPull {
			d.nudgePRWatch()
		}
	}
}

// nudgePRWatch has the follower of pull requests look at once.
func (d *Daemon) nudgePRWatch() {
	if w := d.prwatch.Load(); w != nil {
		w.Nudge()
	}
}

// prOpened nudges the follower when a pull request was recorded opened
// or pushed to: a webhook about it that came before it was recorded found
// nothing to look at.
func (d *Daemon) prOpened(evs []store.Event) {
	for _, ev := range evs {
		if ev.Type == core.TypeTaskPROpened {
			d.nudgePRWatch()
			return
		}
	}
}
