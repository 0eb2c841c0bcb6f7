package test

// The page, in a real headless Chromium, against the real binary: a user
// logs in with the link wilco serve printed, submits a task and watches it
// fail verification, retry and succeed without a reload (its timeline in
// sentences), answers an escalation (rendered, not Markdown) with a fix,
// applies a dry run from its diff (file names as they are), cancels a
// task (which then says how it ended); an agent's markup is shown as
// text; the session is refused without its cookie or with a wrong CSRF
// token; an agent's token never logs in.

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"wilco/test/blackbox"
)

const webFix = "Write fixed and the task id into file.txt"

// rowState is the JavaScript of a task row's state on the task list.
func rowState(id string) string {
	return `(document.querySelector('tr[data-task=` + js(id) + `]') || {dataset: {}}).dataset.state`
}

// detailState is the state the task page shows.
const detailState = `((document.querySelector('#overview dd[data-key="state"]') || {}).textContent || '')`

func TestThePageFollowsAndAnswersTasksLiveInARealBrowser(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+
		execAgent(t, "fixer", "web.sh", []string{"retry"}, "WEB_AGENT_DELAY=1")+
		execAgent(t, "escalator", "web.sh", []string{"fix"})+
		execAgent(t, "proposer", "propose.sh", []string{"names"})+
		execAgent(t, "scripter", "web.sh", []string{"markup"})+
		execAgent(t, "asker", "clarify.sh", nil)+
		"  - {name: remote, adapter: mailbox}\n"+
		blackbox.CheckStep+"policy:\n  loop: {escalate_after: 2}\n")
	// A file whose name git leaves as it is in a diff, spaces and all.
	if err := os.WriteFile(filepath.Join(dir, "notes with spaces.md"), []byte("the notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "-A")
	git(t, dir, "-c", "user.name=wilco test", "-c", "user.email=test@wilco.invalid", "commit", "-qm", "notes")
	in := blackbox.ServeRepo(t, dir)
	link := in.LoginLink()
	b := openBrowser(t)

	// Log in with the printed link: the code leaves the address bar.
	b.navigate(link)
	b.waitFor("the task list", `document.querySelector('#task-rows') !== null && document.querySelector('#nav:not([hidden])') !== null`, 30*time.Second)
	if h := b.str("location.hash"); h != "#/tasks" {
		t.Fatalf("after the login the address is %q: the code must not stay in it", h)
	}
	// A reload would lose this mark: it is checked at the end.
	b.eval("window.__sameDocument = 'yes'", nil)

	// Submit a task from the page, and follow its row: a MutationObserver
	// notes every state and attempt the row shows.
	b.click("#submit > summary")
	b.waitFor("the agents in the submit form", `[...document.querySelectorAll('#submit-agent option')].some(o => o.value === 'fixer')`, 10*time.Second)
	b.typeIn("#submit-description", "Write the fix into file.txt")
	b.typeIn("#submit-criteria", "file.txt says fixed and the task id")
	b.setValue("#submit-agent", "fixer")
	b.eval(`window.__rows = [];
		new MutationObserver(() => {
			const r = document.querySelector('tr[data-task="T-1"]');
			if (!r) return;
			const s = r.dataset.state + ' ' + r.querySelector('td.attempt').textContent;
			if (window.__rows[window.__rows.length - 1] !== s) window.__rows.push(s);
		}).observe(document.getElementById('main'), {subtree: true, childList: true, characterData: true, attributes: true})`, nil)
	b.click("#submit-button")
	b.waitFor("T-1 to succeed on the list", rowState("T-1")+` === 'success'`, 90*time.Second)
	var seen []string
	b.eval("window.__rows", &seen)
	first := slices.IndexFunc(seen, func(s string) bool { return strings.HasSuffix(s, " 1/12") && !strings.HasPrefix(s, "success") })
	second := slices.IndexFunc(seen, func(s string) bool { return strings.HasSuffix(s, " 2/12") && !strings.HasPrefix(s, "success") })
	done := slices.Index(seen, "success 2/12")
	if first < 0 || second <= first || done <= second {
		t.Fatalf("the row of T-1 did not show attempt 1, then attempt 2, then success: %q", seen)
	}
	if got := in.Task("T-1"); got.State != "success" || got.Attempt != 2 || len(got.Failures) != 1 {
		t.Fatalf("the server's T-1: %s", got)
	}

	// The task's page: attempt 1 failed verification (its failure record
	// and verify log), attempt 2 started with the retry context.
	b.click(`tr[data-task="T-1"] a`)
	b.waitFor("T-1's attempts", `document.querySelectorAll('#attempts details[data-attempt]').length === 2`, 10*time.Second)
	if got := b.str(`document.querySelector('details[data-attempt="1"] .outcome').textContent`); got != "verification_failed" {
		t.Fatalf("attempt 1 is shown as %q", got)
	}
	blackbox.MustContain(t, "attempt 1's failure record", b.str(`document.querySelector('details[data-attempt="1"] .failure').textContent`),
		"verification_failed", "sh check.sh", "file.txt is not fixed")
	b.click(`details[data-attempt="1"] > summary`)
	b.waitFor("attempt 1's transcript", `document.querySelector('details[data-attempt="1"] .transcript') !== null`, 10*time.Second)
	blackbox.MustContain(t, "attempt 1's transcript", b.str(`document.querySelector('details[data-attempt="1"] .transcript').textContent`),
		"[ACK] T-1 - RECEIVED", "Guessed: wrote attempt 1 into file.txt.")
	b.click(`details[data-attempt="1"] button[data-log="T-1-a1"]`)
	b.waitFor("attempt 1's verify log", `(document.querySelector('details[data-attempt="1"] pre.log') || {}).textContent?.includes('file.txt is not fixed')`, 10*time.Second)
	b.click(`details[data-attempt="2"] > summary`)
	b.waitFor("attempt 2's retry context", `(document.querySelector('details[data-attempt="2"] .retry-context') || {}).textContent?.includes('<retry_context attempt="2"')`, 10*time.Second)
	webTimeline(t, b)
	b.eval(`document.getElementById('timeline').closest('section').scrollIntoView()`, nil)
	b.screenshot("timeline")
	blackbox.MustContain(t, "T-1's summary", b.str(`document.getElementById('summary').textContent`), "Wrote the fix into file.txt.", "T-1-a2")
	b.eval(`document.querySelector('details[data-attempt="2"]').open = false; window.scrollTo(0, 0)`, nil)
	b.screenshot("task")

	// An escalation answered with a fix from the page.
	in.Submit(map[string]any{"description": "Write the fix into file.txt, as the user says", "agent": "escalator"})
	b.goTo("#/tasks/T-2")
	b.waitFor("T-2's escalation on its page", `(document.getElementById('needs-you') || {}).textContent?.includes('Escalated')`, 60*time.Second)
	webEscalation(t, b)
	b.eval(`document.getElementById('needs-you').scrollIntoView()`, nil)
	b.screenshot("escalation")
	b.typeIn("#fix-instruction", webFix)
	b.click("#respond-fix")
	b.waitFor("T-2 to succeed on its page", detailState+` === 'success'`, 60*time.Second)
	if got := in.Task("T-2"); got.State != "success" || got.Attempt != 3 {
		t.Fatalf("the server's T-2: %s %d\n%s", got.State, got.Attempt, b.snapshot())
	}
	blackbox.MustContain(t, "the prompt after the fix", in.Prompt("T-2-a3"), "<user_intervention>", "User provided fix: "+webFix)
	byType := timelineLines(t, b, "task.success")
	blackbox.MustContain(t, "the escalation on the timeline", byType["task.escalated"], "Escalated to you after 2 failed attempts.")
	blackbox.MustContain(t, "the answer on the timeline", byType["task.response"], "You sent a fix.", webFix)

	// A dry run submitted from the page, applied from its diff.
	b.goTo("#/tasks")
	b.click("#submit > summary")
	b.waitFor("the agents in the submit form", `[...document.querySelectorAll('#submit-agent option')].some(o => o.value === 'proposer')`, 10*time.Second)
	b.typeIn("#submit-description", "Write the fix into file.txt and add new.txt")
	b.setValue("#submit-agent", "proposer")
	b.click("#submit-dry-run")
	b.click("#submit-button")
	b.waitFor("T-3 proposed on the list", rowState("T-3")+` === 'proposed'`, 60*time.Second)
	b.click(`tr[data-task="T-3"] a`)
	b.waitFor("T-3's diff", `document.querySelector('.diff-file[data-path="new.txt"]') !== null`, 20*time.Second)
	blackbox.MustContain(t, "the side-by-side diff", b.str(`document.getElementById('diff').textContent`), "file.txt", "new file", "fixed T-3", "a new file")
	// The files' names as they are, not as git quotes them.
	var heads []string
	b.eval(`[...document.querySelectorAll('#diff .diff-file-head .mono')].map((e) => e.textContent).sort()`, &heads)
	if want := []string{"file.txt", "new.txt", "notes with spaces.md", "résumé.txt"}; !slices.Equal(heads, want) {
		t.Fatalf("the diff's files are shown as %q, want %q", heads, want)
	}
	blackbox.MustContain(t, "the diff of the file with spaces", b.str(`document.querySelector('.diff-file[data-path="notes with spaces.md"]').textContent`), "a note of T-3")
	blackbox.MustContain(t, "the diff of résumé.txt", b.str(`document.querySelector('.diff-file[data-path="résumé.txt"]').textContent`), "a résumé of T-3", "new file")
	if !b.truth(`document.querySelector('.diff.split td.code.add') !== null && document.querySelector('.diff.split td.code.del') !== null`) {
		t.Fatalf("the side-by-side diff has no added or removed line:\n%s", b.snapshot())
	}
	b.screenshot("diff")
	b.click(`button[data-mode="unified"]`)
	b.waitFor("the unified diff", `document.querySelector('.diff.unified tr.add') !== null`, 5*time.Second)
	b.click("#apply")
	b.waitFor("T-3 to succeed after the apply", detailState+` === 'success'`, 60*time.Second)
	if got := blackbox.ReadFile(t, filepath.Join(dir, "file.txt")); got != "fixed T-3\n" {
		t.Fatalf("the applied diff: file.txt is %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "new.txt")); err != nil {
		t.Fatalf("the applied diff: %v", err)
	}
	if got := blackbox.ReadFile(t, filepath.Join(dir, "résumé.txt")) + blackbox.ReadFile(t, filepath.Join(dir, "notes with spaces.md")); got != "a résumé of T-3\nthe notes\na note of T-3\n" {
		t.Fatalf("the applied diff: résumé.txt and notes with spaces.md are %q", got)
	}

	// An agent that writes markup and scripts: the page shows them as
	// text, and nothing of it runs or becomes an element.
	in.Submit(map[string]any{"description": "Write the fix into file.txt", "agent": "scripter"})
	b.goTo("#/tasks/T-4")
	b.waitFor("T-4 to succeed on its page", detailState+` === 'success'`, 60*time.Second)
	b.click(`details[data-attempt="1"] > summary`)
	b.waitFor("T-4's transcript", `document.querySelector('details[data-attempt="1"] .transcript') !== null`, 10*time.Second)
	blackbox.MustContain(t, "the agent's markup, as text", b.str(`document.getElementById('attempts').textContent`),
		`<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"><b id="pwned">bold</b>`)
	blackbox.MustContain(t, "the summary's markup, as text", b.str(`document.getElementById('summary').textContent`), `<b id="pwned-summary">and this</b>`)
	for _, cond := range []string{
		`window.__pwned === undefined`, `document.getElementById('pwned') === null`, `document.getElementById('pwned-summary') === null`,
		`document.querySelectorAll('#main script, #main img').length === 0`,
	} {
		if !b.truth(cond) {
			t.Fatalf("the agent's markup ran or became an element: %s is false", cond)
		}
	}

	// The agent's questions, answered from the page.
	in.Submit(map[string]any{"description": "Write the fix into file.txt", "agent": "asker"})
	b.goTo("#/tasks/T-5")
	b.waitFor("T-5's question on its page", `document.getElementById('answer-0') !== null`, 60*time.Second)
	blackbox.MustContain(t, "the question", b.str(`document.getElementById('needs-you').textContent`), "Which line goes into file.txt?")
	b.typeIn("#answer-0", "fixed and the task id")
	b.click("#clarify-send")
	b.waitFor("T-5 to succeed after the answer", detailState+` === 'success'`, 60*time.Second)

	// The other views, for the record (and the README).
	in.Must(201, in.Call("POST", "/v1/instructions", blackbox.AdminToken, map[string]any{"agent": "remote", "content": "Report the OS and the Go version"}))
	in.Must(201, in.Call("POST", "/v1/operations", blackbox.AdminToken, map[string]any{"operation": "restart", "agents": []string{"remote"}, "message": "wilco restarts your session"}))
	b.goTo("#/agents")
	b.waitFor("the agents", `document.querySelector('tr[data-agent="fixer"]') !== null`, 10*time.Second)
	blackbox.MustContain(t, "the agents view", b.str(`document.querySelector('tr[data-agent="fixer"]').textContent`), "exec", "0% (0 of 1)")
	b.screenshot("agents")
	// A new token from the page (two clicks: it cannot be undone), shown
	// once; the old one stops working at once.
	oldTok := in.Rotate("remote")
	b.click(`button[data-rotate="remote"]`)
	b.click(`button[data-rotate="remote"]`)
	b.waitFor("the new token", `(document.getElementById('new-token') || {}).value?.length > 20`, 10*time.Second)
	agentTok := b.str(`document.getElementById('new-token').value`)
	in.Must(200, in.Call("GET", "/v1/inbox", agentTok, nil))
	if r := in.Call("GET", "/v1/inbox", oldTok, nil); r.Status != http.StatusUnauthorized {
		t.Fatalf("the old token after a new one from the page: %d", r.Status)
	}
	// Removing an agent from the page.
	b.click(`button[data-remove="asker"]`)
	b.click(`button[data-remove="asker"]`)
	b.waitFor("asker removed", `document.querySelector('tr[data-agent="asker"].removed') !== null`, 10*time.Second)
	var asker struct{ Removed bool }
	in.Must(200, in.Call("GET", "/v1/agents/asker", blackbox.AdminToken, nil), &asker)
	if !asker.Removed {
		t.Fatal("the agent removed from the page is not removed")
	}
	b.goTo("#/operations")
	b.waitFor("the operation", `document.querySelector('[data-operation="OP-1"]') !== null`, 10*time.Second)
	b.screenshot("operations")
	b.goTo("#/numbers")
	b.waitFor("the charts", `document.querySelectorAll('svg.chart').length >= 4`, 10*time.Second)
	blackbox.MustContain(t, "the numbers", b.str(`document.getElementById('numbers').textContent`), "tasks ended", "first-attempt success", "verification_failed")
	b.screenshot("numbers")
	b.goTo("#/notifications")
	b.waitFor("the notifications view", `document.getElementById('no-notifications') !== null || document.querySelector('table.notifications') !== null || document.querySelector('#notifications .empty') !== null`, 10*time.Second)
	// Two tasks for an agent that never answers: one waits for its ACK,
	// one is queued behind it.
	in.Submit(map[string]any{"description": "Add --json to the export command", "agent": "remote", "acceptance_criteria": []string{"the output is valid JSON"}})
	in.Submit(map[string]any{"description": "Document the export command's flags", "agent": "remote"})
	b.goTo("#/tasks")
	b.waitFor("the list", rowState("T-7")+` === 'queued' && `+rowState("T-6")+` === 'awaiting_ack'`, 10*time.Second)
	b.screenshot("tasks")
	webCancelled(t, in, b)
	if got := b.str("window.__sameDocument"); got != "yes" {
		t.Fatalf("the page was reloaded (its mark is %q)", got)
	}
	l := b.latency()
	t.Logf("event → page, over %d events: received %s median, shown %s median (%d shown)", len(l.Received), ms(l.MedianReceived), ms(l.MedianRendered), len(l.Rendered))

	webSecurity(t, in, b, link, agentTok)
	b.noExceptions()
}

// timelineLines reads the timeline of the task on the page, by event
// type, once the event of type last is on it, and checks that each line
// is a sentence: not empty, not the event's JSON, not its type's name.
func timelineLines(t *testing.T, b *browser, last string) map[string]string {
	t.Helper()
	b.waitFor("the timeline", `document.querySelector('#timeline li[data-type="`+last+`"]') !== null`, 10*time.Second)
	var lines []struct{ Type, Text string }
	b.eval(`[...document.querySelectorAll('#timeline li')].map((li) => ({type: li.dataset.type, text: (li.querySelector('.ev') || li).textContent}))`, &lines)
	jsonish := regexp.MustCompile(`[{\[]\s*"[A-Za-z_]+"\s*:`)
	byType := map[string]string{}
	for _, l := range lines {
		if strings.TrimSpace(l.Text) == "" || jsonish.MatchString(l.Text) || strings.Contains(l.Text, l.Type) {
			t.Errorf("the timeline's %s line is %q", l.Type, l.Text)
		}
		byType[l.Type] += l.Text + "\n"
	}
	return byType
}

// webTimeline checks T-1's timeline: each event is a sentence — its turns'
// ends with their duration, exit code, status and summary.
func webTimeline(t *testing.T, b *browser) {
	t.Helper()
	byType := timelineLines(t, b, "task.success")
	blackbox.MustContain(t, "the turns' ends on the timeline", byType["task.turn_ended"],
		"fixer's turn of attempt 1 ended after ", "exit code 0: the agent reports success.", "Guessed: wrote attempt 1 into file.txt.",
		"fixer's turn of attempt 2 ended after ", "Wrote the fix into file.txt.")
	blackbox.MustContain(t, "the failure on the timeline", byType["task.failure"], "Attempt 1 failed: verification failed (sh check.sh exited 1).")
	blackbox.MustContain(t, "the success on the timeline", byType["task.success"], "Verified in run T-1-a2")
	blackbox.MustContain(t, "the states on the timeline", byType["task.state"], "Waiting for the agent to acknowledge the task.", "Running: verifying the change.",
		"The task succeeded — verification passed in run T-1-a2.")
	blackbox.MustContain(t, "the attempts on the timeline", byType["task.attempt"], "Attempt 1 of 12: sent to fixer.", "Attempt 2 of 12, a retry: sent to fixer.")
}

// webEscalation checks T-2's escalation: a heading in words, the message's
// Markdown rendered into the section (headings, bold, the table of the
// attempts, lists) with no Markdown left in its text and no box of its own
// to scroll, and without the answers a terminal types (the buttons are
// there).
func webEscalation(t *testing.T, b *browser) {
	t.Helper()
	if got := b.str(`document.querySelector('#needs-you > h2').textContent`); got != "Escalated after 2 failed attempts" {
		t.Fatalf("the escalation's heading is %q", got)
	}
	text := b.str(`document.getElementById('escalation').textContent`)
	blackbox.MustContain(t, "the escalation", text, "Task:", "Write the fix into file.txt, as the user says", "Failure Summary",
		"This task has failed 2 times.", "Attempt History", "verification_failed", "Suggested Actions", "Skip task")
	for _, raw := range []string{"##", "**", "|--", "| Attempt", "Your options", "fix: <instruction>", "`"} {
		if strings.Contains(text, raw) {
			t.Errorf("the escalation shows %q:\n%s", raw, text)
		}
	}
	var got struct {
		Headings, Strong, Header []string
		Rows, Items              int
		Scrolls                  []string
	}
	b.eval(`((e) => ({
		headings: [...e.querySelectorAll('h3')].map((x) => x.textContent),
		strong: [...e.querySelectorAll('strong')].map((x) => x.textContent),
		header: [...e.querySelectorAll('table th')].map((x) => x.textContent),
		rows: e.querySelectorAll('table tbody tr').length,
		items: e.querySelectorAll('ol li').length,
		scrolls: [e, ...e.querySelectorAll('*')].filter((x) => x.scrollHeight > x.clientHeight + 2 && /auto|scroll/.test(getComputedStyle(x).overflowY)).map((x) => x.tagName),
	}))(document.getElementById('escalation'))`, &got)
	if !slices.Contains(got.Headings, "Failure Summary") || !slices.Contains(got.Headings, "Attempt History") || slices.Contains(got.Headings, "Task Escalation Required") ||
		!slices.Contains(got.Strong, "Task:") || !slices.Equal(got.Header, []string{"Attempt", "Timestamp", "Failure Type", "Error"}) ||
		got.Rows != 2 || got.Items != 5 || len(got.Scrolls) > 0 {
		t.Fatalf("the escalation's Markdown is rendered as %+v", got)
	}
	if !b.truth(`document.getElementById('respond-fix') && document.getElementById('respond-retry') && document.getElementById('respond-skip') && document.getElementById('respond-abort')`) {
		t.Fatal("the escalation has no buttons to answer it")
	}
}

// webCancelled cancels T-6, which waits for its agent to acknowledge it,
// from the list: then its row, its page and wilco status say how it
// ended, not what it waited for.
func webCancelled(t *testing.T, in *blackbox.Instance, b *browser) {
	t.Helper()
	const milestone = `(document.querySelector('tr[data-task="T-6"] td.milestone') || {}).textContent`
	blackbox.MustContain(t, "T-6's milestone before the cancel", b.str(milestone), "Waiting for")
	b.click(`button[data-cancel="T-6"]`)
	b.click(`button[data-cancel="T-6"]`)
	b.waitFor("T-6 cancelled on the list", rowState("T-6")+` === 'cancelled'`, 30*time.Second)
	if got := b.str(milestone); got != "Cancelled by the user" {
		t.Fatalf("the cancelled task's row says %q", got)
	}
	b.goTo("#/tasks/T-6")
	b.waitFor("T-6's page", detailState+` === 'cancelled'`, 10*time.Second)
	if got := b.str(`(document.querySelector('#overview dd[data-key="ended"]') || {}).textContent`); !strings.HasPrefix(got, "Cancelled by the user · ") ||
		b.truth(`document.querySelector('#overview dd[data-key="milestone"]')`) {
		t.Fatalf("the cancelled task's page says it ended %q\n%s", got, b.snapshot())
	}
	out := in.Cli("status", "T-6")
	blackbox.MustContain(t, "wilco status T-6", out, "Cancelled by the user")
	if strings.Contains(out, "Waiting for") {
		t.Fatalf("wilco status of the cancelled task:\n%s", out)
	}
	b.goTo("#/tasks")
}

// webSecurity checks the session of a logged-in browser: its cookie is
// HttpOnly and SameSite=Strict, the API refuses a request without it or
// with a wrong CSRF token, an agent's token does not log in, and a used
// login link does not either.
func webSecurity(t *testing.T, in *blackbox.Instance, b *browser, link, agentTok string) {
	t.Helper()
	ctx := b.ctx
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{in.Url}})
	if err != nil {
		t.Fatal(err)
	}
	var session *network.Cookie
	for _, c := range res.Cookies {
		if strings.HasPrefix(c.Name, "wilco_session_") {
			session = c
		}
	}
	if session == nil || !session.HTTPOnly || session.SameSite != network.CookieSameSiteStrict {
		t.Fatalf("the session cookie: %+v", session)
	}
	if got := b.str("document.cookie"); strings.Contains(got, "wilco_session") {
		t.Fatalf("the page's scripts can read the session cookie: %q", got)
	}
	cookie := []string{"Cookie", session.Name + "=" + session.Value}
	forged := map[string]any{"description": "forged", "agent": "remote"}

	// Without the cookie nothing is readable; with it, reads work and a
	// change needs the CSRF token.
	for _, path := range []string{"/v1/tasks", "/v1/tasks/T-1", "/v1/agents", "/v1/events?follow=false"} {
		if r := in.Call("GET", path, "", nil); r.Status != http.StatusUnauthorized {
			t.Errorf("GET %s without the cookie: %d", path, r.Status)
		}
	}
	in.Must(200, in.Call("GET", "/v1/tasks/T-1", "", nil, cookie...))
	for _, header := range [][]string{cookie, append(slices.Clone(cookie), "X-CSRF-Token", "forged-token")} {
		r := in.Call("POST", "/v1/tasks", "", forged, header...)
		if r.Status != http.StatusForbidden || !strings.Contains(string(r.Body), "X-CSRF-Token") {
			t.Errorf("a submit with the cookie and %v: %d %s", header[2:], r.Status, r.Body)
		}
	}
	// The same from inside the page (the browser sends the cookie itself).
	var statuses []int
	b.eval(`Promise.all([{}, {'X-CSRF-Token': 'forged-token'}].map((extra) => fetch('/v1/tasks', {
		method: 'POST', credentials: 'same-origin',
		headers: Object.assign({'Content-Type': 'application/json'}, extra), body: JSON.stringify({description: 'forged', agent: 'remote'}),
	}).then((r) => r.status)))`, &statuses)
	if !slices.Equal(statuses, []int{403, 403}) {
		t.Fatalf("requests from the page without the CSRF token or with a wrong one: %v", statuses)
	}
	var all struct{ Tasks []blackbox.Task }
	in.Must(200, in.Call("GET", "/v1/tasks", blackbox.AdminToken, nil), &all)
	for _, tk := range all.Tasks {
		if tk.Description == "forged" {
			t.Fatalf("a refused request made %s", tk.ID)
		}
	}

	// Logged out, the cookie stops working; an agent's token does not log
	// in; the used link does not either; the admin token does.
	b.click("#logout")
	b.waitFor("the login form", `document.getElementById('login-token') !== null`, 10*time.Second)
	if r := in.Call("GET", "/v1/tasks", "", nil, cookie...); r.Status != http.StatusUnauthorized {
		t.Fatalf("the cookie after the logout: %d", r.Status)
	}
	b.screenshot("login")
	b.typeIn("#login-token", agentTok)
	b.click("#login button[type=submit]")
	b.waitFor("the agent token's refusal", `document.getElementById('login-error').textContent.includes("agent's token cannot log in")`, 10*time.Second)
	b.navigate(link)
	b.waitFor("the used link's refusal", `(document.getElementById('login-error') || {}).textContent?.includes('used already')`, 10*time.Second)
	b.typeIn("#login-token", blackbox.AdminToken)
	b.click("#login button[type=submit]")
	b.waitFor("the list after a login with the admin token", rowState("T-1")+` === 'success'`, 10*time.Second)
}

// `wilco web` prints a new one-time login link: it logs a browser in once,
// as the one wilco serve printed did.
func TestWilcoWebPrintsANewLoginLinkThatWorksOnce(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n  - {name: remote, adapter: mailbox}\n"+blackbox.CheckStep)
	in := blackbox.ServeRepo(t, dir)
	printed := in.LoginLink()
	out := strings.TrimSpace(in.Cli("web"))
	base, code, ok := strings.Cut(out, "/#login=")
	if !ok || base != in.Url || strings.Contains(printed, code) {
		t.Fatalf("wilco web printed %q (server %s, first link %s)", out, in.Url, printed)
	}
	for _, want := range []int{201, 401} {
		if r := in.Call("POST", "/v1/session", "", map[string]any{"code": code}); r.Status != want {
			t.Fatalf("login with the link: %d %s, want %d", r.Status, r.Body, want)
		}
	}
	_, printedCode, _ := strings.Cut(printed, "/#login=")
	in.Must(201, in.Call("POST", "/v1/session", "", map[string]any{"code": printedCode}))
}

// From the page: a stuck task resumed from its report (a new task that
// says where it comes from), a dry run discarded (nothing written), a
// queued task cancelled from the list (two clicks).
func TestThePageResumesAStuckTaskDiscardsADryRunAndCancels(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+
		execAgent(t, "guesser", "web.sh", []string{"fix"})+
		execAgent(t, "proposer", "propose.sh", nil)+
		"  - {name: remote, adapter: mailbox}\n"+
		blackbox.CheckStep+"policy:\n  loop: {hard_stop: 1}\n")
	in := blackbox.ServeRepo(t, dir)
	b := openBrowser(t)
	b.navigate(in.LoginLink())
	b.waitFor("the task list", `document.querySelector('#task-rows') !== null`, 30*time.Second)

	in.Submit(map[string]any{"description": "Write the fix into file.txt", "agent": "guesser"})
	b.goTo("#/tasks/T-1")
	b.waitFor("T-1 stuck on its page", `document.getElementById('resume') !== null`, 60*time.Second)
	blackbox.MustContain(t, "the stuck panel", b.str(`document.getElementById('needs-you').textContent`), "Stuck after 1 verify loops", "Resume from the report")
	b.click("#resume")
	b.waitFor("the resumed task's page", `location.hash === '#/tasks/T-2' && (document.querySelector('#overview dd[data-key="resumed from"]') || {}).textContent === 'T-1'`, 30*time.Second)
	blackbox.MustContain(t, "the resumed prompt", in.Prompt("T-2-a1"), "# Stuck report: T-1")
	b.waitFor("T-2 stuck too", `document.getElementById('resume') !== null`, 60*time.Second)

	before := blackbox.ReadFile(t, filepath.Join(dir, "file.txt")) // what the stuck tasks left
	in.Submit(map[string]any{"description": "Write the fix into file.txt and add new.txt", "agent": "proposer", "dry_run": true})
	b.goTo("#/tasks/T-3")
	b.waitFor("T-3's diff", `document.querySelector('.diff-file[data-path="new.txt"]') !== null`, 60*time.Second)
	b.click("#discard")
	b.click("#discard")
	b.waitFor("T-3 discarded", detailState+` === 'cancelled'`, 30*time.Second)
	if got := blackbox.ReadFile(t, filepath.Join(dir, "file.txt")); got != before || blackbox.Exists(filepath.Join(dir, "new.txt")) {
		t.Fatalf("a discarded dry run changed the working tree: file.txt %q (was %q), new.txt there: %v", got, before, blackbox.Exists(filepath.Join(dir, "new.txt")))
	}

	in.Submit(map[string]any{"description": "Wait for the remote agent", "agent": "remote"})
	in.Submit(map[string]any{"description": "Queued behind it", "agent": "remote"})
	b.goTo("#/tasks?state=queued")
	b.waitFor("T-5 queued", rowState("T-5")+` === 'queued'`, 30*time.Second)
	b.click(`button[data-cancel="T-5"]`)
	b.click(`button[data-cancel="T-5"]`)
	b.waitFor("T-5 gone from the list", `document.querySelector('tr[data-task="T-5"]') === null`, 30*time.Second)
	if r := in.Call("GET", "/v1/tasks/T-5", blackbox.AdminToken, nil); r.Status != http.StatusNotFound {
		t.Fatalf("the cancelled queued task: %d %s", r.Status, r.Body)
	}
	b.noExceptions()
}
