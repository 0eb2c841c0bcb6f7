package forge

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

func TestRepoFromRemote(t *testing.T) {
	for remote, want := range map[string]string{
		"https://github.com/acme/widget.git":                  "github.com acme/widget",
		"https://github.com/acme/widget":                      "github.com acme/widget",
		"https://github.com/acme/widget/":                     "github.com acme/widget",
		"https://x-access-token:tok@ghe.corp/acme/widget.git": "ghe.corp acme/widget",
		"http://gitea.local:3000/acme/widget.git":             "gitea.local acme/widget",
		"https://code.example.org/gitea/acme/widget.git":      "code.example.org acme/widget",
		"ssh://git@github.com/acme/widget.git":                "github.com acme/widget",
		"ssh://git@gitea.local:2222/acme/widget.git":          "gitea.local acme/widget",
		"git@github.com:acme/widget.git":                      "github.com acme/widget",
		"github.com:acme/widget":                              "github.com acme/widget",
		"git://github.com/acme/my.repo":                       "github.com acme/my.repo",
	} {
		host, repo, err := RepoFromRemote(remote)
		if err != nil || host+" "+repo.String() != want {
			t.Errorf("%s: %s %v %v, want %s", remote, host, repo, err, want)
		}
	}
	for _, remote := range []string{"", "/srv/git/widget.git", "../widget", "file:///srv/acme/widget.git",
		"https://github.com/widget", "git@github.com:widget.git", "https://github.com/acme/..", "https://tok:sekret@host/x"} {
		_, _, err := RepoFromRemote(remote)
		if !errors.Is(err, ErrBadRemote) {
			t.Errorf("%q: %v, want ErrBadRemote", remote, err)
		}
		if err != nil && strings.Contains(err.Error(), "sekret") {
			t.Errorf("%q: the password is shown: %v", remote, err)
		}
	}
}

func FuzzRepoFromRemote(f *testing.F) {
	for _, s := range []string{"https://github.com/acme/widget.git", "git@github.com:acme/widget.git",
		"ssh://git@h:22/a/b", "https://u:p@h/a/b/", "/local/path", "", "::", "a:b/c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		host, repo, err := RepoFromRemote(s)
		if err != nil {
			return
		}
		if host == "" || !validPart(repo.Owner) || !validPart(repo.Name) {
			t.Fatalf("%q: %q %+v", s, host, repo)
		}
		if _, err := ParseRepo(repo.String()); err != nil {
			t.Fatalf("%q: %v does not read back: %v", s, repo, err)
		}
	})
}

func TestLinks(t *testing.T) {
	h := `<https://api.github.com/repositories/1/issues?page=2>; rel="next", <https://api.github.com/repositories/1/issues?page=5>; rel="last", <https://x/?a=1,2>; rel="prev first"`
	got := Links(h)
	if got["next"] != "https://api.github.com/repositories/1/issues?page=2" || got["last"] != "https://api.github.com/repositories/1/issues?page=5" ||
		got["prev"] != "https://x/?a=1,2" || got["first"] != "https://x/?a=1,2" {
		t.Fatalf("%v", got)
	}
	if len(Links("garbage, <x>; nope")) != 0 {
		t.Fatal("links out of garbage")
	}
}

func FuzzLinks(f *testing.F) {
	for _, s := range []string{`<a>; rel="next"`, `<a>; rel=next, <b>; rel="last"`, `<`, `<a`, `,,,`, `<a>; rel="x,y", <b>; rel=z`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for rel, target := range Links(s) {
			if rel == "" || strings.ContainsAny(target, "<>") || strings.ContainsAny(rel, " \t") {
				t.Fatalf("%q: %q → %q", s, rel, target)
			}
		}
	})
}

func TestVerify(t *testing.T) {
	body := []byte(`{"zen":"Keep it logically awesome."}`)
	for _, kind := range Kinds {
		h := http.Header{}
		name := HeaderGitHubSignature
		if kind == Gitea {
			name = HeaderGiteaSignature
		}
		if err := Verify(kind, h, body, "k"); !errors.Is(err, ErrBadSignature) {
			t.Fatalf("%s unsigned: %v", kind, err)
		}
		h.Set(name, Sign(kind, "k", body))
		if err := Verify(kind, h, body, "k"); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if err := Verify(kind, h, append(body, ' '), "k"); !errors.Is(err, ErrBadSignature) {
			t.Fatalf("%s changed body: %v", kind, err)
		}
		if err := Verify(kind, h, body, ""); !errors.Is(err, ErrBadSignature) {
			t.Fatalf("%s no secret: %v", kind, err)
		}
	}
	// GitHub's documented example: secret "It's a Secret to Everybody",
	// payload "Hello, World!".
	want := "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
	if got := Sign(GitHub, "It's a Secret to Everybody", []byte("Hello, World!")); got != want {
		t.Fatalf("signature %s, want %s", got, want)
	}
}

func FuzzDecodeEvent(f *testing.F) {
	for _, s := range []struct{ name, body string }{
		{"check_run", `{"action":"completed","check_run":{"id":1,"name":"t","head_sha":"abc","status":"completed","conclusion":"failure","app":{"slug":"github-actions"},"pull_requests":[{"number":2}]}}`},
		{"check_suite", `{"action":"completed","check_suite":{"head_sha":"abc","pull_requests":[]}}`},
		{"status", `{"id":1,"sha":"abc","state":"error","context":"ci"}`},
		{"pull_request_review", `{"action":"submitted","review":{"id":1,"state":"approved","user":{"login":"a"}},"pull_request":{"number":3}}`},
		{"pull_request_review_approved", `{"action":"reviewed","number":3,"review":{"type":"pull_request_review_approved","content":"ok"}}`},
		{"pull_request_review_comment", `{"action":"created","comment":{"id":1,"path":"a.go","line":null,"original_line":4}}`},
		{"pull_request", `{"action":"closed","number":3,"pull_request":{"number":3,"merged":true}}`},
		{"issues", `{"action":"labeled","issue":{"number":4,"labels":[{"name":"wilco"}]}}`},
		{"issue_comment", `{"action":"created","issue":{"number":4,"pull_request":{}},"comment":{"id":9,"body":"/wilco skip"}}`},
		{"ping", `{"zen":"z"}`},
		{"issues", `{"issue":null}`},
		{"status", `[]`},
	} {
		f.Add(s.name, []byte(s.body), false)
		f.Add(s.name, []byte(s.body), true)
	}
	f.Fuzz(func(t *testing.T, name string, body []byte, gitea bool) {
		kind := GitHub
		if gitea {
			kind = Gitea
		}
		ev, err := DecodeEvent(kind, name, body)
		if err != nil {
			return
		}
		switch ev.Kind {
		case EventCheck:
			if name != "check_suite" && ev.Check == nil {
				t.Fatalf("a check event without its check: %+v", ev)
			}
		case EventReview:
			if ev.Review == nil {
				t.Fatalf("a review event without its review: %+v", ev)
			}
		case EventIssue:
			if ev.Issue == nil {
				t.Fatalf("an issue event without its issue: %+v", ev)
			}
		case EventComment:
			if ev.Issue == nil || ev.Comment == nil {
				t.Fatalf("a comment event without its comment: %+v", ev)
			}
		}
	})
}

// A Gitea that sends only the coarse X-Gitea-Event is read too: a line
// comment's event is pull_request_comment there, as a conversation's
// comment's precise type is.
func TestGiteasCoarseEventNamesAreRead(t *testing.T) {
	h := http.Header{}
	body := []byte(`{"action":"reviewed","number":3,"pull_request":{"number":3},"review":{"type":"pull_request_review_comment","content":"x"}}`)
	h.Set(HeaderGiteaEvent, "pull_request_comment")
	h.Set(HeaderGiteaSignature, Sign(Gitea, "k", body))
	ev, err := ParseWebhook(Gitea, h, body, "k")
	if err != nil || ev.Kind != EventReviewComment || ev.PullNumber != 3 {
		t.Fatalf("line comment: %+v %v", ev, err)
	}
	body = []byte(`{"action":"created","is_pull":true,"issue":{"number":3},"comment":{"id":5,"body":"/wilco retry","user":{"login":"carol"}}}`)
	ev, err = DecodeEvent(Gitea, "pull_request_comment", body)
	if err != nil || ev.Kind != EventComment || !ev.IssueIsPull || ev.PullNumber != 3 || ev.Comment.Body != "/wilco retry" {
		t.Fatalf("conversation comment: %+v %v", ev, err)
	}
	body = []byte(`{"action":"reviewed","number":3,"review":{"type":"","content":"ok"},"sender":{"login":"alice"}}`)
	ev, err = DecodeEvent(Gitea, "pull_request_approved", body)
	if err != nil || ev.Kind != EventReview || ev.Review.State != ReviewApproved || ev.Review.Author != "alice" {
		t.Fatalf("approval: %+v %v", ev, err)
	}
}
