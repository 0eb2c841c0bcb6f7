package forge_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"wilco/forge"
	"wilco/forge/forgetest"
)

func TestARateLimitIsWaitedOutUntilItsReset(t *testing.T) {
	fx := newFixture(t, forge.GitHub, forgetest.Options{})
	reset := fx.clock.Now().Add(90 * time.Second).Truncate(time.Second)
	fx.s.RateLimit(1, reset)
	ok, err := fx.f.IsCollaborator(context.Background(), "acme")
	if err != nil || !ok {
		t.Fatalf("%v %v", ok, err)
	}
	waits := fx.clock.Waits()
	if len(waits) != 1 || waits[0] < 89*time.Second || waits[0] > 92*time.Second {
		t.Fatalf("waited %v, want until the reset (90s) and a second", waits)
	}
	var statuses []int
	for _, c := range *fx.calls {
		statuses = append(statuses, c.Status)
	}
	if fmt.Sprint(statuses) != "[403 204]" {
		t.Fatalf("calls %v", statuses)
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	bothKinds(t, func(t *testing.T, kind forge.Kind) {
		fx := newFixture(t, kind, forgetest.Options{})
		h := http.Header{}
		h.Set("Retry-After", "7")
		fx.s.Fail(forgetest.Fault{Status: http.StatusTooManyRequests, Header: h, Body: `{"message":"slow down"}`})
		// A POST refused by a rate limit was not done: it is sent again.
		n := fx.s.AddIssue("carol", "t", "b")
		if _, err := fx.f.CreateComment(context.Background(), n, "hello"); err != nil {
			t.Fatal(err)
		}
		if w := fx.clock.Waits(); len(w) != 1 || w[0] != 7*time.Second {
			t.Fatalf("waited %v, want 7s", w)
		}
		if got := fx.s.Comments(n); len(got) != 1 {
			t.Fatalf("comments %+v", got)
		}
	})
}

func TestA5xxIsRetriedWithBackoff(t *testing.T) {
	fx := newFixture(t, forge.GitHub, forgetest.Options{})
	fx.s.Fail(forgetest.Fault{Status: http.StatusBadGateway, Times: 3, Body: "<html>bad gateway</html>"})
	if _, err := fx.f.Issues(context.Background(), "wilco"); err != nil {
		t.Fatal(err)
	}
	if w := fmt.Sprint(fx.clock.Waits()); w != "[1s 2s 4s]" {
		t.Fatalf("waited %s", w)
	}
}

func TestAnOutageEndsInErrUnavailable(t *testing.T) {
	fx := newFixture(t, forge.GitHub, forgetest.Options{})
	fx.s.Fail(forgetest.Fault{Status: http.StatusServiceUnavailable, Times: 100})
	_, err := fx.f.Reviews(context.Background(), 1)
	if !errors.Is(err, forge.ErrUnavailable) {
		t.Fatalf("got %v", err)
	}
	if len(*fx.calls) != 5 {
		t.Fatalf("%d calls, want 5 attempts", len(*fx.calls))
	}
}

func TestAnAnswerCutMidwayIsAskedAgain(t *testing.T) {
	bothKinds(t, func(t *testing.T, kind forge.Kind) {
		fx := newFixture(t, kind, forgetest.Options{})
		fx.s.Fail(forgetest.Fault{Method: "GET", Path: "/collaborators/", Die: true})
		ok, err := fx.f.IsCollaborator(context.Background(), "acme")
		if err != nil || !ok {
			t.Fatalf("%v %v", ok, err)
		}
		calls := *fx.calls
		if len(calls) != 2 || calls[0].Err == nil || calls[1].Status != http.StatusNoContent {
			t.Fatalf("calls %+v", calls)
		}
	})
}

func TestAPostCutMidwayIsNotSentTwice(t *testing.T) {
	fx := newFixture(t, forge.GitHub, forgetest.Options{})
	n := fx.s.AddIssue("carol", "t", "b")
	fx.s.Fail(forgetest.Fault{Method: "POST", Die: true})
	if _, err := fx.f.CreateComment(context.Background(), n, "hello"); err == nil {
		t.Fatal("a comment whose answer was cut reported written")
	}
	posts := 0
	for _, r := range fx.s.Requests() {
		if r.Method == "POST" {
			posts++
		}
	}
	if posts != 1 {
		t.Fatalf("%d POSTs, want 1 (it may have been written)", posts)
	}
}

// stuckClock never ends a wait.
type stuckClock struct{}

func (stuckClock) Now() time.Time                       { return time.Now() }
func (stuckClock) After(time.Duration) <-chan time.Time { return make(chan time.Time) }

func TestAContextEndsAWait(t *testing.T) {
	s := forgetest.New(t, forgetest.Options{})
	f, err := forge.New(forge.Options{Kind: forge.GitHub, API: s.API(forge.GitHub), Repo: s.Repo, Token: s.Token, Clock: stuckClock{}})
	if err != nil {
		t.Fatal(err)
	}
	s.RateLimit(1, time.Now().Add(time.Hour))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = f.Issues(ctx, "wilco")
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Fatalf("got %v after %s", err, time.Since(start))
	}
}

func TestTheTokenIsNeverShown(t *testing.T) {
	bothKinds(t, func(t *testing.T, kind forge.Kind) {
		fx := newFixture(t, kind, forgetest.Options{})
		tok := fx.s.Token
		// A forge that echoes the token in its message.
		fx.s.Fail(forgetest.Fault{Status: http.StatusForbidden, Body: `{"message":"token ` + tok + ` may not"}`})
		_, err := fx.f.Issues(context.Background(), "wilco")
		if !errors.Is(err, forge.ErrForbidden) {
			t.Fatalf("got %v", err)
		}
		opts := forge.Options{Kind: kind, API: fx.s.API(kind), Repo: fx.s.Repo, Token: tok}
		shown := []string{err.Error(), fmt.Sprint(fx.f), fmt.Sprintf("%v %+v %#v", fx.f, fx.f, fx.f), fmt.Sprintf("%v %+v %#v %s", opts, opts, opts, opts)}
		for _, c := range *fx.calls {
			shown = append(shown, fmt.Sprintf("%+v", c))
		}
		// An error of the connection itself names the address: the token
		// is not in it either.
		bad, _ := forge.New(forge.Options{Kind: kind, API: "http://127.0.0.1:1/api", Repo: fx.s.Repo, Token: tok, Clock: newWaitClock(), Attempts: 1})
		_, err = bad.Issues(context.Background(), "x")
		if err == nil {
			t.Fatal("a closed port answered")
		}
		shown = append(shown, err.Error())
		for _, s := range shown {
			if strings.Contains(s, tok) {
				t.Fatalf("the token is shown: %s", s)
			}
		}
		// It went where it belongs: in the header, as the forge asks.
		want := "bearer"
		if kind == forge.Gitea {
			want = "token"
		}
		if r := fx.s.Requests(); r[len(r)-1].Auth != want {
			t.Fatalf("authenticated as %q, want %q", r[len(r)-1].Auth, want)
		}
	})
}

func TestAWrongTokenIsErrUnauthorized(t *testing.T) {
	s := forgetest.New(t, forgetest.Options{})
	f, _ := forge.New(forge.Options{Kind: forge.GitHub, API: s.API(forge.GitHub), Repo: s.Repo, Token: "nope", Clock: newWaitClock()})
	if _, err := f.Issues(context.Background(), "wilco"); !errors.Is(err, forge.ErrUnauthorized) {
		t.Fatalf("got %v", err)
	}
}

func TestEveryCallIsObserved(t *testing.T) {
	fx := newFixture(t, forge.GitHub, forgetest.Options{})
	fx.f.IsCollaborator(context.Background(), "mallory")
	calls := *fx.calls
	if len(calls) != 1 {
		t.Fatalf("calls %+v", calls)
	}
	c := calls[0]
	if c.Method != "GET" || c.Path != "/api/v3/repos/acme/widget/collaborators/mallory" || c.Status != 404 || c.Attempt != 1 || c.Err != nil {
		t.Fatalf("call %+v", c)
	}
}

func TestAForgeThatIsGoneIsTriedWithBackoffThenErrUnavailable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	clock := newWaitClock()
	f, err := forge.New(forge.Options{Kind: forge.GitHub, API: "http://" + addr + "/api/v3", Repo: forge.Repo{Owner: "acme", Name: "widget"},
		Token: "t", Clock: clock, Backoff: time.Second, MaxBackoff: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// A POST that never reached the server is sent again too.
	_, err = f.CreateComment(context.Background(), 1, "hello")
	if !errors.Is(err, forge.ErrUnavailable) {
		t.Fatalf("got %v", err)
	}
	if w := fmt.Sprint(clock.Waits()); w != "[1s 2s 4s 4s]" {
		t.Fatalf("waited %s", w)
	}
}
