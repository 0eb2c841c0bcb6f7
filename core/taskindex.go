package core

import (
	"hash/maphash"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// taskIndex lists the deliveries of each task, oldest first, and the one
// whose agent holds the task. Derived from the deliveries.
//
// Every delegation names a task, and a task's deliveries are kept as long
// as wilco runs, so this index grows with every delivery ever made. As
// maps of strings it was the largest part of the heap the garbage collector
// walks on every cycle (a task id, a delivery id and a slice per task),
// and the cycles were what most of the slowest acknowledgments waited for.
// Here nothing holds a pointer: task ids are bytes in one arena, entries
// are found by a hash of the id, and deliveries are numbers.
type taskIndex struct {
	hash  func(task string) uint64
	heads map[uint64]uint32 // hash of a task id → its first entry, +1
	tasks []taskEntry
	links []taskLink
	keys  []byte // the task ids, back to back
	// names holds the delivery ids that are not of the form "M-<n>"
	// (tests, imports); such a delivery is numbered 1<<63 | its index.
	names  []string
	byName map[string]uint64
}

// taskEntry is one task. A link or entry index is stored +1: 0 is none.
type taskEntry struct {
	keyOff, keyLen uint32
	next           uint32 // the next entry whose id has the same hash
	head, tail     uint32 // its deliveries
	holder         uint64 // the delivery that holds it; 0 for none
}

// taskLink is one delivery of a task.
type taskLink struct {
	num  uint64
	next uint32
}

const namedDelivery = 1 << 63

func newTaskIndex() taskIndex {
	seed := maphash.MakeSeed()
	return taskIndex{
		hash:   func(task string) uint64 { return maphash.String(seed, task) },
		heads:  map[uint64]uint32{},
		byName: map[string]uint64{},
	}
}

// reserve makes room for about n tasks of one delivery each.
func (x *taskIndex) reserve(n int) {
	x.heads = make(map[uint64]uint32, n)
	x.tasks = make([]taskEntry, 0, n)
	x.links = make([]taskLink, 0, n)
}

// num is the number a delivery id is kept as.
func (x *taskIndex) num(id string) uint64 {
	if n, ok := endedNum(id); ok && n < namedDelivery {
		return n
	}
	if n, ok := x.byName[id]; ok {
		return n
	}
	n := namedDelivery | uint64(len(x.names))
	x.names = append(x.names, id)
	x.byName[id] = n
	return n
}

// name is the delivery id a number stands for.
func (x *taskIndex) name(n uint64) string {
	if n&namedDelivery != 0 {
		return x.names[n&^namedDelivery]
	}
	return "M-" + strconv.FormatUint(n, 10)
}

func (x *taskIndex) key(e *taskEntry) string {
	return string(x.keys[e.keyOff : e.keyOff+e.keyLen])
}

// find returns the task's entry, nil when it has none. The pointer is
// valid until the next add.
func (x *taskIndex) find(task string) *taskEntry {
	return x.findHashed(task, x.hash(task))
}

// findHashed is find for a task id whose hash is h.
func (x *taskIndex) findHashed(task string, h uint64) *taskEntry {
	for i := x.heads[h]; i != 0; {
		e := &x.tasks[i-1]
		if e.keyLen == uint32(len(task)) && string(x.keys[e.keyOff:e.keyOff+e.keyLen]) == task {
			return e
		}
		i = e.next
	}
	return nil
}

// entry returns the task's entry, adding one when it has none.
func (x *taskIndex) entry(task string) *taskEntry {
	h := x.hash(task)
	if e := x.findHashed(task, h); e != nil {
		return e
	}
	x.tasks = append(x.tasks, taskEntry{keyOff: uint32(len(x.keys)), keyLen: uint32(len(task)), next: x.heads[h]})
	x.keys = append(x.keys, task...)
	x.heads[h] = uint32(len(x.tasks))
	return &x.tasks[len(x.tasks)-1]
}

// add lists delivery id as the task's newest.
func (x *taskIndex) add(task, id string) {
	n := x.num(id)
	e := x.entry(task)
	x.links = append(x.links, taskLink{num: n})
	l := uint32(len(x.links))
	if e.tail == 0 {
		e.head = l
	} else {
		x.links[e.tail-1].next = l
	}
	e.tail = l
}

// ids lists the task's deliveries, oldest first.
func (x *taskIndex) ids(task string) []string {
	e := x.find(task)
	if e == nil {
		return nil
	}
	var out []string
	for l := e.head; l != 0; l = x.links[l-1].next {
		out = append(out, x.name(x.links[l-1].num))
	}
	return out
}

// holder is the delivery that holds the task.
func (x *taskIndex) holder(task string) (string, bool) {
	if e := x.find(task); e != nil && e.holder != 0 {
		return x.name(e.holder), true
	}
	return "", false
}

// hold records that delivery id holds the task.
func (x *taskIndex) hold(task, id string) {
	x.entry(task).holder = x.num(id)
}

// release forgets that delivery id holds the task, if it does.
func (x *taskIndex) release(task, id string) {
	e := x.find(task)
	if e == nil || e.holder == 0 || x.name(e.holder) != id {
		return
	}
	e.holder = 0
}

// tidy puts every task's deliveries in order, once each: a restore adds
// them in the order the store lists them, and may add one twice.
func (x *taskIndex) tidy() {
	for i := range x.tasks {
		e := &x.tasks[i]
		if e.head == e.tail {
			continue
		}
		var ids []string
		var links []uint32
		for l := e.head; l != 0; l = x.links[l-1].next {
			ids = append(ids, x.name(x.links[l-1].num))
			links = append(links, l)
		}
		sort.Slice(ids, func(i, j int) bool { return idLess(ids[i], ids[j]) })
		ids = slices.Compact(ids)
		// Rewrite the task's links in place: as many or fewer are needed.
		for k, id := range ids {
			l := links[k]
			x.links[l-1] = taskLink{num: x.num(id)}
			if k > 0 {
				x.links[links[k-1]-1].next = l
			}
		}
		e.tail = links[len(ids)-1]
	}
}

// holds describes every task's holder, in task order, for comparisons.
func (x *taskIndex) holds() string {
	var out []string
	for i := range x.tasks {
		if e := &x.tasks[i]; e.holder != 0 {
			out = append(out, x.key(e)+":"+x.name(e.holder))
		}
	}
	sort.Strings(out)
	return "[" + strings.Join(out, " ") + "]"
}
