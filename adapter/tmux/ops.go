package tmux

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	"wilco/adapter"
	"wilco/core"
)

// readyWait bounds the wait for a woken agent's program to be ready.
const readyWait = 90 * time.Second

// Config returns a tmux agent's configuration.
func (a *Adapter) Config(agent string) (AgentConfig, bool) {
	ag, err := a.agent(agent)
	if err != nil {
		return AgentConfig{}, false
	}
	ag.opMu.Lock()
	defer ag.opMu.Unlock()
	c := ag.cfg
	c.Env = maps.Clone(c.Env)
	return c, true
}

// Hibernate stops an agent's program and keeps what its wake needs: its
// conversation id (when its program has one). A prompt not typed yet
// waits for the wake; the turn the agent works on is suspended and goes
// on after the wake. A session wilco made is ended; in a user's session
// only the program is stopped. Its instances (tasks worked in parallel)
// are hibernated too, each keeping its own conversation.
func (a *Adapter) Hibernate(ctx context.Context, agent string) (conv, action string, err error) {
	home, err := a.agent(agent)
	if err != nil {
		return "", "", err
	}
	every := a.every(home)
	for _, ag := range every[1:] {
		if _, _, err := ag.hibernate(ctx); err != nil {
			return "", "", fmt.Errorf("the session %s of task %s: %w", ag.session, ag.task, err)
		}
	}
	conv, action, err = home.hibernate(ctx)
	if err == nil && len(every) > 1 {
		action += fmt.Sprintf("; the sessions of %d task(s) worked in parallel ended, their conversations kept", len(every)-1)
	}
	return conv, action, err
}

// hibernate stops the program of one agent or instance (see Hibernate).
func (ag *agent) hibernate(ctx context.Context) (conv, action string, err error) {
	agent := ag.cfg.Name
	ag.opMu.Lock()
	defer ag.opMu.Unlock()
	ag.mu.Lock()
	if ag.hibernated {
		conv = ag.conv
		ag.mu.Unlock()
		return conv, "already hibernating", nil
	}
	if j := ag.cur; j != nil {
		switch {
		case j.phase <= phaseLanding:
			// Not typed yet (or not taken): it waits for the wake.
			j.close()
			j.phase, j.pastes = phasePaste, 0
			ag.queue = append([]*job{j}, ag.queue...)
			ag.cur = nil
		case j.phase == phaseStopping || j.quiet.Load():
			j.close()
			ag.cur = nil
		default:
			j.close()
			j.suspended = true
		}
	}
	ag.hibernated = true
	conv = ag.conv
	ag.mu.Unlock()
	if ag.own {
		if ag.srv.HasSession(ctx, ag.session) {
			if err := ag.srv.KillSession(ctx, ag.session); err != nil {
				return conv, "", err
			}
		}
		action = "session " + ag.session + " ended"
	} else {
		// The user's session stays: only the agent's program stops.
		if err := ag.srv.Respawn(ctx, ag.session, ag.dir, nil, []string{"sh", "-c", "echo 'wilco: " + agent + " is hibernating'; exec sh"}, true); err != nil {
			return conv, "", err
		}
		action = "program stopped in session " + ag.session
	}
	ag.mu.Lock()
	ag.started = false
	ag.mu.Unlock()
	if conv != "" {
		action += "; conversation " + conv + " kept"
	}
	ag.logger().Info("hibernated", "conversation", conv)
	return conv, action, nil
}

// Wake starts a hibernated agent's program again, resuming conversation
// conv (the one Hibernate kept; "" for the program's most recent one) when
// its program can, and waits until it is ready for input. A turn it was
// suspended in goes on: the agent is told to continue (or, when its
// conversation could not be resumed, given the task again). Its
// hibernated instances are woken too, each resuming its own
// conversation in its task's worktree.
func (a *Adapter) Wake(ctx context.Context, agent, conv string) (string, error) {
	home, err := a.agent(agent)
	if err != nil {
		return "", err
	}
	every := a.every(home)
	woken := 0
	for _, ag := range every[1:] {
		ag.mu.Lock()
		asleep := ag.hibernated
		ag.mu.Unlock()
		if !asleep {
			continue
		}
		if _, err := ag.wakeUp(ctx, ""); err != nil {
			return "", fmt.Errorf("the session %s of task %s: %w", ag.session, ag.task, err)
		}
		woken++
	}
	action, err := home.wakeUp(ctx, conv)
	if err == nil && woken > 0 {
		action += fmt.Sprintf("; the sessions of %d task(s) worked in parallel started again", woken)
	}
	return action, err
}

// wakeUp starts the program of one agent or instance again (see Wake).
func (ag *agent) wakeUp(ctx context.Context, conv string) (string, error) {
	ag.opMu.Lock()
	ag.mu.Lock()
	if !ag.hibernated && ag.started {
		ag.mu.Unlock()
		ag.opMu.Unlock()
		return "already awake: nothing done", nil
	}
	canResume := ag.preset != nil && ag.preset.Resume != nil
	ag.hibernated = false
	if conv != "" {
		ag.conv = conv
	}
	ag.resume = canResume
	if j := ag.cur; j != nil && j.suspended {
		j.suspended, j.continued = false, true
		j.prompt = continuation(j, canResume, ag.full[j.msg.ID])
		j.phase, j.pastes, j.submits = phasePaste, 0, 0
		j.busySeen, j.readySince = false, time.Time{}
	}
	ag.started = false
	ag.mu.Unlock()
	err := ag.start(ctx)
	ag.opMu.Unlock()
	if err != nil {
		return "", err
	}
	ag.signal()
	if err := ag.waitReady(ctx, readyWait); err != nil {
		return "", err
	}
	ag.mu.Lock()
	conv = ag.conv
	ag.mu.Unlock()
	action := "program started again and ready"
	if canResume {
		action = "program started again, resuming its conversation"
		if conv != "" {
			action += " " + conv
		}
		action += ", and ready"
	}
	return action, nil
}

// Restart stops an agent's program and starts it again (Hibernate, then
// Wake with the conversation kept): it comes back ready, and the turn it
// worked on goes on.
func (a *Adapter) Restart(ctx context.Context, agent string) (string, error) {
	conv, _, err := a.Hibernate(ctx, agent)
	if err != nil {
		return "", err
	}
	return a.Wake(ctx, agent, conv)
}

// waitReady waits until the loop has seen the pane ready (or a prompt
// typed into it).
func (ag *agent) waitReady(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		ag.mu.Lock()
		st, cur := ag.state, ag.cur
		started := ag.started
		ag.mu.Unlock()
		if started && (st == Ready || st == Busy || cur != nil && cur.phase >= phaseConfirming) {
			return nil
		}
		if st == Dead {
			return errors.New("the program exited as it started")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(ag.a.opts.Poll):
		}
	}
	ag.mu.Lock()
	st := ag.state
	ag.mu.Unlock()
	return fmt.Errorf("the program was not ready for input after %s (the pane shows %s)", limit, st)
}

// continuation is the prompt that lets a suspended turn go on after a
// wake.
func continuation(j *job, resumed bool, full string) string {
	what := "this task"
	if j.msg.TaskID != "" {
		what = "task " + j.msg.TaskID
	}
	if resumed && j.ackSent {
		return "wilco restarted your program while you worked on " + what + "; your conversation was resumed. " +
			"Go on with the task from where you stopped. Your acknowledgment was already accepted: do not acknowledge again. " +
			"When you are done, end with your completion report."
	}
	p := full
	if p == "" {
		p = j.prompt
	}
	return "wilco restarted your program while you worked on " + what + ". Here it is again:" + separator + p
}

// Resume makes a turn that was running when wilco last stopped followed
// again: the agent's session outlived wilco, so its turn goes on, and is
// reported when its pane shows it ready again. A turn of a task worked in
// parallel (msg.Worktree) is followed in the task's session.
func (a *Adapter) Resume(agent string, msg core.InboxMessage) {
	ag, err := a.agent(agent)
	if err != nil {
		return
	}
	if forInstance(msg) {
		// A task worked in parallel: its turn runs in its own session.
		if ag = a.instanceFor(ag, msg.TaskID, msg.Worktree, true); ag == nil {
			return
		}
	}
	ag.mu.Lock()
	defer ag.mu.Unlock()
	if ag.cur != nil {
		return
	}
	j := &job{msg: msg, task: true, queued: time.Now(), phase: phasePaste, adopted: true}
	ag.cur = j
	ag.signal()
}

// Install copies a skill or a plugin (a directory; a skill may also be a
// single SKILL.md) into the directory the agent's program loads them
// from, as its preset says (see Presets). It returns where it went.
func Install(preset string, env map[string]string, kind, src string) (string, error) {
	p, ok := Presets[preset]
	if !ok {
		return "", fmt.Errorf("no preset: wilco knows where skills and plugins go only for %s", strings.Join(PresetNames(), ", "))
	}
	var where func(map[string]string) string
	switch kind {
	case core.OpInstallSkill:
		where = p.Skills
	case core.OpInstallPlugin:
		where = p.Plugins
	default:
		return "", fmt.Errorf("%s is not an install", kind)
	}
	if where == nil {
		return "", fmt.Errorf("%s has no %s directory", preset, strings.TrimPrefix(kind, "install-"))
	}
	src, err := filepath.Abs(src)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(src)
	if err != nil {
		return "", err
	}
	name := filepath.Base(src)
	if !fi.IsDir() && kind == core.OpInstallSkill && name == "SKILL.md" {
		src, name = filepath.Dir(src), filepath.Base(filepath.Dir(src))
		fi, _ = os.Stat(src)
	}
	switch {
	case kind == core.OpInstallSkill && !fi.IsDir():
		return "", fmt.Errorf("%s: a skill is a directory holding SKILL.md", src)
	case kind == core.OpInstallSkill:
		if _, err := os.Stat(filepath.Join(src, "SKILL.md")); err != nil {
			return "", fmt.Errorf("%s: a skill holds a SKILL.md: %v", src, err)
		}
	case fi.IsDir() && p.PluginManifest != "":
		if _, err := os.Stat(filepath.Join(src, p.PluginManifest)); err != nil {
			return "", fmt.Errorf("%s: a %s plugin holds %s: %v", src, preset, p.PluginManifest, err)
		}
	case !fi.IsDir() && p.PluginManifest != "":
		return "", fmt.Errorf("%s: a %s plugin is a directory holding %s", src, preset, p.PluginManifest)
	}
	dest := filepath.Join(where(env), name)
	if err := os.RemoveAll(dest); err != nil {
		return "", err
	}
	if err := copyTree(src, dest); err != nil {
		return "", err
	}
	return dest, nil
}

// copyTree copies a file or a directory, its files' modes kept.
func copyTree(src, dest string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dest, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case !info.Mode().IsRegular():
			return nil // links and devices are not copied
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, info.Mode().Perm())
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}

// Operate performs an agent operation on a tmux agent: a hibernate stops
// its program (Hibernate), a wake starts it again resuming the
// conversation given (Wake), a restart does both (Restart). Any other
// operation is refused (adapter.ErrNotSupported).
func (a *Adapter) Operate(ctx context.Context, agent string, op adapter.Operation) (adapter.Performed, error) {
	switch op.Name {
	case core.OpHibernate:
		conv, action, err := a.Hibernate(ctx, agent)
		if err != nil {
			return adapter.Performed{}, err
		}
		return adapter.Performed{Action: "hibernated: " + action, Conversation: conv}, nil
	case core.OpWake:
		action, err := a.Wake(ctx, agent, op.Conversation)
		if err != nil {
			return adapter.Performed{}, err
		}
		return adapter.Performed{Action: "woken: " + action}, nil
	case core.OpRestart:
		action, err := a.Restart(ctx, agent)
		if err != nil {
			return adapter.Performed{}, err
		}
		return adapter.Performed{Action: "restarted: " + action}, nil
	}
	return adapter.Performed{}, fmt.Errorf("%s of a tmux agent: %w", op.Name, adapter.ErrNotSupported)
}
