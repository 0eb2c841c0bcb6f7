package core

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unsafe"
)

// Deliveries are by far the most numerous entities (a million open ones
// must load in seconds), so their stored form is a compact binary encoding
// rather than JSON: it is about ten times quicker to decode and half the
// size. Every other entity is stored as JSON. DecodeEntity reads both.

// deliveryCodec is the first byte of a binary delivery record; JSON starts
// with '{'.
const deliveryCodec byte = 0x01

// EncodeEntity encodes an entity for the store.
func EncodeEntity(e Entity) ([]byte, error) {
	if e.encoded != nil {
		return e.encoded, nil
	}
	if d, ok := e.Value.(*Delivery); ok {
		return d.appendBinary(make([]byte, 0, 192)), nil
	}
	return json.Marshal(e.Value)
}

type enc struct{ b []byte }

func (e *enc) uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) int(v int)     { e.b = binary.AppendVarint(e.b, int64(v)) }
func (e *enc) str(s string)  { e.uint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *enc) strs(ss []string) {
	e.uint(uint64(len(ss)))
	for _, s := range ss {
		e.str(s)
	}
}
func (e *enc) time(t time.Time) {
	if t.IsZero() {
		e.b = binary.AppendVarint(e.b, 0)
		return
	}
	e.b = binary.AppendVarint(e.b, t.UnixNano())
}

// flags of the optional parts of a delivery.
const (
	hasMatcher = 1 << iota
	hasBrief
	hasReply
	hasWait
	isDryRun
	isResend
	isQueued
	isHolds
	hasEarlier // AgentReply.Earlier, written after everything else
)

func (d *Delivery) appendBinary(b []byte) []byte {
	e := enc{append(b, deliveryCodec)}
	var flags uint64
	if d.Matcher != nil {
		flags |= hasMatcher
	}
	if d.Brief != nil {
		flags |= hasBrief
	}
	if d.Reply != nil {
		flags |= hasReply
	}
	if d.Wait != nil {
		flags |= hasWait
	}
	if d.DryRun {
		flags |= isDryRun
	}
	if d.Resend {
		flags |= isResend
	}
	if d.Queued {
		flags |= isQueued
	}
	if d.Holds {
		flags |= isHolds
	}
	if d.Reply != nil && len(d.Reply.Earlier) > 0 {
		flags |= hasEarlier
	}
	e.uint(flags)
	for _, s := range []string{d.ID, d.From, d.To, string(d.Type), string(d.Policy), d.Subject, d.Body, d.TaskID, d.OperationID,
		string(d.State), d.Answer, d.Reason} {
		e.str(s)
	}
	e.uint(d.Version)
	for _, n := range []int{d.MaxRetries, d.TaskAttempt, d.Sends, d.Round, d.Corrections} {
		e.int(n)
	}
	for _, t := range []time.Time{d.TimerAt, d.CreatedAt, d.SentAt, d.LastSentAt, d.EndedAt} {
		e.time(t)
	}
	if d.Matcher != nil {
		e.str(d.Matcher.Contains)
		e.str(d.Matcher.Regex)
	}
	if d.Brief != nil {
		e.strs(d.Brief.Capabilities)
		e.strs(d.Brief.AcceptanceCriteria)
		e.str(d.Brief.Description)
		e.strs(d.Brief.Tried)
	}
	if d.Reply != nil {
		e.str(d.Reply.Understanding)
		e.strs(d.Reply.Questions)
	}
	if d.Wait != nil {
		e.time(d.Wait.Deadline)
		e.int(d.Wait.Reminded)
		if d.Wait.Extended {
			e.uint(1)
		} else {
			e.uint(0)
		}
	}
	if flags&hasEarlier != 0 {
		e.strs(d.Reply.Earlier)
	}
	return e.b
}

var errShort = errors.New("truncated")

type dec struct {
	b   []byte
	err error
	// common interns the strings most deliveries share (their sender, the
	// agent names, the types and states), so that a million of them do not
	// hold a million copies.
	common map[string]string
	// view makes strings that point into b instead of copies: for bytes
	// that are never changed or freed while the strings live (endedSet).
	view bool
}

func (d *dec) uint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) int() int {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return int(v)
}

func (d *dec) str() string {
	n := d.uint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)) {
		d.err = errShort
		return ""
	}
	var s string
	if d.view && n > 0 {
		s = unsafe.String(&d.b[0], int(n))
	} else {
		s = string(d.b[:n])
	}
	d.b = d.b[n:]
	return s
}

// shared is str for a value many deliveries share.
func (d *dec) shared() string {
	s := d.str()
	if d.view {
		return s
	}
	if c, ok := d.common[s]; ok {
		return c
	}
	if len(d.common) < 4096 {
		d.common[s] = s
	}
	return s
}

func (d *dec) strs() []string {
	n := d.uint()
	if d.err != nil || n == 0 {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.err = errShort
		return nil
	}
	out := make([]string, 0, n)
	for range n {
		out = append(out, d.str())
	}
	return out
}

func (d *dec) time() time.Time {
	v := d.int()
	if v == 0 {
		return time.Time{}
	}
	return time.Unix(0, int64(v)).UTC()
}

func decodeDelivery(b []byte, common map[string]string) (*Delivery, error) {
	x := &Delivery{}
	if err := decodeDeliveryFrom(dec{b: b[1:], common: common}, x); err != nil {
		return nil, err
	}
	return x, nil
}

// viewDelivery decodes b with strings that point into it: b must never
// change while the delivery lives.
func viewDelivery(b []byte) (*Delivery, error) {
	x := &Delivery{}
	if err := viewDeliveryInto(b, x); err != nil {
		return nil, err
	}
	return x, nil
}

// viewDeliveryInto is viewDelivery into x, which it overwrites whole.
func viewDeliveryInto(b []byte, x *Delivery) error {
	*x = Delivery{}
	return decodeDeliveryFrom(dec{b: b[1:], view: true}, x)
}

func decodeDeliveryFrom(r dec, x *Delivery) error {
	flags := r.uint()
	x.ID, x.From, x.To = r.str(), r.shared(), r.shared()
	x.Type, x.Policy = MessageType(r.shared()), Policy(r.shared())
	x.Subject, x.Body, x.TaskID, x.OperationID = r.str(), r.str(), r.str(), r.str()
	x.State, x.Answer, x.Reason = DeliveryState(r.shared()), r.shared(), r.shared()
	x.Version = r.uint()
	x.MaxRetries, x.TaskAttempt, x.Sends, x.Round, x.Corrections = r.int(), r.int(), r.int(), r.int(), r.int()
	x.TimerAt, x.CreatedAt, x.SentAt, x.LastSentAt, x.EndedAt = r.time(), r.time(), r.time(), r.time(), r.time()
	x.DryRun, x.Resend, x.Queued, x.Holds = flags&isDryRun != 0, flags&isResend != 0, flags&isQueued != 0, flags&isHolds != 0
	if flags&hasMatcher != 0 {
		x.Matcher = &Matcher{Contains: r.str(), Regex: r.str()}
	}
	if flags&hasBrief != 0 {
		x.Brief = &Brief{Capabilities: r.strs(), AcceptanceCriteria: r.strs(), Description: r.str(), Tried: r.strs()}
	}
	if flags&hasReply != 0 {
		x.Reply = &AgentReply{Understanding: r.str(), Questions: r.strs()}
	}
	if flags&hasWait != 0 {
		x.Wait = &OperationWait{Deadline: r.time(), Reminded: r.int(), Extended: r.uint() == 1}
	}
	if flags&hasEarlier != 0 {
		earlier := r.strs()
		if x.Reply != nil {
			x.Reply.Earlier = earlier
		}
	}
	if r.err != nil {
		return fmt.Errorf("core: decode delivery: %w", r.err)
	}
	if len(r.b) != 0 {
		return fmt.Errorf("core: decode delivery: %d bytes too many", len(r.b))
	}
	return nil
}
