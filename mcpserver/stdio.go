package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Serve answers the messages of r on w (MCP's stdio transport: one JSON-RPC
// message a line) until r ends or ctx does; the calls read before r ended
// are answered before it returns.
//
// The SDK's transport ends the connection at a line that is no JSON-RPC
// message; such a line is answered here instead (a parse error, or an
// invalid request, with a null id) and the connection goes on.
func Serve(ctx context.Context, r io.Reader, w io.Writer, rep Replier, task Task, version string) error {
	out := &lineWriter{w: w, pending: map[string]bool{}}
	pr, pw := io.Pipe()
	go func() { _ = pw.CloseWithError(out.filter(ctx, r, pw)) }()
	err := New(rep, task, version).Run(ctx, &mcp.IOTransport{Reader: pr, Writer: nopCloser{out}})
	_ = pr.Close()
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) {
		err = nil
	}
	if err == nil {
		err = out.readErr()
	}
	return err
}

// lineWriter writes whole lines to w, one writer at a time, and keeps the
// ids of the requests not answered yet.
type lineWriter struct {
	w       io.Writer
	mu      sync.Mutex
	pending map[string]bool
	done    chan struct{} // closed when pending empties, while waited on
	err     error         // the input's read error
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for line := range bytes.SplitSeq(bytes.TrimSpace(p), []byte("\n")) {
		if msg, err := jsonrpc.DecodeMessage(line); err == nil {
			if resp, ok := msg.(*jsonrpc.Response); ok {
				delete(l.pending, idKey(resp.ID))
			}
		}
	}
	if len(l.pending) == 0 && l.done != nil {
		close(l.done)
		l.done = nil
	}
	return l.w.Write(p)
}

// filter copies the messages of r to the SDK's side (to) and answers the
// lines that are no message itself. At the end of r it waits for the
// answers to the requests it passed, then returns.
func (l *lineWriter) filter(ctx context.Context, r io.Reader, to io.Writer) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), mcp.DefaultMaxLineLength)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		ids, rerr := requestIDs(line)
		if rerr != nil {
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": rerr})
			if _, err := l.Write(append(b, '\n')); err != nil {
				return err
			}
			continue
		}
		l.mu.Lock()
		for _, id := range ids {
			l.pending[id] = true
		}
		l.mu.Unlock()
		if _, err := to.Write(append(bytes.Clone(line), '\n')); err != nil {
			return err
		}
	}
	l.mu.Lock()
	l.err = sc.Err()
	var done chan struct{}
	if len(l.pending) > 0 {
		done = make(chan struct{})
		l.done = done
	}
	l.mu.Unlock()
	if done != nil {
		select {
		case <-done:
		case <-ctx.Done():
		}
	}
	return io.EOF
}

func (l *lineWriter) readErr() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// requestIDs returns the ids of the requests a line holds that the server
// answers once it is done with them, or the JSON-RPC error that answers a
// line that holds no message. A batch (an array of messages, gone from MCP
// since 2025-06-18, and a reason for the SDK's transport to end the
// connection after that version) is answered so too.
func requestIDs(line []byte) ([]string, *jsonrpc.Error) {
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "parse error: " + err.Error()}
	}
	if line[0] == '[' {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: a batch (send one message a line)"}
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: " + err.Error()}
	}
	// A subscription is answered only when the client ends it.
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && req.Method != "subscriptions/listen" {
		return []string{idKey(req.ID)}, nil
	}
	return nil, nil
}

func idKey(id jsonrpc.ID) string {
	b, _ := json.Marshal(id.Raw())
	return string(b)
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
