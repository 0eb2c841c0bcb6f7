package forge

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The JSON shapes of GitHub's REST API below are the fields wilco reads of
// the schemas in GitHub's OpenAPI description (github/rest-api-description,
// descriptions/api.github.com/api.github.com.2022-11-28.yaml, info.version
// 1.1.4): components/schemas pull-request, check-run,
// combined-commit-status, pull-request-review,
// pull-request-review-comment, issue, issue-comment, simple-user.

type ghUser struct {
	Login string `json:"login"`
}

type ghPull struct {
	Number         int       `json:"number"`
	HTMLURL        string    `json:"html_url"`
	State          string    `json:"state"` // open, closed
	Title          string    `json:"title"`
	Body           *string   `json:"body"`
	Merged         bool      `json:"merged"`
	MergedAt       *string   `json:"merged_at"`
	MergeCommitSHA *string   `json:"merge_commit_sha"`
	Head           ghPullRef `json:"head"`
	Base           ghPullRef `json:"base"`
}

type ghPullRef struct {
	Ref string `json:"ref"`
	SHA string `json:"sha"`
}

func (p ghPull) pull() PullRequest {
	out := PullRequest{Number: p.Number, URL: p.HTMLURL, State: p.State, Title: p.Title, Body: deref(p.Body),
		Head: p.Head.Ref, Base: p.Base.Ref, HeadSHA: p.Head.SHA}
	// A pull request in a list has no merged field: merged_at says it.
	if p.Merged || p.MergedAt != nil {
		out.State = PRMerged
		out.MergeSHA = deref(p.MergeCommitSHA)
	}
	return out
}

type ghCheckRun struct {
	ID         int64   `json:"id"`
	Name       string  `json:"name"`
	HeadSHA    string  `json:"head_sha"`
	Status     string  `json:"status"`     // queued, in_progress, completed, waiting, requested, pending
	Conclusion *string `json:"conclusion"` // success, failure, neutral, cancelled, skipped, timed_out, action_required, stale
	DetailsURL *string `json:"details_url"`
	HTMLURL    *string `json:"html_url"`
	Output     struct {
		Title   *string `json:"title"`
		Summary *string `json:"summary"`
		Text    *string `json:"text"`
	} `json:"output"`
	App *struct {
		Slug string `json:"slug"`
	} `json:"app"`
}

// githubActions is the slug of the GitHub App that runs GitHub Actions: its
// check runs are jobs, whose ids are the jobs' ids.
const githubActions = "github-actions"

func (r ghCheckRun) check() Check {
	c := Check{Source: SourceCheckRun, ID: r.ID, Name: r.Name, Raw: r.Status, URL: deref(r.DetailsURL),
		Summary: deref(r.Output.Summary), Text: deref(r.Output.Text)}
	if c.URL == "" {
		c.URL = deref(r.HTMLURL)
	}
	if r.App != nil && r.App.Slug == githubActions {
		c.JobID = r.ID
	}
	c.State = CheckPending
	if r.Status == "completed" {
		con := deref(r.Conclusion)
		c.Raw = con
		switch con {
		case "success":
			c.State = CheckSuccess
		case "neutral", "skipped":
			c.State = CheckNeutral
		default: // failure, cancelled, timed_out, action_required, stale
			c.State = CheckFailure
		}
	}
	return c
}

type ghStatus struct {
	ID          int64   `json:"id"`
	State       string  `json:"state"` // error, failure, pending, success
	Context     string  `json:"context"`
	Description *string `json:"description"`
	TargetURL   *string `json:"target_url"`
}

func (s ghStatus) check() Check {
	return Check{Source: SourceStatus, ID: s.ID, Name: s.Context, Raw: s.State, State: statusState(s.State),
		Description: deref(s.Description), URL: deref(s.TargetURL)}
}

// statusState is a commit status's state as a check's: error and failure
// fail, success passes, the rest (pending, Gitea's warning) waits or
// passes.
func statusState(s string) string {
	switch s {
	case "success":
		return CheckSuccess
	case "failure", "error":
		return CheckFailure
	case "warning":
		return CheckNeutral
	}
	return CheckPending
}

type ghReview struct {
	ID          int64   `json:"id"`
	User        *ghUser `json:"user"`
	Body        string  `json:"body"`
	State       string  `json:"state"`
	CommitID    *string `json:"commit_id"`
	SubmittedAt *string `json:"submitted_at"`
}

type ghReviewComment struct {
	ID                  int64   `json:"id"`
	PullRequestReviewID *int64  `json:"pull_request_review_id"`
	Path                string  `json:"path"`
	Line                *int    `json:"line"`
	OriginalLine        *int    `json:"original_line"`
	Body                string  `json:"body"`
	User                *ghUser `json:"user"`
	CreatedAt           string  `json:"created_at"`
}

func (c ghReviewComment) comment() ReviewComment {
	line := c.Line
	if line == nil {
		line = c.OriginalLine
	}
	out := ReviewComment{ID: c.ID, Author: login(c.User), Path: c.Path, Body: c.Body, Created: parseTime(c.CreatedAt)}
	if line != nil {
		out.Line = *line
	}
	if c.PullRequestReviewID != nil {
		out.ReviewID = *c.PullRequestReviewID
	}
	return out
}

type ghLabel struct {
	Name string `json:"name"`
}

type ghIssue struct {
	Number      int             `json:"number"`
	Title       string          `json:"title"`
	Body        *string         `json:"body"`
	State       string          `json:"state"`
	User        *ghUser         `json:"user"`
	Labels      []ghLabel       `json:"labels"`
	HTMLURL     string          `json:"html_url"`
	CreatedAt   string          `json:"created_at"`
	UpdatedAt   string          `json:"updated_at"`
	PullRequest json.RawMessage `json:"pull_request"`
	ClosedBy    *ghUser         `json:"closed_by"`
}

func (i ghIssue) issue() Issue {
	out := Issue{Number: i.Number, Title: i.Title, Body: deref(i.Body), Author: login(i.User), URL: i.HTMLURL, State: i.State,
		Created: parseTime(i.CreatedAt), Updated: parseTime(i.UpdatedAt)}
	for _, l := range i.Labels {
		out.Labels = append(out.Labels, l.Name)
	}
	return out
}

// isPull reports whether an issue of a listing is a pull request (both
// forges list them among issues, with a pull_request object).
func (i ghIssue) isPull() bool {
	return len(i.PullRequest) > 0 && string(i.PullRequest) != "null"
}

type ghComment struct {
	ID        int64   `json:"id"`
	Body      string  `json:"body"`
	User      *ghUser `json:"user"`
	HTMLURL   string  `json:"html_url"`
	CreatedAt string  `json:"created_at"`
	UpdatedAt string  `json:"updated_at"`
}

func (c ghComment) comment() Comment {
	return Comment{ID: c.ID, Author: login(c.User), Body: c.Body, URL: c.HTMLURL,
		Created: parseTime(c.CreatedAt), Updated: parseTime(c.UpdatedAt)}
}

func login(u *ghUser) string {
	if u == nil {
		return ""
	}
	return u.Login
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// parseTime reads the forges' ISO 8601 times; zero when it is none.
func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// githubForge is a repository on GitHub.
type githubForge struct {
	t    *transport
	repo Repo
}

func (g *githubForge) Kind() Kind     { return GitHub }
func (g *githubForge) Repo() Repo     { return g.repo }
func (g *githubForge) String() string { return g.repo.String() + " on " + g.t.String() }

// GoString is String: %#v shows no token either.
func (g *githubForge) GoString() string { return g.String() }

func (g *githubForge) path(format string, args ...any) string {
	return "/repos/" + esc(g.repo.Owner) + "/" + esc(g.repo.Name) + fmt.Sprintf(format, args...)
}

func (g *githubForge) OpenPullRequest(ctx context.Context, pr NewPullRequest) (PullRequest, error) {
	var p ghPull
	err := g.t.sendJSON(ctx, http.MethodPost, g.path("/pulls"),
		map[string]string{"title": pr.Title, "body": pr.Body, "head": pr.Head, "base": pr.Base}, &p, http.StatusCreated)
	return p.pull(), err
}

// PullRequest asks GET /repos/{owner}/{repo}/pulls/{number}, and for one
// closed unmerged the issue of the same number, whose closed_by says who
// closed it (a pull request's own schema does not).
func (g *githubForge) PullRequest(ctx context.Context, number int) (PullRequest, error) {
	var p ghPull
	if err := g.t.getJSON(ctx, g.path("/pulls/%d", number), &p); err != nil {
		return PullRequest{}, err
	}
	out := p.pull()
	if out.State != PRClosed {
		return out, nil
	}
	var i ghIssue
	if err := g.t.getJSON(ctx, g.path("/issues/%d", number), &i); err != nil {
		return out, fmt.Errorf("who closed pull request #%d: %w", number, err)
	}
	out.ClosedBy = login(i.ClosedBy)
	return out, nil
}

func (g *githubForge) FindPullRequest(ctx context.Context, head string) (PullRequest, bool, error) {
	q := url.Values{"state": {"open"}, "head": {g.repo.Owner + ":" + head}, "per_page": {"100"}}
	pulls, err := listOf[ghPull](ctx, g.t, g.path("/pulls?%s", q.Encode()))
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

func (g *githubForge) MergePullRequest(ctx context.Context, number int, m Merge) (string, error) {
	body := map[string]string{"merge_method": firstNonEmpty(m.Method, "merge")}
	if m.HeadSHA != "" {
		body["sha"] = m.HeadSHA
	}
	var out struct {
		SHA    string `json:"sha"`
		Merged bool   `json:"merged"`
	}
	if err := g.t.sendJSON(ctx, http.MethodPut, g.path("/pulls/%d/merge", number), body, &out); err != nil {
		return "", err
	}
	return out.SHA, nil
}

func (g *githubForge) ClosePullRequest(ctx context.Context, number int) error {
	return g.t.sendJSON(ctx, http.MethodPatch, g.path("/pulls/%d", number), map[string]string{"state": "closed"}, nil)
}

// EditPullRequest asks PATCH /repos/{owner}/{repo}/pulls/{number}.
func (g *githubForge) EditPullRequest(ctx context.Context, number int, title, body string) error {
	return g.t.sendJSON(ctx, http.MethodPatch, g.path("/pulls/%d", number), map[string]string{"title": title, "body": body}, nil)
}

func (g *githubForge) Checks(ctx context.Context, sha string) ([]Check, error) {
	var out []Check
	err := g.t.list(ctx, g.path("/commits/%s/check-runs?per_page=100", esc(sha)), func(b []byte) error {
		var page struct {
			CheckRuns []ghCheckRun `json:"check_runs"`
		}
		if err := json.Unmarshal(b, &page); err != nil {
			return err
		}
		for _, r := range page.CheckRuns {
			out = append(out, r.check())
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = g.t.list(ctx, g.path("/commits/%s/status?per_page=100", esc(sha)), func(b []byte) error {
		var page struct {
			Statuses []ghStatus `json:"statuses"`
		}
		if err := json.Unmarshal(b, &page); err != nil {
			return err
		}
		for _, s := range page.Statuses {
			out = append(out, s.check())
		}
		return nil
	})
	return out, err
}

// CheckLog reads a GitHub Actions job's log (GET
// /repos/{owner}/{repo}/actions/jobs/{job_id}/logs answers 302 to the
// log's address, which the HTTP client follows; the token is not sent to
// another host), else the check's own words.
func (g *githubForge) CheckLog(ctx context.Context, c Check, max int) (string, error) {
	if c.JobID != 0 {
		a, err := g.t.do(ctx, http.MethodGet, g.path("/actions/jobs/%d/logs", c.JobID), nil)
		switch {
		case err == nil:
			return tail(string(a.body), max), nil
		case !isStatus(err, http.StatusNotFound, http.StatusGone):
			return "", err
		}
		// The log is gone (expired): what the check run says.
	}
	return tail(ownWords(c), max), nil
}

// ownWords is what a check says of itself without a log.
func ownWords(c Check) string {
	var parts []string
	for _, s := range []string{c.Summary, c.Text, c.Description} {
		if s = strings.TrimSpace(s); s != "" {
			parts = append(parts, s)
		}
	}
	if c.URL != "" {
		parts = append(parts, c.URL)
	}
	return strings.Join(parts, "\n\n")
}

func isStatus(err error, statuses ...int) bool {
	e, ok := err.(*APIError)
	if !ok {
		return false
	}
	for _, s := range statuses {
		if e.Status == s {
			return true
		}
	}
	return false
}

func (g *githubForge) Reviews(ctx context.Context, number int) ([]Review, error) {
	rs, err := listOf[ghReview](ctx, g.t, g.path("/pulls/%d/reviews?per_page=100", number))
	out := make([]Review, 0, len(rs))
	for _, r := range rs {
		out = append(out, Review{ID: r.ID, Author: login(r.User), State: r.State, Body: r.Body,
			CommitSHA: deref(r.CommitID), SubmittedAt: parseTime(deref(r.SubmittedAt))})
	}
	return out, err
}

func (g *githubForge) ReviewComments(ctx context.Context, number int) ([]ReviewComment, error) {
	cs, err := listOf[ghReviewComment](ctx, g.t, g.path("/pulls/%d/comments?per_page=100", number))
	out := make([]ReviewComment, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.comment())
	}
	return out, err
}

func (g *githubForge) Issues(ctx context.Context, label string) ([]Issue, error) {
	q := url.Values{"state": {"open"}, "labels": {label}, "per_page": {"100"}, "sort": {"created"}, "direction": {"asc"}}
	is, err := listOf[ghIssue](ctx, g.t, g.path("/issues?%s", q.Encode()))
	return issues(is), err
}

// Issue asks GET /repos/{owner}/{repo}/issues/{issue_number}.
func (g *githubForge) Issue(ctx context.Context, number int) (Issue, error) {
	return oneIssue(ctx, g.t, g.path("/issues/%d", number))
}

// oneIssue gets an issue; a pull request's number is no issue's
// (ErrNotFound).
func oneIssue(ctx context.Context, t *transport, path string) (Issue, error) {
	var i ghIssue
	if err := t.getJSON(ctx, path, &i); err != nil {
		return Issue{}, err
	}
	if i.isPull() {
		return Issue{}, fmt.Errorf("%w: #%d is a pull request", ErrNotFound, i.Number)
	}
	return i.issue(), nil
}

func issues(is []ghIssue) []Issue {
	out := make([]Issue, 0, len(is))
	for _, i := range is {
		if !i.isPull() && i.State == "open" {
			out = append(out, i.issue())
		}
	}
	return out
}

func (g *githubForge) IssueComments(ctx context.Context, number int, since time.Time, after int64) ([]Comment, error) {
	q := url.Values{"per_page": {"100"}}
	if !since.IsZero() {
		q.Set("since", since.UTC().Format(time.RFC3339))
	}
	cs, err := listOf[ghComment](ctx, g.t, g.path("/issues/%d/comments?%s", number, q.Encode()))
	return comments(cs, after), err
}

func comments(cs []ghComment, after int64) []Comment {
	out := make([]Comment, 0, len(cs))
	for _, c := range cs {
		if c.ID > after {
			out = append(out, c.comment())
		}
	}
	return out
}

func (g *githubForge) CreateComment(ctx context.Context, number int, body string) (Comment, error) {
	var c ghComment
	err := g.t.sendJSON(ctx, http.MethodPost, g.path("/issues/%d/comments", number), map[string]string{"body": body}, &c, http.StatusCreated)
	return c.comment(), err
}

// IsCollaborator asks GET /repos/{owner}/{repo}/collaborators/{username}:
// 204 if the user is one, 404 if not.
func (g *githubForge) IsCollaborator(ctx context.Context, user string) (bool, error) {
	return collaborator(ctx, g.t, g.path("/collaborators/%s", esc(user)))
}

func collaborator(ctx context.Context, t *transport, path string) (bool, error) {
	_, err := t.do(ctx, http.MethodGet, path, nil, http.StatusNoContent)
	if isStatus(err, http.StatusNotFound) {
		return false, nil
	}
	return err == nil, err
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
