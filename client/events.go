package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"wilco/wire"
)

func (q EventQuery) values(follow bool) url.Values {
	v := url.Values{}
	if q.Task != "" {
		v.Set("task", q.Task)
	}
	if q.Agent != "" {
		v.Set("agent", q.Agent)
	}
	if !follow {
		v.Set("follow", "false")
		if q.Limit > 0 {
			v.Set("limit", strconv.Itoa(q.Limit))
		}
	}
	v.Set("after", strconv.FormatUint(q.After, 10))
	return v
}

// EventQuery selects events: those of one task or agent (empty: all),
// after a seq (0: from the first). Limit bounds a page (0: the server's).
type EventQuery struct {
	Task  string
	Agent string
	After uint64
	Limit int
}

// Events returns one page of stored events after q.After:
// GET /v1/events?follow=false&after=&limit=.
func (c *Client) Events(ctx context.Context, q EventQuery) (*wire.EventPage, error) {
	return one[wire.EventPage](ctx, c, request{method: http.MethodGet, path: "/v1/events", query: q.values(false)})
}

// EachEvent hands every stored event after q.After to fn, in order, a page
// at a time, and returns when the stored log is exhausted or fn returns an
// error (ErrStop ends it without error).
func (c *Client) EachEvent(ctx context.Context, q EventQuery, fn func(wire.Event) error) error {
	for {
		page, err := c.Events(ctx, q)
		if err != nil {
			return err
		}
		for _, ev := range page.Events {
			if ev.Seq != 0 && ev.Seq <= q.After {
				continue
			}
			if err := fn(ev); err != nil {
				if errors.Is(err, ErrStop) {
					return nil
				}
				return err
			}
			if ev.Seq > q.After {
				q.After = ev.Seq
			}
		}
		if page.Next > q.After {
			q.After = page.Next
		}
		if len(page.Events) == 0 || (q.Limit > 0 && len(page.Events) < q.Limit) {
			return nil
		}
	}
}

// ErrStop, returned by an event handler, ends Follow or EachEvent without
// an error.
var ErrStop = errors.New("client: stop")

// Follow hands every event after q.After to fn as it happens, following
// the live stream and reconnecting after a disconnect; see Follower. It
// returns when fn returns an error (nil for ErrStop), when ctx ends
// (ctx.Err()), or when the server refuses the stream.
func (c *Client) Follow(ctx context.Context, q EventQuery, fn func(wire.Event) error) error {
	f := &Follower{Client: c, Query: q}
	return f.Run(ctx, fn)
}

// Reconnection defaults of a Follower.
const (
	DefaultReconnectDelay    = 250 * time.Millisecond
	DefaultMaxReconnectDelay = 5 * time.Second
)

// Follower follows the event stream (GET /v1/events, text/event-stream).
// When the connection drops — the server restarted, a proxy cut it, the
// server dropped a subscriber that fell behind — it reconnects with
// Last-Event-ID (and after=) set to the last event handed over, so the
// server resumes from its stored log; events already handed over are
// dropped if the server sends them again. The handler sees every event
// once, in order.
type Follower struct {
	Client *Client
	Query  EventQuery
	// ReconnectDelay is the first wait before reconnecting (default
	// DefaultReconnectDelay); it doubles after each failed try up to
	// MaxReconnectDelay, and resets once an event arrives. A server's
	// "retry:" field replaces it, capped at MaxReconnectDelay: a server
	// that asks for an hour does not leave the follower silent for one.
	ReconnectDelay    time.Duration
	MaxReconnectDelay time.Duration
	// OnDisconnect, if set, is told why the stream broke before each
	// reconnection.
	OnDisconnect func(err error)

	last atomic.Uint64
}

// Last is the seq of the last event handed to the handler (Query.After
// before the first).
func (f *Follower) Last() uint64 { return f.last.Load() }

// handlerError marks an error returned by the caller's handler.
type handlerError struct{ err error }

func (e handlerError) Error() string { return e.err.Error() }

// Run follows the stream until fn returns an error (Run returns it; nil
// for ErrStop), ctx ends (ctx.Err()) or the server refuses the stream (an
// *APIError other than a 5xx, 408 or 429). If the very first connection
// cannot be made, Run returns that error rather than retrying.
func (f *Follower) Run(ctx context.Context, fn func(wire.Event) error) error {
	f.last.Store(f.Query.After)
	base := f.ReconnectDelay
	if base <= 0 {
		base = DefaultReconnectDelay
	}
	maxDelay := f.MaxReconnectDelay
	if maxDelay <= 0 {
		maxDelay = DefaultMaxReconnectDelay
	}
	delay := base
	connected := false
	for {
		ok, progressed, retry, err := f.stream(ctx, fn)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var he handlerError
		if errors.As(err, &he) {
			if errors.Is(he.err, ErrStop) {
				return nil
			}
			return he.err
		}
		if !transient(err) || (!connected && !ok) {
			return err
		}
		connected = connected || ok
		if retry > maxDelay {
			retry = maxDelay
		}
		if retry > 0 {
			base = retry
			delay = retry
		}
		if progressed {
			delay = base
		}
		if f.OnDisconnect != nil {
			f.OnDisconnect(err)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		delay = min(delay*2, maxDelay)
	}
}

// transient reports whether a broken or refused stream is worth
// reconnecting for.
func transient(err error) bool {
	if err == nil {
		return true
	}
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Status >= 500 || ae.Status == http.StatusRequestTimeout || ae.Status == http.StatusTooManyRequests
	}
	var pe protocolError
	return !errors.As(err, &pe)
}

// protocolError is an answer that is not an event stream: reconnecting
// would not help.
type protocolError struct{ msg string }

func (e protocolError) Error() string { return "client: event stream: " + e.msg }

// errStreamEnded is the reason given when the server closes the stream.
var errStreamEnded = errors.New("client: event stream closed by the server")

// stream makes one connection and reads it until it breaks. ok says the
// connection was made; progressed that an event was handed over; retry is
// the server's "retry:" value, if any.
func (f *Follower) stream(ctx context.Context, fn func(wire.Event) error) (ok, progressed bool, retry time.Duration, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	q := f.Query
	q.After = f.Last()
	h := http.Header{}
	h.Set("Cache-Control", "no-cache")
	if q.After > 0 {
		h.Set("Last-Event-ID", strconv.FormatUint(q.After, 10))
	}
	resp, err := f.Client.send(ctx, request{method: http.MethodGet, path: "/v1/events", query: q.values(true), accept: "text/event-stream", header: h})
	if err != nil {
		return false, false, 0, err
	}
	defer resp.Body.Close()
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		return false, false, 0, protocolError{fmt.Sprintf("answer is %q, not text/event-stream", resp.Header.Get("Content-Type"))}
	}
	r := newSSEReader(resp.Body)
	for {
		msg, err := r.next()
		if r.retry > 0 {
			retry = r.retry
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errStreamEnded
			}
			return true, progressed, retry, err
		}
		ev, ok2, err := decodeSSEEvent(msg)
		if err != nil {
			return true, progressed, retry, err
		}
		if !ok2 || ev.Seq <= f.Last() {
			continue // a heartbeat, or an event handed over already
		}
		f.last.Store(ev.Seq)
		progressed = true
		if err := fn(ev); err != nil {
			return true, progressed, retry, handlerError{err}
		}
	}
}

// decodeSSEEvent turns one SSE message into an Event. ok is false for a
// message that is no event of the log (no seq: a heartbeat).
func decodeSSEEvent(m sseMessage) (wire.Event, bool, error) {
	var ev wire.Event
	if strings.TrimSpace(m.data) != "" {
		if err := json.Unmarshal([]byte(m.data), &ev); err != nil {
			return ev, false, protocolError{fmt.Sprintf("event %q: %v", m.id, err)}
		}
	}
	if ev.Seq == 0 && m.id != "" {
		n, err := strconv.ParseUint(m.id, 10, 64)
		if err != nil {
			return ev, false, nil
		}
		ev.Seq = n
	}
	if ev.Type == "" && m.event != "message" {
		ev.Type = m.event
	}
	return ev, ev.Seq != 0, nil
}

// sseMessage is one dispatched Server-Sent Events message.
type sseMessage struct {
	id, event, data string
}

// sseReader parses a text/event-stream (the WHATWG rules: CR, LF or CRLF
// end a line, a leading BOM is dropped, fields, comments, multi-line data,
// a blank line dispatches; a message cut off by the end of the stream is
// dropped).
type sseReader struct {
	r       *bufio.Reader
	id      string
	retry   time.Duration
	started bool // the first line was read (its BOM dropped)
	skipLF  bool // the last line ended with CR: a LF right after it is part of that end
}

func newSSEReader(r io.Reader) *sseReader { return &sseReader{r: bufio.NewReaderSize(r, 64<<10)} }

// line reads one line, without its end (CR, LF or CRLF). A CR is taken as
// the end at once, so that a stream of CR-ended lines is not held up
// waiting for the next byte; a LF that follows it is skipped then.
func (s *sseReader) line() (string, error) {
	var out []byte
	for {
		if s.r.Buffered() == 0 {
			if _, err := s.r.Peek(1); err != nil {
				return "", err // a partial line at the end is not processed
			}
		}
		buf, _ := s.r.Peek(s.r.Buffered())
		if s.skipLF {
			s.skipLF = false
			if buf[0] == '\n' {
				_, _ = s.r.Discard(1)
				continue
			}
		}
		i := bytes.IndexAny(buf, "\r\n")
		if i < 0 {
			out = append(out, buf...)
			_, _ = s.r.Discard(len(buf))
			continue
		}
		out = append(out, buf[:i]...)
		s.skipLF = buf[i] == '\r'
		_, _ = s.r.Discard(i + 1)
		line := string(out)
		if !s.started {
			s.started = true
			line = strings.TrimPrefix(line, "\ufeff")
		}
		return line, nil
	}
}

// maxRetryMS is the longest "retry:" a time.Duration holds.
const maxRetryMS = math.MaxInt64 / int64(time.Millisecond)

func (s *sseReader) next() (sseMessage, error) {
	var data strings.Builder
	event := ""
	hasData := false
	for {
		line, err := s.line()
		if err != nil {
			// A partial line or message at the end is not dispatched.
			return sseMessage{}, err
		}
		if line == "" {
			if !hasData {
				event = ""
				continue
			}
			if event == "" {
				event = "message"
			}
			return sseMessage{id: s.id, event: event, data: data.String()}, nil
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			event = value
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.WriteString(value)
			hasData = true
		case "id":
			if !strings.ContainsRune(value, 0) {
				s.id = value
			}
		case "retry":
			// Only ASCII digits count (not "+5" or "-0"); a value too large
			// for a Duration is the largest one.
			if value != "" && strings.Trim(value, "0123456789") == "" {
				if n, err := strconv.ParseInt(value, 10, 64); err == nil && n <= maxRetryMS {
					s.retry = time.Duration(n) * time.Millisecond
				} else {
					s.retry = time.Duration(math.MaxInt64)
				}
			}
		}
	}
}
