package forgetest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"wilco/forge"
)

// The answers below have the fields package forge reads of GitHub's
// OpenAPI description (github/rest-api-description,
// descriptions/api.github.com/api.github.com.2022-11-28.yaml) and Gitea's
// swagger (go-gitea/gitea templates/swagger/v1_json.tmpl), the shapes the
// client's own comments name, plus the few others a reader expects
// (id, url, user.id).

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func notFound(w http.ResponseWriter) {
	writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
}

func unprocessable(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Validation Failed: " + msg})
}

func ts(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func (s *Server) user(login string) map[string]any {
	return map[string]any{"login": login, "id": len(login), "type": "User"}
}

func (s *Server) htmlURL(kind string, n int) string {
	return fmt.Sprintf("%s/%s/%s/%s/%d", s.URL, s.Repo.Owner, s.Repo.Name, kind, n)
}

// routes registers both APIs.
func (s *Server) routes() {
	for _, kind := range []forge.Kind{forge.GitHub, forge.Gitea} {
		prefix := "/api/v3/repos/{owner}/{repo}"
		if kind == forge.Gitea {
			prefix = "/api/v1/repos/{owner}/{repo}"
		}
		handle := func(pattern string, h func(forge.Kind, http.ResponseWriter, *http.Request)) {
			method, path, _ := strings.Cut(pattern, " ")
			s.mux.HandleFunc(method+" "+prefix+path, func(w http.ResponseWriter, r *http.Request) {
				if r.PathValue("owner") != s.Repo.Owner || r.PathValue("repo") != s.Repo.Name {
					notFound(w)
					return
				}
				h(kind, w, r)
			})
		}
		handle("POST /pulls", s.createPull)
		handle("GET /pulls", s.listPulls)
		handle("GET /pulls/{n}", s.getPull)
		handle("PATCH /pulls/{n}", s.patchPull)
		if kind == forge.GitHub {
			handle("PUT /pulls/{n}/merge", s.mergePull)
			handle("GET /commits/{ref}/check-runs", s.checkRunsOf)
			handle("GET /actions/jobs/{id}/logs", s.jobLogs)
			handle("GET /pulls/{n}/comments", s.reviewCommentsOf)
		} else {
			handle("POST /pulls/{n}/merge", s.mergePull)
			handle("GET /pulls/{n}/reviews/{id}/comments", s.reviewCommentsOf)
			handle("GET /issues/{n}/timeline", s.timelineOf)
		}
		handle("GET /commits/{ref}/status", s.combinedStatus)
		handle("GET /pulls/{n}/reviews", s.reviewsOf)
		handle("GET /issues", s.listIssues)
		handle("GET /issues/{n}", s.getIssue)
		handle("GET /issues/{n}/comments", s.commentsOf)
		handle("POST /issues/{n}/comments", s.createComment)
		handle("GET /collaborators/{user}", s.isCollaborator)
	}
}

func number(r *http.Request, name string) int {
	n, _ := strconv.Atoi(r.PathValue(name))
	return n
}

// page answers one page of items with the Link header both forges send
// (per_page on GitHub, limit on Gitea; page from 1).
func page[T any](kind forge.Kind, w http.ResponseWriter, r *http.Request, items []T) []T {
	sizeKey := "per_page"
	if kind == forge.Gitea {
		sizeKey = "limit"
	}
	size, _ := strconv.Atoi(r.URL.Query().Get(sizeKey))
	if size <= 0 {
		size = 30
	}
	p, _ := strconv.Atoi(r.URL.Query().Get("page"))
	if p <= 0 {
		p = 1
	}
	start := min((p-1)*size, len(items))
	end := min(start+size, len(items))
	var links []string
	link := func(n int, rel string) {
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(n))
		u := url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path, RawQuery: q.Encode()}
		links = append(links, fmt.Sprintf(`<%s>; rel="%s"`, u.String(), rel))
	}
	if end < len(items) {
		link(p+1, "next")
		link((len(items)+size-1)/size, "last")
	}
	if p > 1 {
		link(1, "first")
		link(p-1, "prev")
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	return items[start:end]
}

func (s *Server) ghPull(p *pull) map[string]any {
	head := s.pullHead(p)
	base := s.Head(p.Base)
	out := map[string]any{
		"id": p.Number * 7, "number": p.Number, "html_url": s.htmlURL("pull", p.Number), "state": p.State,
		"title": p.Title, "body": p.Body, "user": s.user(p.Author), "merged": p.Merged,
		"head":       map[string]any{"ref": p.Head, "sha": head, "label": s.Repo.Owner + ":" + p.Head},
		"base":       map[string]any{"ref": p.Base, "sha": base, "label": s.Repo.Owner + ":" + p.Base},
		"created_at": ts(p.Created), "merged_at": nil, "merge_commit_sha": nil,
		"labels": labels(p.Labels),
	}
	if p.Merged {
		out["merged_at"] = ts(p.Created)
		out["merge_commit_sha"] = p.MergeSHA
	}
	return out
}

// ghPullAsIssue is a pull request as the issues API lists it.
func (s *Server) ghPullAsIssue(p *pull) map[string]any {
	return map[string]any{"number": p.Number, "title": p.Title, "body": p.Body, "state": p.State,
		"user": s.user(p.Author), "labels": labels(p.Labels), "html_url": s.htmlURL("pull", p.Number),
		"created_at": ts(p.Created), "updated_at": ts(p.Created), "closed_by": s.closer(p.ClosedBy),
		"pull_request": map[string]any{"html_url": s.htmlURL("pull", p.Number)}}
}

// closer is an issue's closed_by: null while nobody closed it.
func (s *Server) closer(login string) any {
	if login == "" {
		return nil
	}
	return s.user(login)
}

func labels(ls []string) []map[string]any {
	out := []map[string]any{}
	for i, l := range ls {
		out = append(out, map[string]any{"id": i + 1, "name": l})
	}
	return out
}

func (s *Server) ghIssue(i *issue) map[string]any {
	return map[string]any{"number": i.Number, "title": i.Title, "body": i.Body, "state": i.State,
		"user": s.user(i.Author), "labels": labels(i.Labels), "html_url": s.htmlURL("issues", i.Number),
		"created_at": ts(i.Created), "updated_at": ts(i.Updated), "closed_by": s.closer(i.ClosedBy), "pull_request": nil}
}

func (s *Server) ghComment(c *comment) map[string]any {
	return map[string]any{"id": c.ID, "body": c.Body, "user": s.user(c.Author),
		"html_url":   fmt.Sprintf("%s#issuecomment-%d", s.htmlURL("issues", c.Number), c.ID),
		"created_at": ts(c.Created), "updated_at": ts(c.Updated)}
}

func (s *Server) ghCheckRun(r *checkRun) map[string]any {
	out := map[string]any{"id": r.ID, "name": r.Name, "head_sha": r.SHA, "status": r.Status, "conclusion": nil,
		"details_url": fmt.Sprintf("%s/%s/%s/runs/%d", s.URL, s.Repo.Owner, s.Repo.Name, r.ID),
		"output":      map[string]any{"title": r.Name, "summary": r.Summary, "text": r.Text},
		"app":         map[string]any{"slug": "ci"}, "pull_requests": []any{}}
	if r.Status == "completed" {
		out["conclusion"] = r.Conclusion
	}
	if r.Actions {
		out["app"] = map[string]any{"slug": "github-actions"}
		out["details_url"] = fmt.Sprintf("%s/%s/%s/actions/runs/1/job/%d", s.URL, s.Repo.Owner, s.Repo.Name, r.ID)
	}
	var pulls []any
	for _, p := range s.pulls {
		if s.pullHead(p) == r.SHA {
			pulls = append(pulls, map[string]any{"number": p.Number, "head": map[string]any{"ref": p.Head, "sha": r.SHA}})
		}
	}
	if pulls != nil {
		out["pull_requests"] = pulls
	}
	return out
}

func (s *Server) ghReview(r *review) map[string]any {
	return map[string]any{"id": r.ID, "user": s.user(r.Author), "body": r.Body, "state": r.State,
		"commit_id": r.CommitSHA, "submitted_at": ts(r.Submitted)}
}

// ghReviewHook is a review as a webhook carries it: its state in lower
// case.
func (s *Server) ghReviewHook(r *review) map[string]any {
	out := s.ghReview(r)
	out["state"] = strings.ToLower(r.State)
	return out
}

func (s *Server) gtReview(r *review) map[string]any {
	state := map[string]string{forge.ReviewCommented: "COMMENT", forge.ReviewChangesRequested: "REQUEST_CHANGES"}[r.State]
	if state == "" {
		state = r.State
	}
	n := 0
	for _, c := range s.reviewComms {
		if c.ReviewID == r.ID {
			n++
		}
	}
	return map[string]any{"id": r.ID, "user": s.user(r.Author), "body": r.Body, "state": state,
		"commit_id": r.CommitSHA, "submitted_at": ts(r.Submitted), "dismissed": false, "comments_count": n}
}

func (s *Server) ghReviewComment(c *reviewComment) map[string]any {
	return map[string]any{"id": c.ID, "pull_request_review_id": c.ReviewID, "path": c.Path, "line": c.Line,
		"original_line": c.Line, "side": "RIGHT", "body": c.Body, "user": s.user(c.Author), "created_at": ts(c.Created)}
}

func (s *Server) gtReviewComment(c *reviewComment) map[string]any {
	return map[string]any{"id": c.ID, "pull_request_review_id": c.ReviewID, "path": c.Path, "position": c.Line,
		"original_position": 0, "body": c.Body, "user": s.user(c.Author), "created_at": ts(c.Created)}
}

func (s *Server) createPull(kind forge.Kind, w http.ResponseWriter, r *http.Request) {
	var in struct{ Title, Body, Head, Base string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"message": "Problems parsing JSON"})
		return
	}
	// head may be owner:branch.
	if owner, branch, ok := strings.Cut(in.Head, ":"); ok && owner == s.Repo.Owner {
		in.Head = branch
	}
	switch {
	case in.Title == "" || in.Head == "" || in.Base == "":
		unprocessable(w, "title, head and base are required")
		return
	case s.Head(in.Head) == "":
		unprocessable(w, "head: no branch "+in.Head)
		return
	case s.Head(in.Base) == "":
		unprocessable(w, "base: no branch "+in.Base)
		return
	}
	s.mu.Lock()
	for _, p := range s.pulls {
		if p.State == "open" && p.Head == in.Head && p.Base == in.Base {
			s.mu.Unlock()
			unprocessable(w, fmt.Sprintf("a pull request already exists for %s:%s", s.Repo.Owner, in.Head))
			return
		}
	}
	p := &pull{Number: s.next, Title: in.Title, Body: in.Body, Head: in.Head, Base: in.Base, Author: s.login, State: "open", Created: s.now()}
	s.next++
	s.pulls[p.Number] = p
	out := s.ghPull(p)
	hook := map[string]any{"action": "opened", "number": p.Number, "pull_request": out}
	s.mu.Unlock()
	s.send("pull_request", "", hook)
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) listPulls(kind forge.Kind, w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	head := q.Get("head")
	if owner, branch, ok := strings.Cut(head, ":"); ok && owner == s.Repo.Owner {
		head = branch
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, n := range sortedKeys(s.pulls) {
		p := s.pulls[n]
		if (state == "all" || p.State == state) && (head == "" || p.Head == head) {
			out = append(out, s.ghPull(p))
		}
	}
	writeJSON(w, http.StatusOK, nonNil(page(kind, w, r, out)))
}

func sortedKeys[V any](m map[int]V) []int {
	var ks []int
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func (s *Server) getPull(kind forge.Kind, w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pulls[number(r, "n")]
	if p == nil {
		notFound(w)
		return
	}
	writeJSON(w, http.StatusOK, s.ghPull(p))
}

func (s *Server) patchPull(kind forge.Kind, w http.ResponseWriter, r *http.Request) {
	var in struct{ State, Title, Body *string }
	json.NewDecoder(r.Body).Decode(&in)
	s.mu.Lock()
	p := s.pulls[number(r, "n")]
	if p == nil {
		s.mu.Unlock()
		notFound(w)
		return
	}
	var hook map[string]any
	if in.State != nil && *in.State == "closed" && p.State == "open" {
		s.closePull(p, s.login)
		hook = map[string]any{"action": "closed", "number": p.Number}
	}
	if in.Title != nil {
		p.Title = *in.Title
	}
	if in.Body != nil {
		p.Body = *in.Body
	}
	out := s.ghPull(p)
	s.mu.Unlock()
	if hook != nil {
		hook["pull_request"] = out
		s.send("pull_request", "", hook)
	}
	status := http.StatusOK
	if kind == forge.Gitea {
		status = http.StatusCreated // Gitea's editPullRequest answers 201
	}
	writeJSON(w, status, out)
}

// mergePull merges for real in the bare repository: in a worktree of it
// on the base's head, git merge (or merge --squash, or cherry-pick of each
// commit for rebase), then the base moved if it did not move meanwhile.
func (s *Server) mergePull(kind forge.Kind, w http.ResponseWriter, r *http.Request) {
	var in struct {
		MergeMethod  string `json:"merge_method"` // GitHub
		SHA          string `json:"sha"`
		Do           string `json:"Do"` // Gitea
		HeadCommitID string `json:"head_commit_id"`
	}
	json.NewDecoder(r.Body).Decode(&in)
	method, want := in.MergeMethod, in.SHA
	if kind == forge.Gitea {
		method, want = in.Do, in.HeadCommitID
	}
	if method == "" {
		method = "merge"
	}
	s.mu.Lock()
	sha, hook, status, msg := s.mergeLocked(number(r, "n"), want, method)
	s.mu.Unlock()
	if status != http.StatusOK {
		writeJSON(w, status, map[string]string{"message": msg})
		return
	}
	s.send("pull_request", "", hook)
	if kind == forge.Gitea {
		w.WriteHeader(http.StatusOK)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"sha": sha, "merged": true, "message": "Pull Request successfully merged"})
}

// mergeLocked merges pull request n (s.mu held) and says how it went: the
// merge's commit and the event to send, or a status and message.
func (s *Server) mergeLocked(n int, want, method string) (string, map[string]any, int, string) {
	p := s.pulls[n]
	switch {
	case p == nil:
		return "", nil, http.StatusNotFound, "Not Found"
	case p.State != "open":
		return "", nil, http.StatusMethodNotAllowed, "Pull Request is not mergeable"
	}
	head := s.pullHead(p)
	if want != "" && want != head {
		return "", nil, http.StatusConflict, "Head branch was modified. Review and try the merge again."
	}
	sha, err := s.merge(p, head, method)
	if err != nil {
		return "", nil, http.StatusMethodNotAllowed, "Pull Request is not mergeable: " + err.Error()
	}
	p.State, p.Merged, p.MergeSHA, p.HeadSHA = "closed", true, sha, head
	return sha, map[string]any{"action": "closed", "number": p.Number, "pull_request": s.ghPull(p)}, http.StatusOK, ""
}

func (s *Server) merge(p *pull, head, method string) (string, error) {
	base := s.Head(p.Base)
	dir, err := os.MkdirTemp(s.root, "merge-")
	if err != nil {
		return "", err
	}
	defer func() {
		s.git(s.Bare, "worktree", "remove", "--force", dir)
		os.RemoveAll(dir)
	}()
	wt := filepath.Join(dir, "wt")
	if _, err := s.git(s.Bare, "worktree", "add", "-q", "--detach", wt, base); err != nil {
		return "", err
	}
	msg := fmt.Sprintf("Merge pull request #%d from %s/%s\n\n%s", p.Number, s.Repo.Owner, p.Head, p.Title)
	var steps [][]string
	switch method {
	case "merge":
		steps = [][]string{{"merge", "-q", "--no-ff", "-m", msg, head}}
	case "squash":
		steps = [][]string{{"merge", "-q", "--squash", head}, {"commit", "-q", "-m", fmt.Sprintf("%s (#%d)", p.Title, p.Number)}}
	case "rebase":
		steps = [][]string{{"cherry-pick", "--allow-empty", base + ".." + head}}
	default:
		return "", fmt.Errorf("no merge method %q", method)
	}
	for _, st := range steps {
		if _, err := s.git(wt, st...); err != nil {
			return "", fmt.Errorf("the change conflicts with %s", p.Base)
		}
	}
	sha, err := s.git(wt, "rev-parse", "HEAD")
	if err != nil {
		return "", err
	}
	if _, err := s.git(s.Bare, "update-ref", "refs/heads/"+p.Base, sha, base); err != nil {
		return "", err
	}
	return sha, nil
}

func (s *Server) checkRunsOf(kind forge.Kind, w http.ResponseWriter, r *http.Request) {
	sha := s.resolve(r.PathValue("ref"))
	s.mu.Lock()
	defer s.mu.Unlock()
	var runs []map[string]any
	for _, c := range s.checkRuns {
		if c.SHA == sha {
			runs = append(runs, s.ghCheckRun(c))
		}
	}
	total := len(runs)
	runs = page(kind, w, r, runs)
	writeJSON(w, http.StatusOK, map[string]any{"total_count": total, "check_runs": nonNil(runs)})
}

// combinedStatus is the latest status of each context of a commit, and
// their combined state.
func (s *Server) combinedStatus(kind forge.Kind, w http.ResponseWriter, r *http.Request) {
	sha := s.resolve(r.PathValue("ref"))
	s.mu.Lock()
	defer s.mu.Unlock()
	latest := map[string]*status{}
	var order []string
	for _, st := range s.statuses {
		if st.SHA != sha {
			continue
		}
		if _, seen := latest[st.Context]; !seen {
			order = append(order, st.Context)
		}
		latest[st.Context] = st
	}
	state := "success"
	if len(order) == 0 {
		state = "pending"
	}
	var list []map[string]any
	for _, ctx := range order {
		st := latest[ctx]
		switch {
		case st.State == "failure" || st.State == "error":
			state = "failure"
		case st.State == "pending" && state == "success":
			state = "pending"
		}
		key := "state"
		if kind == forge.Gitea {
			key = "status"
		}
		list = append(list, map[string]any{"id": st.ID, key: st.State, "context": st.Context,
			"description": st.Description, "target_url": st.TargetURL, "created_at": ts(st.Created)})
	}
	total := len(list)
	list = page(kind, w, r, list)
	writeJSON(w, http.StatusOK, map[string]any{"state": state, "sha": sha, "total_count": total, "statuses": nonNil(list)})
}

func (s *Server) jobLogs(kind forge.Kind, w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.checkRuns {
		if c.ID == id && c.Actions {
			// GitHub answers with a redirect to a short-lived address of
			// the log.
			w.Header().Set("Location", fmt.Sprintf("%s/_logs/%d?sig=forgetest", s.URL, id))
			w.WriteHeader(http.StatusFound)
			return
		}
	}
	notFound(w)
}

func (s *Server) serveLog(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(strings.TrimPrefix(r.URL.Path, "/_logs/"), 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.checkRuns {
		if c.ID == id && c.Actions {
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte(c.Log))
			return
		}
	}
	http.NotFound(w, r)
}

func (s *Server) reviewsOf(kind forge.Kind, w http.ResponseWriter, r *http.Request) {
	n := number(r, "n")
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pulls[n] == nil {
		notFound(w)
		return
	}
	var out []map[string]any
	for _, rv := range s.reviews {
		if rv.Number == n {
			if kind == forge.Gitea {
				out = append(out, s.gtReview(rv))
			} else {
				out = append(out, s.ghReview(rv))
			}
		}
	}
	writeJSON(w, http.StatusOK, nonNil(page(kind, w, r, out)))
}

func (s *Server) reviewCommentsOf(kind forge.Kind, w http.ResponseWriter, r *http.Request) {
	n := number(r, "n")
	reviewID, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pulls[n] == nil {
		notFound(w)
		return
	}
	var out []map[string]any
	for _, c := range s.reviewComms {
		if c.Number != n {
			continue
		}
		if kind == forge.Gitea {
			if c.ReviewID == reviewID {
				out = append(out, s.gtReviewComment(c))
			}
			continue
		}
		out = append(out, s.ghReviewComment(c))
	}
	writeJSON(w, http.StatusOK, nonNil(page(kind, w, r, out)))
}

// listIssues lists issues and pull requests (both forges list pull
// requests among issues; Gitea's type=issues leaves them out).
func (s *Server) listIssues(kind forge.Kind, w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	var want []string
	if l := q.Get("labels"); l != "" {
		want = strings.Split(l, ",")
	}
	has := func(ls []string) bool {
		for _, l := range want {
			if !slices.Contains(ls, l) {
				return false
			}
		}
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var numbers []int
	for n := range s.issues {
		numbers = append(numbers, n)
	}
	if !(kind == forge.Gitea && q.Get("type") == "issues") {
		for n := range s.pulls {
			numbers = append(numbers, n)
		}
	}
	slices.Sort(numbers)
	var out []map[string]any
	for _, n := range numbers {
		if i := s.issues[n]; i != nil {
			if (state == "all" || i.State == state) && has(i.Labels) {
				out = append(out, s.ghIssue(i))
			}
		} else if p := s.pulls[n]; p != nil && (state == "all" || p.State == state) && has(p.Labels) {
			out = append(out, s.ghPullAsIssue(p))
		}
	}
	writeJSON(w, http.StatusOK, nonNil(page(kind, w, r, out)))
}

// getIssue gets an issue or a pull request as the issues API shows it.
func (s *Server) getIssue(kind forge.Kind, w http.ResponseWriter, r *http.Request) {
	n := number(r, "n")
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := s.issues[n]; i != nil {
		writeJSON(w, http.StatusOK, s.ghIssue(i))
	} else if p := s.pulls[n]; p != nil {
		writeJSON(w, http.StatusOK, s.ghPullAsIssue(p))
	} else {
		notFound(w)
	}
}

func (s *Server) commentsOf(kind forge.Kind, w http.ResponseWriter, r *http.Request) {
	n := number(r, "n")
	var since time.Time
	if v := r.URL.Query().Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			unprocessable(w, "since: not an ISO 8601 time")
			return
		}
		since = t
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.issues[n] == nil && s.pulls[n] == nil {
		notFound(w)
		return
	}
	var out []map[string]any
	for _, c := range s.comments {
		if c.Number == n && !c.Updated.Before(since) {
			out = append(out, s.ghComment(c))
		}
	}
	writeJSON(w, http.StatusOK, nonNil(page(kind, w, r, out)))
}

func (s *Server) createComment(kind forge.Kind, w http.ResponseWriter, r *http.Request) {
	var in struct{ Body string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Body == "" {
		unprocessable(w, "body is required")
		return
	}
	s.mu.Lock()
	c, hook, err := s.addComment(number(r, "n"), s.login, in.Body)
	var out map[string]any
	if err == nil {
		out = s.ghComment(c)
	}
	s.mu.Unlock()
	if err != nil {
		notFound(w)
		return
	}
	s.sendAs(commentEvent(hook), hook, s.login)
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) isCollaborator(kind forge.Kind, w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	ok := s.collaborators[r.PathValue("user")]
	s.mu.Unlock()
	if !ok {
		notFound(w)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// timelineOf answers Gitea's issue timeline (TimelineComment entries,
// oldest first): a pull request's comments ("comment") and its closing
// ("close", by who closed it).
func (s *Server) timelineOf(kind forge.Kind, w http.ResponseWriter, r *http.Request) {
	n := number(r, "n")
	s.mu.Lock()
	p := s.pulls[n]
	if p == nil && s.issues[n] == nil {
		s.mu.Unlock()
		notFound(w)
		return
	}
	entries := []map[string]any{}
	for _, c := range s.comments {
		if c.Number == n {
			entries = append(entries, map[string]any{"id": c.ID, "type": "comment", "user": s.user(c.Author),
				"body": c.Body, "created_at": ts(c.Created), "updated_at": ts(c.Updated)})
		}
	}
	if p != nil && p.ClosedBy != "" {
		entries = append(entries, map[string]any{"id": s.id(), "type": "close", "user": s.user(p.ClosedBy),
			"body": "", "created_at": ts(p.Closed), "updated_at": ts(p.Closed)})
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, page(kind, w, r, entries))
}
