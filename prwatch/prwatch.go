// Package prwatch follows the pull requests of the tasks that wait on
// them (core.State.PullRequestTasks): every poll, and at once when Nudge is
// called (a webhook said something changed), it looks at each on the
// forge — its state, its head's checks (with the log's tail of each that
// failed), its reviews and their line comments — and reports what it saw
// to the core (core.PRObserved). A forge that fails is logged and asked
// again at the next round.
package prwatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"wilco/core"
	"wilco/forge"
)

// LogTail bounds the log of a failed check handed to the core.
const LogTail = 4000

// Runtime is what the watcher reads and reports to (runtime.Runtime).
type Runtime interface {
	Read(fn func(*core.State)) error
	Report(ctx context.Context, o core.Outcome) (any, error)
}

// Watcher follows the pull requests of one forge.
type Watcher struct {
	forge forge.Forge
	rt    Runtime
	poll  time.Duration
	log   *slog.Logger
	nudge chan struct{}
	stop  context.CancelFunc
	wg    sync.WaitGroup
}

// New makes a watcher that looks every poll; Start runs it.
func New(f forge.Forge, rt Runtime, poll time.Duration, log *slog.Logger) *Watcher {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Watcher{forge: f, rt: rt, poll: poll, log: log, nudge: make(chan struct{}, 1)}
}

// Nudge has the watcher look at once (it never blocks).
func (w *Watcher) Nudge() {
	select {
	case w.nudge <- struct{}{}:
	default:
	}
}

// Start runs the watcher until Close.
func (w *Watcher) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	w.stop = cancel
	w.wg.Go(func() {
		t := time.NewTicker(w.poll)
		defer t.Stop()
		for {
			w.Round(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-w.nudge:
			}
		}
	})
}

// Close stops the watcher and waits for its round.
func (w *Watcher) Close() {
	if w.stop != nil {
		w.stop()
	}
	w.wg.Wait()
}

// Round looks once at every task's pull request and reports each.
func (w *Watcher) Round(ctx context.Context) {
	var tasks []core.Task
	if err := w.rt.Read(func(s *core.State) { tasks = s.PullRequestTasks() }); err != nil {
		w.log.Warn("the tasks waiting on pull requests were not read", "err", err)
		return
	}
	for _, t := range tasks {
		if ctx.Err() != nil {
			return
		}
		o, err := w.Observe(ctx, t.ID, t.PR.Number)
		if err != nil {
			w.log.Warn("the pull request was not looked at; again at the next round", "task", t.ID, "number", t.PR.Number, "err", err)
			continue
		}
		if _, err := w.rt.Report(context.WithoutCancel(ctx), o); err != nil && core.CodeOf(err) != core.Conflict {
			w.log.Warn("the core refused what was seen of the pull request", "task", t.ID, "number", t.PR.Number, "err", err)
		}
	}
}

// Observe is what the forge says of a task's pull request.
func (w *Watcher) Observe(ctx context.Context, task string, number int) (core.PRObserved, error) {
	pr, err := w.forge.PullRequest(ctx, number)
	if err != nil {
		return core.PRObserved{}, err
	}
	o := core.PRObserved{TaskID: task, Number: number, Head: pr.HeadSHA, State: pr.State, MergeCommit: pr.MergeSHA, ClosedBy: pr.ClosedBy}
	if pr.State != forge.PROpen {
		return o, nil
	}
	checks, err := w.forge.Checks(ctx, pr.HeadSHA)
	if err != nil {
		return o, fmt.Errorf("checks of %s: %w", pr.HeadSHA, err)
	}
	for _, c := range checks {
		pc := core.PRCheck{Name: c.Name, URL: c.URL, Status: "completed", Conclusion: c.State}
		switch c.State {
		case forge.CheckPending:
			pc.Status, pc.Conclusion = "in_progress", ""
		case forge.CheckFailure:
			if pc.Log, err = w.forge.CheckLog(ctx, c, LogTail); err != nil {
				return o, fmt.Errorf("log of check %s: %w", c.Name, err)
			}
		}
		o.Checks = append(o.Checks, pc)
	}
	reviews, err := w.forge.Reviews(ctx, number)
	if err != nil {
		return o, fmt.Errorf("reviews: %w", err)
	}
	comments, err := w.forge.ReviewComments(ctx, number)
	if err != nil && !errors.Is(err, forge.ErrNotFound) {
		return o, fmt.Errorf("review comments: %w", err)
	}
	for _, r := range reviews {
		if r.State == forge.ReviewPending || r.State == forge.ReviewDismissed {
			continue
		}
		pr := core.PRReview{ID: strconv.FormatInt(r.ID, 10), Author: r.Author, State: r.State, Body: r.Body}
		for _, c := range comments {
			if c.ReviewID == r.ID {
				pr.Comments = append(pr.Comments, core.PRComment{ID: strconv.FormatInt(c.ID, 10), Author: c.Author, Path: c.Path, Line: c.Line, Body: c.Body})
			}
		}
		o.Reviews = append(o.Reviews, pr)
	}
	return o, nil
}
