package ack_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"wilco/ack"
)

// The fuzzers take their seeds from the committed corpus under
// testdata/fuzz/<FuzzName>/: every example of the ACK and operation
// protocols, the lenient and broken forms the tests name (seedCorpus, in corpus_test.go), and the
// inputs that once broke a property. Run one with
//
//	go test -run='^$' -fuzz='^FuzzParse$' -fuzztime=30s ./ack
//
// (anchored: -fuzz=FuzzParse alone matches FuzzParseJSON too).

// otherIDs are ids an ACK for id must never be For.
func otherIDs(id string) []string {
	others := []string{id + "0", id + "-1", "x" + id, strings.ToLower(id), strings.ToUpper(id), "T-1", "GH-42"}
	if len(id) > 1 {
		others = append(others, id[:len(id)-1], id[1:])
	}
	return slices.DeleteFunc(others, func(o string) bool { return o == id })
}

// checkTaskID checks that a reply's id is a valid one and that For accepts it
// and nothing else.
func checkTaskID(t *testing.T, r ack.Reply) {
	t.Helper()
	if r.TaskID == "" {
		return
	}
	if err := ack.ValidateTaskID(r.TaskID); err != nil {
		t.Errorf("reply id %q is not a valid id: %v", r.TaskID, err)
	}
	if err := r.For(r.TaskID); err != nil {
		t.Errorf("For(its own id %q): %v", r.TaskID, err)
	}
	for _, other := range otherIDs(r.TaskID) {
		if err := r.For(other); err == nil {
			t.Errorf("a reply for %q is For(%q)", r.TaskID, other)
		}
	}
}

// normalAck is what a text ACK keeps of r: its ACK fields, flattened.
func normalAck(r ack.Reply) ack.Reply {
	n := ack.Reply{Kind: ack.KindAck, TaskID: r.TaskID, Status: r.Status}
	n.Understanding = strings.Join(strings.Fields(r.Understanding), " ")
	n.Note = strings.Join(strings.Fields(r.Note), " ")
	for _, q := range r.Questions {
		if q = strings.Join(strings.Fields(q), " "); q != "" {
			n.Questions = append(n.Questions, q)
		}
	}
	return n
}

// checkRoundTrips checks that r survives FormatAck/Parse (ACKs) and
// FormatJSON/ParseJSON (every kind but messages).
func checkRoundTrips(t *testing.T, r ack.Reply) {
	t.Helper()
	if r.Kind == ack.KindMessage {
		return
	}
	if r.Kind == ack.KindAck {
		text := ack.FormatAck(r)
		back, err := ack.Parse(text)
		if err != nil {
			t.Fatalf("Parse(FormatAck(%#v)) = %q: %v", r, text, err)
		}
		back.Text = ""
		if want := normalAck(r); !reflect.DeepEqual(back, want) {
			t.Errorf("Parse(%q) =\n%#v\nwant\n%#v", text, back, want)
		}
	}
	if !validUTF8(r) {
		return // JSON would replace the invalid bytes
	}
	data, err := ack.FormatJSON(r)
	if err != nil {
		t.Fatalf("FormatJSON(%#v): %v", r, err)
	}
	back, err := ack.ParseJSON("", data)
	if err != nil {
		t.Fatalf("ParseJSON(FormatJSON(%#v)) = %s: %v", r, data, err)
	}
	want := r
	want.Text, back.Text = "", ""
	if !reflect.DeepEqual(back, want) {
		t.Errorf("ParseJSON(%s) =\n%#v\nwant\n%#v", data, back, want)
	}
}

// validUTF8 reports whether every string of r is valid UTF-8.
func validUTF8(r ack.Reply) bool {
	strs := []string{r.TaskID, r.Understanding, r.Note, r.ErrorMessage, r.CheckpointStatus, r.Summary, r.Error, r.Reason}
	strs = append(strs, r.Questions...)
	strs = append(strs, r.EstimatedCheckpoints...)
	strs = append(strs, r.AlternativeAgents...)
	strs = append(strs, r.FilesModified...)
	if r.Verification != nil {
		strs = append(strs, r.Verification.Command, r.Verification.OutputSummary)
	}
	for _, s := range strs {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}

func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, text string) {
		r, err := ack.Parse(text)
		if r.Text != text {
			t.Fatalf("Text = %q, want the input", r.Text)
		}
		all, allErr := ack.ParseAll(text)
		if err != nil {
			var pe *ack.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T %v is not a *ParseError", err, err)
			}
			if r.Kind != ack.KindMessage {
				t.Fatalf("on error Kind = %q, want message", r.Kind)
			}
			if allErr == nil {
				t.Fatalf("Parse: %v, but ParseAll: no error", err)
			}
			return
		}
		if r.Kind == ack.KindMessage {
			if len(all) != 0 || allErr != nil {
				t.Fatalf("Parse: message, ParseAll: %d replies, %v", len(all), allErr)
			}
		} else if len(all) == 0 || !reflect.DeepEqual(all[0], r) {
			t.Fatalf("ParseAll[0] differs from Parse:\n%#v\n%#v", all, r)
		}
		checkTaskID(t, r)
		for _, a := range all {
			checkTaskID(t, a)
		}
		checkRoundTrips(t, r)

		// The text used as an id, and as the values of an ACK.
		if ack.ValidateTaskID(text) == nil {
			if p, err := ack.Parse(ack.Teach(text)); err != nil || p.Kind != ack.KindMessage {
				t.Fatalf("Parse(Teach(%q)) = %v, %v; want a message", text, p.Kind, err)
			}
			checkRoundTrips(t, ack.Reply{Kind: ack.KindAck, TaskID: text, Status: ack.Received})
		}
		values := ack.Reply{Kind: ack.KindAck, TaskID: "T-1", Status: ack.ClarificationNeeded,
			Understanding: text, Questions: []string{text, "q?"}, Note: text}
		checkRoundTrips(t, values)
	})
}

func FuzzParseJSON(f *testing.F) {
	f.Fuzz(func(t *testing.T, typ string, data []byte) {
		r, err := ack.ParseJSON(typ, data)
		if r.Text != string(data) {
			t.Fatalf("Text = %q, want the data", r.Text)
		}
		if err != nil {
			var pe *ack.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T %v is not a *ParseError", err, err)
			}
			return
		}
		switch r.Kind {
		case ack.KindAck:
			if !r.Status.Valid() {
				t.Fatalf("status %q", r.Status)
			}
		case ack.KindAckError:
			if !r.ErrorCode.Valid() || r.RetryAfter < 0 {
				t.Fatalf("error code %q, retry after %v", r.ErrorCode, r.RetryAfter)
			}
		case ack.KindComplete:
			if !r.Complete.Valid() && r.Complete != ack.CompleteClaimed {
				t.Fatalf("complete %q", r.Complete)
			}
		case ack.KindCheckpoint:
			if r.Checkpoint < 0 || r.NextCheckpoint < 0 {
				t.Fatalf("checkpoints %d, %d", r.Checkpoint, r.NextCheckpoint)
			}
		case ack.KindOperationReply:
			switch r.Answer {
			case ack.AnswerOK, ack.AnswerWait, ack.AnswerCancel, ack.AnswerInfo:
			default:
				t.Fatalf("answer %q", r.Answer)
			}
		default:
			t.Fatalf("kind %q", r.Kind)
		}
		if r.Kind != ack.KindOperationReply && r.Kind != ack.KindComplete && r.TaskID == "" {
			t.Fatal("a reply without task id was accepted")
		}
		checkTaskID(t, r)
		checkRoundTrips(t, r)
		// Parse finds the same object in prose.
		text := "Here you are:\n```json\n" + string(data) + "\n```\n"
		if p, err := ack.Parse(text); err == nil && p.Kind != ack.KindMessage && p.Kind != r.Kind {
			t.Fatalf("Parse(prose around it) = %q, ParseJSON = %q", p.Kind, r.Kind)
		}
	})
}

func FuzzParseOperationReply(f *testing.F) {
	f.Fuzz(func(t *testing.T, text string) {
		a := ack.ParseOperationReply(text)
		switch a {
		case ack.AnswerOK, ack.AnswerWait, ack.AnswerCancel, ack.AnswerInfo:
		default:
			t.Fatalf("answer %q", a)
		}
		if strings.Contains(strings.ToLower(text), `"type"`) {
			return // an embedded JSON acknowledgment decides; its keys are case-sensitive
		}
		ascii := true
		for i := 0; i < len(text); i++ {
			ascii = ascii && text[i] < utf8.RuneSelf
		}
		if ascii {
			if u := ack.ParseOperationReply(strings.ToUpper(text)); u != a {
				t.Errorf("case matters: %q → %q, upper → %q", text, a, u)
			}
		}
		if e := ack.ParseOperationReply("**" + text + "**"); e != a {
			t.Errorf("emphasis matters: %q → %q, emphasised → %q", text, a, e)
		}
		// One clause of plain words: negating it never leaves it ok.
		plain := !strings.Contains(" "+strings.ToLower(text)+" ", " but ")
		for i := 0; i < len(text) && plain; i++ {
			plain = text[i] == ' ' || 'a' <= text[i]|0x20 && text[i]|0x20 <= 'z'
		}
		if n := ack.ParseOperationReply("not " + text); plain && a == ack.AnswerOK && n == ack.AnswerOK {
			t.Errorf("%q → ok, and so does its negation", text)
		}
	})
}

func FuzzClassify(f *testing.F) {
	f.Fuzz(func(t *testing.T, message string) {
		c := ack.Classify(message)
		switch {
		case c.Type == ack.Delegation && len(c.Reasons) == 0,
			c.Type == ack.Conversation && len(c.Reasons) != 0,
			c.Type != ack.Delegation && c.Type != ack.Conversation:
			t.Fatalf("Classify = %+v", c)
		}
		seen := map[string]bool{}
		for _, r := range c.Reasons {
			if seen[r] {
				t.Fatalf("reason %q twice: %v", r, c.Reasons)
			}
			seen[r] = true
		}
		if c.TaskID != "" {
			if err := ack.ValidateTaskID(c.TaskID); err != nil {
				t.Fatalf("TaskID %q: %v", c.TaskID, err)
			}
		}
		// Whatever came before, the teaching block makes a delegation.
		if d := ack.Classify(message + "\n" + ack.Teach("T-1")); d.Type != ack.Delegation || d.TaskID == "" {
			t.Fatalf("Classify(message + Teach) = %+v", d)
		}
	})
}
