package core

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// KindDeliveryPack is a record that holds the stored forms of many ended
// deliveries, one after the other, instead of a record each.
//
// Nearly every delivery ends within seconds and never changes again, so a
// checkpoint writes mostly ended deliveries. Written as a record each, they
// were the largest part of what the store writes: an upsert into a table
// and its key index per delivery, most of the write-ahead log's pages, and
// the most time the committer spent outside the turns' own events. Packed,
// they are a few large rows written in sequence.
//
// A delivery may be found in several places of the store: its own record
// (written while it was live) and one or more packs (each time it ended).
// Every copy carries the delivery's version, the seq of the last event that
// changed it, and Insert keeps the newest. A delivery's own record is
// deleted when it is packed; packs are never rewritten: the copy a revived
// delivery leaves in an older pack is older than any copy after it.
const KindDeliveryPack EntityKind = "delivery-pack"

// Copies is what a checkpoint writes for a set of entities (see
// State.Copies).
type Copies struct {
	// Entities each get a record of their own.
	Entities []Entity
	// Packed are the stored forms of ended deliveries, to be written
	// together in packs (EncodePack). The bytes must not be changed.
	Packed [][]byte
	// Gone are records to delete: of entities that no longer exist, and
	// the own records of deliveries now packed.
	Gone []EntityRef
}

// Copies copies the current state of the entities refs names, for a
// checkpoint, safe to encode on another goroutine. An ended delivery goes
// into Packed, and its own record, if the store holds one, into Gone. The
// core remembers which deliveries it handed out as records of their own:
// the caller must write what Copies returns, in order, after the events
// it reflects.
func (s *State) Copies(refs []EntityRef) Copies {
	var c Copies
	for _, ref := range refs {
		if ref.Kind == KindDelivery {
			if d, ok := s.deliveries[ref.ID]; ok {
				d.rowed = true
			} else if sp, ok := s.ended.lookup(ref.ID); ok {
				c.Packed = append(c.Packed, s.ended.bytes(sp))
				if sp.rowed {
					s.ended.setRowed(ref.ID, false)
					c.Gone = append(c.Gone, ref)
				}
				continue
			}
		}
		if ent, ok := s.Entity(ref); ok {
			c.Entities = append(c.Entities, ent)
		} else {
			c.Gone = append(c.Gone, ref)
		}
	}
	return c
}

// EncodePack encodes the stored forms of deliveries (from Copies.Packed)
// as one pack: each is preceded by its length.
func EncodePack(parts [][]byte) []byte {
	n := 0
	for _, p := range parts {
		n += binary.MaxVarintLen32 + len(p)
	}
	b := make([]byte, 0, n)
	for _, p := range parts {
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
	}
	return b
}

// decodePack decodes the deliveries of a pack, appending them to out.
func (dc *Decoder) decodePack(data []byte, out []Decoded) ([]Decoded, error) {
	for len(data) > 0 {
		n, k := binary.Uvarint(data)
		if k <= 0 || n > uint64(len(data)-k) {
			return out, fmt.Errorf("core: restore %s: %w", KindDeliveryPack, errShort)
		}
		part := data[k : k+int(n)]
		data = data[k+int(n):]
		if len(part) == 0 || part[0] != deliveryCodec {
			return out, fmt.Errorf("core: restore %s: %w", KindDeliveryPack, errNotDelivery)
		}
		d, err := decodeDelivery(part, dc.common)
		if err != nil {
			return out, fmt.Errorf("core: restore %s: %w", KindDeliveryPack, err)
		}
		out = append(out, Decoded{kind: KindDelivery, value: d})
	}
	return out, nil
}

var errNotDelivery = errors.New("an entry is not a stored delivery")
