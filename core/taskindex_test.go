package core

import (
	"slices"
	"strconv"
	"testing"
)

// TestTaskIndexListsEachTasksDeliveriesOldestFirstAndItsHolder, with every
// task id hashed alike (one collision chain) and without.
func TestTaskIndexListsEachTasksDeliveriesOldestFirstAndItsHolder(t *testing.T) {
	for _, collide := range []bool{false, true} {
		x := newTaskIndex()
		if collide {
			x.hash = func(string) uint64 { return 7 }
		}
		for i := range 50 {
			task := "T-" + strconv.Itoa(i%10)
			x.add(task, "M-"+strconv.Itoa(i+1))
		}
		x.add("T-3", "imported-1") // an id not made by wilco
		if got, want := x.ids("T-3"), []string{"M-4", "M-14", "M-24", "M-34", "M-44", "imported-1"}; !slices.Equal(got, want) {
			t.Fatalf("collide=%v: T-3 lists %v, want %v", collide, got, want)
		}
		if x.ids("T-99") != nil || x.find("T-99") != nil {
			t.Fatal("a task never named has deliveries")
		}
		x.hold("T-3", "imported-1")
		x.hold("T-4", "M-5")
		if id, ok := x.holder("T-3"); !ok || id != "imported-1" {
			t.Fatalf("holder of T-3: %q %v", id, ok)
		}
		x.release("T-4", "M-15") // not the holder: nothing changes
		if id, _ := x.holder("T-4"); id != "M-5" {
			t.Fatalf("holder of T-4 after another's release: %q", id)
		}
		x.release("T-4", "M-5")
		if _, ok := x.holder("T-4"); ok {
			t.Fatal("T-4 still held after its holder's release")
		}
		if got := x.holds(); got != "[T-3:imported-1]" {
			t.Fatalf("holds %s", got)
		}
	}
}

// TestTaskIndexTidiesWhatARestoreAddedInAnyOrder: a restore adds a task's
// deliveries in the order the store lists them, some twice.
func TestTaskIndexTidiesWhatARestoreAddedInAnyOrder(t *testing.T) {
	x := newTaskIndex()
	for _, id := range []string{"M-30", "M-4", "x-1", "M-30", "M-100", "M-4"} {
		x.add("T-1", id)
	}
	x.add("T-2", "M-7")
	x.tidy()
	if got, want := x.ids("T-1"), []string{"M-4", "M-30", "M-100", "x-1"}; !slices.Equal(got, want) {
		t.Fatalf("T-1 lists %v, want %v", got, want)
	}
	x.add("T-1", "M-101") // the list goes on after a tidy
	if got := x.ids("T-1"); len(got) != 5 || got[4] != "M-101" || !slices.Equal(x.ids("T-2"), []string{"M-7"}) {
		t.Fatalf("after tidy and add: %v, %v", got, x.ids("T-2"))
	}
}
