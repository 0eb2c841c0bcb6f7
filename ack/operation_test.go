package ack_test

import (
	"testing"

	"wilco/ack"
)

func TestOperationReplyIsLenientOnForm(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]ack.OperationAnswer{
		"ok":                        ack.AnswerOK,
		"Ok.":                       ack.AnswerOK,
		"OK!":                       ack.AnswerOK,
		"okay":                      ack.AnswerOK,
		"**ok**":                    ack.AnswerOK,
		"`ok`":                      ack.AnswerOK,
		"  ok \n":                   ack.AnswerOK,
		"ok, ready to go!":          ack.AnswerOK,
		"Ready.":                    ack.AnswerOK,
		"I'm ready when you are":    ack.AnswerOK,
		"Sure — ok":                 ack.AnswerOK,
		"No problem, ok":            ack.AnswerOK,
		"Not done yet, but ready":   ack.AnswerOK,
		"WAIT":                      ack.AnswerWait,
		"wait, please":              ack.AnswerWait,
		"Please wait 30s":           ack.AnswerWait,
		"Not Ready":                 ack.AnswerWait,
		"not quite ready":           ack.AnswerWait,
		"not yet":                   ack.AnswerWait,
		"almost ready":              ack.AnswerWait,
		"I'll be ready soon":        ack.AnswerWait,
		"ready in 5 minutes":        ack.AnswerWait,
		"hold on":                   ack.AnswerWait,
		"give me a minute":          ack.AnswerWait,
		"one moment":                ack.AnswerWait,
		"I need more time":          ack.AnswerWait,
		"can you wait?":             ack.AnswerWait,
		"Cancel":                    ack.AnswerCancel,
		"ABORT!":                    ack.AnswerCancel,
		"please cancel the restart": ack.AnswerCancel,
		"I request cancellation":    ack.AnswerCancel,
		"Aborted.":                  ack.AnswerCancel,
	} {
		if got := ack.ParseOperationReply(text); got != want {
			t.Errorf("ParseOperationReply(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestOperationReplyIsCarefulAboutMeaning(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]ack.OperationAnswer{
		// Whole words only.
		"token":          ack.AnswerInfo,
		"look":           ack.AnswerInfo,
		"broken":         ack.AnswerInfo,
		"already done":   ack.AnswerInfo,
		"waiting on CI":  ack.AnswerInfo,
		"cancellable":    ack.AnswerInfo,
		"k":              ack.AnswerInfo,
		"yes":            ack.AnswerInfo,
		"":               ack.AnswerInfo,
		"...":            ack.AnswerInfo,
		"What operation": ack.AnswerInfo,
		// Explicit negatives.
		"not ok":              ack.AnswerInfo,
		"It's NOT ok":         ack.AnswerInfo,
		"that is not okay":    ack.AnswerInfo,
		"don't cancel":        ack.AnswerInfo,
		"do not abort":        ack.AnswerInfo,
		"no need to wait":     ack.AnswerInfo,
		"I cannot wait":       ack.AnswerInfo, // decided: neither a yes nor a request for time
		"I can't wait":        ack.AnswerInfo,
		"I can’t wait":        ack.AnswerInfo,
		"never ready":         ack.AnswerWait, // a negated ready is "not ready"
		"I'm not sure I'm ok": ack.AnswerInfo,
		// Questions say neither ok nor cancel.
		"ok?":                         ack.AnswerInfo,
		"Is it ok if I finish first?": ack.AnswerInfo,
		"ready?":                      ack.AnswerInfo,
		"Should I cancel?":            ack.AnswerInfo,
		// The most cautious answer wins.
		"ok, but wait 30s":               ack.AnswerWait,
		"ok — not ready yet":             ack.AnswerWait,
		"wait... ok, ready now":          ack.AnswerWait,
		"Not ready. Cancel the restart.": ack.AnswerCancel,
		"ok. Actually, abort.":           ack.AnswerCancel,
	} {
		if got := ack.ParseOperationReply(text); got != want {
			t.Errorf("ParseOperationReply(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestOperationReplyReadsEmbeddedJSON(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]ack.OperationAnswer{
		// Words of the JSON would mislead: "not ready", "ready".
		`{"type": "acknowledgment", "message": "not ready", "ready": false}`:          ack.AnswerWait,
		`{"type": "acknowledgment", "message": "cancel", "notes": "ok with me"}`:      ack.AnswerCancel,
		`{"type": "acknowledgment", "message": "ok", "ready": true}`:                  ack.AnswerOK,
		"```json\n{\"type\": \"acknowledgment\", \"message\": \"wait\"}\n```":         ack.AnswerWait,
		`{"type": "acknowledgment", "message": "ok", "ready": false}`:                 ack.AnswerInfo, // contradictory
		`{"type": "acknowledgment", "message": "ok"`:                                  ack.AnswerInfo, // broken
		`{"type": "task-complete", "task_id": "T-1", "status": "success"} ok, ready!`: ack.AnswerOK,
	} {
		if got := ack.ParseOperationReply(text); got != want {
			t.Errorf("ParseOperationReply(%s) = %q, want %q", text, got, want)
		}
	}
}
