package test

// A browser test of the page's task list while tasks are worked in
// parallel: the slots and who holds them, and the landing queue with each
// verified task's position.

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"wilco/test/blackbox"
)

func TestThePagesTaskListShowsTheSlotsAndTheLandingQueueWithPositions(t *testing.T) {
	t.Parallel()
	dir := blackbox.ParallelRepo(t, "parallel: 3\nagents:\n"+ownFileAgent(t, "fast", 2)+ownFileAgent(t, "slow", 1, "OWN_FILE_SLEEP=60"), blackbox.OwnFilesCheck)
	// The user's drafts of the files write: their landings wait,
	// one landing (position 1), the other waiting its turn (position 2).
	for _, id := range []string{"Q-1", "Q-2"} {
		if err := os.MkdirAll(filepath.Join(dir, "files"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "files", id+".txt"), []byte("my draft\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"id": "Q-1", "description": "Write Q-1 into files/Q-1.txt", "agent": "fast"})
	in.Submit(map[string]any{"id": "Q-2", "description": "Write Q-2 into files/Q-2.txt", "agent": "fast"})
	in.Submit(map[string]any{"id": "Q-3", "description": "Write Q-3 into files/Q-3.txt", "agent": "slow"})
	var q struct {
		Landing []struct {
			ID       string `json:"id"`
			Position int    `json:"position"`
		} `json:"landing"`
	}
	if !blackbox.Eventually(time.Minute, 50*time.Millisecond, func() bool {
		in.Must(200, in.Call("GET", "/v1/queue", blackbox.AdminToken, nil), &q)
		return len(q.Landing) == 2 && strings.Contains(in.Task(q.Landing[0].ID).Milestone, "uncommitted changes")
	}) {
		t.Fatalf("the landing queue: %+v\n%s", q, in.Problems())
	}

	b := openBrowser(t)
	b.navigate(in.LoginLink())
	b.waitFor("the task list", `document.querySelector('#task-rows') !== null`, 30*time.Second)
	b.waitFor("the landing queue", `document.querySelectorAll('#land-queue li').length === 2`, 30*time.Second)
	// The two verified tasks let go of their slots while they land: the
	// slots show the one still worked on, the landing queue the others.
	if held := b.str(`document.getElementById('slots-held').textContent`); held != "1 of 3 held" {
		t.Fatalf("the slots say %q", held)
	}
	var slots []string
	b.eval(`[...document.querySelectorAll('#slots li')].map((li) => li.dataset.task + ' ' + li.textContent)`, &slots)
	if !slices.ContainsFunc(slots, func(s string) bool { return strings.HasPrefix(s, "Q-3 ") && strings.Contains(s, "wilco/Q-3") }) {
		t.Fatalf("no slot shows Q-3 on its branch: %q", slots)
	}
	for _, id := range []string{"Q-1", "Q-2"} {
		if slices.ContainsFunc(slots, func(s string) bool { return strings.HasPrefix(s, id+" ") }) {
			t.Fatalf("a slot shows %s, which waits to land: %q", id, slots)
		}
	}
	if !slices.ContainsFunc(slots, func(s string) bool { return strings.HasPrefix(s, "Q-3 ") && strings.Contains(s, "slow") }) {
		t.Fatalf("Q-3's slot does not name its agent: %q", slots)
	}
	var landing []string
	b.eval(`[...document.querySelectorAll('#land-queue li')].map((li) => li.dataset.position + ' ' + li.dataset.task + ' ' + li.textContent)`, &landing)
	for i, e := range q.Landing {
		want := []string{strings.Join([]string{strconv.Itoa(e.Position), e.ID, "#" + strconv.Itoa(e.Position)}, " "), "Write " + e.ID}
		if i == 0 {
			want = append(want, "landing now")
		} else {
			want = append(want, "waits its turn")
		}
		for _, w := range want {
			if !strings.Contains(landing[i], w) {
				t.Fatalf("the landing queue's entry %d is %q, lacking %q", i+1, landing[i], w)
			}
		}
	}
	// The user puts the drafts away: both land, and the queue empties.
	for _, id := range []string{"Q-1", "Q-2"} {
		if err := os.Remove(filepath.Join(dir, "files", id+".txt")); err != nil {
			t.Fatal(err)
		}
	}
	b.waitFor("the emptied landing queue", `document.querySelectorAll('#land-queue li').length === 0 && document.getElementById('slots-held').textContent === '1 of 3 held'`, time.Minute)
}
