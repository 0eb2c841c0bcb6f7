package intake

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"wilco/core"
	"wilco/forge"
	"wilco/server"
)

// DefaultCollaboratorTTL is how long whether a user is a collaborator is
// remembered.
const DefaultCollaboratorTTL = 5 * time.Minute

// Options configure an Intake.
type Options struct {
	Forge   forge.Forge
	Runtime Runtime
	// Label marks the issues that become tasks; Poll is the time between
	// polls.
	Label string
	Poll  time.Duration
	// CollaboratorTTL bounds how long a user's being a collaborator is
	// remembered (default DefaultCollaboratorTTL).
	CollaboratorTTL time.Duration
	// LandHow is land.how; Checkout, if set, says the branch the checkout
	// has (false: it cannot be told), which a task that lands as a commit
	// is submitted with, as through the API.
	LandHow  string
	Checkout func(context.Context) (string, bool)
	Logger   *slog.Logger
}

// Intake polls the forge's issues. Run runs it; Nudge asks for a poll now.
type Intake struct {
	o     Options
	log   *slog.Logger
	nudge chan struct{}

	mu     sync.Mutex
	collab map[string]collabEntry
}

type collabEntry struct {
	yes bool
	at  time.Time
}

// New makes an Intake.
func New(o Options) *Intake {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.CollaboratorTTL <= 0 {
		o.CollaboratorTTL = DefaultCollaboratorTTL
	}
	return &Intake{o: o, log: o.Logger, nudge: make(chan struct{}, 1), collab: map[string]collabEntry{}}
}

// Nudge asks for a poll now (a webhook told of an issue or a comment);
// several nudges before it starts make one poll.
func (in *Intake) Nudge() {
	select {
	case in.nudge <- struct{}{}:
	default:
	}
}

// Run polls at once, then every Poll and at each nudge, until ctx ends.
// A poll that fails is logged and the next one tries again.
func (in *Intake) Run(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-in.nudge:
			if !t.Stop() {
				select {
				case <-t.C:
				default:
				}
			}
		}
		if err := in.Poll(ctx); err != nil && ctx.Err() == nil {
			in.log.Warn("intake: the poll failed; the next one tries again", "in", in.o.Poll, "err", err)
		}
		t.Reset(in.o.Poll)
	}
}

// issueTask is what a poll needs of a task made from an issue.
type issueTask struct {
	id    string
	issue int
	seen  int64
	ended bool
	state core.TaskState
}

// Poll makes one round: the open issues with the label become tasks, the
// new comments of each task's issue are acted on, a closed issue cancels
// its task. It returns the first error; what it could do it did.
func (in *Intake) Poll(ctx context.Context) error {
	issues, err := in.o.Forge.Issues(ctx, in.o.Label)
	if err != nil {
		return fmt.Errorf("intake: the open issues labelled %q: %w", in.o.Label, err)
	}
	tasks, err := in.tasks()
	if err != nil {
		return err
	}
	open := map[int]bool{}
	var errs []error
	for _, i := range issues {
		open[i.Number] = true
		if _, ok := tasks[i.Number]; ok {
			continue
		}
		if err := in.submit(ctx, i); err != nil {
			errs = append(errs, err)
		}
	}
	for n, t := range tasks {
		if t.ended {
			continue
		}
		if !open[n] {
			if err := in.closed(ctx, t); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		if err := in.comments(ctx, t); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// tasks are the tasks made from issues, by issue.
func (in *Intake) tasks() (map[int]issueTask, error) {
	out := map[int]issueTask{}
	err := in.o.Runtime.Read(func(c *core.State) {
		for _, t := range c.Tasks(func(t *core.Task) bool { return t.Issue > 0 }) {
			out[t.Issue] = issueTask{id: t.ID, issue: t.Issue, seen: t.IssueSeen, ended: t.State.Terminal(), state: t.State}
		}
	})
	if err != nil {
		return nil, fmt.Errorf("intake: the tasks: %w", err)
	}
	return out, nil
}

// submit makes a task of an issue; the comments already in its thread
// are read (none of them is an answer to the task).
func (in *Intake) submit(ctx context.Context, i forge.Issue) error {
	cs, err := in.o.Forge.IssueComments(ctx, i.Number, time.Time{}, 0)
	if err != nil {
		return fmt.Errorf("intake: the comments of issue #%d: %w", i.Number, err)
	}
	var last int64
	for _, c := range cs {
		last = max(last, c.ID)
	}
	req := Submission(i)
	spec := server.Spec(req)
	spec.Issue = i.Number
	if in.o.Checkout != nil && server.LandsAsCommit(in.o.LandHow, req) {
		if b, ok := in.o.Checkout(ctx); ok {
			spec.Checkout = &b
		}
	}
	v, err := in.o.Runtime.Do(ctx, func(c *core.State, now time.Time) (any, error) {
		if c.TaskOfIssue(i.Number) != nil {
			return nil, nil // made meanwhile
		}
		t, err := c.SubmitTask(now, spec)
		if err != nil {
			return nil, err
		}
		if err := c.SeeIssueComments(now, t.ID, last); err != nil {
			return nil, err
		}
		return t, nil
	})
	if err != nil {
		// Refused (the checkout is on another branch than the one its
		// commit lands on, say): said, and tried again at the next poll.
		return fmt.Errorf("intake: issue #%d as a task: %w", i.Number, err)
	}
	if v == nil {
		return nil
	}
	in.log.Info("intake: an issue became a task", "issue", i.Number, "task", v.(core.Task).ID, "title", i.Title)
	return nil
}

// closed cancels the task of an issue no longer listed open, once the
// forge confirms it is closed (it may only have lost its label).
func (in *Intake) closed(ctx context.Context, t issueTask) error {
	i, err := in.o.Forge.Issue(ctx, t.issue)
	if err != nil {
		return fmt.Errorf("intake: issue #%d: %w", t.issue, err)
	}
	if i.State != forge.IssueClosed {
		return nil
	}
	_, err = in.o.Runtime.Do(ctx, func(c *core.State, now time.Time) (any, error) {
		_, _, err := c.CancelTask(now, t.id)
		return nil, err
	})
	if err != nil && core.CodeOf(err) != core.Conflict {
		return fmt.Errorf("intake: cancelling task %s of closed issue #%d: %w", t.id, t.issue, err)
	}
	in.log.Info("intake: the issue was closed; its task is cancelled", "issue", t.issue, "task", t.id, "err", err)
	return nil
}

// comments acts on the new comments of a task's issue, oldest first.
func (in *Intake) comments(ctx context.Context, t issueTask) error {
	cs, err := in.o.Forge.IssueComments(ctx, t.issue, time.Time{}, t.seen)
	if err != nil {
		return fmt.Errorf("intake: the comments of issue #%d: %w", t.issue, err)
	}
	for _, cm := range cs {
		if err := in.comment(ctx, t, cm); err != nil {
			return err
		}
	}
	return nil
}

// comment acts on one comment and records it read, in one commit. A
// command the task cannot take now (it is not escalated, say) is logged
// and read all the same.
func (in *Intake) comment(ctx context.Context, t issueTask, cm forge.Comment) error {
	log := in.log.With("issue", t.issue, "task", t.id, "comment", cm.ID, "author", cm.Author)
	var act func(c *core.State, now time.Time) (core.Task, error)
	cmd, ok := ParseCommand(cm.Body)
	switch {
	case strings.HasPrefix(strings.TrimSpace(cm.Body), Marker):
		// wilco's own
	case !ok:
		log.Info("intake: a comment that is no command wilco knows is ignored", "line", firstLine(cm.Body))
	default:
		yes, err := in.isCollaborator(ctx, cm.Author)
		if err != nil {
			return fmt.Errorf("intake: whether %s is a collaborator: %w", cm.Author, err)
		}
		if !yes {
			log.Warn("intake: a comment from someone who is not a collaborator is ignored", "line", firstLine(cm.Body))
			break
		}
		if cmd.Action != "" {
			act = func(c *core.State, now time.Time) (core.Task, error) {
				return c.Respond(now, t.id, cmd.Action, cmd.Instruction)
			}
		} else {
			act = func(c *core.State, now time.Time) (core.Task, error) {
				return c.ClarifyTask(now, t.id, []string{cmd.Text})
			}
		}
	}
	v, err := in.o.Runtime.Do(ctx, func(c *core.State, now time.Time) (any, error) {
		var refused error
		if act != nil {
			_, refused = act(c, now)
		}
		if err := c.SeeIssueComments(now, t.id, cm.ID); err != nil {
			return nil, err
		}
		return refused, nil
	})
	if err != nil {
		return fmt.Errorf("intake: comment %d of issue #%d: %w", cm.ID, t.issue, err)
	}
	if act == nil {
		return nil
	}
	what := cmd.Action
	if what == "" {
		what = "answer"
	}
	if refused, _ := v.(error); refused != nil {
		if cmd.Action == "" && core.CodeOf(refused) == core.Conflict {
			log.Info("intake: a reply while the task asks nothing is read as conversation", "state", t.state)
			return nil
		}
		log.Warn("intake: a command from the issue was refused", "command", what, "err", refused)
		return nil
	}
	log.Info("intake: a command from the issue was taken", "command", what)
	return nil
}

// isCollaborator asks the forge, remembering the answer for a while.
func (in *Intake) isCollaborator(ctx context.Context, user string) (bool, error) {
	if user == "" {
		return false, nil
	}
	in.mu.Lock()
	e, ok := in.collab[user]
	in.mu.Unlock()
	if ok && time.Since(e.at) < in.o.CollaboratorTTL {
		return e.yes, nil
	}
	yes, err := in.o.Forge.IsCollaborator(ctx, user)
	if err != nil {
		return false, err
	}
	in.mu.Lock()
	in.collab[user] = collabEntry{yes: yes, at: time.Now()}
	in.mu.Unlock()
	return yes, nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}
