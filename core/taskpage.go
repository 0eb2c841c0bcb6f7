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

// before reports whether k comes before o in the order of Tasks.
func (k TaskKey) before(o TaskKey) bool {
	if !k.CreatedAt.Equal(o.CreatedAt) {
		return k.CreatedAt.Before(o.CreatedAt)
	}
	return idLess(k.ID, o.ID)
}

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

// TaskPage returns one page of tasks: one pass over the tasks, only the
// page copied, queue positions from one sort of the queue. It is what lets
// a list of tens of thousands of tasks be read a page at a time without
// holding up the loop.
func (s *State) TaskPage(q TaskQuery) TaskPage {
	page := TaskPage{Counts: map[TaskState]int{}}
	var queued []uint64
	var match []*Task
	for _, t := range s.tasks {
		page.Counts[t.State]++
		if t.State == Queued {
			queued = append(queued, t.QueuedSeq)
		}
		if len(q.States) > 0 && !slices.Contains(q.States, t.State) {
			continue
		}
		page.Total++
		if q.After != nil {
			k := t.Key()
			if q.Newest && !k.before(*q.After) || !q.Newest && !q.After.before(k) {
				continue
			}
		}
		match = append(match, t)
	}
	sort.Slice(match, func(i, j int) bool {
		if q.Newest {
			return match[j].Key().before(match[i].Key())
		}
		return match[i].Key().before(match[j].Key())
	})
	if q.Limit > 0 && len(match) > q.Limit {
		match, page.More = match[:q.Limit], true
	}
	slices.Sort(queued)
	page.Tasks = make([]Task, 0, len(match))
	page.Positions = make([]int, 0, len(match))
	for _, t := range match {
		page.Tasks = append(page.Tasks, t.copy())
		pos := 0
		if t.State == Queued {
			i, _ := slices.BinarySearch(queued, t.QueuedSeq)
			pos = i + 1
		}
		page.Positions = append(page.Positions, pos)
	}
	return page
}
