package daemon

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"wilco/config"
	"wilco/core"
	"wilco/forge"
	"wilco/intake"
)

// openForge makes the client of the configuration's forge (nil without a
// forge section). Its token is read from the environment; without it the
// forge is left out, and a configured intake refuses to start.
func (d *Daemon) openForge(base string) (forge.Forge, error) {
	fc := d.Config.Forge
	if fc == nil {
		return nil, nil
	}
	remote := ""
	if fc.Repo == "" {
		out, err := exec.Command("git", "-C", base, "remote", "get-url", fc.Remote).Output()
		if err != nil {
			return nil, fmt.Errorf("daemon: forge.repo is not set and the URL of the remote %s could not be read: %w", fc.Remote, err)
		}
		remote = strings.TrimSpace(string(out))
	}
	o, err := fc.Options(remote, os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("daemon: %w", err)
	}
	log := d.log.With("component", "forge")
	o.Observe = func(c forge.Call) {
		if c.Err != nil || c.Status >= 400 {
			log.Warn("forge call", "method", c.Method, "path", c.Path, "status", c.Status, "attempt", c.Attempt, "err", c.Err)
		} else {
			log.Debug("forge call", "method", c.Method, "path", c.Path, "status", c.Status, "attempt", c.Attempt, "duration", c.Duration)
		}
		if core.IsForgeRecord(c.Method, c.Status, c.Err != nil) {
			d.recordForgeCall(c)
		}
	}
	return forge.New(o)
}

// recordForgeCall puts a call to the forge that wrote or failed in the
// event log. It is committed beside the call, not before it goes on: the
// call is being made by whoever asked (a poll, a landing, a comment).
func (d *Daemon) recordForgeCall(c forge.Call) {
	call := core.ForgeCall{Method: c.Method, Path: c.Path, Status: c.Status, Attempt: c.Attempt, DurationMS: c.Duration.Milliseconds()}
	if c.Err != nil {
		call.Error = c.Err.Error()
	}
	rt := d.Runtime
	if rt == nil {
		return
	}
	go func() {
		if _, err := rt.Report(context.Background(), core.ForgeCalled{Call: call}); err != nil {
			d.log.Debug("a forge call was not recorded", "method", c.Method, "path", c.Path, "err", err)
		}
	}()
}

// startIntake starts the poll of the forge's issues when intake is
// configured; Close stops it.
func (d *Daemon) startIntake(f forge.Forge, in *config.Intake) {
	if in == nil || f == nil {
		return
	}
	d.intake = intake.New(intake.Options{Forge: f, Runtime: d.Runtime, Label: in.Label, Poll: in.Poll,
		LandHow: d.Config.Land.How, Checkout: d.disp.Branch, Logger: d.log.With("component", "intake")})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	d.stopIntake = func() {
		cancel()
		<-done
	}
	go func() {
		defer close(done)
		d.intake.Run(ctx)
	}()
	d.log.Info("intake polls the forge's issues", "label", in.Label, "poll", in.Poll, "repo", f.Repo().String())
}

// Nudge asks the intake for a poll now (a webhook told of an issue or a
// comment); nothing without intake.
func (d *Daemon) Nudge() {
	if d.intake != nil {
		d.intake.Nudge()
	}
}

// issueThread is the performer of the issue hook's notifications (nil
// without a forge).
func (d *Daemon) issueThread(f forge.Forge) *intake.Thread {
	if f == nil {
		return nil
	}
	return &intake.Thread{Forge: f, Runtime: d.Runtime, Logger: d.log.With("component", "intake")}
}
