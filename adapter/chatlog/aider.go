package chatlog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Aider appends its conversation, as markdown, to .aider.chat.history.md
// in the root of the git repository it runs in (in its folder outside
// one), unless --chat-history-file or AIDER_CHAT_HISTORY_FILE (in the
// environment, a .env file or .aider.conf.yml) names another file. Taken
// from Aider's own source, v0.86.2 (its latest release): aider/io.py
// (InputOutput: append_chat_history, user_input, ai_output, tool_output,
// tool_error, confirm_ask), aider/args.py and aider/main.py (the file, its
// configuration); not seen from a run of it (it is a Python program wilco's
// tests do not install).
//
// Each write appends whole lines:
//   - "\n# aider chat started at 2006-01-02 15:04:05\n\n" when Aider starts;
//   - a prompt: "\n#### " and its lines joined by "  \n#### " ("<blank>"
//     for an empty one), then "  \n";
//   - the model's reply, once its stream has ended: "\n", its text
//     trimmed, "\n\n";
//   - what Aider itself says (an edit applied, a commit, an error, the
//     tokens used, a question and its answer): "> " and the text trimmed,
//     then "  \n", one line at a time.
//
// So a line Aider writes itself ends with two spaces (a markdown line
// break), and one of the model's text does not get them: a line that
// begins with "####" or ">" is a prompt's or Aider's only when it ends so.
// A question answered for the user (Aider's "(A)ll" or "(S)kip all") is
// written as a prompt line: it is read as Aider's own output.
//
// The record has no ids and no turn ends: an entry's id is the number of
// its first line; a turn is everything after its prompt up to the next
// one. An entry is whole once a line that is not part of it follows it:
// the last one is partial (the reply or output may still grow).

type aiderFormat struct{}

func init() { register(aiderFormat{}) }

func (aiderFormat) Name() string { return "aider" }

// AiderHistoryFile is where Aider running in w.Dir writes its chat
// history, as Aider resolves it: AIDER_CHAT_HISTORY_FILE from a .env file
// (the folder's, the repository's, the home's, the first found) or the
// environment, else chat-history-file from .aider.conf.yml (the same
// places), else .aider.chat.history.md in the repository's root (or the
// folder). A relative name is in w.Dir. (--chat-history-file among the
// program's arguments is not seen: a Where holds no arguments.)
func AiderHistoryFile(w Where) string {
	root := gitRoot(w.Dir)
	places := []string{w.Dir}
	if root != "" && root != w.Dir {
		places = append(places, root)
	}
	places = append(places, w.Home())
	name := ""
	for _, dir := range places {
		if v := dotenvValue(filepath.Join(dir, ".env"), "AIDER_CHAT_HISTORY_FILE"); v != "" {
			name = v
			break
		}
	}
	if name == "" {
		name = w.Getenv("AIDER_CHAT_HISTORY_FILE")
	}
	if name == "" {
		for _, dir := range places {
			if v := aiderConf(filepath.Join(dir, ".aider.conf.yml"), "chat-history-file"); v != "" {
				name = v
				break
			}
		}
	}
	if name == "" {
		if root == "" {
			root = w.Dir
		}
		return filepath.Join(root, ".aider.chat.history.md")
	}
	if !filepath.IsAbs(name) {
		name = filepath.Join(w.Dir, name)
	}
	return name
}

// gitRoot is the root of the git working tree dir is in ("" outside one):
// the nearest folder holding a .git that git would take: a folder with a
// HEAD, or a file (a worktree's, "gitdir: …"). An empty .git folder is no
// repository to git, nor to Aider.
func gitRoot(dir string) string {
	d, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for {
		if isGitDir(filepath.Join(d, ".git")) {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// isGitDir reports whether path is a .git git would take.
func isGitDir(path string) bool {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return false
	case fi.IsDir():
		_, err := os.Stat(filepath.Join(path, "HEAD"))
		return err == nil
	default:
		b, err := os.ReadFile(path)
		return err == nil && strings.HasPrefix(string(b), "gitdir: ")
	}
}

// dotenvValue is key's value in the .env file at path ("" when unset).
func dotenvValue(path, key string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	value := ""
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "export "))
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) != key {
			continue
		}
		v = strings.TrimSpace(v)
		switch {
		case len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0]:
			v = v[1 : len(v)-1]
		default:
			if i := strings.Index(v, " #"); i >= 0 {
				v = strings.TrimSpace(v[:i])
			}
		}
		value = v
	}
	return value
}

// aiderConf is key's value in the YAML configuration file at path.
func aiderConf(path, key string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var conf map[string]any
	if yaml.Unmarshal(b, &conf) != nil {
		return ""
	}
	if s, ok := conf[key].(string); ok {
		return s
	}
	return ""
}

// aiderStarted begins the line Aider writes when it starts.
const aiderStarted = "# aider chat started at "

func (aiderFormat) Open(w Where) (Log, bool, error) {
	path := AiderHistoryFile(w)
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("aider chat history: %w", err)
	}
	if info.ModTime().Before(w.Since) {
		// Not written since the program started: it has not begun yet.
		return nil, false, nil
	}
	// The file holds every run of Aider in the repository: this one's
	// conversation is after the last start written.
	start, err := aiderLastStart(path)
	if err != nil {
		return nil, false, fmt.Errorf("aider chat history: %w", err)
	}
	l := &aiderLog{p: &aiderParser{}}
	last := -1
	l.tail = &jsonlLog{path: path, parse: func(line []byte, n int) []Entry {
		if n <= last {
			// Read from its start again (cut or replaced).
			l.p, start = &aiderParser{}, 0
		}
		last = n
		if n < start {
			return nil
		}
		return l.p.line(line, n)
	}}
	return l, true, nil
}

// aiderLastStart is the number of the last line of the file at path that
// says Aider started (0 when none does).
func aiderLastStart(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	start := 0
	for n := 0; sc.Scan(); n++ {
		if strings.HasPrefix(sc.Text(), aiderStarted) {
			start = n
		}
	}
	return start, sc.Err()
}

// aiderLog reads an Aider chat history as it grows: its whole entries, and
// the last one, partial.
type aiderLog struct {
	tail *jsonlLog
	p    *aiderParser
}

func (l *aiderLog) Path() string         { return l.tail.path }
func (l *aiderLog) Conversation() string { return "" }

func (l *aiderLog) Read() ([]Entry, error) {
	entries, err := l.tail.Read()
	out := append([]Entry(nil), entries...)
	if e, ok := l.p.pending(); ok {
		out = append(out, e)
	}
	return out, err
}

// ParseAider reads an Aider chat history: the entries its whole lines
// hold, the last one partial.
func ParseAider(data []byte) []Entry {
	p := &aiderParser{}
	var out []Entry
	for n := 0; ; n++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		if line := data[:i]; len(bytes.TrimSpace(line)) > 0 {
			out = append(out, p.line(line, n)...)
		}
		data = data[i+1:]
	}
	if e, ok := p.pending(); ok {
		out = append(out, e)
	}
	return out
}

// aiderAnswer is a question with the answer Aider gave for the user,
// written as a prompt.
var aiderAnswer = regexp.MustCompile(`\(Y\)es/\(N\)o.*\]: ?\S*\s*$`)

// aiderParser groups a chat history's lines (the blank ones left out, n
// counting them) into entries: consecutive prompt lines make a prompt,
// consecutive lines of Aider's own one output, and the model's lines, with
// the blank lines between them, its text. Aider writes a message of
// several lines as one output ("> " before its first line only, the two
// spaces after its last), so a line that begins with ">" without ending
// so is held: the lines right after it, up to one that ends so, are
// Aider's output; a blank line before that one makes them the model's (a
// quote in its text).
type aiderParser struct {
	open        bool
	kind        Kind
	first, last int
	lines       []string
	held        []string
	heldFirst   int
}

// line reads line n: the entries it closes.
func (p *aiderParser) line(b []byte, n int) []Entry {
	s := strings.TrimSuffix(string(b), "\r")
	var out []Entry
	if len(p.held) > 0 {
		if n == p.heldFirst+len(p.held) && !strings.HasPrefix(s, aiderStarted) {
			p.held = append(p.held, s)
			if strings.HasSuffix(s, "  ") {
				held, first := p.held, p.heldFirst
				p.held = nil
				held[0] = strings.TrimPrefix(strings.TrimPrefix(held[0], ">"), " ")
				held[len(held)-1] = strings.TrimSuffix(held[len(held)-1], "  ")
				for i, h := range held {
					out = append(out, p.add(ToolResult, first+i, h)...)
				}
			}
			return out
		}
		held, first := p.held, p.heldFirst
		p.held = nil
		for i, h := range held {
			out = append(out, p.add(Text, first+i, h)...)
		}
	}
	kind, text := aiderLine(s)
	switch kind {
	case "": // Aider started: no entry
		if p.open {
			out = append(out, p.entry(false))
			p.open = false
		}
	case aiderHeld:
		p.held, p.heldFirst = []string{s}, n
	default:
		out = append(out, p.add(kind, n, text)...)
	}
	return out
}

// add puts line n (its text) in the entry open, or in a new one when it
// is not of that entry: the entry it closes.
func (p *aiderParser) add(kind Kind, n int, text string) []Entry {
	var out []Entry
	if p.open && (kind != p.kind || kind != Text && n != p.last+1) {
		out = append(out, p.entry(false))
		p.open = false
	}
	if !p.open {
		p.open, p.kind, p.first, p.lines = true, kind, n, nil
	} else {
		for i := p.last + 1; i < n; i++ {
			p.lines = append(p.lines, "")
		}
	}
	p.last = n
	p.lines = append(p.lines, text)
	return out
}

// aiderHeld is a line that may begin an output of several lines.
const aiderHeld Kind = "held"

// aiderLine is what line s is (a prompt's, Aider's own, the model's, held;
// "" for Aider's start) and its text.
func aiderLine(s string) (Kind, string) {
	if strings.HasPrefix(s, aiderStarted) {
		return "", ""
	}
	if body, ok := strings.CutSuffix(s, "  "); ok {
		if rest, ok := strings.CutPrefix(body, "####"); ok && (rest == "" || rest[0] == ' ') {
			rest = strings.TrimPrefix(rest, " ")
			if aiderAnswer.MatchString(rest) {
				return ToolResult, rest
			}
			return Prompt, rest
		}
		if rest, ok := strings.CutPrefix(body, ">"); ok {
			return ToolResult, strings.TrimPrefix(rest, " ")
		}
	} else if strings.HasPrefix(s, ">") {
		return aiderHeld, s
	}
	return Text, s
}

// pending is the entry still open (partial), if any.
func (p *aiderParser) pending() (Entry, bool) {
	if !p.open {
		return Entry{}, false
	}
	return p.entry(true), true
}

func (p *aiderParser) entry(partial bool) Entry {
	text := strings.Join(p.lines, "\n")
	if p.kind == Prompt && len(p.lines) == 1 && text == "<blank>" {
		text = ""
	}
	return Entry{ID: fmt.Sprintf("line-%d", p.first), Kind: p.kind, Text: text, Partial: partial}
}
