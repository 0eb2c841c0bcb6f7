package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"wilco/wire"
)

func sseEvent(seq uint64, typ, task string) string {
	return fmt.Sprintf("id: %d\nevent: %s\ndata: {\"seq\":%d,\"time\":\"2026-01-26T14:30:%02dZ\",\"type\":%q,\"task_id\":%q,\"data\":{\"n\":%d}}\n\n", seq, typ, seq, seq%60, typ, task, seq)
}

func TestEventsPageAndEachEvent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.mux.HandleFunc("GET /v1/events", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("follow") != "false" || q.Get("task") != "T-3" || q.Get("limit") != "2" {
			writeError(w, 400, "invalid_argument", r.URL.RawQuery)
			return
		}
		after, _ := strconv.ParseUint(q.Get("after"), 10, 64)
		var evs []string
		for s := after + 1; s <= 5 && s <= after+2; s++ {
			evs = append(evs, fmt.Sprintf(`{"seq":%d,"time":"2026-01-26T14:30:00Z","type":"task.milestone","task_id":"T-3","data":{"text":"m%d"}}`, s, s))
		}
		next := after
		if len(evs) > 0 {
			next = after + uint64(len(evs))
		}
		reply(200, fmt.Sprintf(`{"events":[%s],"next":%d}`, strings.Join(evs, ","), next))(w, r)
	})
	ctx := context.Background()

	page, err := b.client.Events(ctx, EventQuery{Task: "T-3", After: 1, Limit: 2})
	if err != nil || len(page.Events) != 2 || page.Events[0].Seq != 2 || page.Next != 3 {
		t.Fatalf("Events = %+v, %v", page, err)
	}
	var seqs []uint64
	err = b.client.EachEvent(ctx, EventQuery{Task: "T-3", Limit: 2}, func(ev wire.Event) error {
		seqs = append(seqs, ev.Seq)
		return nil
	})
	if err != nil || fmt.Sprint(seqs) != "[1 2 3 4 5]" {
		t.Errorf("EachEvent saw %v, %v", seqs, err)
	}
	seqs = nil
	err = b.client.EachEvent(ctx, EventQuery{Task: "T-3", Limit: 2}, func(ev wire.Event) error {
		seqs = append(seqs, ev.Seq)
		if ev.Seq == 3 {
			return ErrStop
		}
		return nil
	})
	if err != nil || fmt.Sprint(seqs) != "[1 2 3]" {
		t.Errorf("EachEvent with ErrStop saw %v, %v", seqs, err)
	}
}

// sseServer serves the event stream in scripted connections: connection n
// writes script[n] and then ends (a disconnect) unless it is the last,
// which stays open until the client leaves.
type sseServer struct {
	mu      sync.Mutex
	script  []string
	conns   int
	lastIDs []string
	afters  []string
}

func (s *sseServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	n := s.conns
	s.conns++
	s.lastIDs = append(s.lastIDs, r.Header.Get("Last-Event-ID"))
	s.afters = append(s.afters, r.URL.Query().Get("after"))
	s.mu.Unlock()
	if r.Header.Get("Accept") != "text/event-stream" {
		writeError(w, 400, "invalid_argument", "not an event stream request")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	if n < len(s.script) {
		_, _ = fmt.Fprint(w, s.script[n])
		w.(http.Flusher).Flush()
	}
	if n >= len(s.script)-1 {
		<-r.Context().Done()
	}
}

func TestFollowResumesAfterDisconnect(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sse := &sseServer{script: []string{
		// First connection: a comment, events 1 and 2, and event 3 cut
		// off mid-message by the disconnect (it must not be delivered).
		": hello\n\n" + sseEvent(1, "task.queued", "T-3") + sseEvent(2, "task.state", "T-3") + "id: 3\nevent: task.milestone\ndata: {\"seq\":3,",
		// Second: the server resends 2 (a duplicate to drop), then 3 and 4,
		// with a multi-line data field.
		"retry: 1\n\n" + sseEvent(2, "task.state", "T-3") + sseEvent(3, "task.milestone", "T-3") +
			"id: 4\nevent: task.state\ndata: {\"seq\":4,\"time\":\"2026-01-26T14:30:04Z\",\ndata: \"type\":\"task.state\",\"data\":{}}\n\n",
		// Third: a heartbeat without an id, then 5; stays open.
		"event: ping\ndata: {}\n\n" + sseEvent(5, "task.state", "T-3"),
	}}
	b.mux.Handle("GET /v1/events", sse)

	var got []string
	var disconnects int
	f := &Follower{Client: b.client, Query: EventQuery{Task: "T-3"}, ReconnectDelay: time.Millisecond,
		OnDisconnect: func(error) { disconnects++ }}
	err := f.Run(context.Background(), func(ev wire.Event) error {
		got = append(got, fmt.Sprintf("%d:%s", ev.Seq, ev.Type))
		if ev.Seq == 5 {
			return ErrStop
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "[1:task.queued 2:task.state 3:task.milestone 4:task.state 5:task.state]"; fmt.Sprint(got) != want {
		t.Errorf("events %v\nwant %s", got, want)
	}
	if disconnects != 2 || f.Last() != 5 {
		t.Errorf("disconnects %d, last %d", disconnects, f.Last())
	}
	sse.mu.Lock()
	defer sse.mu.Unlock()
	if fmt.Sprint(sse.lastIDs) != "[ 2 4]" || fmt.Sprint(sse.afters) != "[0 2 4]" {
		t.Errorf("Last-Event-ID %q, after %q; want resume after 2 then 4", sse.lastIDs, sse.afters)
	}
}

func TestFollowCapsTheServersRetryAtTheLongestDelay(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sse := &sseServer{script: []string{
		// An hour's retry, then the stream breaks.
		"retry: 3600000\n\n" + sseEvent(1, "task.queued", "T-3"),
		sseEvent(2, "task.state", "T-3"),
	}}
	b.mux.Handle("GET /v1/events", sse)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := &Follower{Client: b.client, Query: EventQuery{Task: "T-3"}, ReconnectDelay: time.Millisecond,
		MaxReconnectDelay: 10 * time.Millisecond}
	err := f.Run(ctx, func(ev wire.Event) error {
		if ev.Seq == 2 {
			return ErrStop
		}
		return nil
	})
	if err != nil {
		t.Fatalf("the follower waited out the server's hour-long retry instead of its own longest delay: %v", err)
	}
}

func TestFollowStartsAfter(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sse := &sseServer{script: []string{sseEvent(7, "agent.status", "") + sseEvent(8, "agent.status", "")}}
	b.mux.Handle("GET /v1/events", sse)
	var got []uint64
	err := b.client.Follow(context.Background(), EventQuery{After: 7}, func(ev wire.Event) error {
		got = append(got, ev.Seq)
		return ErrStop
	})
	if err != nil || fmt.Sprint(got) != "[8]" {
		t.Errorf("got %v, %v: event 7 was asked to be skipped", got, err)
	}
	if sse.lastIDs[0] != "7" {
		t.Errorf("Last-Event-ID %q, want 7", sse.lastIDs[0])
	}
}

func TestFollowStopsOnRefusal(t *testing.T) {
	t.Parallel()
	b := setup(t)
	bad := New(b.srv.URL, "wrong")
	err := bad.Follow(context.Background(), EventQuery{}, func(wire.Event) error { return nil })
	if !IsCode(err, wire.CodeUnauthenticated) {
		t.Errorf("err = %v, want unauthenticated", err)
	}
	// A route that answers JSON, not a stream.
	b.mux.Handle("GET /v1/events", reply(200, `{"events":[]}`))
	err = b.client.Follow(context.Background(), EventQuery{}, func(wire.Event) error { return nil })
	var pe protocolError
	if !errors.As(err, &pe) {
		t.Errorf("err = %v, want a protocol error", err)
	}
}

func TestFollowReturnsHandlerErrorAndContextEnd(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// One connection per Follow below; the last stays open.
	b.mux.Handle("GET /v1/events", &sseServer{script: []string{sseEvent(1, "x", ""), sseEvent(1, "x", "")}})
	boom := errors.New("boom")
	if err := b.client.Follow(context.Background(), EventQuery{}, func(wire.Event) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("err = %v, want the handler's", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	err := b.client.Follow(ctx, EventQuery{}, func(wire.Event) error { cancel(); return nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestFollowFirstConnectionFails(t *testing.T) {
	t.Parallel()
	err := New("http://127.0.0.1:1", "x").Follow(context.Background(), EventQuery{}, func(wire.Event) error { return nil })
	var te *TransportError
	if !errors.As(err, &te) {
		t.Errorf("err = %v, want a TransportError", err)
	}
}
