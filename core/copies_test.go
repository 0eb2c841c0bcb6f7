package core

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// stored is what Copies gave for one delivery, as the store would keep it.
type stored struct {
	kind EntityKind
	data []byte
}

func copyOf(t *testing.T, c *State, id string) (stored, Copies) {
	t.Helper()
	cp := c.Copies([]EntityRef{{KindDelivery, id}})
	switch {
	case len(cp.Entities) == 1 && len(cp.Packed) == 0:
		data, err := EncodeEntity(cp.Entities[0])
		if err != nil {
			t.Fatal(err)
		}
		return stored{KindDelivery, data}, cp
	case len(cp.Packed) == 1 && len(cp.Entities) == 0:
		return stored{KindDeliveryPack, EncodePack(cp.Packed)}, cp
	}
	t.Fatalf("copies of %s: %+v", id, cp)
	return stored{}, cp
}

func TestCheckpointPacksEndedDeliveriesAndDeletesTheirOwnRecords(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("claude", "exec", "go")
	d := delegate(b, "claude", "GH-7")
	// Open: a record of its own.
	if s, cp := copyOf(t, b.c, d.ID); s.kind != KindDelivery || len(cp.Gone) != 0 {
		t.Fatalf("an open delivery is copied as %s, deleting %v", s.kind, cp.Gone)
	}
	// Ended: packed, and the record it had is deleted, once.
	reply(b, "claude", d.ID, "[ACK] GH-7 - RECEIVED\nUnderstanding: implement user authentication")
	s, cp := copyOf(t, b.c, d.ID)
	if s.kind != KindDeliveryPack || !slices.Equal(cp.Gone, []EntityRef{{KindDelivery, d.ID}}) {
		t.Fatalf("an ended delivery with a record of its own is copied as %s, deleting %v", s.kind, cp.Gone)
	}
	if _, cp := copyOf(t, b.c, d.ID); len(cp.Gone) != 0 {
		t.Fatalf("its record is deleted twice: %v", cp.Gone)
	}
	// One that ended before any checkpoint has no record to delete.
	d2 := delegate(b, "claude", "GH-8")
	_, err := b.c.Acknowledge(b.now, d2.ID)
	b.ok(err)
	if s, cp := copyOf(t, b.c, d2.ID); s.kind != KindDeliveryPack || len(cp.Gone) != 0 {
		t.Fatalf("copied as %s, deleting %v", s.kind, cp.Gone)
	}
	// Other entities, and ones that are gone, are as before.
	cp = b.c.Copies([]EntityRef{{KindAgent, "claude"}, {KindTask, "nope"}})
	if len(cp.Entities) != 1 || cp.Entities[0].ID != "claude" || !slices.Equal(cp.Gone, []EntityRef{{KindTask, "nope"}}) {
		t.Fatalf("copies %+v", cp)
	}
}

// TestRestoreKeepsTheNewestCopyOfADelivery: a delivery's own record and the
// packs it was written to each hold a version of it; whatever order the
// store lists them in, the restored core has the newest, with the task
// holds that version says, and remembers that a record of its own remains.
func TestRestoreKeepsTheNewestCopyOfADelivery(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("claude", "exec", "go")
	d := delegate(b, "claude", "GH-7")
	open, _ := copyOf(t, b.c, d.ID)
	reply(b, "claude", d.ID, "[ACK] GH-7 - RECEIVED\nUnderstanding: implement user authentication")
	held, _ := copyOf(t, b.c, d.ID)
	reply(b, "claude", d.ID, `{"type":"task-complete","task_id":"GH-7","status":"success"}`)
	done, _ := copyOf(t, b.c, d.ID)

	restoreInEveryOrder(t, b.c, []stored{open, held, done}, func(t *testing.T, c *State) {
		if _, cp := copyOf(t, c, d.ID); !slices.Equal(cp.Gone, []EntityRef{{KindDelivery, d.ID}}) {
			t.Fatalf("the delivery's own record is forgotten: deletes %v", cp.Gone)
		}
	})
}

// restoreInEveryOrder restores, into a new core, the entities of live
// other than deliveries followed by copies in each of their orders, and
// checks that the restored core equals live; then check, when not nil.
func restoreInEveryOrder(t *testing.T, live *State, copies []stored, check func(*testing.T, *State)) {
	t.Helper()
	var rest []stored
	for _, ref := range live.Entities() {
		if ref.Kind == KindDelivery {
			continue
		}
		e, _ := live.Entity(ref)
		data, err := EncodeEntity(e)
		if err != nil {
			t.Fatal(err)
		}
		rest = append(rest, stored{ref.Kind, data})
	}
	// Every order of the copies, by index: [0 1 2], [0 2 1], …
	var orders func(order, left []int)
	orders = func(order, left []int) {
		if len(left) == 0 {
			records := slices.Clone(rest)
			for _, i := range order {
				records = append(records, copies[i])
			}
			restoreIn(t, fmt.Sprint(order), live, records, check)
			return
		}
		for k, i := range left {
			orders(append(slices.Clone(order), i), append(slices.Clone(left[:k]), left[k+1:]...))
		}
	}
	var all []int
	for i := range copies {
		all = append(all, i)
	}
	orders(nil, all)
}

// restoreIn restores records, in order, into a new core and compares it
// with live, in a subtest of that name.
func restoreIn(t *testing.T, name string, live *State, records []stored, check func(*testing.T, *State)) {
	t.Run(name, func(t *testing.T) {
		c := New()
		dc := NewDecoder()
		for _, s := range records {
			ds, err := dc.DecodeRecord(s.kind, s.data, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range ds {
				c.Insert(x)
			}
		}
		c.Restored(live.Seq())
		if diff := StateDiff(live, c); diff != "" {
			t.Fatal(diff)
		}
		if check != nil {
			check(t, c)
		}
	})
}

func TestAPackOfDeliveriesDecodesToEachOfThem(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	var parts [][]byte
	var want []*Delivery
	for range 50 {
		d := randomDelivery(r)
		parts = append(parts, d.appendBinary(nil))
		want = append(want, d)
	}
	ds, err := NewDecoder().DecodeRecord(KindDeliveryPack, EncodePack(parts), nil)
	if err != nil || len(ds) != len(want) {
		t.Fatalf("%d decoded, %v", len(ds), err)
	}
	for i, x := range ds {
		got := x.value.(*Delivery)
		if !bytes.Equal(got.appendBinary(nil), parts[i]) {
			t.Fatalf("delivery %d decodes as %+v, want %+v", i, got, want[i])
		}
	}
	// An empty pack holds nothing; a cut or foreign one is an error.
	if ds, err := NewDecoder().DecodeRecord(KindDeliveryPack, nil, nil); err != nil || len(ds) != 0 {
		t.Fatalf("empty pack: %d, %v", len(ds), err)
	}
	whole := EncodePack(parts)
	for _, bad := range [][]byte{whole[:len(whole)-1], {0x05, 1, 2}, EncodePack([][]byte{[]byte(`{"id":"M-1"}`)}), {0xff}} {
		if _, err := NewDecoder().DecodeRecord(KindDeliveryPack, bad, nil); err == nil {
			t.Fatalf("% x decoded without an error", bad[:min(len(bad), 8)])
		}
	}
}

// FuzzDecodePack: whatever a pack holds, decoding it returns deliveries or
// an error, never a panic, and what decodes encodes back the same.
func FuzzDecodePack(f *testing.F) {
	r := rand.New(rand.NewPCG(3, 4))
	f.Add(EncodePack([][]byte{randomDelivery(r).appendBinary(nil), randomDelivery(r).appendBinary(nil)}))
	f.Add([]byte{})
	f.Add([]byte{0x01, 0x01})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, data []byte) {
		ds, err := NewDecoder().DecodeRecord(KindDeliveryPack, data, nil)
		if err != nil {
			return
		}
		var parts [][]byte
		for _, x := range ds {
			parts = append(parts, x.value.(*Delivery).appendBinary(nil))
		}
		again, err := NewDecoder().DecodeRecord(KindDeliveryPack, EncodePack(parts), nil)
		if err != nil || len(again) != len(ds) {
			t.Fatalf("re-encoded pack: %d of %d, %v", len(again), len(ds), err)
		}
	})
}

// TestRestoreGivesATaskToItsNewestHolderWhateverTheOrderOfTheCopies: a
// stale copy of a delivery that held a task and later released it (kept
// in an old pack) must not take the task from the delivery that holds it
// now, in whatever order the store lists the copies.
func TestRestoreGivesATaskToItsNewestHolderWhateverTheOrderOfTheCopies(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("claude", "exec", "go")
	b.agent("codex", "exec", "go")
	first := delegate(b, "claude", "GH-7")
	reply(b, "claude", first.ID, "[ACK] GH-7 - RECEIVED\nUnderstanding: implement user authentication")
	firstHeld, _ := copyOf(t, b.c, first.ID)
	reply(b, "claude", first.ID, `{"type":"task-complete","task_id":"GH-7","status":"success"}`)
	firstDone, _ := copyOf(t, b.c, first.ID)
	if h, ok := b.c.byTask.holder("GH-7"); ok {
		t.Fatalf("GH-7 is still held by %s after its delivery completed", h)
	}
	second := delegate(b, "codex", "GH-7")
	reply(b, "codex", second.ID, "[ACK] GH-7 - RECEIVED\nUnderstanding: implement user authentication")
	secondHeld, _ := copyOf(t, b.c, second.ID)
	if h, ok := b.c.byTask.holder("GH-7"); !ok || h != second.ID {
		t.Fatalf("GH-7 is held by %q, want %s", h, second.ID)
	}

	restoreInEveryOrder(t, b.c, []stored{firstHeld, firstDone, secondHeld}, nil)
}
