package client

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// specMessages parses a whole text/event-stream the way the WHATWG
// specification's "interpreting an event stream" describes it, line by line
// (CR, LF or CRLF end a line; a leading BOM is dropped), and returns the
// messages it dispatches and the last reconnection time it sets. A message
// still open at the end of the stream is not dispatched. It is the
// reference the reader is checked against.
func specMessages(stream string) (msgs []sseMessage, retry time.Duration, retrySet bool) {
	stream = strings.TrimPrefix(stream, "\ufeff")
	var lines []string
	for {
		i := strings.IndexAny(stream, "\r\n")
		if i < 0 {
			break // an unterminated last line is never processed
		}
		lines = append(lines, stream[:i])
		if stream[i] == '\r' && i+1 < len(stream) && stream[i+1] == '\n' {
			i++
		}
		stream = stream[i+1:]
	}
	var data, event, lastID string
	for _, line := range lines {
		if line == "" {
			if data == "" {
				event = ""
				continue
			}
			data = strings.TrimSuffix(data, "\n")
			msgs = append(msgs, sseMessage{id: lastID, event: cmp.Or(event, "message"), data: data})
			data, event = "", ""
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, ""
		if i := strings.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], strings.TrimPrefix(line[i+1:], " ")
		}
		switch field {
		case "event":
			event = value
		case "data":
			data += value + "\n"
		case "id":
			if !strings.ContainsRune(value, 0) {
				lastID = value
			}
		case "retry":
			if value != "" && strings.Trim(value, "0123456789") == "" {
				if n, err := strconv.ParseInt(value, 10, 64); err == nil && n <= math.MaxInt64/int64(time.Millisecond) {
					retry, retrySet = time.Duration(n)*time.Millisecond, true
				} else {
					retry, retrySet = time.Duration(math.MaxInt64), true
				}
			}
		}
	}
	return msgs, retry, retrySet
}

// chunkedReader hands out its text in pieces of the sizes given, so that
// line ends fall across reads.
type chunkedReader struct {
	s     string
	sizes []byte
	i     int
}

func (r *chunkedReader) Read(p []byte) (int, error) {
	if r.s == "" {
		return 0, io.EOF
	}
	n := len(r.s)
	if len(r.sizes) > 0 {
		n = int(r.sizes[r.i%len(r.sizes)])%7 + 1
		r.i++
	}
	n = min(n, len(p), len(r.s))
	copy(p, r.s[:n])
	r.s = r.s[n:]
	return n, nil
}

// FuzzSSEReader checks the client's event-stream reader against the
// specification's algorithm on any stream cut into any pieces, and that a
// stream written from messages reads back as those messages.
//
//	go test -run='^$' -fuzz='^FuzzSSEReader$' -fuzztime=30s ./client
func FuzzSSEReader(f *testing.F) {
	f.Fuzz(func(t *testing.T, stream string, cuts []byte) {
		want, wantRetry, retrySet := specMessages(stream)
		r := newSSEReader(&chunkedReader{s: stream, sizes: cuts})
		var got []sseMessage
		for {
			m, err := r.next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("error %v", err)
				}
				break
			}
			got = append(got, m)
			if len(got) > len(want) {
				break
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("stream %q:\nread %q\nwant %q", stream, got, want)
		}
		if r.retry < 0 || retrySet && r.retry != wantRetry || !retrySet && r.retry != 0 {
			t.Fatalf("stream %q: retry %v, want %v (set %v)", stream, r.retry, wantRetry, retrySet)
		}
		for _, m := range got {
			ev, ok, err := decodeSSEEvent(m)
			if err == nil && ok && ev.Seq == 0 {
				t.Fatalf("an event without seq is handed over: %+v", m)
			}
		}

		// Messages written the way a server writes them read back.
		var b strings.Builder
		var sent []sseMessage
		for i, line := range strings.Split(stream, "\n") {
			if strings.ContainsAny(line, "\r\x00") || i > 20 {
				continue
			}
			id := strconv.Itoa(i + 1)
			fmt.Fprintf(&b, "id: %s\nevent: e%d\ndata: %s\ndata: second line\n\n: heartbeat\n\n", id, i, line)
			sent = append(sent, sseMessage{id: id, event: fmt.Sprintf("e%d", i), data: line + "\nsecond line"})
		}
		r = newSSEReader(&chunkedReader{s: b.String(), sizes: cuts})
		for _, w := range sent {
			m, err := r.next()
			if err != nil || m != w {
				t.Fatalf("read %+v, %v; want %+v", m, err, w)
			}
		}
		if _, err := r.next(); !errors.Is(err, io.EOF) {
			t.Fatalf("after the last message: %v", err)
		}
	})
}
