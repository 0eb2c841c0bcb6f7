package test

// The page with many tasks in the store: the list reads a page at a time
// from the server (the first load stays small whatever the store holds),
// pages on, and follows new tasks as they come. It logs the bytes of the
// first load and how late events reach the page; docs/BENCHMARKS.md has
// them for 10,000 tasks:
//
//	go test ./test -run TestThePageStaysUsableWithManyTasks -v -web.tasks 10000 -web.events 300

import (
	"flag"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"wilco/test/blackbox"
)

var (
	webTasks  = flag.Int("web.tasks", 1000, "tasks in the store of the page's scale test")
	webEvents = flag.Int("web.events", 60, "new tasks the page's scale test follows, one at a time, to measure how late events reach the page")
)

// maxFirstLoad is what the first load of the task list may transfer, all
// files and the first page of tasks together, however many tasks the
// store holds.
const maxFirstLoad = 300 << 10

// resource is one entry of the browser's resource timing.
type resource struct {
	Name     string  `json:"name"`
	Transfer float64 `json:"transfer"`
	Body     float64 `json:"body"`
}

func TestThePageStaysUsableWithManyTasks(t *testing.T) {
	t.Parallel()
	n := *webTasks
	dir := blackbox.NewRepo(t, "agents:\n  - {name: remote, adapter: mailbox}\n"+blackbox.CheckStep)
	in := blackbox.ServeRepo(t, dir)
	link := in.LoginLink()

	// N tasks, submitted as users would (8 at a time). The agent never
	// polls: the first waits for its ACK, the rest queue behind it.
	start := time.Now()
	var wg sync.WaitGroup
	ids := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range ids {
				in.Must(201, in.Call("POST", "/v1/tasks", blackbox.AdminToken, map[string]any{
					"id": fmt.Sprintf("S-%05d", i), "description": fmt.Sprintf("Task %d of the scale test: make the export command take --json", i),
					"acceptance_criteria": []string{"the flag is documented", "the output is valid JSON"},
				}))
			}
		})
	}
	for i := 1; i <= n; i++ {
		ids <- i
	}
	close(ids)
	wg.Wait()
	t.Logf("%d tasks submitted in %s", n, time.Since(start).Round(time.Millisecond))

	// The first load, in a fresh browser: the page, its files, the first
	// page of tasks.
	b := openBrowser(t)
	b.navigate(link)
	b.waitFor("the first page of tasks", `document.querySelectorAll('#task-rows tr[data-task]').length === 50`, 60*time.Second)
	// The server's own order (the tasks were submitted concurrently).
	var order struct {
		Tasks []struct{ ID string } `json:"tasks"`
	}
	in.Must(200, in.Call("GET", "/v1/tasks?view=brief&order=newest&limit=51", blackbox.AdminToken, nil), &order)
	newest, second := order.Tasks[0].ID, order.Tasks[50].ID
	if got := b.str(`document.querySelector('#task-rows tr[data-task]').dataset.task`); got != newest {
		t.Fatalf("the list starts with %s, want the newest, %s", got, newest)
	}
	blackbox.MustContain(t, "the total", b.str(`document.getElementById('task-total').textContent`), fmt.Sprintf("%d tasks", n))
	blackbox.MustContain(t, "the queued tab", b.str(`document.querySelector('[data-filter="queued"]').textContent`), fmt.Sprintf("Queued %d", n-1))
	var loaded []resource
	b.eval(`[...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')]
		.filter((e) => !e.name.includes('/v1/events')).map((e) => ({name: e.name.replace(location.origin, ''), transfer: e.transferSize, body: e.decodedBodySize}))`, &loaded)
	total, body := 0.0, 0.0
	var parts []string
	for _, r := range loaded {
		total += r.Transfer
		body += r.Body
		parts = append(parts, fmt.Sprintf("%s %.1f KB", r.Name, r.Transfer/1024))
	}
	sort.Strings(parts)
	t.Logf("first load of the task list with %d tasks: %.1f KB transferred (%.1f KB uncompressed) in %d requests: %s",
		n, total/1024, body/1024, len(loaded), strings.Join(parts, ", "))
	if total == 0 || total > maxFirstLoad {
		t.Fatalf("the first load transferred %.0f bytes, want at most %d", total, maxFirstLoad)
	}

	// Paging goes on from where the first page ended.
	b.click(".pager button:last-child")
	b.waitFor("the second page", `(document.querySelector('#task-rows tr[data-task]') || {dataset: {}}).dataset.task === `+js(second), 30*time.Second)
	b.click(".pager button:first-child")
	b.waitFor("the first page again", `(document.querySelector('#task-rows tr[data-task]') || {dataset: {}}).dataset.task === `+js(newest), 30*time.Second)
	b.goTo("#/tasks?state=active")
	b.waitFor("the active tasks", `document.querySelectorAll('#task-rows tr[data-task]').length === 1`, 30*time.Second)
	b.goTo("#/tasks")
	b.waitFor("the first page again", `document.querySelectorAll('#task-rows tr[data-task]').length === 50`, 30*time.Second)

	// New tasks, one at a time: each appears at the top of the list, and
	// the page measures how late (from the event's commit to its row).
	b.eval("window.wilco.resetLatency()", nil)
	for i := 1; i <= *webEvents; i++ {
		id := fmt.Sprintf("N-%04d", i)
		in.Must(201, in.Call("POST", "/v1/tasks", blackbox.AdminToken, map[string]any{"id": id, "description": "A new task, live"}))
		b.waitFor(id+" on the list", `(document.querySelector('#task-rows tr[data-task]') || {dataset: {}}).dataset.task === `+js(id), 30*time.Second)
	}
	l := b.latency()
	if len(l.Rendered) < *webEvents {
		t.Fatalf("the page measured %d events shown, want at least %d", len(l.Rendered), *webEvents)
	}
	t.Logf("event → page with %d tasks, over %d new tasks: received %s median (p90 %s), row shown %s median (p90 %s)",
		n, *webEvents, ms(l.MedianReceived), p90(l.Received), ms(l.MedianRendered), p90(l.Rendered))
	b.noExceptions()
}

func p90(samples []float64) string {
	if len(samples) == 0 {
		return "none"
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	v := s[len(s)*9/10]
	return ms(&v)
}
