package ack_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"wilco/ack"
)

// FuzzCompletion checks the plain-text completion reports: what is read is
// well formed, a report is never for another task than the one it names,
// wilco's own retry context is never read as one, and FormatComplete's
// forms read back. text is any text; id a candidate task id.
//
//	go test -run='^$' -fuzz='^FuzzCompletion$' -fuzztime=30s ./ack
func FuzzCompletion(f *testing.F) {
	f.Fuzz(func(t *testing.T, text, id string) {
		all, _ := ack.ParseAll(text)
		for _, r := range all {
			if r.Kind != ack.KindComplete {
				continue
			}
			if !r.Complete.Valid() && r.Complete != ack.CompleteClaimed {
				t.Fatalf("status %q", r.Complete)
			}
			checkTaskID(t, r)
			for _, v := range []string{r.Reason, r.Summary, r.Error} {
				if v != strings.TrimSpace(v) {
					t.Fatalf("value %q is not trimmed", v)
				}
			}
		}

		// Echoed inside wilco's retry context, nothing is a report.
		if !strings.Contains(text, "retry_context") {
			wrapped := "<retry_context attempt=\"2\" max_attempts=\"12\">\n" + text + "\n</retry_context>\n"
			w, _ := ack.ParseAll(wrapped)
			for _, r := range w {
				if r.Kind == ack.KindComplete {
					t.Fatalf("%q: a report inside the retry context: %+v", wrapped, r)
				}
			}
		}

		if ack.ValidateTaskID(id) != nil {
			return
		}
		// A report that names id is for id, and for no other task.
		reports := []string{
			"[COMPLETE] " + id,
			"[BLOCKED] " + id + " - the key expired",
			"Task ID: " + id + "\nStatus: blocked\nReason: the key expired",
			"task_id: " + id + "\n\nStatus: complete",
			"[ACK] " + id + " - RECEIVED\nUnderstanding: x\n\nStatus: complete",
		}
		if strings.ContainsAny(id, "0123456789-.:_") {
			reports = append(reports, "TASK COMPLETE: "+id, "**Task:** `"+id+"`\nStatus: done")
		}
		for _, report := range reports {
			var got *ack.Reply
			rs, err := ack.ParseAll(report)
			for i := range rs {
				if rs[i].Kind == ack.KindComplete {
					got = &rs[i]
				}
			}
			if err != nil || got == nil {
				t.Fatalf("%q: no report (%v)", report, err)
			}
			if got.TaskID != id {
				t.Fatalf("%q: report for %q, want %q", report, got.TaskID, id)
			}
			checkTaskID(t, *got)
		}

		// FormatComplete's forms read back, values made of plain words.
		value := plainWords(text)
		for _, st := range []ack.CompleteStatus{ack.CompleteSuccess, ack.CompleteFailure, ack.CompleteBlocked, ack.CompleteImpossible} {
			r := ack.Reply{Kind: ack.KindComplete, TaskID: id, Complete: st, Reason: value, Summary: value, Error: value}
			back, err := ack.Parse(ack.FormatComplete(r))
			if err != nil || back.Kind != ack.KindComplete || back.TaskID != id || back.Complete != st ||
				back.Reason != value || back.Summary != value || back.Error != value {
				t.Fatalf("Parse(FormatComplete(%+v)) =\n%+v, %v", r, back, err)
			}
		}
	})
}

// plainWords keeps the letters, digits and blanks of s, as one line of
// words: a value that survives any reading.
func plainWords(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == utf8.RuneError:
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		default:
			b.WriteByte(' ')
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}
