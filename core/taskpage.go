package core

import (
	"slices"
	"sort"
	"time"
)

// TaskKey is a task's place in the order of Tasks: its creation time, then
// its id. A page of tasks resumes after the key of its last task, which
// stays valid when that task is gone (a cancelled queued task leaves no
// trace).
type TaskKey struct {
	CreatedAt time.Time
	ID        string
}

// Key is the task's TaskKey.
func (t *Task) Key() TaskKey { return TaskKey{CreatedAt: t.CreatedAt, ID: t.ID} }

// TaskQuery asks for one page of tasks.
type TaskQuery struct {
	// States keeps the tasks in one of these states; none keeps every task.
	States []TaskState
	// Newest lists the newest first; else the oldest first.
	Newest bool
	// After resumes after this key, in the order asked for.
	After *TaskKey
	// Limit is the page's size; 0 or less: no limit.
	Limit int
}

// TaskPage is one page of tasks.
type TaskPage struct {
	Tasks []Task
	// Positions are the queue positions of Tasks (0 for a task that is not
	// queued), in the same order.
	Positions []int
	// Total counts the tasks that match States, on every page.
	Total int
	// Counts counts every task by state, whatever States asks.
	Counts map[TaskState]int
	// More says that tasks follow this page.
	More bool
}

// TaskPage returns one page of tasks: one pass over the tasks that keeps
// the page's tasks in a heap of the page's size, then copies only those;
// queue positions come from one sort of the queue. It is what lets a list
// of tens of thousands of tasks be read a page at a time without holding
// up the loop.
func (s *State) TaskPage(q TaskQuery) TaskPage {
	page := TaskPage{Counts: map[TaskState]int{}}
	// first reports whether a comes before b in the order asked for.
	first := func(a, b pageEntry) bool {
		if q.Newest {
			return b.before(a)
		}
		return a.before(b)
	}
	var after pageEntry
	if q.After != nil {
		after = pageEntry{ns: q.After.CreatedAt.UnixNano(), id: q.After.ID}
	}
	var queued []uint64
	var match []pageEntry // all matches, or with a limit a heap whose root comes last in the order
	for _, t := range s.tasks {
		page.Counts[t.State]++
		if t.State == Queued {
			queued = append(queued, t.QueuedSeq)
		}
		if len(q.States) > 0 && !slices.Contains(q.States, t.State) {
			continue
		}
		page.Total++
		e := pageEntry{ns: t.CreatedAt.UnixNano(), id: t.ID, t: t}
		if q.After != nil && !first(after, e) {
			continue
		}
		switch {
		case q.Limit <= 0 || len(match) < q.Limit:
			match = append(match, e)
			if q.Limit > 0 {
				heapUp(match, len(match)-1, first)
			}
		case first(e, match[0]):
			// It comes before the last of the page so far: the last goes.
			match[0] = e
			heapDown(match, 0, first)
			page.More = true
		default:
			page.More = true
		}
	}
	sort.Slice(match, func(i, j int) bool { return first(match[i], match[j]) })
	slices.Sort(queued)
	page.Tasks = make([]Task, 0, len(match))
	page.Positions = make([]int, 0, len(match))
	for _, e := range match {
		page.Tasks = append(page.Tasks, e.t.copy())
		pos := 0
		if e.t.State == Queued {
			i, _ := slices.BinarySearch(queued, e.t.QueuedSeq)
			pos = i + 1
		}
		page.Positions = append(page.Positions, pos)
	}
	return page
}

// pageEntry is a task's key, with its creation time as a number: cheap to
// compare, which a page over tens of thousands of tasks does often.
type pageEntry struct {
	ns int64
	id string
	t  *Task
}

func (a pageEntry) before(b pageEntry) bool {
	if a.ns != b.ns {
		return a.ns < b.ns
	}
	return idLess(a.id, b.id)
}

// heapUp and heapDown keep h a heap whose root is the entry that comes last
// by first: the one a page drops when a better one comes.
func heapUp(h []pageEntry, i int, first func(a, b pageEntry) bool) {
	for i > 0 {
		parent := (i - 1) / 2
		if !first(h[parent], h[i]) {
			return
		}
		h[parent], h[i] = h[i], h[parent]
		i = parent
	}
}

func heapDown(h []pageEntry, i int, first func(a, b pageEntry) bool) {
	for {
		last, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && first(h[last], h[l]) {
			last = l
		}
		if r < len(h) && first(h[last], h[r]) {
			last = r
		}
		if last == i {
			return
		}
		h[i], h[last] = h[last], h[i]
		i = last
	}
}
