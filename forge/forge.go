package forge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Kind is a forge's API dialect (forge.kind).
type Kind string

// The forges wilco speaks to.
const (
	GitHub Kind = "github"
	Gitea  Kind = "gitea"
)

// Kinds are the values of forge.kind.
var Kinds = []Kind{GitHub, Gitea}

// DefaultAPI is the API's address a kind defaults to ("" when it has
// none: a Gitea is always someone's own server).
func DefaultAPI(k Kind) string {
	if k == GitHub {
		return "https://api.github.com"
	}
	return ""
}

// Sentinel errors; an *APIError matches the one of its status (errors.Is).
var (
	// ErrNotFound: the forge answered 404 (no such pull request, issue,
	// user, repository, or a token that may not see it).
	ErrNotFound = errors.New("forge: not found")
	// ErrUnauthorized: the forge refused the token (401).
	ErrUnauthorized = errors.New("forge: the token was refused")
	// ErrForbidden: the token may not do this (403 that is no rate limit).
	ErrForbidden = errors.New("forge: forbidden")
	// ErrNotMergeable: the pull request cannot be merged as it is (405).
	ErrNotMergeable = errors.New("forge: the pull request cannot be merged")
	// ErrHeadMoved: the pull request's head is no longer the commit the
	// merge was asked for (409).
	ErrHeadMoved = errors.New("forge: the pull request's head moved")
	// ErrRateLimited: the rate limit did not reset within the attempts.
	ErrRateLimited = errors.New("forge: rate limited")
	// ErrUnavailable: the forge kept failing (5xx, connection errors)
	// for every attempt.
	ErrUnavailable = errors.New("forge: unavailable")
	// ErrBadSignature: a webhook's signature is missing or wrong.
	ErrBadSignature = errors.New("forge: webhook signature missing or wrong")
	// ErrBadRemote: a remote's URL names no owner/name repository.
	ErrBadRemote = errors.New("forge: the remote's URL names no repository")
)

// APIError is an answer of the forge that is no success.
type APIError struct {
	Method, Path string
	Status       int
	// Message is the forge's own message ({"message": …}), if any.
	Message string
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("forge: %s %s: %d %s", e.Method, e.Path, e.Status, http.StatusText(e.Status))
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Is matches the sentinel of the error's status.
func (e *APIError) Is(target error) bool {
	switch e.Status {
	case http.StatusNotFound:
		return target == ErrNotFound
	case http.StatusUnauthorized:
		return target == ErrUnauthorized
	case http.StatusForbidden:
		return target == ErrForbidden
	case http.StatusMethodNotAllowed:
		return target == ErrNotMergeable
	case http.StatusConflict:
		return target == ErrHeadMoved
	}
	return false
}

// Repo is a repository on a forge: owner/name.
type Repo struct{ Owner, Name string }

func (r Repo) String() string { return r.Owner + "/" + r.Name }

// ParseRepo reads owner/name.
func ParseRepo(s string) (Repo, error) {
	owner, name, ok := strings.Cut(s, "/")
	if !ok || !validPart(owner) || !validPart(name) {
		return Repo{}, fmt.Errorf("%w: %q is not owner/name", ErrBadRemote, s)
	}
	return Repo{Owner: owner, Name: name}, nil
}

// validPart is an owner's or a repository's name: letters, digits, - _ .
// and not . or .. (both forges' rules are narrower; this keeps a path
// segment a path segment).
func validPart(s string) bool {
	if s == "" || s == "." || s == ".." || len(s) > 100 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// PR states, as both forges say them, and merged (a closed one that was
// merged).
const (
	PROpen   = "open"
	PRClosed = "closed"
	PRMerged = "merged"
)

// PullRequest is a pull request.
type PullRequest struct {
	Number int
	URL    string // the page people read
	// State is open, closed, or merged.
	State      string
	Title      string
	Body       string
	Head, Base string // branch names
	HeadSHA    string
	// MergeSHA is the commit a merged pull request landed as.
	MergeSHA string
	// ClosedBy is who closed one unmerged ("" when the forge does not
	// say): PullRequest reads it, listings do not.
	ClosedBy string
}

// NewPullRequest is what a pull request is opened with.
type NewPullRequest struct {
	Title, Body string
	Head, Base  string
}

// Check states, whatever the forge's words.
const (
	CheckPending = "pending"
	CheckSuccess = "success"
	CheckFailure = "failure"
	// CheckNeutral is a check that neither passes nor fails a commit:
	// GitHub's neutral and skipped conclusions.
	CheckNeutral = "neutral"
)

// Check sources.
const (
	SourceCheckRun = "check_run" // GitHub's checks API
	SourceStatus   = "status"    // commit statuses (both forges)
)

// Check is one check of a commit: a GitHub check run or a commit status.
type Check struct {
	Source string // check_run or status
	ID     int64
	Name   string // the check run's name, the status's context
	// State is pending, success, failure or neutral; Raw is the forge's
	// own words (status/conclusion, or the status's state).
	State string
	Raw   string
	URL   string // details_url or target_url
	// Summary and Text are a check run's output, Description a status's.
	Summary, Text, Description string
	// JobID is the GitHub Actions job a check run is (its log is the
	// job's), 0 for any other.
	JobID int64
}

// Review states, GitHub's words (Gitea's are mapped to them).
const (
	ReviewApproved         = "APPROVED"
	ReviewChangesRequested = "CHANGES_REQUESTED"
	ReviewCommented        = "COMMENTED"
	ReviewDismissed        = "DISMISSED"
	ReviewPending          = "PENDING"
)

// Review is one review of a pull request.
type Review struct {
	ID          int64
	Author      string
	State       string
	Body        string
	CommitSHA   string
	SubmittedAt time.Time
}

// ReviewComment is a review's comment on a line of the change.
type ReviewComment struct {
	ID       int64
	ReviewID int64
	Author   string
	Path     string
	Line     int // in the changed file; 0 when the forge gives none
	Body     string
	Created  time.Time
}

// Issue states, as both forges say them.
const (
	IssueOpen   = "open"
	IssueClosed = "closed"
)

// Issue is an issue.
type Issue struct {
	Number int
	Title  string
	Body   string
	Author string
	Labels []string
	URL    string
	// State is open or closed.
	State   string
	Created time.Time
	Updated time.Time
}

// Comment is a comment on an issue or a pull request's conversation.
type Comment struct {
	ID      int64
	Author  string
	Body    string
	URL     string
	Created time.Time
	Updated time.Time
}

// MergeMethods are the ways a pull request is merged.
var MergeMethods = []string{"merge", "squash", "rebase"}

// Merge is how a pull request is merged: its method (merge, squash,
// rebase; "" is merge) and the head it must still have ("" for any).
type Merge struct {
	Method  string
	HeadSHA string
}

// Forge is one repository on one forge.
type Forge interface {
	Kind() Kind
	Repo() Repo

	// OpenPullRequest opens a pull request of an already pushed branch.
	OpenPullRequest(ctx context.Context, pr NewPullRequest) (PullRequest, error)
	// PullRequest gets one by number.
	PullRequest(ctx context.Context, number int) (PullRequest, error)
	// FindPullRequest finds the open pull request of a head branch;
	// false when there is none.
	FindPullRequest(ctx context.Context, head string) (PullRequest, bool, error)
	// MergePullRequest merges it and returns the commit it landed as.
	MergePullRequest(ctx context.Context, number int, m Merge) (string, error)
	// ClosePullRequest closes it unmerged.
	ClosePullRequest(ctx context.Context, number int) error
	// EditPullRequest sets its title and body.
	EditPullRequest(ctx context.Context, number int, title, body string) error

	// Checks are a commit's checks: GitHub's check runs and combined
	// statuses, Gitea's statuses.
	Checks(ctx context.Context, sha string) ([]Check, error)
	// CheckLog is the last max bytes of what a check says of itself:
	// a GitHub Actions job's log, else a check run's output, else a
	// status's description and address.
	CheckLog(ctx context.Context, c Check, max int) (string, error)

	// Reviews are a pull request's reviews, oldest first.
	Reviews(ctx context.Context, number int) ([]Review, error)
	// ReviewComments are its reviews' comments on lines.
	ReviewComments(ctx context.Context, number int) ([]ReviewComment, error)

	// Issues are the open issues with a label (no pull requests).
	Issues(ctx context.Context, label string) ([]Issue, error)
	// Issue gets one by number, open or closed.
	Issue(ctx context.Context, number int) (Issue, error)
	// IssueComments are an issue's comments updated at or after since
	// (zero: all) with an id above after (0: any), oldest first.
	IssueComments(ctx context.Context, number int, since time.Time, after int64) ([]Comment, error)
	// CreateComment writes a comment on an issue or a pull request.
	CreateComment(ctx context.Context, number int, body string) (Comment, error)
	// IsCollaborator says whether a user may push to the repository.
	IsCollaborator(ctx context.Context, user string) (bool, error)
}

// Options are what a Forge is made with.
type Options struct {
	Kind Kind
	// API is the API's root: https://api.github.com,
	// https://HOST/api/v3 (GitHub Enterprise), https://HOST/api/v1
	// (Gitea); "" for the kind's default.
	API   string
	Repo  Repo
	Token string
	// HTTP is the client requests go through; nil for one of its own.
	HTTP *http.Client
	// Clock is what waits between attempts; nil for the wall clock.
	Clock Clock
	// Observe, if set, hears of every request made (after its answer).
	Observe func(Call)
	// Attempts bounds the tries of one call (default 5).
	Attempts int
	// Backoff is the first wait after a 5xx or a connection error,
	// doubled each time up to MaxBackoff (defaults 1s and 30s).
	Backoff, MaxBackoff time.Duration
}

// String shows the options without the token (only whether there is
// one): they are printed in errors and logs like any value.
func (o Options) String() string {
	tok := "no token"
	if o.Token != "" {
		tok = "a token"
	}
	return fmt.Sprintf("%s %s at %s (%s)", o.Kind, o.Repo, o.API, tok)
}

// GoString is String: %#v shows no token either.
func (o Options) GoString() string { return o.String() }

// Call is one request made, as reported to an observer: never the token,
// never a query or a body.
type Call struct {
	Method   string
	Path     string
	Status   int // 0 when no answer came
	Duration time.Duration
	Attempt  int // 1 for the first try
	Err      error
}

// Clock is the time the transport reads and waits on (clock.Real
// satisfies it).
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// New makes the Forge of the options' kind.
func New(o Options) (Forge, error) {
	if o.API == "" {
		o.API = DefaultAPI(o.Kind)
	}
	t, err := newTransport(o)
	if err != nil {
		return nil, err
	}
	switch o.Kind {
	case GitHub:
		return &githubForge{t: t, repo: o.Repo}, nil
	case Gitea:
		return &giteaForge{t: t, repo: o.Repo}, nil
	}
	return nil, fmt.Errorf("forge: kind must be github or gitea, got %q", o.Kind)
}

// tail is the last max bytes of s (all of it when max <= 0), cut at a
// line's start when one is near.
func tail(s string, max int) string {
	if max <= 0 || len(s) <= max {
		return s
	}
	s = s[len(s)-max:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)/4 {
		s = s[i+1:]
	}
	return s
}
