package core

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

func randomDelivery(r *rand.Rand) *Delivery {
	str := func() string {
		if r.IntN(3) == 0 {
			return ""
		}
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return string(b)
	}
	strs := func() []string {
		var out []string
		for range r.IntN(4) {
			out = append(out, str())
		}
		return out
	}
	tm := func() time.Time {
		if r.IntN(3) == 0 {
			return time.Time{}
		}
		return time.Unix(0, r.Int64N(1<<62)).UTC()
	}
	d := &Delivery{
		Message: Message{ID: str(), From: str(), To: str(), Type: MessageType(str()), Policy: Policy(str()), Subject: str(), Body: str(),
			TaskID: str(), OperationID: str(), MaxRetries: r.IntN(9), TaskAttempt: r.IntN(13), DryRun: r.IntN(2) == 0},
		Version: r.Uint64(), State: DeliveryState(str()), Sends: r.IntN(5), Round: r.IntN(4), Corrections: r.IntN(3),
		Resend: r.IntN(2) == 0, Queued: r.IntN(2) == 0, Holds: r.IntN(2) == 0, TimerAt: tm(), Answer: str(), Reason: str(),
		CreatedAt: tm(), SentAt: tm(), LastSentAt: tm(), EndedAt: tm(),
	}
	if r.IntN(2) == 0 {
		d.Matcher = &Matcher{Contains: str(), Regex: str()}
	}
	if r.IntN(2) == 0 {
		d.Brief = &Brief{Capabilities: strs(), AcceptanceCriteria: strs(), Description: str(), Tried: strs()}
	}
	if r.IntN(2) == 0 {
		d.Reply = &AgentReply{Understanding: str(), Questions: strs(), Earlier: strs()}
	}
	if r.IntN(2) == 0 {
		d.Wait = &OperationWait{Deadline: tm(), Reminded: r.IntN(4), Extended: r.IntN(2) == 0}
	}
	return d
}

func TestDeliveryBinaryCodecRoundTrips(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		d := randomDelivery(r)
		b, err := EncodeEntity(Entity{Kind: KindDelivery, Value: d})
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeEntity(KindDelivery, b)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		want, _ := json.Marshal(d)
		have, _ := json.Marshal(got.value)
		if string(want) != string(have) || !reflect.DeepEqual(normalised(d), normalised(got.value.(*Delivery))) {
			t.Fatalf("case %d:\nwant %s\nhave %s", i, want, have)
		}
	}
}

// normalised treats nil and empty lists alike, as the store does.
func normalised(d *Delivery) *Delivery {
	c := d.copy()
	if c.Brief != nil {
		for _, p := range []*[]string{&c.Brief.Capabilities, &c.Brief.AcceptanceCriteria, &c.Brief.Tried} {
			if len(*p) == 0 {
				*p = nil
			}
		}
	}
	if c.Reply != nil && len(c.Reply.Questions) == 0 {
		c.Reply.Questions = nil
	}
	if c.Reply != nil && len(c.Reply.Earlier) == 0 {
		c.Reply.Earlier = nil
	}
	return &c
}

func TestDeliveryJSONRecordsStillLoad(t *testing.T) {
	t.Parallel()
	d := randomDelivery(rand.New(rand.NewPCG(3, 4)))
	d.ID = "M-1"
	b, _ := json.Marshal(d)
	got, err := DecodeEntity(KindDelivery, b)
	if err != nil || got.value.(*Delivery).ID != "M-1" {
		t.Fatalf("%v %+v", err, got)
	}
}

func FuzzDecodeDelivery(f *testing.F) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 8 {
		b, _ := EncodeEntity(Entity{Kind: KindDelivery, Value: randomDelivery(r)})
		f.Add(b)
	}
	f.Add([]byte{deliveryCodec})
	f.Add([]byte{deliveryCodec, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 || b[0] != deliveryCodec {
			return
		}
		d, err := decodeDelivery(b, map[string]string{})
		if err != nil {
			return
		}
		again, err := decodeDelivery(d.appendBinary(nil), map[string]string{})
		if err != nil {
			t.Fatalf("a decoded delivery does not decode again: %v", err)
		}
		x, _ := json.Marshal(d)
		y, _ := json.Marshal(again)
		if string(x) != string(y) {
			t.Fatalf("not stable:\n%s\n%s", x, y)
		}
	})
}
