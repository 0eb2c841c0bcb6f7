package core

import (
	"fmt"
	"strconv"
	"strings"
)

// Ended deliveries are most of the deliveries a long-lived wilco holds,
// and nearly none of them changes again. Kept as structs, each is a dozen
// pointers the garbage collector follows on every cycle: with a few hundred
// thousand of them, marking takes longer than a hundred commits and every
// acknowledgment that arrives meanwhile waits. endedSet keeps them instead
// in their stored binary form, packed into large byte chunks and indexed
// by a map without pointers, which the collector does not look into at
// all. apply moves a delivery there once it ended and has no timer; it is
// decoded when it is read, and brought back into the live map when an
// event changes it again.
type endedSet struct {
	// byNum indexes the ids wilco makes ("M-<n>"); byID any other.
	byNum map[uint64]span
	byID  map[string]span
	// chunks hold the encodings. Bytes are appended, never overwritten, so
	// a slice handed out stays valid; replaced encodings become garbage,
	// reclaimed by repack.
	chunks  [][]byte
	used    int // bytes of live encodings
	garbage int // bytes of replaced or removed encodings
	scratch []byte
}

// span locates one encoding. rowed is the delivery's rowed (see Copies).
type span struct {
	chunk, off, n uint32
	rowed         bool
}

const endedChunk = 1 << 20

func newEndedSet() endedSet {
	return endedSet{byNum: map[uint64]span{}, byID: map[string]span{}}
}

// endedNum is the number of an id of the form "M-<n>" as nextID makes
// it (no sign, no leading zero), so that the id can be rebuilt from it.
func endedNum(id string) (uint64, bool) {
	num, ok := strings.CutPrefix(id, "M-")
	if !ok || num == "" || num[0] == '0' || len(num) > 19 {
		return 0, false
	}
	n, err := strconv.ParseUint(num, 10, 64)
	return n, err == nil
}

func (z *endedSet) len() int { return len(z.byNum) + len(z.byID) }

func (z *endedSet) lookup(id string) (span, bool) {
	if n, ok := endedNum(id); ok {
		sp, ok := z.byNum[n]
		return sp, ok
	}
	sp, ok := z.byID[id]
	return sp, ok
}

// get returns the encoding of an ended delivery. The bytes must not be
// changed.
func (z *endedSet) get(id string) ([]byte, bool) {
	sp, ok := z.lookup(id)
	if !ok {
		return nil, false
	}
	return z.bytes(sp), true
}

func (z *endedSet) bytes(sp span) []byte {
	c := z.chunks[sp.chunk]
	return c[sp.off : sp.off+sp.n : sp.off+sp.n]
}

// put stores d's encoding, replacing any earlier one.
func (z *endedSet) put(d *Delivery) {
	z.remove(d.ID)
	z.scratch = d.appendBinary(z.scratch[:0])
	sp := z.store(z.scratch)
	sp.rowed = d.rowed
	z.set(d.ID, sp)
	if z.garbage > 8<<20 && z.garbage > z.used {
		z.repack()
	}
}

// store copies b to the end of the last chunk, or of a new one when it
// does not fit (the rest of the old one stays unused).
func (z *endedSet) store(b []byte) span {
	k := len(z.chunks) - 1
	if k < 0 || cap(z.chunks[k])-len(z.chunks[k]) < len(b) {
		z.chunks = append(z.chunks, make([]byte, 0, max(endedChunk, len(b))))
		k++
	}
	off := len(z.chunks[k])
	z.chunks[k] = append(z.chunks[k], b...)
	z.used += len(b)
	return span{chunk: uint32(k), off: uint32(off), n: uint32(len(b))}
}

// remove forgets an ended delivery.
func (z *endedSet) remove(id string) {
	if n, ok := endedNum(id); ok {
		if sp, ok := z.byNum[n]; ok {
			delete(z.byNum, n)
			z.used -= int(sp.n)
			z.garbage += int(sp.n)
		}
		return
	}
	if sp, ok := z.byID[id]; ok {
		delete(z.byID, id)
		z.used -= int(sp.n)
		z.garbage += int(sp.n)
	}
}

// setRowed sets an ended delivery's rowed, returning what it was.
func (z *endedSet) setRowed(id string, rowed bool) (was bool) {
	sp, ok := z.lookup(id)
	if !ok {
		return false
	}
	was, sp.rowed = sp.rowed, rowed
	z.set(id, sp)
	return was
}

// set indexes the span of id's encoding.
func (z *endedSet) set(id string, sp span) {
	if n, ok := endedNum(id); ok {
		z.byNum[n] = sp
	} else {
		z.byID[id] = sp
	}
}

// each calls fn with every ended delivery's id and encoding, in no order.
func (z *endedSet) each(fn func(id string, b []byte)) {
	for n, sp := range z.byNum {
		fn("M-"+strconv.FormatUint(n, 10), z.bytes(sp))
	}
	for id, sp := range z.byID {
		fn(id, z.bytes(sp))
	}
}

// repack copies the live encodings into new chunks and lets the old ones
// go. Slices handed out before stay valid: they keep their old chunk.
func (z *endedSet) repack() {
	old := z.chunks
	z.chunks, z.used, z.garbage = nil, 0, 0
	move := func(sp span) span {
		moved := z.store(old[sp.chunk][sp.off : sp.off+sp.n])
		moved.rowed = sp.rowed
		return moved
	}
	for n, sp := range z.byNum {
		z.byNum[n] = move(sp)
	}
	for id, sp := range z.byID {
		z.byID[id] = move(sp)
	}
}

// find returns the delivery with the id, or nil. An ended one is a decoded
// copy: read it, never change it (apply changes deliveries, through
// revive).
func (s *State) find(id string) *Delivery {
	if d, ok := s.deliveries[id]; ok {
		return d
	}
	if b, ok := s.ended.get(id); ok {
		return s.decodeEnded(b)
	}
	return nil
}

// findOK is find with a found flag.
func (s *State) findOK(id string) (*Delivery, bool) {
	d := s.find(id)
	return d, d != nil
}

// exists reports whether the delivery exists, live or ended.
func (s *State) exists(id string) bool {
	if _, ok := s.deliveries[id]; ok {
		return true
	}
	_, ok := s.ended.lookup(id)
	return ok
}

// revive returns the live delivery with the id for apply to change,
// bringing an ended one back into the live map when the event at seq is
// newer than it. nil when there is none, or nothing to change.
func (s *State) revive(id string, seq uint64) *Delivery {
	if d, ok := s.deliveries[id]; ok {
		return d
	}
	sp, ok := s.ended.lookup(id)
	if !ok {
		return nil
	}
	d := s.decodeEnded(s.ended.bytes(sp))
	if d.Version >= seq {
		return nil
	}
	d.rowed = sp.rowed
	s.ended.remove(id)
	s.deliveries[id] = d
	return d
}

func (s *State) decodeEnded(b []byte) *Delivery {
	// The chunks are never written over: the strings may point into them.
	d, err := viewDelivery(b)
	if err != nil {
		// The bytes are the core's own encoding, in memory.
		panic(fmt.Sprintf("core: an ended delivery does not decode: %v", err))
	}
	return d
}

// settle moves d into the ended set when it ended and has no timer left.
func (s *State) settle(d *Delivery) {
	if !d.State.Terminal() || !d.TimerAt.IsZero() || s.deliveries[d.ID] != d {
		return
	}
	s.ended.put(d)
	delete(s.deliveries, d.ID)
}

// eachDelivery calls fn with every delivery, live and ended, in no order.
// An ended one is decoded into a struct fn gets again for the next one:
// fn must not keep d (d.copy() may be kept).
func (s *State) eachDelivery(fn func(d *Delivery)) {
	for _, d := range s.deliveries {
		fn(d)
	}
	var scratch Delivery
	s.ended.each(func(_ string, b []byte) {
		if err := viewDeliveryInto(b, &scratch); err != nil {
			panic(fmt.Sprintf("core: an ended delivery does not decode: %v", err))
		}
		fn(&scratch)
	})
}
