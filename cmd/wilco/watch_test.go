package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// cannedEvents is the life of task T-3, one event per line of JSON.
var cannedEvents = []string{
	`{"seq":1,"time":"2026-01-26T14:30:00Z","type":"task.queued","task_id":"T-3","data":{"task":{"id":"T-3","description":"Fix the login timeout"}}}`,
	`{"seq":2,"time":"2026-01-26T14:30:01Z","type":"task.state","task_id":"T-3","data":{"from":"queued","to":"awaiting_ack"}}`,
	`{"seq":3,"time":"2026-01-26T14:30:02Z","type":"delivery.sent","task_id":"T-3","agent":"claude","data":{"id":"M-1","attempt":1,"kind":"first"}}`,
	`{"seq":4,"time":"2026-01-26T14:30:03Z","type":"delivery.acknowledged","task_id":"T-3","agent":"claude","data":{"id":"M-1","by":"agent","status":"RECEIVED","understanding":"fix the timeout"}}`,
	`{"seq":5,"time":"2026-01-26T14:30:04Z","type":"task.state","task_id":"T-3","data":{"from":"awaiting_ack","to":"running","phase":"executing"}}`,
	`{"seq":6,"time":"2026-01-26T14:30:20Z","type":"task.failure","task_id":"T-3","data":{"record":{"attempt":1,"failure_type":"verification_failed","run_id":"R-1","executor_output":{"status":"failure","verification":{"command":"go test ./...","exit_code":1,"output_summary":"2 tests failed"}},"suggested_fix":"check for nil"}}}`,
	`{"seq":7,"time":"2026-01-26T14:30:21Z","type":"task.attempt","task_id":"T-3","data":{"attempt":2,"kind":"retry","agent":"claude","max_attempts":5}}`,
	`{"seq":8,"time":"2026-01-26T14:30:21Z","type":"task.milestone","task_id":"T-3","data":{"text":"Verification failed, debugging..."}}`,
	`{"seq":9,"time":"2026-01-26T14:31:05Z","type":"task.state","task_id":"T-3","data":{"from":"running","to":"success"}}`,
}

func sse(ev string) string {
	var head struct {
		Seq  int    `json:"seq"`
		Type string `json:"type"`
	}
	_ = jsonUnmarshal(ev, &head)
	return fmt.Sprintf("id: %d\nevent: %s\ndata: %s\n\n", head.Seq, head.Type, ev)
}

// serveCanned serves GET /v1/tasks/T-3 (running), the stored events 1-3
// as a page, and the live stream: events 4-6 then a disconnect, then 6
// again (a duplicate), 7 and 8.
func serveCanned(t *testing.T, b *cliBundle, task http.Handler) *[]string {
	t.Helper()
	if task == nil {
		task = respond(200, `{"id":"T-3","description":"Fix the login timeout","state":"running","phase":"executing","agent":"claude","attempt":1,"max_attempts":5,"created_at":"2026-01-26T14:30:00Z","started_at":"2026-01-26T14:30:00Z"}`)
	}
	b.mux.Handle("GET /v1/tasks/T-3", task)
	var mu sync.Mutex
	conns := 0
	var resumes []string
	b.mux.HandleFunc("GET /v1/events", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("task") != "T-3" {
			apiError(400, "invalid_argument", "task "+q.Get("task"))(w, r)
			return
		}
		if q.Get("follow") == "false" {
			if q.Get("after") == "0" {
				respond(200, `{"events":[`+strings.Join(cannedEvents[:3], ",")+`],"next":3}`)(w, r)
			} else {
				respond(200, `{"events":[],"next":`+q.Get("after")+`}`)(w, r)
			}
			return
		}
		mu.Lock()
		n := conns
		conns++
		resumes = append(resumes, r.Header.Get("Last-Event-ID")+"/"+q.Get("after"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		var evs []string
		switch n {
		case 0:
			evs = cannedEvents[3:6]
		case 1:
			evs = cannedEvents[5:9]
		}
		for _, ev := range evs {
			_, _ = fmt.Fprint(w, sse(ev))
		}
		w.(http.Flusher).Flush()
		if n >= 1 {
			<-r.Context().Done()
		}
	})
	return &resumes
}

func TestWatchPlain(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	resumes := serveCanned(t, b, nil)
	if code := b.run("watch", "T-3"); code != 0 {
		t.Fatalf("exit %d: %s", code, b.errb)
	}
	want := `14:30:00  T-3  queued: Fix the login timeout
14:30:01  T-3  state queued → awaiting_ack
14:30:02  T-3  message M-1 sent (attempt 1)
14:30:03  T-3  message M-1 acknowledged by agent (RECEIVED): fix the timeout
14:30:04  T-3  state awaiting_ack → running (executing)
14:30:20  T-3  attempt 1 failed: verification_failed: 2 tests failed (run R-1)
14:30:21  T-3  attempt 2 (retry) by claude
14:30:21  T-3  Verification failed, debugging...
14:31:05  T-3  state running → success
T-3 | success | attempt 2/5 | Verification failed, debugging... | 1m05s
`
	if got := b.out.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := strings.Join(*resumes, " "); got != "3/3 6/6" {
		t.Errorf("stream connections (Last-Event-ID/after) %s, want 3/3 6/6", got)
	}
}

func TestWatchTTYRedrawsStatusLine(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	serveCanned(t, b, nil)
	b.c.tty = true
	if code := b.run("watch", "T-3"); code != 0 {
		t.Fatalf("exit %d: %s", code, b.errb)
	}
	out := b.out.String()
	// Milestones only change the status line; state changes and failures
	// stay as lines above it.
	for _, want := range []string{
		"\r\x1b[K14:30:04  T-3  state awaiting_ack → running (executing)\n",
		"\r\x1b[KT-3 | running/executing | attempt 1/5 | 4s",
		"\r\x1b[KT-3 | running/executing | attempt 2/5 | Verification failed, debugging... | 21s",
		"\r\x1b[KT-3 | success | attempt 2/5 | Verification failed, debugging... | 1m05s\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q\n%q", want, out)
		}
	}
	if strings.Contains(out, "14:30:21  T-3  Verification failed, debugging...\n") {
		t.Error("a milestone was printed as a line on a terminal")
	}
	if !strings.HasSuffix(out, "\n") {
		t.Error("the status line was not ended")
	}
}

func TestWatchSettledTaskReplaysAndEnds(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	b.mux.Handle("GET /v1/tasks/T-3", respond(200, `{"id":"T-3","state":"stuck","attempt":4,"max_attempts":4,"created_at":"2026-01-26T14:30:00Z","finished_at":"2026-01-26T15:00:00Z"}`))
	b.mux.Handle("GET /v1/events", respond(200, `{"events":[`+cannedEvents[0]+`],"next":1}`))
	if code := b.run("watch", "T-3"); code != 0 {
		t.Fatalf("exit %d: %s", code, b.errb)
	}
	want := "14:30:00  T-3  queued: Fix the login timeout\nT-3 | stuck | attempt 4/4 | 30m00s\n"
	if got := b.out.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestWatchAllStartsFromNow checks that watch without an ID prints only
// the events after the last one stored: it takes that seq from /healthz
// without reading the log, or reads the log when /healthz fails.
func TestWatchAllStartsFromNow(t *testing.T) {
	t.Parallel()
	for _, healthy := range []bool{true, false} {
		t.Run(fmt.Sprintf("healthy=%v", healthy), func(t *testing.T) {
			t.Parallel()
			b := setupCLI(t)
			if healthy {
				b.mux.Handle("GET /healthz", respond(200, `{"status":"ok","seq":5}`))
			} else {
				b.mux.Handle("GET /healthz", respond(503, `{"status":"failed (see the server log)","seq":5}`))
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var mu sync.Mutex
			var pages, resumes []string
			b.mux.HandleFunc("GET /v1/events", func(w http.ResponseWriter, r *http.Request) {
				q := r.URL.Query()
				if q.Get("task") != "" {
					apiError(400, "invalid_argument", "task "+q.Get("task"))(w, r)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if q.Get("follow") == "false" {
					pages = append(pages, q.Get("after"))
					if q.Get("after") == "0" {
						respond(200, `{"events":[`+strings.Join(cannedEvents[:5], ",")+`],"next":5}`)(w, r)
					} else {
						respond(200, `{"events":[],"next":`+q.Get("after")+`}`)(w, r)
					}
					return
				}
				resumes = append(resumes, r.Header.Get("Last-Event-ID")+"/"+q.Get("after"))
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(200)
				if len(resumes) > 1 {
					cancel()
					return
				}
				for _, ev := range cannedEvents[5:7] {
					_, _ = fmt.Fprint(w, sse(ev))
				}
			})
			b.out.Reset()
			if code := b.c.main(ctx, []string{"watch"}); code != 0 {
				t.Fatalf("exit %d: %s", code, b.errb)
			}
			want := `14:30:20  T-3  attempt 1 failed: verification_failed: 2 tests failed (run R-1)
14:30:21  T-3  attempt 2 (retry) by claude
`
			if got := b.out.String(); got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
			mu.Lock()
			defer mu.Unlock()
			if got := strings.Join(resumes, " "); got != "5/5 7/7" {
				t.Errorf("stream connections (Last-Event-ID/after) %s, want 5/5 7/7", got)
			}
			wantPages := ""
			if !healthy {
				wantPages = "0"
			}
			if got := strings.Join(pages, " "); got != wantPages {
				t.Errorf("stored event pages read after %q, want %q", got, wantPages)
			}
		})
	}
}

func TestLogsFormatsRetryLog(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	page := `{"events":[
{"seq":1,"time":"2026-01-26T14:30:00Z","type":"delivery.sent","agent":"codex","data":{"id":"I-1","attempt":1,"kind":"first","message":{"type":"instruction"}}},
{"seq":2,"time":"2026-01-26T14:30:01Z","type":"agent.status","agent":"codex","data":{"from":"available","to":"busy"}},
{"seq":3,"time":"2026-01-26T14:30:05Z","type":"delivery.retried","agent":"codex","data":{"id":"I-1","attempt":2,"kind":"retry"}},
{"seq":4,"time":"2026-01-26T14:30:09Z","type":"delivery.failed","agent":"codex","data":{"id":"I-1","reason":"max retries reached","attempts":4}},
{"seq":5,"time":"2026-01-26T14:29:00Z","type":"task.queued","task_id":"03-01:task-3","data":{"task":{"id":"03-01:task-3"}}},
{"seq":6,"time":"2026-01-26T14:30:00Z","type":"task.attempt","task_id":"03-01:task-3","data":{"attempt":1,"kind":"first","agent":"claude"}},
{"seq":7,"time":"2026-01-26T14:31:00Z","type":"task.failure","task_id":"03-01:task-3","data":{"record":{"attempt":1,"failure_type":"verification_failed","run_id":"R-1","executor_output":{"error":"2 tests failed: null check, empty string"},"suggested_fix":"Add validation for null and empty"}}},
{"seq":8,"time":"2026-01-26T14:31:01Z","type":"task.attempt","task_id":"03-01:task-3","data":{"attempt":2,"kind":"retry","agent":"claude"}},
{"seq":9,"time":"2026-01-26T14:35:01Z","type":"task.escalated","task_id":"03-01:task-3","data":{"reason":"max_retries_exceeded","message":"3 attempts failed"}},
{"seq":10,"time":"2026-01-26T14:40:00Z","type":"task.response","task_id":"03-01:task-3","data":{"action":"skip"}},
{"seq":11,"time":"2026-01-26T14:40:00Z","type":"task.state","task_id":"03-01:task-3","data":{"from":"escalated","to":"skipped"}}
],"next":11}`
	b.mux.HandleFunc("GET /v1/events", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("after") != "0" {
			respond(200, `{"events":[],"next":11}`)(w, r)
			return
		}
		respond(200, page)(w, r)
	})
	if code := b.run("logs"); code != 0 {
		t.Fatalf("exit %d: %s", code, b.errb)
	}
	want := `[2026-01-26T14:30:00Z] [RETRY] [I-1] attempt=1 status=sent kind=first message=I-1 type=instruction agent=codex
[2026-01-26T14:30:05Z] [RETRY] [I-1] attempt=2 status=retried kind=retry message=I-1 agent=codex
[2026-01-26T14:30:09Z] [RETRY] [I-1] resolved status=failed message=I-1 attempts=4 reason="max retries reached"
[2026-01-26T14:31:00Z] [RETRY] [03-01:task-3] attempt=1 status=failed type=verification_failed
[2026-01-26T14:31:00Z] [RETRY] [03-01:task-3] error="2 tests failed: null check, empty string"
[2026-01-26T14:31:00Z] [RETRY] [03-01:task-3] suggested_fix="Add validation for null and empty"
[2026-01-26T14:31:01Z] [RETRY] [03-01:task-3] injecting_feedback attempt=2 kind=retry
[2026-01-26T14:35:01Z] [RETRY] [03-01:task-3] escalating reason="max_retries_exceeded"
[2026-01-26T14:40:00Z] [RETRY] [03-01:task-3] user_response="skip"
[2026-01-26T14:40:00Z] [RETRY] [03-01:task-3] resolved status=skipped
`
	if got := b.out.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if code := b.run("logs", "--json"); code != 0 {
		t.Fatal(code)
	}
	lines := strings.Split(strings.TrimSpace(b.out.String()), "\n")
	wantAttempt := `{"attempt":1,"duration_ms":60000,"error":"2 tests failed: null check, empty string","event":"attempt","failure_type":"verification_failed","run_id":"R-1","status":"failed","task_id":"03-01:task-3","timestamp":"2026-01-26T14:31:00Z"}`
	wantResolved := `{"event":"resolved","resolution":"skipped","task_id":"03-01:task-3","timestamp":"2026-01-26T14:40:00Z","total_duration_ms":660000}`
	if len(lines) != 8 || lines[3] != wantAttempt || lines[7] != wantResolved {
		t.Errorf("--json printed\n%s", b.out)
	}
}
