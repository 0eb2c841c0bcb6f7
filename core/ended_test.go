package core

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

func TestEndedSetKeepsEncodingsByIDAndRepacksItsGarbage(t *testing.T) {
	z := newEndedSet()
	mk := func(id, body string) *Delivery {
		return &Delivery{Message: Message{ID: id, To: "claude", Type: TypeConversation, Policy: PolicyBackoff, Body: body}, State: Acknowledged}
	}
	// "M-<n>" ids go to the map without pointers; anything else by string.
	ids := []string{"M-1", "M-10", "M-007", "x-9", "M-", "M-18446744073709551616"}
	for _, id := range ids {
		z.put(mk(id, "first "+id))
	}
	if z.len() != len(ids) || len(z.byNum) != 2 {
		t.Fatalf("len %d, byNum %d: want %d and 2 (M-1, M-10)", z.len(), len(z.byNum), len(ids))
	}
	seen := map[string]bool{}
	z.each(func(id string, b []byte) {
		d, err := decodeDelivery(b, map[string]string{})
		if err != nil || d.ID != id || d.Body != "first "+id {
			t.Fatalf("each: %q → %+v, %v", id, d, err)
		}
		seen[id] = true
	})
	if len(seen) != len(ids) {
		t.Fatalf("each saw %v", seen)
	}
	// Replacing and removing leave garbage; enough of it is repacked away,
	// and slices handed out before stay as they were.
	held, _ := z.get("M-1")
	heldCopy := string(held)
	big := strings.Repeat("b", 64<<10)
	for i := range 300 {
		z.put(mk("M-1", fmt.Sprintf("%d %s", i, big)))
	}
	z.remove("x-9")
	if _, ok := z.get("x-9"); ok || z.len() != len(ids)-1 {
		t.Fatal("x-9 still there after remove")
	}
	if z.garbage > 8<<20 && z.garbage > z.used {
		t.Fatalf("garbage %d against %d used: never repacked", z.garbage, z.used)
	}
	if string(held) != heldCopy {
		t.Fatal("a slice handed out changed under its holder")
	}
	b, _ := z.get("M-1")
	d, err := decodeDelivery(b, map[string]string{})
	if err != nil || !strings.HasPrefix(d.Body, "299 ") {
		t.Fatalf("M-1 after 300 puts: %.20q, %v", d.Body, err)
	}
	b, _ = z.get("M-10")
	if d, _ := decodeDelivery(b, map[string]string{}); d.Body != "first M-10" {
		t.Fatalf("M-10 after a repack: %q", d.Body)
	}
}

func TestEndedDeliveriesLeaveTheLiveMapAndReadTheSame(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("claude", "exec", "go")
	d := delegate(b, "claude", "GH-7")
	reply(b, "claude", d.ID, "[ACK] GH-7 - RECEIVED\nUnderstanding: implement user authentication")
	before := b.delivery(d.ID)
	if before.State != Acknowledged || !before.Holds {
		t.Fatalf("delivery %+v", before)
	}
	if _, live := b.c.deliveries[d.ID]; live {
		t.Fatal("an acknowledged delivery without a timer is still kept live")
	}
	if _, ok := b.c.ended.get(d.ID); !ok {
		t.Fatal("the ended delivery is not in the ended set")
	}
	after := b.delivery(d.ID)
	ja, _ := json.Marshal(before)
	jb, _ := json.Marshal(after)
	if string(ja) != string(jb) {
		t.Fatalf("read back differently:\n%s\n%s", ja, jb)
	}
	if n := b.c.DeliveryCount(); n != 1 {
		t.Fatalf("DeliveryCount %d", n)
	}
	if ds := b.c.Deliveries(nil); len(ds) != 1 || ds[0].ID != d.ID {
		t.Fatalf("Deliveries %+v", ds)
	}
	// An answer to it is refused with what it ended as.
	_, err := b.c.Acknowledge(b.now, d.ID)
	b.refused(err, Conflict)
	// An event that changes it again (the agent finishes the task: it no
	// longer holds it) brings it back, changes it, and puts it away again.
	reply(b, "claude", d.ID, `{"type":"task-complete","task_id":"GH-7","status":"success"}`)
	if got := b.delivery(d.ID); got.Holds {
		t.Fatalf("still holds the task after task-complete: %+v", got)
	}
	if _, live := b.c.deliveries[d.ID]; live {
		t.Fatal("the delivery changed after it ended stays live")
	}
}

// FuzzEndedNum: an id is indexed by number only when the number gives the
// id back, so that each() names every ended delivery as it was named.
func FuzzEndedNum(f *testing.F) {
	for _, id := range []string{"M-1", "M-10", "M-007", "M-", "M-+1", "M-18446744073709551615", "M-18446744073709551616", "T-1", "M-1a"} {
		f.Add(id)
	}
	f.Fuzz(func(t *testing.T, id string) {
		n, ok := endedNum(id)
		if ok && "M-"+strconv.FormatUint(n, 10) != id {
			t.Fatalf("%q indexed as %d, which names %q", id, n, "M-"+strconv.FormatUint(n, 10))
		}
	})
}

func TestEndedDeliveriesAreListedEachAsItself(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("claude", "exec", "go")
	var ids []string
	for i := range 3 {
		d, err := b.c.Send(b.now, SendRequest{To: "claude", Type: TypeDelegation, TaskID: fmt.Sprintf("T-%d", i+1), Capabilities: []string{"go"}, Body: fmt.Sprintf("task %d", i+1)})
		b.ok(err)
		_, err = b.c.Acknowledge(b.now, d.ID)
		b.ok(err)
		ids = append(ids, d.ID)
	}
	if len(b.c.deliveries) != 0 || b.c.ended.len() != 3 {
		t.Fatalf("%d live, %d ended: want 0 and 3", len(b.c.deliveries), b.c.ended.len())
	}
	all := b.c.Deliveries(nil)
	if len(all) != 3 {
		t.Fatalf("%d deliveries listed", len(all))
	}
	for i, d := range all {
		if d.ID != ids[i] || d.Body != fmt.Sprintf("task %d", i+1) || d.State != Acknowledged {
			t.Fatalf("listed %d: %s %q %s, want %s %q acknowledged", i, d.ID, d.Body, d.State, ids[i], fmt.Sprintf("task %d", i+1))
		}
	}
	kept := b.c.Deliveries(func(d *Delivery) bool { return d.TaskID == "T-2" })
	if len(kept) != 1 || kept[0].ID != ids[1] {
		t.Fatalf("kept %+v", kept)
	}
}
