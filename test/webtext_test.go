package test

// The page's readers of the text wilco hands it, run in a real headless
// Chromium on what real git writes: a diff's file names (git quotes some,
// and leaves others with spaces ambiguous), and the Markdown of an
// escalation (rendered as elements, never as the browser's HTML).

import (
	"encoding/json"
	"flag"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"wilco/test/blackbox"
)

var webTextStart = flag.Uint64("web.text.start", 0, "where the random choices of the page's text tests (the file names and the Markdown they make up) start (default: from the clock)")

// textRandom is the random choices of a text test: from -web.text.start,
// or from the clock (logged, to run the same again).
func textRandom(t *testing.T) (*mrand.Rand, uint64) {
	t.Helper()
	start := *webTextStart
	if start == 0 {
		start = uint64(time.Now().UnixNano())
	}
	t.Logf("random choices from %d (the same again: -web.text.start=%d)", start, start)
	return mrand.New(mrand.NewPCG(start, start^0x9e3779b97f4a7c15)), start
}

// pageModules opens the page of a running wilco, whose modules a test then
// imports (they are served without a login: they hold no data).
func pageModules(t *testing.T) *browser {
	t.Helper()
	in := blackbox.ServeRepo(t, blackbox.NewRepo(t, "agents:\n  - {name: remote, adapter: mailbox}\n"+blackbox.CheckStep))
	b := openBrowser(t)
	b.navigate(in.Url + "/")
	b.waitFor("the login form", `document.getElementById('login-token') !== null`, 30*time.Second)
	return b
}

// fileNames are names git quotes in a diff (bytes above 0x7f, control
// characters, '"', '\') or leaves as they are though they hold spaces —
// even " b/", which the "diff --git" line cannot tell from its second
// name — and, drawn from r, as many more made up of such characters.
func fileNames(r *mrand.Rand, n int) []string {
	names := []string{
		"résumé.txt", "notes with spaces.md", "tab\there.txt", "new\nline.txt", `quote"d.txt`, `back\slash.txt`,
		"x b/y.txt", "a b", "trailing space ", " leading space", "日本語 ファイル.md", "emoji 🎉.txt", "sub dir/b c/d e.txt",
		`\303 not an escape.txt`, "ctrl\x01char.txt", "bell\x07 and del\x7f.txt", "-dash", "100% done", "a/b/c.txt",
	}
	alphabet := []string{"a", "b", "z", "0", " ", " ", "é", "ü", "日", "🎉", `"`, `\`, "\t", "\n", "\r", "b/", "a/", " b/", "-", "_", ".", "%", "'"}
	// files and dirs keep a name from being both a file and a folder.
	files, dirs := map[string]bool{}, map[string]bool{}
	fits := func(name string) bool {
		parts := strings.Split(name, "/")
		for i, part := range parts {
			if part == "" || part == "." || part == ".." || strings.EqualFold(part, ".git") || files[strings.Join(parts[:i+1], "/")] {
				return false
			}
		}
		return !dirs[name]
	}
	add := func(name string) {
		files[name] = true
		for i, c := range name {
			if c == '/' {
				dirs[name[:i]] = true
			}
		}
	}
	for _, name := range names {
		add(name)
	}
	for len(names) < n {
		var sb strings.Builder
		sb.WriteString("r")
		for range 1 + r.IntN(10) {
			sb.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		if name := sb.String(); fits(name) {
			add(name)
			names = append(names, name)
		}
	}
	return names
}

// A diff's file names are shown as they are: whatever a name holds, the
// diff view reads from git's diff the names git itself lists (with -z,
// unquoted) — for files changed, added (with content, empty, binary),
// deleted, renamed or made executable, with core.quotepath on and off.
func TestTheDiffViewShowsEveryFileNameAsItIs(t *testing.T) {
	t.Parallel()
	r, _ := textRandom(t)
	names := fileNames(r, 80)

	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "init", "-q")
	// What each name undergoes, in turn: a file the first commit has (so
	// it is changed, deleted, renamed or made executable) or not (added).
	const changed, added, addedEmpty, addedBinary, deleted, renamed, executable = 0, 1, 2, 3, 4, 5, 6
	for i, name := range names {
		switch i % 7 {
		case changed, deleted, executable:
			write(name, "one\ntwo\n")
		case renamed:
			write(name, "the same text, long enough for git to see the rename\n")
		}
	}
	git(t, dir, "add", "-A")
	git(t, dir, "-c", "user.name=wilco test", "-c", "user.email=test@wilco.invalid", "commit", "-qm", "base")
	for i, name := range names {
		switch i % 7 {
		case changed:
			write(name, "one\n2\n")
		case added:
			write(name, "new\n")
		case addedEmpty:
			write(name, "")
		case addedBinary:
			write(name, "\x00\x01\x02binary\x00")
		case deleted:
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		case renamed:
			if err := os.Rename(filepath.Join(dir, name), filepath.Join(dir, name+" moved")); err != nil {
				t.Fatal(err)
			}
		case executable:
			if err := os.Chmod(filepath.Join(dir, name), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	git(t, dir, "add", "-A")

	b := pageModules(t)
	for _, quotepath := range []string{"true", "false"} {
		for _, renames := range []string{"--no-renames", "-M"} {
			common := []string{"-c", "core.quotepath=" + quotepath, "diff", "--cached", renames, "--no-ext-diff", "--no-textconv", "--no-color", "--no-relative"}
			// The flags wilco's dry runs make their diff with.
			diff := gitOut(t, dir, append(common, "--binary", "--src-prefix=a/", "--dst-prefix=b/")...)
			var want []string
			fields := strings.Split(strings.TrimSuffix(gitOut(t, dir, append(common, "--name-status", "-z")...), "\x00"), "\x00")
			for i := 0; i < len(fields); i++ {
				switch st := fields[i]; st[0] {
				case 'R':
					want = append(want, fmt.Sprintf("renamed %q → %q", fields[i+1], fields[i+2]))
					i += 2
				default:
					status := map[byte]string{'A': "new", 'D': "deleted", 'M': "modified"}[st[0]]
					want = append(want, fmt.Sprintf("%s %q", status, fields[i+1]))
					i++
				}
			}
			var got []string
			b.eval(`import('/ui/diff.js').then((m) => m.parse(`+js(diff)+`).map((f) => JSON.stringify([f.status, f.oldPath, f.path])))`, &got)
			var shown []string
			for _, g := range got {
				var f []string
				if err := json.Unmarshal([]byte(g), &f); err != nil {
					t.Fatal(err)
				}
				if f[0] == "renamed" {
					shown = append(shown, fmt.Sprintf("renamed %q → %q", f[1], f[2]))
				} else {
					shown = append(shown, fmt.Sprintf("%s %q", f[0], f[2]))
				}
			}
			slices.Sort(want)
			slices.Sort(shown)
			if !slices.Equal(shown, want) {
				for _, w := range want {
					if !slices.Contains(shown, w) {
						t.Errorf("quotepath=%s %s: git lists %s; the page does not", quotepath, renames, w)
					}
				}
				for _, s := range shown {
					if !slices.Contains(want, s) {
						t.Errorf("quotepath=%s %s: the page shows %s; git does not list it", quotepath, renames, s)
					}
				}
			}
		}
	}
	b.noExceptions()
}

// The Markdown of an escalation becomes elements of a few kinds and text,
// whatever it holds: markup and scripts in it (an agent's error, a file
// name) are text, a pipe in a table's last cell stays in the cell, and
// no input — made up from Markdown's own characters — makes the renderer
// throw or make anything else.
func TestTheEscalationsMarkdownIsElementsAndTextOnly(t *testing.T) {
	t.Parallel()
	b := pageModules(t)
	hostile := "## Task <script>window.__md = 1</script>\n\n" +
		"**Task:** <b id=\"md-bold\">bold</b>\n" +
		"| Attempt | Error |\n|---|---|\n| 1 | <img src=x onerror=\"window.__md = 2\"> a | b |\n\n" +
		"- `<i id=\"md-code\">code</i>`\n\n```\n<iframe src=\"javascript:window.__md = 3\"></iframe>\n```\n"
	var got struct {
		Elements      []string
		Cells         []string
		Strong, Code  []string
		Pre, Heading  string
		Ran, Injected bool
	}
	b.eval(`import('/ui/markdown.js').then((m) => {
		const el = m.markdown(`+js(hostile)+`);
		document.body.append(el);
		return {
			elements: [...el.querySelectorAll('*')].map((x) => x.tagName.toLowerCase()),
			cells: [...el.querySelectorAll('td')].map((x) => x.textContent),
			strong: [...el.querySelectorAll('strong')].map((x) => x.textContent),
			code: [...el.querySelectorAll('li code')].map((x) => x.textContent),
			pre: el.querySelector('pre').textContent,
			heading: el.querySelector('h2').textContent,
			ran: window.__md !== undefined,
			injected: document.querySelector('#md-bold, #md-code, img, iframe, script:not([src])') !== null,
		};
	})`, &got)
	if got.Ran || got.Injected {
		t.Fatalf("the Markdown's markup ran or became elements: %+v", got)
	}
	if got.Heading != "Task <script>window.__md = 1</script>" || !slices.Equal(got.Strong, []string{"Task:"}) ||
		!slices.Equal(got.Cells, []string{"1", `<img src=x onerror="window.__md = 2"> a | b`}) ||
		!slices.Equal(got.Code, []string{`<i id="md-code">code</i>`}) || got.Pre != `<iframe src="javascript:window.__md = 3"></iframe>` {
		t.Fatalf("the Markdown is rendered as %+v", got)
	}

	r, start := textRandom(t)
	pieces := []string{"#", "## ", "### ", "*", "**", "`", "```", "~~~", "|", "|---|", "\n", "\n\n", " ", "  ", "- ", "1. ", "2) ", "---", "___",
		"\\", "\\|", ":", "-", "a", "word", "<b>", "</b>", "<script>", "&amp;", "\"", "'", "é", "\t", "\r\n"}
	inputs := make([]string, 300)
	for i := range inputs {
		var sb strings.Builder
		for range r.IntN(60) {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
		inputs[i] = sb.String()
	}
	var odd []string
	b.eval(`import('/ui/markdown.js').then((m) => {
		const kinds = new Set(['div', 'p', 'br', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'strong', 'em', 'code', 'pre', 'ul', 'ol', 'li',
			'table', 'thead', 'tbody', 'tr', 'th', 'td', 'hr']);
		const attrs = new Set(['class', 'start']);
		const odd = [];
		for (const input of `+jsonString(t, inputs)+`) {
			try {
				const el = m.markdown(input);
				for (const x of [el, ...el.querySelectorAll('*')]) {
					if (!kinds.has(x.tagName.toLowerCase()) || [...x.attributes].some((a) => !attrs.has(a.name))) odd.push(JSON.stringify(input) + ' made ' + x.outerHTML);
				}
			} catch (e) {
				odd.push(JSON.stringify(input) + ' threw ' + e);
			}
		}
		return odd;
	})`, &odd)
	if len(odd) > 0 {
		t.Fatalf("random choices from %d: %d inputs rendered wrong, the first: %s", start, len(odd), odd[0])
	}
	b.noExceptions()
}

// jsonString is v as JSON, for a script.
func jsonString(t *testing.T, v any) string {
	t.Helper()
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
