package forge_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"wilco/forge"
	"wilco/forge/forgetest"
)

// receiver is a webhook endpoint that verifies and decodes what it gets.
type receiver struct {
	mu     sync.Mutex
	events []forge.Event
	errs   []error
}

func newReceiver(t *testing.T, kind forge.Kind, secret string) (*receiver, string) {
	rc := &receiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ev, err := forge.ParseWebhook(kind, r.Header, body, secret)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if err != nil {
			rc.errs = append(rc.errs, err)
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		rc.events = append(rc.events, ev)
	}))
	t.Cleanup(srv.Close)
	return rc, srv.URL
}

func TestWebhooksAreVerifiedAndDecoded(t *testing.T) {
	bothKinds(t, func(t *testing.T, kind forge.Kind) {
		rc, url := newReceiver(t, kind, "s3cret")
		fx := newFixture(t, kind, forgetest.Options{WebhookURL: url, WebhookSecret: "s3cret"})
		ctx := context.Background()
		sha := fx.push(t, "wilco/T-1", map[string]string{"a.go": "package a\n"})
		pr, err := fx.f.OpenPullRequest(ctx, forge.NewPullRequest{Title: "t", Head: "wilco/T-1", Base: "main"})
		if err != nil {
			t.Fatal(err)
		}
		if kind == forge.GitHub {
			fx.s.SetCheckRun(sha, forgetest.CheckRun{Name: "test", Status: "completed", Conclusion: "failure", Actions: true})
		}
		fx.s.SetStatus(sha, forgetest.Status{Context: "ci", State: "success"})
		rv := fx.s.AddReview(pr.Number, "alice", forge.ReviewChangesRequested, "rename it")
		fx.s.AddReviewComment(pr.Number, rv, "alice", "a.go", 1, "call it b")
		n := fx.s.AddIssue("carol", "do it", "please", "wilco")
		fx.s.AddComment(n, "carol", "/wilco retry")
		if _, err := fx.f.MergePullRequest(ctx, pr.Number, forge.Merge{}); err != nil {
			t.Fatal(err)
		}
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if len(rc.errs) > 0 {
			t.Fatalf("refused: %v", rc.errs)
		}
		byKind := map[string][]forge.Event{}
		for _, ev := range rc.events {
			byKind[ev.Kind] = append(byKind[ev.Kind], ev)
			if ev.Repo != fx.s.Repo {
				t.Fatalf("event %s of repo %v", ev.Name, ev.Repo)
			}
		}
		checks := byKind[forge.EventCheck]
		wantChecks := 1
		if kind == forge.GitHub {
			wantChecks = 3
			if c := checks[0]; c.Name != "check_run" || c.Check == nil || c.Check.State != forge.CheckFailure || c.Check.JobID == 0 || c.SHA != sha || c.PullNumber != pr.Number {
				t.Fatalf("check run event %+v %+v", c, c.Check)
			}
			if c := checks[1]; c.Name != "check_suite" || c.Check != nil || c.SHA != sha || c.PullNumber != pr.Number {
				t.Fatalf("check suite event %+v", c)
			}
		}
		if len(checks) != wantChecks {
			t.Fatalf("check events %+v", checks)
		}
		if c := checks[len(checks)-1]; c.Check == nil || c.Check.Source != forge.SourceStatus || c.Check.State != forge.CheckSuccess || c.SHA != sha {
			t.Fatalf("status event %+v", c)
		}
		if r := byKind[forge.EventReview]; len(r) != 1 || r[0].Review.State != forge.ReviewChangesRequested || r[0].Review.Author != "alice" ||
			r[0].Review.Body != "rename it" || r[0].PullNumber != pr.Number {
			t.Fatalf("review events %+v", r)
		}
		rcs := byKind[forge.EventReviewComment]
		if len(rcs) != 1 || rcs[0].PullNumber != pr.Number || rcs[0].Sender != "alice" {
			t.Fatalf("review comment events %+v", rcs)
		}
		if kind == forge.GitHub && (rcs[0].ReviewComment == nil || rcs[0].ReviewComment.Path != "a.go" || rcs[0].ReviewComment.Line != 1) {
			t.Fatalf("review comment %+v", rcs[0].ReviewComment)
		}
		if is := byKind[forge.EventIssue]; len(is) != 1 || is[0].Issue.Number != n || is[0].Issue.Labels[0] != "wilco" || is[0].Action != "opened" {
			t.Fatalf("issue events %+v", is)
		}
		if cs := byKind[forge.EventComment]; len(cs) != 1 || cs[0].Comment.Body != "/wilco retry" || cs[0].Comment.Author != "carol" || cs[0].Issue.Number != n || cs[0].IssueIsPull {
			t.Fatalf("comment events %+v", cs)
		}
		if cl := byKind[forge.EventPullClosed]; len(cl) != 1 || cl[0].Pull == nil || cl[0].Pull.State != forge.PRMerged || cl[0].PullNumber != pr.Number {
			t.Fatalf("closed events %+v", cl)
		}
	})
}

func TestAWebhookWithAWrongSignatureIsRefused(t *testing.T) {
	bothKinds(t, func(t *testing.T, kind forge.Kind) {
		rc, url := newReceiver(t, kind, "right")
		fx := newFixture(t, kind, forgetest.Options{WebhookURL: url, WebhookSecret: "wrong"})
		fx.s.AddIssue("carol", "t", "b", "wilco")
		fx.s.SetWebhook(url, "")
		fx.s.AddIssue("carol", "t", "b", "wilco")
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if len(rc.events) != 0 || len(rc.errs) != 2 || !errors.Is(rc.errs[0], forge.ErrBadSignature) || !errors.Is(rc.errs[1], forge.ErrBadSignature) {
			t.Fatalf("events %+v errs %v", rc.events, rc.errs)
		}
		for _, d := range fx.s.Deliveries() {
			if d.Status != http.StatusUnauthorized {
				t.Fatalf("delivery %+v", d)
			}
		}
	})
}

func TestWithoutAWebhookNothingIsSent(t *testing.T) {
	fx := newFixture(t, forge.GitHub, forgetest.Options{})
	n := fx.s.AddIssue("carol", "t", "b", "wilco")
	fx.s.AddComment(n, "carol", "hi")
	if d := fx.s.Deliveries(); len(d) != 0 {
		t.Fatalf("deliveries %+v", d)
	}
	// Polling sees them.
	is, err := fx.f.Issues(context.Background(), "wilco")
	if err != nil || len(is) != 1 {
		t.Fatalf("%+v %v", is, err)
	}
}
