package forge

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The webhook headers: GitHub's (X-GitHub-Event, X-Hub-Signature-256:
// sha256=<hex HMAC-SHA256 of the body>) and Gitea's (X-Gitea-Event-Type,
// the precise event, and X-Gitea-Signature: <hex HMAC-SHA256>; Gitea also
// sends X-Gitea-Event, the coarse one), as go-gitea/gitea
// services/webhook/deliver.go sets them.
const (
	HeaderGitHubEvent     = "X-GitHub-Event"
	HeaderGitHubSignature = "X-Hub-Signature-256"
	HeaderGiteaEvent      = "X-Gitea-Event"
	HeaderGiteaEventType  = "X-Gitea-Event-Type"
	HeaderGiteaSignature  = "X-Gitea-Signature"
)

// Sign is the signature header's value a forge of kind sends for body.
func Sign(kind Kind, secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	sum := hex.EncodeToString(m.Sum(nil))
	if kind == GitHub {
		return "sha256=" + sum
	}
	return sum
}

// Verify checks a webhook's signature against the secret, in constant
// time.
func Verify(kind Kind, header http.Header, body []byte, secret string) error {
	var got string
	if kind == GitHub {
		got = header.Get(HeaderGitHubSignature)
	} else {
		got = header.Get(HeaderGiteaSignature)
	}
	if got == "" || secret == "" {
		return ErrBadSignature
	}
	want := Sign(kind, secret, body)
	if !hmac.Equal([]byte(strings.ToLower(strings.TrimSpace(got))), []byte(want)) {
		return ErrBadSignature
	}
	return nil
}

// What an event is to wilco (Event.Kind).
const (
	EventCheck         = "check"          // a check run, a check suite or a status changed
	EventReview        = "review"         // a review was submitted or dismissed
	EventReviewComment = "review_comment" // a comment on a line
	EventPullClosed    = "pull_closed"    // a pull request was closed (merged or not)
	EventIssue         = "issue"          // an issue was opened, labeled, edited, closed…
	EventComment       = "comment"        // a comment on an issue or a pull request's conversation
	EventPing          = "ping"           // the forge tries the hook
	EventOther         = "other"          // anything else: nothing to read
)

// Event is a webhook's event, decoded.
type Event struct {
	// Name is the forge's name of the event (X-GitHub-Event,
	// X-Gitea-Event-Type); Kind is what wilco reads it as.
	Name   string
	Kind   string
	Action string
	Repo   Repo
	Sender string
	// SHA is the commit a check is of.
	SHA string
	// Check is the check run or status (nil for a check suite).
	Check *Check
	// PullNumber is the pull request the event is of (0: none known).
	PullNumber    int
	Pull          *PullRequest
	Review        *Review
	ReviewComment *ReviewComment
	Issue         *Issue
	// IssueIsPull: the issue of a comment is a pull request.
	IssueIsPull bool
	Comment     *Comment
}

// ParseWebhook verifies a webhook's signature and decodes its event.
func ParseWebhook(kind Kind, header http.Header, body []byte, secret string) (Event, error) {
	if err := Verify(kind, header, body, secret); err != nil {
		return Event{}, err
	}
	name := header.Get(HeaderGitHubEvent)
	if kind == Gitea {
		name = firstNonEmpty(header.Get(HeaderGiteaEventType), header.Get(HeaderGiteaEvent))
	}
	return DecodeEvent(kind, name, body)
}

// webhookPayload is the union of the payloads' fields wilco reads: GitHub's
// webhook payloads (github/rest-api-description, the webhooks of
// descriptions/api.github.com/api.github.com.2022-11-28.yaml: check-run,
// check-suite, status, pull-request-review, pull-request-review-comment,
// pull-request, issues, issue-comment) and Gitea's (go-gitea/gitea
// modules/structs/hook.go: PullRequestPayload, IssuePayload,
// IssueCommentPayload, CommitStatusPayload), whose common fields are
// GitHub's.
type webhookPayload struct {
	Action     string `json:"action"`
	Repository *struct {
		FullName string `json:"full_name"`
	} `json:"repository"`
	Sender *ghUser `json:"sender"`

	CheckRun *struct {
		ghCheckRun
		PullRequests []ghPull `json:"pull_requests"`
	} `json:"check_run"`
	CheckSuite *struct {
		ID           int64    `json:"id"`
		HeadSHA      string   `json:"head_sha"`
		Status       string   `json:"status"`
		Conclusion   *string  `json:"conclusion"`
		PullRequests []ghPull `json:"pull_requests"`
	} `json:"check_suite"`

	// status (both forges)
	ID          int64   `json:"id"`
	SHA         string  `json:"sha"`
	State       string  `json:"state"`
	Context     string  `json:"context"`
	Description *string `json:"description"`
	TargetURL   *string `json:"target_url"`

	Number      int              `json:"number"`
	PullRequest *ghPull          `json:"pull_request"`
	Review      *json.RawMessage `json:"review"`
	Comment     *json.RawMessage `json:"comment"`
	Issue       *ghIssue         `json:"issue"`
	IsPull      bool             `json:"is_pull"` // Gitea's issue_comment on a pull request
}

// DecodeEvent decodes the payload of the named event.
func DecodeEvent(kind Kind, name string, body []byte) (Event, error) {
	var p webhookPayload
	if err := json.Unmarshal(body, &p); err != nil {
		return Event{}, fmt.Errorf("forge: webhook %s: the payload is not the JSON expected: %w", name, err)
	}
	ev := Event{Name: name, Kind: EventOther, Action: p.Action, Sender: login(p.Sender)}
	if p.Repository != nil {
		ev.Repo, _ = ParseRepo(p.Repository.FullName)
	}
	if p.PullRequest != nil {
		pr := p.PullRequest.pull()
		ev.Pull, ev.PullNumber = &pr, pr.Number
	}
	if ev.PullNumber == 0 {
		ev.PullNumber = p.Number
	}
	switch name {
	case "ping":
		ev.Kind = EventPing
	case "check_run", "check_suite", "status":
		return ev, ev.checkOf(name, p)
	case "pull_request_review", "pull_request_review_approved", "pull_request_review_rejected",
		// Gitea's coarse names (X-Gitea-Event), for a sender without
		// X-Gitea-Event-Type.
		"pull_request_approved", "pull_request_rejected":
		ev.Kind = EventReview
		if err := ev.review(kind, name, p.Review); err != nil {
			return ev, err
		}
	case "pull_request":
		if p.Action == "closed" {
			ev.Kind = EventPullClosed
		}
	case "issues", "issue_label":
		if p.Issue == nil {
			return ev, missing(name, "issue")
		}
		i := p.Issue.issue()
		ev.Kind, ev.Issue = EventIssue, &i
	case "pull_request_review_comment":
		if err := ev.reviewComment(kind, name, p); err != nil {
			return ev, err
		}
	case "pull_request_comment":
		// Gitea: a comment on a pull request's conversation (its
		// X-Gitea-Event-Type), or — as the coarse X-Gitea-Event — a
		// review's comment on a line, whose payload has a review.
		if p.Review != nil && p.Comment == nil {
			return ev, ev.reviewComment(kind, name, p)
		}
		return ev, ev.commentOf(name, p)
	case "issue_comment":
		return ev, ev.commentOf(name, p)
	}
	return ev, nil
}

// checkOf reads a check's event: a check run, a check suite (its head
// only) or a commit status, and the pull request it names if any.
func (ev *Event) checkOf(name string, p webhookPayload) error {
	ev.Kind = EventCheck
	switch name {
	case "check_run":
		if p.CheckRun == nil {
			return missing(name, "check_run")
		}
		c := p.CheckRun.check()
		ev.Check, ev.SHA = &c, p.CheckRun.HeadSHA
		if len(p.CheckRun.PullRequests) > 0 {
			ev.PullNumber = p.CheckRun.PullRequests[0].Number
		}
	case "check_suite":
		if p.CheckSuite == nil {
			return missing(name, "check_suite")
		}
		ev.SHA = p.CheckSuite.HeadSHA
		if len(p.CheckSuite.PullRequests) > 0 {
			ev.PullNumber = p.CheckSuite.PullRequests[0].Number
		}
	default:
		st := ghStatus{ID: p.ID, State: p.State, Context: p.Context, Description: p.Description, TargetURL: p.TargetURL}
		c := st.check()
		ev.Check, ev.SHA = &c, p.SHA
	}
	return nil
}

// commentOf reads a comment on an issue or a pull request's conversation.
func (ev *Event) commentOf(name string, p webhookPayload) error {
	if p.Issue == nil || p.Comment == nil {
		return missing(name, "issue and comment")
	}
	var c ghComment
	if err := json.Unmarshal(*p.Comment, &c); err != nil {
		return fmt.Errorf("forge: webhook %s: comment: %w", name, err)
	}
	i, cm := p.Issue.issue(), c.comment()
	ev.Kind, ev.Issue, ev.Comment = EventComment, &i, &cm
	ev.IssueIsPull = p.Issue.isPull() || p.IsPull || name == "pull_request_comment"
	if ev.IssueIsPull && ev.PullNumber == 0 {
		ev.PullNumber = i.Number
	}
	return nil
}

// reviewComment reads a comment on a line: GitHub's payload holds it;
// Gitea's says only which pull request (its comments are read through
// the API).
func (ev *Event) reviewComment(kind Kind, name string, p webhookPayload) error {
	ev.Kind = EventReviewComment
	if kind != GitHub {
		return nil
	}
	if p.Comment == nil {
		return missing(name, "comment")
	}
	var c ghReviewComment
	if err := json.Unmarshal(*p.Comment, &c); err != nil {
		return fmt.Errorf("forge: webhook %s: comment: %w", name, err)
	}
	rc := c.comment()
	ev.ReviewComment = &rc
	return nil
}

// review reads a review event's review: GitHub's (a review object whose
// state is lowercase in webhooks), Gitea's (a type naming the verdict, and
// the review's text as content).
func (ev *Event) review(kind Kind, name string, raw *json.RawMessage) error {
	if raw == nil {
		return missing(name, "review")
	}
	if kind == GitHub {
		var r ghReview
		if err := json.Unmarshal(*raw, &r); err != nil {
			return fmt.Errorf("forge: webhook %s: review: %w", name, err)
		}
		ev.Review = &Review{ID: r.ID, Author: login(r.User), State: strings.ToUpper(r.State), Body: r.Body,
			CommitSHA: deref(r.CommitID), SubmittedAt: parseTime(deref(r.SubmittedAt))}
		return nil
	}
	var r struct {
		Type    string `json:"type"`
		Content string `json:"content"`
	}
	if err := json.Unmarshal(*raw, &r); err != nil {
		return fmt.Errorf("forge: webhook %s: review: %w", name, err)
	}
	state := ReviewCommented
	switch firstNonEmpty(r.Type, name) {
	case "pull_request_review_approved", "pull_request_approved":
		state = ReviewApproved
	case "pull_request_review_rejected", "pull_request_rejected":
		state = ReviewChangesRequested
	}
	ev.Review = &Review{Author: ev.Sender, State: state, Body: r.Content}
	return nil
}

func missing(name, what string) error {
	return fmt.Errorf("forge: webhook %s: the payload has no %s", name, what)
}
