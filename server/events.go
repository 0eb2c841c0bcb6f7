package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"wilco/runtime"
	"wilco/store"
	"wilco/wire"
)

// Page sizes of GET /v1/events?follow=false.
const (
	defaultEventPage = 1000
	maxEventPage     = 10000
	// defaultStreamBuffer is each event stream's subscription buffer: a
	// client that falls this far behind is dropped and resumes from the log.
	defaultStreamBuffer = 1024
)

// events serves the event log: a Server-Sent Events stream (the default),
// or one page of JSON with ?follow=false.
func (s *Server) events(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r, "follow", "after", "limit", "task", "agent"); err != nil {
		return err
	}
	follow, err := boolParam(r, "follow", true)
	if err != nil {
		return err
	}
	after, err := uintParam(r, "after", 0)
	if err != nil {
		return err
	}
	if h := r.Header.Get("Last-Event-ID"); h != "" {
		if after, err = strconv.ParseUint(h, 10, 64); err != nil {
			return invalidf("Last-Event-ID: want the seq of an event, got %q", h)
		}
	}
	limit, err := uintParam(r, "limit", defaultEventPage)
	if err != nil {
		return err
	}
	if limit == 0 || limit > maxEventPage {
		return invalidf("limit: from 1 to %d, got %d", maxEventPage, limit)
	}
	f := runtime.StreamFilter{After: after, TaskID: r.URL.Query().Get("task"), Agent: r.URL.Query().Get("agent")}
	if !follow {
		return s.eventPage(w, r, f, int(limit))
	}
	if r.URL.Query().Has("limit") {
		return invalidf("limit applies to follow=false only")
	}
	return s.stream(w, r, f)
}

func (s *Server) eventPage(w http.ResponseWriter, r *http.Request, f runtime.StreamFilter, limit int) error {
	evs, err := s.st.Events(r.Context(), store.Filter{After: f.After, TaskID: f.TaskID, Agent: f.Agent, Limit: limit})
	if err != nil {
		return err
	}
	out := wire.EventPage{Events: make([]wire.Event, 0, len(evs)), Next: f.After}
	for _, ev := range evs {
		out.Events = append(out.Events, eventView(ev))
		out.Next = ev.Seq
	}
	WriteJSON(w, http.StatusOK, out)
	return nil
}

// stream writes every event after f.After as Server-Sent Events, first
// from the stored log then live, with no gap and no duplicate. A comment
// line every KeepAlive keeps an idle connection open. A client that falls
// behind is dropped: its stream just ends, and it resumes with
// Last-Event-ID.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, f runtime.StreamFilter) error {
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)

	var mu sync.Mutex
	var writeErr error
	write := func(b []byte) bool {
		mu.Lock()
		defer mu.Unlock()
		if writeErr != nil {
			return false
		}
		_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
		if _, writeErr = w.Write(b); writeErr == nil {
			writeErr = rc.Flush()
		}
		return writeErr == nil
	}
	if !write([]byte(": wilco event stream\n\n")) {
		return nil
	}

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(s.opts.KeepAlive)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				if !write([]byte(": keep-alive\n\n")) {
					cancel()
					return
				}
			case <-s.stopping:
				cancel()
				return
			case <-done:
				return
			}
		}
	}()
	err := s.rt.Follow(ctx, f, s.opts.StreamBuffer, func(ev store.Event) bool {
		data, err := json.Marshal(eventView(ev))
		if err != nil {
			return false
		}
		return write(fmt.Appendf(nil, "id: %d\nevent: %s\ndata: %s\n\n", ev.Seq, ev.Type, data))
	})
	close(done)
	wg.Wait()
	switch {
	case err == nil, errors.Is(err, context.Canceled):
	case errors.Is(err, runtime.ErrSlow):
		s.log.Info("event stream dropped: the client fell behind; it resumes with Last-Event-ID", "path", r.URL.Path)
	case errors.Is(err, runtime.ErrClosed):
	default:
		s.log.Warn("event stream ended", "err", err)
	}
	return nil
}
