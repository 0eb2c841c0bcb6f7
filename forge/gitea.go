package forge

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// The JSON shapes of Gitea's API below are the fields wilco reads of the
// definitions in Gitea's swagger (go-gitea/gitea,
// templates/swagger/v1_json.tmpl at 67ce9ca11034c00ea81f36f0e574529079534071):
// PullRequest, CommitStatus, CombinedStatus, PullReview,
// PullReviewComment, Issue, Comment, User. Where a field has GitHub's name
// and meaning (number, html_url, head.ref, labels[].name, user.login …)
// the GitHub type above is reused; Gitea's own are here.

type gtStatus struct {
	ID          int64  `json:"id"`
	Status      string `json:"status"` // pending, success, error, failure, warning
	Context     string `json:"context"`
	Description string `json:"description"`
	TargetURL   string `json:"target_url"`
}

type gtReview struct {
	ID          int64   `json:"id"`
	User        *ghUser `json:"user"`
	Body        string  `json:"body"`
	State       string  `json:"state"` // APPROVED, PENDING, COMMENT, REQUEST_CHANGES, REQUEST_REVIEW
	CommitID    string  `json:"commit_id"`
	SubmittedAt string  `json:"submitted_at"`
	Dismissed   bool    `json:"dismissed"`
}

// giteaReviewState is a Gitea review's state in GitHub's words.
func giteaReviewState(s string, dismissed bool) string {
	if dismissed {
		return ReviewDismissed
	}
	switch s {
	case "COMMENT":
		return ReviewCommented
	case "REQUEST_CHANGES":
		return ReviewChangesRequested
	case "REQUEST_REVIEW":
		return ReviewPending
	}
	return s
}

type gtReviewComment struct {
	ID                  int64   `json:"id"`
	PullRequestReviewID int64   `json:"pull_request_review_id"`
	Path                string  `json:"path"`
	Position            int     `json:"position"`          // the line in the new file, 0 for one on the old side
	OriginalPosition    int     `json:"original_position"` // the line in the old file
	Body                string  `json:"body"`
	User                *ghUser `json:"user"`
	Created             string  `json:"created_at"`
}

// giteaForge is a repository on Gitea or Forgejo.
type giteaForge struct {
	t    *transport
	repo Repo
}

func (g *giteaForge) Kind() Kind     { return Gitea }
func (g *giteaForge) Repo() Repo     { return g.repo }
func (g *giteaForge) String() string { return g.repo.String() + " on " + g.t.String() }

// GoString is String: %#v shows no token either.
func (g *giteaForge) GoString() string { return g.String() }

func (g *giteaForge) path(format string, args ...any) string {
	return "/repos/" + esc(g.repo.Owner) + "/" + esc(g.repo.Name) + fmt.Sprintf(format, args...)
}

func (g *giteaForge) OpenPullRequest(ctx context.Context, pr NewPullRequest) (PullRequest, error) {
	var p ghPull
	err := g.t.sendJSON(ctx, http.MethodPost, g.path("/pulls"),
		map[string]string{"title": pr.Title, "body": pr.Body, "head": pr.Head, "base": pr.Base}, &p, http.StatusCreated)
	return p.pull(), err
}

// PullRequest asks GET /repos/{owner}/{repo}/pulls/{index}, and for one
// closed unmerged its issue's timeline, whose last "close" entry says who
// closed it (Gitea's issues carry no closed_by). A Gitea older than the
// timeline (1.15) answers 404: who closed it is then not said.
func (g *giteaForge) PullRequest(ctx context.Context, number int) (PullRequest, error) {
	var p ghPull
	if err := g.t.getJSON(ctx, g.path("/pulls/%d", number), &p); err != nil {
		return PullRequest{}, err
	}
	out := p.pull()
	if out.State != PRClosed {
		return out, nil
	}
	events, err := listOf[gtTimelineEntry](ctx, g.t, g.path("/issues/%d/timeline?limit=50", number))
	if err != nil && !isStatus(err, http.StatusNotFound) {
		return out, fmt.Errorf("who closed pull request #%d: %w", number, err)
	}
	for _, e := range events {
		if e.Type == "close" {
			out.ClosedBy = login(e.User)
		}
	}
	return out, nil
}

// gtTimelineEntry is the part wilco reads of an entry of Gitea's issue
// timeline (modules/structs/issue_comment.go, TimelineComment: type is
// the comment type's name — "comment", "close", "reopen", …).
type gtTimelineEntry struct {
	Type string  `json:"type"`
	User *ghUser `json:"user"`
}

func (g *giteaForge) FindPullRequest(ctx context.Context, head string) (PullRequest, bool, error) {
	pulls, err := listOf[ghPull](ctx, g.t, g.path("/pulls?state=open&limit=50"))
	if err != nil {
		return PullRequest{}, false, err
	}
	for _, p := range pulls {
		if p.Head.Ref == head && p.State == PROpen {
			return p.pull(), true, nil
		}
	}
	return PullRequest{}, false, nil
}

// MergePullRequest posts the merge form (MergePullRequestForm: Do,
// head_commit_id), which answers no body; the merge's commit is then read
// from the pull request.
func (g *giteaForge) MergePullRequest(ctx context.Context, number int, m Merge) (string, error) {
	body := map[string]string{"Do": firstNonEmpty(m.Method, "merge")}
	if m.HeadSHA != "" {
		body["head_commit_id"] = m.HeadSHA
	}
	if err := g.t.sendJSON(ctx, http.MethodPost, g.path("/pulls/%d/merge", number), body, nil, http.StatusOK); err != nil {
		return "", err
	}
	p, err := g.PullRequest(ctx, number)
	return p.MergeSHA, err
}

func (g *giteaForge) ClosePullRequest(ctx context.Context, number int) error {
	return g.t.sendJSON(ctx, http.MethodPatch, g.path("/pulls/%d", number), map[string]string{"state": "closed"}, nil, http.StatusOK, http.StatusCreated)
}

// EditPullRequest asks PATCH /repos/{owner}/{repo}/pulls/{index}
// (EditPullRequestOption), which answers 201.
func (g *giteaForge) EditPullRequest(ctx context.Context, number int, title, body string) error {
	return g.t.sendJSON(ctx, http.MethodPatch, g.path("/pulls/%d", number), map[string]string{"title": title, "body": body}, nil, http.StatusOK, http.StatusCreated)
}

func (g *giteaForge) Checks(ctx context.Context, sha string) ([]Check, error) {
	var out []Check
	err := g.t.list(ctx, g.path("/commits/%s/status?limit=50", esc(sha)), func(b []byte) error {
		var page struct {
			Statuses []gtStatus `json:"statuses"`
		}
		if err := json.Unmarshal(b, &page); err != nil {
			return err
		}
		for _, s := range page.Statuses {
			out = append(out, Check{Source: SourceStatus, ID: s.ID, Name: s.Context, Raw: s.Status, State: statusState(s.Status),
				Description: s.Description, URL: s.TargetURL})
		}
		return nil
	})
	return out, err
}

// CheckLog is a status's description and address: Gitea keeps no log of a
// status.
func (g *giteaForge) CheckLog(ctx context.Context, c Check, max int) (string, error) {
	return tail(ownWords(c), max), nil
}

func (g *giteaForge) Reviews(ctx context.Context, number int) ([]Review, error) {
	rs, err := listOf[gtReview](ctx, g.t, g.path("/pulls/%d/reviews?limit=50", number))
	out := make([]Review, 0, len(rs))
	for _, r := range rs {
		out = append(out, Review{ID: r.ID, Author: login(r.User), State: giteaReviewState(r.State, r.Dismissed), Body: r.Body,
			CommitSHA: r.CommitID, SubmittedAt: parseTime(r.SubmittedAt)})
	}
	return out, err
}

// ReviewComments reads each review's comments (Gitea lists them per
// review: GET /repos/{owner}/{repo}/pulls/{index}/reviews/{id}/comments).
func (g *giteaForge) ReviewComments(ctx context.Context, number int) ([]ReviewComment, error) {
	rs, err := listOf[gtReview](ctx, g.t, g.path("/pulls/%d/reviews?limit=50", number))
	if err != nil {
		return nil, err
	}
	var out []ReviewComment
	for _, r := range rs {
		cs, err := listOf[gtReviewComment](ctx, g.t, g.path("/pulls/%d/reviews/%d/comments", number, r.ID))
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			line := c.Position
			if line == 0 {
				line = c.OriginalPosition
			}
			out = append(out, ReviewComment{ID: c.ID, ReviewID: firstID(c.PullRequestReviewID, r.ID), Author: login(c.User),
				Path: c.Path, Line: line, Body: c.Body, Created: parseTime(c.Created)})
		}
	}
	return out, nil
}

func firstID(a, b int64) int64 {
	if a != 0 {
		return a
	}
	return b
}

func (g *giteaForge) Issues(ctx context.Context, label string) ([]Issue, error) {
	q := url.Values{"state": {"open"}, "labels": {label}, "type": {"issues"}, "limit": {"50"}}
	is, err := listOf[ghIssue](ctx, g.t, g.path("/issues?%s", q.Encode()))
	return issues(is), err
}

// Issue asks GET /repos/{owner}/{repo}/issues/{index}.
func (g *giteaForge) Issue(ctx context.Context, number int) (Issue, error) {
	return oneIssue(ctx, g.t, g.path("/issues/%d", number))
}

func (g *giteaForge) IssueComments(ctx context.Context, number int, since time.Time, after int64) ([]Comment, error) {
	q := url.Values{}
	if !since.IsZero() {
		q.Set("since", since.UTC().Format(time.RFC3339))
	}
	p := g.path("/issues/%d/comments", number)
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	cs, err := listOf[ghComment](ctx, g.t, p)
	return comments(cs, after), err
}

func (g *giteaForge) CreateComment(ctx context.Context, number int, body string) (Comment, error) {
	var c ghComment
	err := g.t.sendJSON(ctx, http.MethodPost, g.path("/issues/%d/comments", number), map[string]string{"body": body}, &c, http.StatusCreated)
	return c.comment(), err
}

// IsCollaborator asks GET /repos/{owner}/{repo}/collaborators/{collaborator}:
// 204 if the user is one, 404 if not.
func (g *giteaForge) IsCollaborator(ctx context.Context, user string) (bool, error) {
	return collaborator(ctx, g.t, g.path("/collaborators/%s", esc(user)))
}
