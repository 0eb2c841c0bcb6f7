package forgetest

import (
	"fmt"
	"time"

	"wilco/forge"
)

type pull struct {
	Number     int
	Title      string
	Body       string
	Head, Base string
	Author     string
	State      string // open, closed
	Merged     bool
	MergeSHA   string
	HeadSHA    string // fixed once closed
	Labels     []string
	Created    time.Time
	ClosedBy   string // who closed it unmerged
	Closed     time.Time
}

type issue struct {
	Number   int
	Title    string
	Body     string
	Author   string
	Labels   []string
	State    string
	Created  time.Time
	Updated  time.Time
	ClosedBy string
}

type comment struct {
	ID      int64
	Number  int
	Author  string
	Body    string
	Created time.Time
	Updated time.Time
}

// CheckRun is a GitHub check run of a commit.
type CheckRun struct {
	// Name identifies it on its commit: a second one of the same name
	// replaces the first (keeping its id), as a job's re-run would.
	Name string
	// Status is queued, in_progress or completed; Conclusion (when
	// completed) success, failure, neutral, cancelled, skipped,
	// timed_out or action_required.
	Status, Conclusion string
	Summary, Text      string
	// Actions makes it a GitHub Actions job whose log is Log.
	Actions bool
	Log     string
}

type checkRun struct {
	CheckRun
	ID  int64
	SHA string
}

// Status is a commit status (both forges).
type Status struct {
	Context, State, Description, TargetURL string
}

type status struct {
	Status
	ID      int64
	SHA     string
	Created time.Time
}

type review struct {
	ID        int64
	Number    int
	Author    string
	State     string // GitHub's words
	Body      string
	CommitSHA string
	Submitted time.Time
}

type reviewComment struct {
	ID       int64
	ReviewID int64
	Number   int
	Author   string
	Path     string
	Line     int
	Body     string
	Created  time.Time
}

func (s *Server) id() int64 {
	s.nextID++
	return s.nextID
}

// SetCheckRun sets a check run of sha (GitHub) and returns its id (a job's
// id when it is an Actions job).
func (s *Server) SetCheckRun(sha string, c CheckRun) int64 {
	s.mu.Lock()
	var r *checkRun
	for _, old := range s.checkRuns {
		if old.SHA == sha && old.Name == c.Name {
			r = old
		}
	}
	if r == nil {
		r = &checkRun{ID: s.id(), SHA: sha}
		s.checkRuns = append(s.checkRuns, r)
	}
	r.CheckRun = c
	action := "created"
	if c.Status == "completed" {
		action = "completed"
	}
	body := map[string]any{"action": action, "check_run": s.ghCheckRun(r)}
	suite := s.suiteDone(sha)
	s.mu.Unlock()
	s.send("check_run", "", body)
	if suite != nil {
		s.send("check_suite", "", suite)
	}
	return r.ID
}

// suiteDone is the check_suite event of sha once all its check runs are
// completed (GitHub sends one then), nil before.
func (s *Server) suiteDone(sha string) map[string]any {
	conclusion := "success"
	var pulls []any
	for _, r := range s.checkRuns {
		if r.SHA != sha {
			continue
		}
		if r.Status != "completed" {
			return nil
		}
		switch r.Conclusion {
		case "success", "neutral", "skipped":
		default:
			conclusion = "failure"
		}
		if p, ok := s.ghCheckRun(r)["pull_requests"].([]any); ok && pulls == nil {
			pulls = p
		}
	}
	return map[string]any{"action": "completed", "check_suite": map[string]any{
		"id": 1, "head_sha": sha, "status": "completed", "conclusion": conclusion, "pull_requests": nonNil(pulls)}}
}

// SetStatus adds a commit status of sha (the latest of a context is its
// state).
func (s *Server) SetStatus(sha string, st Status) int64 {
	s.mu.Lock()
	r := &status{Status: st, ID: s.id(), SHA: sha, Created: s.now()}
	s.statuses = append(s.statuses, r)
	body := map[string]any{"id": r.ID, "sha": sha, "state": st.State, "context": st.Context,
		"description": st.Description, "target_url": st.TargetURL}
	s.mu.Unlock()
	s.send("status", "status", body)
	return r.ID
}

// AddReview adds a review of a pull request by author, with its comments
// on lines; state is GitHub's word (APPROVED, CHANGES_REQUESTED,
// COMMENTED).
func (s *Server) AddReview(number int, author, state, body string, comments ...LineComment) int64 {
	s.mu.Lock()
	p := s.pulls[number]
	if p == nil {
		s.mu.Unlock()
		s.t.Fatalf("forgetest: no pull request #%d", number)
	}
	r := &review{ID: s.id(), Number: number, Author: author, State: state, Body: body, CommitSHA: s.pullHead(p), Submitted: s.now()}
	s.reviews = append(s.reviews, r)
	// A review's comments come with it, as a review submitted on the
	// forge's page does: no one reads the review without them.
	var hooks []map[string]any
	for _, lc := range comments {
		c := &reviewComment{ID: s.id(), ReviewID: r.ID, Number: number, Author: author, Path: lc.Path, Line: lc.Line, Body: lc.Body, Created: s.now()}
		s.reviewComms = append(s.reviewComms, c)
		hooks = append(hooks, map[string]any{"action": "created", "comment": s.ghReviewComment(c), "pull_request": s.ghPull(p)})
	}
	gh := map[string]any{"action": "submitted", "review": s.ghReviewHook(r), "pull_request": s.ghPull(p)}
	gtType := map[string]string{forge.ReviewApproved: "pull_request_review_approved", forge.ReviewChangesRequested: "pull_request_review_rejected"}[state]
	if gtType == "" {
		gtType = "pull_request_review_comment"
	}
	gt := map[string]any{"action": "reviewed", "number": number, "pull_request": s.ghPull(p),
		"review": map[string]any{"type": gtType, "content": body}}
	s.mu.Unlock()
	if s.kind == forge.Gitea {
		s.sendAs(gtType, gt, author)
	} else {
		s.sendAs("pull_request_review", gh, author)
		for _, h := range hooks {
			s.sendAs("pull_request_review_comment", h, author)
		}
	}
	return r.ID
}

// LineComment is a review's comment on a line of a file.
type LineComment struct {
	Path string
	Line int
	Body string
}

// AddReviewComment adds a comment of a review on a line of a file.
func (s *Server) AddReviewComment(number int, reviewID int64, author, path string, line int, body string) int64 {
	s.mu.Lock()
	p := s.pulls[number]
	if p == nil {
		s.mu.Unlock()
		s.t.Fatalf("forgetest: no pull request #%d", number)
	}
	c := &reviewComment{ID: s.id(), ReviewID: reviewID, Number: number, Author: author, Path: path, Line: line, Body: body, Created: s.now()}
	s.reviewComms = append(s.reviewComms, c)
	gh := map[string]any{"action": "created", "comment": s.ghReviewComment(c), "pull_request": s.ghPull(p)}
	gt := map[string]any{"action": "reviewed", "number": number, "pull_request": s.ghPull(p),
		"review": map[string]any{"type": "pull_request_review_comment", "content": body}}
	s.mu.Unlock()
	if s.kind == forge.Gitea {
		s.sendAs("pull_request_review_comment", gt, author)
	} else {
		s.sendAs("pull_request_review_comment", gh, author)
	}
	return c.ID
}

// AddIssue opens an issue by author with labels and returns its number.
func (s *Server) AddIssue(author, title, body string, labels ...string) int {
	s.mu.Lock()
	now := s.now()
	i := &issue{Number: s.next, Title: title, Body: body, Author: author, Labels: labels, State: "open", Created: now, Updated: now}
	s.next++
	s.issues[i.Number] = i
	hook := map[string]any{"action": "opened", "number": i.Number, "issue": s.ghIssue(i)}
	s.mu.Unlock()
	s.sendAs("issues", hook, author)
	return i.Number
}

// CloseIssue closes an issue (as the repository's owner).
func (s *Server) CloseIssue(number int) {
	s.mu.Lock()
	i := s.issues[number]
	i.State, i.Updated, i.ClosedBy = "closed", s.now(), s.Repo.Owner
	hook := map[string]any{"action": "closed", "number": i.Number, "issue": s.ghIssue(i)}
	s.mu.Unlock()
	s.sendAs("issues", hook, s.Repo.Owner)
}

// ClosePull closes an open pull request unmerged, as by, the way a person
// does on the forge's page.
func (s *Server) ClosePull(number int, by string) {
	s.mu.Lock()
	p := s.pulls[number]
	if p == nil || p.State != "open" {
		s.mu.Unlock()
		s.t.Fatalf("no open pull request #%d to close", number)
	}
	s.closePull(p, by)
	hook := map[string]any{"action": "closed", "number": p.Number, "pull_request": s.ghPull(p)}
	s.mu.Unlock()
	s.sendAs("pull_request", hook, by)
}

// closePull closes p unmerged as by; s.mu is held.
func (s *Server) closePull(p *pull, by string) {
	p.HeadSHA = s.pullHead(p)
	p.State, p.ClosedBy, p.Closed = "closed", by, s.now()
}

// LabelPull puts a label on a pull request (both forges list labeled pull
// requests among the issues of the label).
func (s *Server) LabelPull(number int, label string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pulls[number].Labels = append(s.pulls[number].Labels, label)
}

// AddComment adds a comment by author on an issue or a pull request's
// conversation and returns its id.
func (s *Server) AddComment(number int, author, body string) int64 {
	s.mu.Lock()
	c, hook, err := s.addComment(number, author, body)
	s.mu.Unlock()
	if err != nil {
		s.t.Fatal(err)
	}
	s.sendAs(commentEvent(hook), hook, author)
	return c.ID
}

func commentEvent(hook map[string]any) string {
	if hook["is_pull"] == true {
		return "pull_request_comment"
	}
	return "issue_comment"
}

func (s *Server) addComment(number int, author, body string) (*comment, map[string]any, error) {
	var subject any
	isPull := false
	if i := s.issues[number]; i != nil {
		subject = s.ghIssue(i)
	} else if p := s.pulls[number]; p != nil {
		subject, isPull = s.ghPullAsIssue(p), true
	} else {
		return nil, nil, fmt.Errorf("forgetest: no issue or pull request #%d", number)
	}
	now := s.now()
	c := &comment{ID: s.id(), Number: number, Author: author, Body: body, Created: now, Updated: now}
	s.comments = append(s.comments, c)
	hook := map[string]any{"action": "created", "issue": subject, "comment": s.ghComment(c)}
	if s.kind == forge.Gitea {
		hook["is_pull"] = isPull
	}
	return c, hook, nil
}

// Comments are the comments on an issue or pull request, oldest first.
func (s *Server) Comments(number int) []forge.Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []forge.Comment
	for _, c := range s.comments {
		if c.Number == number {
			out = append(out, forge.Comment{ID: c.ID, Author: c.Author, Body: c.Body, Created: c.Created, Updated: c.Updated})
		}
	}
	return out
}

// Pull is a pull request as the forge has it now.
func (s *Server) Pull(number int) (forge.PullRequest, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pulls[number]
	if p == nil {
		return forge.PullRequest{}, false
	}
	out := forge.PullRequest{Number: p.Number, URL: s.htmlURL("pull", p.Number), State: p.State, Title: p.Title, Body: p.Body,
		Head: p.Head, Base: p.Base, HeadSHA: s.pullHead(p), MergeSHA: p.MergeSHA, ClosedBy: p.ClosedBy}
	if p.Merged {
		out.State = forge.PRMerged
	}
	return out, true
}

// pullHead is the commit a pull request's head is at: its branch's while
// it is open.
func (s *Server) pullHead(p *pull) string {
	if p.State == "open" {
		if h := s.Head(p.Head); h != "" {
			return h
		}
	}
	return p.HeadSHA
}
