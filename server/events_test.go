package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"wilco/core"
	"wilco/wire"
)

// sse reads a Server-Sent Events stream.
type sse struct {
	resp *http.Response
	rd   *bufio.Reader
}

type sseEvent struct {
	id       uint64
	typ      string
	data     wire.Event
	comments []string
}

func (b *testBundle) stream(path string, header ...string) *sse {
	b.t.Helper()
	req, err := http.NewRequest("GET", b.hs.URL+path, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := b.hs.Client().Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		b.t.Fatalf("stream: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	s := &sse{resp: resp, rd: bufio.NewReader(resp.Body)}
	b.t.Cleanup(s.close)
	return s
}

func (s *sse) close() { s.resp.Body.Close() }

// next reads up to the next event (collecting comments); io.EOF when the
// stream ended.
func (s *sse) next() (sseEvent, error) {
	var ev sseEvent
	got := false
	for {
		line, err := s.rd.ReadString('\n')
		if err != nil {
			return ev, err
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "":
			if got {
				return ev, nil
			}
		case strings.HasPrefix(line, ":"):
			ev.comments = append(ev.comments, strings.TrimSpace(line[1:]))
		case strings.HasPrefix(line, "id: "):
			ev.id, _ = strconv.ParseUint(line[4:], 10, 64)
			got = true
		case strings.HasPrefix(line, "event: "):
			ev.typ = line[7:]
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(line[6:]), &ev.data); err != nil {
				return ev, fmt.Errorf("data %q: %w", line, err)
			}
		}
	}
}

func (b *testBundle) registerAgents(prefix string, n int) {
	b.do(func(c *core.State, now time.Time) error {
		for i := range n {
			if err := c.RegisterAgent(now, core.AgentSpec{Name: fmt.Sprintf("%s-%d", prefix, i), Adapter: "mailbox"}); err != nil {
				return err
			}
		}
		return nil
	})
}

func TestEventPage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	start := b.head()
	b.registerAgents("a", 5)
	var page struct {
		Events []wire.Event `json:"events"`
		Next   uint64       `json:"next"`
	}
	b.must(200, b.call("GET", fmt.Sprintf("/v1/events?follow=false&after=%d&limit=3", start), adminToken, nil), &page)
	if len(page.Events) != 3 || page.Events[0].Seq != start+1 || page.Next != start+3 || page.Events[0].Type != core.TypeAgentRegistered {
		t.Fatalf("page %+v", page)
	}
	b.must(200, b.call("GET", fmt.Sprintf("/v1/events?follow=false&after=%d", page.Next), adminToken, nil), &page)
	if len(page.Events) != 2 || page.Next != start+5 {
		t.Fatalf("second page %+v", page)
	}
	b.must(200, b.call("GET", fmt.Sprintf("/v1/events?follow=false&after=%d", page.Next), adminToken, nil), &page)
	if len(page.Events) != 0 || page.Next != start+5 {
		t.Fatalf("empty page %+v", page)
	}
	b.must(200, b.call("GET", "/v1/events?follow=false&agent=a-3", adminToken, nil), &page)
	if len(page.Events) != 1 || page.Events[0].Agent != "a-3" {
		t.Fatalf("filtered %+v", page)
	}
	for _, q := range []string{"follow=maybe", "after=-1", "limit=0", "limit=100000", "follow=false&limit=x", "limit=5", "agnet=a"} {
		if r := b.call("GET", "/v1/events?"+q, adminToken, nil); r.status != 400 {
			t.Errorf("%s: %d %s", q, r.status, r.body)
		}
	}
	if r := b.call("GET", "/v1/events?follow=false", adminToken, nil, "Last-Event-ID", "x"); r.status != 400 {
		t.Errorf("bad Last-Event-ID: %d", r.status)
	}
}

// A client that disconnects and resumes with Last-Event-ID sees every
// event once: no gap, no duplicate.
func TestEventStreamResumesWithoutGapOrDuplicate(t *testing.T) {
	t.Parallel()
	b := setup(t)
	start := b.head()
	b.registerAgents("early", 3)
	s := b.stream(fmt.Sprintf("/v1/events?after=%d", start))
	var seen []uint64
	for len(seen) < 2 {
		ev, err := s.next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.id != ev.data.Seq || ev.typ != ev.data.Type {
			t.Fatalf("event %+v", ev)
		}
		seen = append(seen, ev.id)
	}
	s.close()
	b.registerAgents("late", 4)
	s = b.stream("/v1/events", "Last-Event-ID", strconv.FormatUint(seen[len(seen)-1], 10))
	for len(seen) < 7 {
		ev, err := s.next()
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, ev.id)
	}
	for i, id := range seen {
		if id != start+uint64(i)+1 {
			t.Fatalf("seqs %v: gap or duplicate at %d", seen, i)
		}
	}
	// Live events follow the stored ones on the same stream.
	b.registerAgents("live", 1)
	ev, err := s.next()
	if err != nil || ev.id != start+8 || ev.data.Agent != "live-0" {
		t.Fatalf("live event %+v %v", ev, err)
	}
}

func TestEventStreamFiltersAndKeepAlive(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{keepAlive: 20 * time.Millisecond})
	b.registerAgents("a", 3)
	s := b.stream("/v1/events?agent=a-1")
	ev, err := s.next()
	if err != nil || ev.data.Agent != "a-1" {
		t.Fatalf("filtered %+v %v", ev, err)
	}
	b.registerAgents("b", 1)
	b.do(func(c *core.State, now time.Time) error {
		return c.SetAgentStatus(now, "a-1", core.Offline, "test")
	})
	ev, err = s.next()
	if err != nil || ev.data.Agent != "a-1" || ev.typ != core.TypeAgentStatus {
		t.Fatalf("next filtered %+v %v", ev, err)
	}
	keepAlive := false
	for _, c := range ev.comments {
		keepAlive = keepAlive || c == "keep-alive"
	}
	if !keepAlive {
		// The status change may come before the first comment: wait for one.
		done := make(chan bool, 1)
		go func() {
			line, _ := s.rd.ReadString('\n')
			done <- strings.HasPrefix(line, ": keep-alive")
		}()
		select {
		case ok := <-done:
			if !ok {
				t.Fatal("no keep-alive comment")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no keep-alive comment in 10s")
		}
	}
}

// A subscriber that falls behind is dropped: its stream just ends, and it
// resumes from the log.
func TestEventStreamDropsSlowSubscriber(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{streamBuffer: 2})
	start := b.head()
	s := b.stream(fmt.Sprintf("/v1/events?after=%d", start))
	// Wait until the stream is live (its subscription registered) by
	// seeing one event through it.
	b.registerAgents("first", 1)
	ev, err := s.next()
	if err != nil || ev.id != start+1 {
		t.Fatalf("first %+v %v", ev, err)
	}
	b.registerAgents("burst", 50) // one batch of 50 events: more than the buffer
	var got []uint64
	for {
		ev, err := s.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.id)
	}
	if len(got) >= 50 {
		t.Fatalf("the slow subscriber was not dropped: %d events", len(got))
	}
	last := start + 1
	if len(got) > 0 {
		last = got[len(got)-1]
	}
	s = b.stream("/v1/events", "Last-Event-ID", strconv.FormatUint(last, 10))
	for last < start+51 {
		ev, err := s.next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.id != last+1 {
			t.Fatalf("resumed at %d after %d", ev.id, last)
		}
		last = ev.id
	}
}

func TestEventStreamEndsOnStop(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s := b.stream("/v1/events")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		for {
			if _, err := s.next(); err != nil {
				done <- err
				return
			}
		}
	}()
	b.srv.Stop()
	select {
	case err := <-done:
		if err != io.EOF {
			t.Fatalf("stream ended with %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the stream did not end on Stop")
	}
}

// Event streams and long-polls outlive the http.Server's ReadTimeout (the
// daemon sets one).
func TestStreamsOutliveReadTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{keepAlive: 50 * time.Millisecond})
	hs := httptest.NewUnstartedServer(b.srv)
	hs.Config.ReadTimeout = 100 * time.Millisecond
	hs.Start()
	t.Cleanup(hs.Close) // after the stream's body is closed (cleanups run last first)
	b.hs = hs
	tok := b.agent("alpha")
	start := time.Now()
	r := b.call("GET", "/v1/inbox?wait=400ms", tok, nil)
	if r.status != 200 || time.Since(start) < 400*time.Millisecond {
		t.Fatalf("long-poll: %d after %s: %s", r.status, time.Since(start), r.body)
	}
	s := b.stream("/v1/events")
	deadline := time.Now().Add(400 * time.Millisecond)
	for time.Now().Before(deadline) {
		if _, err := s.rd.ReadString('\n'); err != nil {
			t.Fatalf("the stream ended after %s: %v", time.Since(deadline.Add(-400*time.Millisecond)), err)
		}
	}
}
