package core

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"
)

// testBundle drives a core the way the runtime does: steps at a fake time,
// timers fired at their exact time, every event collected.
type testBundle struct {
	t       *testing.T
	c       *State
	now     time.Time
	events  []Event
	effects []Effect
	timers  map[string]time.Time
	// snaps are snapshots of every entity after each step, to check that a
	// checkpoint written a little at a time recovers exactly.
	snaps []snapshot
}

type snapshot struct {
	seq      uint64
	entities map[EntityRef][]byte
}

var epoch = time.Date(2026, 1, 26, 14, 0, 0, 0, time.UTC)

func setup(t *testing.T) *testBundle {
	t.Helper()
	b := &testBundle{t: t, c: New(), now: epoch, timers: map[string]time.Time{}}
	t.Cleanup(func() {
		if !t.Failed() {
			b.checkReplay()
		}
	})
	return b
}

// collect takes what the core produced and arms its timers.
func (b *testBundle) collect() Ready {
	r := b.c.TakeReady()
	b.events = append(b.events, r.Events...)
	snap := snapshot{seq: b.c.Seq(), entities: map[EntityRef][]byte{}}
	for _, ref := range b.c.Entities() {
		e, _ := b.c.Entity(ref)
		snap.entities[ref], _ = EncodeEntity(e)
	}
	b.snaps = append(b.snaps, snap)
	b.effects = append(b.effects, r.Effects...)
	for _, e := range r.Effects {
		if a, ok := e.(ArmTimer); ok {
			if a.At.IsZero() {
				delete(b.timers, a.Key)
			} else {
				b.timers[a.Key] = a.At
			}
		}
	}
	return r
}

// ok fails the test on err and collects.
func (b *testBundle) ok(err error) Ready {
	b.t.Helper()
	if err != nil {
		b.t.Fatalf("unexpected error: %v", err)
	}
	return b.collect()
}

// refused checks that err has the code and that nothing changed.
func (b *testBundle) refused(err error, code Code) {
	b.t.Helper()
	if err == nil {
		b.t.Fatalf("expected a %s error, got none", code)
	}
	if CodeOf(err) != code {
		b.t.Fatalf("expected a %s error, got %q (%v)", code, CodeOf(err), err)
	}
	if b.c.HasReady() {
		b.t.Fatalf("a refused command produced events or effects: %+v", b.c.TakeReady())
	}
}

// advance moves time forward by d, firing every timer due on the way at its
// exact time, in order.
func (b *testBundle) advance(d time.Duration) {
	b.t.Helper()
	end := b.now.Add(d)
	for {
		key, at := "", time.Time{}
		for k, t := range b.timers {
			if !t.After(end) && (key == "" || t.Before(at) || t.Equal(at) && k < key) {
				key, at = k, t
			}
		}
		if key == "" {
			break
		}
		b.now = at
		delete(b.timers, key)
		if err := b.c.Fire(b.now, key); err != nil {
			b.t.Fatalf("fire %s: %v", key, err)
		}
		b.collect()
	}
	b.now = end
}

func (b *testBundle) agent(name, adapter string, caps ...string) {
	b.t.Helper()
	b.ok(b.c.RegisterAgent(b.now, AgentSpec{Name: name, Adapter: adapter, Capabilities: caps}))
}

func (b *testBundle) eventsOf(typ string) []Event {
	var out []Event
	for _, e := range b.events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func (b *testBundle) delivery(id string) Delivery {
	b.t.Helper()
	d, ok := b.c.Delivery(id)
	if !ok {
		b.t.Fatalf("no delivery %s", id)
	}
	return d
}

func (b *testBundle) delivered(agent string) []InboxMessage {
	var out []InboxMessage
	for _, e := range b.effects {
		if d, ok := e.(Deliver); ok && d.Agent == agent {
			out = append(out, d.Message)
		}
	}
	return out
}

// checkReplay rebuilds the state from the events, through JSON as the
// store keeps them, and compares it with the live state.
func (b *testBundle) checkReplay() {
	b.t.Helper()
	replayed := New()
	for _, ev := range b.events {
		raw, err := json.Marshal(ev.Data)
		if err != nil {
			b.t.Fatalf("encode event %d: %v", ev.Seq, err)
		}
		data, err := DecodeEventData(ev.Type, raw)
		if err != nil {
			b.t.Fatalf("decode event %d: %v", ev.Seq, err)
		}
		if err := replayed.Replay(Event{Seq: ev.Seq, Time: ev.Time, Type: ev.Type, TaskID: ev.TaskID, Agent: ev.Agent, Data: data}); err != nil {
			b.t.Fatal(err)
		}
	}
	if diff := StateDiff(b.c, replayed); diff != "" {
		b.t.Fatalf("replaying the event log does not rebuild the same state: %s", diff)
	}
	// And restoring from a snapshot of the entities gives the same again.
	restored := New()
	for _, ref := range b.c.Entities() {
		e, _ := b.c.Entity(ref)
		raw, _ := EncodeEntity(e)
		if err := restored.Restore(ref.Kind, raw); err != nil {
			b.t.Fatal(err)
		}
	}
	restored.Restored(b.c.Seq())
	if diff := StateDiff(b.c, restored); diff != "" {
		b.t.Fatalf("restoring from the snapshot does not rebuild the same state: %s", diff)
	}
	// A checkpoint whose entities were saved at different moments after
	// its watermark, plus the events after the watermark, gives the same
	// state again.
	for i, w := range b.snaps {
		mixed := New()
		for ref := range b.snaps[len(b.snaps)-1].entities {
			// Take each entity from a later snapshot, chosen by the index.
			var data []byte
			for j := i + (len(ref.ID)+i)%max(len(b.snaps)-i, 1); j < len(b.snaps) && data == nil; j++ {
				data = b.snaps[j].entities[ref]
			}
			if data == nil {
				if d, ok := w.entities[ref]; ok {
					data = d
				} else {
					continue
				}
			}
			if err := mixed.Restore(ref.Kind, data); err != nil {
				b.t.Fatal(err)
			}
		}
		mixed.Restored(w.seq)
		for _, ev := range b.events {
			if ev.Seq <= w.seq {
				continue
			}
			raw, _ := json.Marshal(ev.Data)
			data, _ := DecodeEventData(ev.Type, raw)
			if err := mixed.Replay(Event{Seq: ev.Seq, Time: ev.Time, Type: ev.Type, TaskID: ev.TaskID, Agent: ev.Agent, Data: data}); err != nil {
				b.t.Fatal(err)
			}
		}
		if diff := StateDiff(b.c, mixed); diff != "" {
			b.t.Fatalf("a checkpoint at %d saved a little at a time, plus the tail, does not rebuild the state: %s", w.seq, diff)
		}
	}
	if !reflect.DeepEqual(b.c.Timers(), replayed.Timers()) || !slices.Equal(b.c.Timers(), restored.Timers()) {
		b.t.Fatalf("timers differ after replay")
	}
}
