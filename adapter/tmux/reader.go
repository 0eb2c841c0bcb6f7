package tmux

import (
	"regexp"
	"strings"
)

// anchorLines is how many of the last lines before a turn mark where the
// turn begins.
const anchorLines = 6

// Reader reads a turn of the conversation a pane shows, each line once.
//
// Mark starts a turn: the lines the pane shows then are the past. Next,
// given the conversation the pane shows now (Style.Content), returns the
// lines of the turn that it did not return before. The turn begins after
// the echo of its own prompt: the last place the pane shows the prompt's
// last lines. That holds on an alternate screen, where nothing scrolls
// back: once the echo was seen and has scrolled away, all the pane shows
// is the turn's. Until the echo shows (a program that does not echo, or
// shows a long paste as a note), the turn begins after the last lines
// seen at Mark (found again even when they moved: the program scrolled,
// redrew or cleared its screen), the echo at its start skipped. What is
// new is what the turn as the pane shows it now holds beyond the turn as
// it showed it last time (their longest common subsequence): lines added
// anywhere, and lines the program rewrote in place ("Reading file.txt"
// becoming "Read 1 file"), but never a line that only moved.
//
// A Reader is pure: it reads what it is given and keeps only text.
type Reader struct {
	anchor  []string // the last non-blank lines before the turn
	prompt  string   // the prompt of the turn, loosely normalised (see loose)
	tail    []string // the prompt's last non-blank lines, loosely normalised
	prev    []string // the turn as the pane showed it last
	emitted []string // the turn's lines returned so far
	// echoed: the end of the prompt's echo was seen in this turn.
	echoed bool
	// before is what followed the last echo of the same last lines when
	// the turn began (an earlier prompt's, ended the same way), hasBefore
	// whether there was one: while that is what follows the last echo,
	// the pane still shows the earlier turn.
	before    []string
	hasBefore bool
	// final: the turn is over; nothing is held back any more.
	final bool
}

// tailLines is how many of the prompt's last lines find its echo.
const tailLines = 2

// Mark starts a turn after the conversation content; prompt is what is
// about to be sent (its echo is not the agent's).
func (r *Reader) Mark(content []Line, prompt string) {
	r.anchor = r.anchor[:0]
	for i := len(content) - 1; i >= 0 && len(r.anchor) < anchorLines; i-- {
		if t := strings.TrimSpace(content[i].Text); t != "" {
			r.anchor = append(r.anchor, t)
		}
	}
	for i, j := 0, len(r.anchor)-1; i < j; i, j = i+1, j-1 {
		r.anchor[i], r.anchor[j] = r.anchor[j], r.anchor[i]
	}
	r.prompt = loose(prompt)
	r.tail = r.tail[:0]
	pl := strings.Split(prompt, "\n")
	for i := len(pl) - 1; i >= 0 && len(r.tail) < tailLines; i-- {
		if w := loose(pl[i]); w != "" {
			r.tail = append([]string{w}, r.tail...)
		}
	}
	r.prev, r.emitted, r.echoed, r.final = nil, nil, false, false
	r.before, r.hasBefore = nil, false
	if end, ok := r.echoEnd(content); ok {
		r.before, r.hasBefore = lineTexts(content[end:]), true
	}
}

// Final returns the lines of the turn not returned before, the turn being
// over: an echo of the prompt followed by what followed an earlier one is
// this turn's now (the agent answered as it did then, faster than the
// pane was read).
func (r *Reader) Final(content []Line) []string {
	r.final = true
	return r.Next(content)
}

// Turn is every line of the turn returned so far.
func (r *Reader) Turn() []string { return append([]string(nil), r.emitted...) }

// Next returns the lines of the turn the content shows that were not
// returned before.
func (r *Reader) Next(content []Line) []string {
	turn := r.turn(content)
	fresh := added(r.prev, turn)
	r.prev = turn
	r.emitted = append(r.emitted, fresh...)
	return fresh
}

// maxDiff bounds the work of one comparison (the lines that differ,
// multiplied): past it, a line is new when the earlier turn did not hold
// it as often.
const maxDiff = 1 << 22

// added returns the lines of b that are not in a longest common
// subsequence of a and b, in order.
func added(a, b []string) []string {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	am, bm := a[p:len(a)-s], b[p:len(b)-s]
	if len(bm) == 0 {
		return nil
	}
	if len(am) == 0 {
		return append([]string(nil), bm...)
	}
	var out []string
	if len(am)*len(bm) > maxDiff {
		count := map[string]int{}
		for _, l := range am {
			count[l]++
		}
		for _, l := range bm {
			if count[l] > 0 {
				count[l]--
				continue
			}
			out = append(out, l)
		}
		return out
	}
	// lcs[i][j]: the longest common subsequence of am[i:] and bm[j:].
	w := len(bm) + 1
	lcs := make([]int32, (len(am)+1)*w)
	for i := len(am) - 1; i >= 0; i-- {
		for j := len(bm) - 1; j >= 0; j-- {
			if am[i] == bm[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	i, j := 0, 0
	for j < len(bm) {
		switch {
		case i < len(am) && am[i] == bm[j]:
			i, j = i+1, j+1
		case i < len(am) && lcs[(i+1)*w+j] >= lcs[i*w+j+1]:
			i++
		default:
			out = append(out, bm[j])
			j++
		}
	}
	return out
}

// turn is the turn's lines in content: after the anchor, without the
// prompt's echo.
func (r *Reader) turn(content []Line) []string {
	if end, ok := r.echoEnd(content); ok {
		after := lineTexts(content[end:])
		if !r.echoed && r.hasBefore && !r.final && len(after) >= len(r.before) && equal(after[:len(r.before)], r.before) &&
			r.inPrompt(after[len(r.before):]) {
			// The earlier turn as the pane showed it when this one began,
			// then perhaps this prompt's echo being drawn: nothing of this
			// turn yet (or its answer so far repeats the earlier one's).
			return nil
		}
		r.echoed = true
		return after
	}
	if r.echoed {
		// The echo scrolled away: what shows is all after it.
		return lineTexts(content)
	}
	t := r.skipEcho(content[r.start(content):])
	if !r.final {
		// Lines at the end that the prompt holds may be its echo being
		// drawn: held until a line follows that it does not hold, or the
		// echo's end shows, or the turn is over.
		n := len(t)
		for n > 0 && r.inPrompt(t[n-1:n]) {
			n--
		}
		t = t[:n]
	}
	return t
}

// inPrompt reports whether every line is blank or part of the prompt.
func (r *Reader) inPrompt(lines []string) bool {
	for _, l := range lines {
		if w := loose(l); w != "" && !strings.Contains(r.prompt, w) {
			return false
		}
	}
	return true
}

// lineTexts are the lines' texts, without the blank lines that end them.
func lineTexts(lines []Line) []string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		out = append(out, l.Text)
	}
	for len(out) > 0 && strings.TrimSpace(out[len(out)-1]) == "" {
		out = out[:len(out)-1]
	}
	return out
}

// echoEnd is where the turn begins after the echo of its prompt: after
// the last line of content that ends the prompt's last lines as the
// program shows them (wrapped, re-indented, its markdown marks taken off).
// Lines that show only part of them count where they are the first the
// pane shows (the rest scrolled away) once the whole was seen.
func (r *Reader) echoEnd(content []Line) (int, bool) {
	if len(r.tail) == 0 {
		return 0, false
	}
	want := strings.Join(r.tail, " ")
	for e := len(content) - 1; e >= 0; e-- {
		if content[e].Reply {
			continue
		}
		// Up from e, the lines read together must end what is wanted, and
		// then hold it whole (a line may hold more: the end of the line
		// before, joined to it).
		acc := ""
		k := e
		for ; k >= 0; k-- {
			w := loose(content[k].Text)
			if w == "" {
				if k == e {
					break
				}
				continue
			}
			if content[k].Reply {
				break
			}
			if acc == "" {
				acc = w
			} else {
				acc = w + " " + acc
			}
			if strings.HasSuffix(acc, want) || !strings.HasSuffix(want, acc) {
				break
			}
		}
		if acc == "" {
			continue
		}
		if strings.HasSuffix(acc, want) || k < 0 && r.echoed && strings.HasSuffix(want, acc) {
			return e + 1, true
		}
	}
	return 0, false
}

// start is where the turn begins in content: after the last occurrence of
// the anchor that the lines already returned follow. When the whole anchor
// is not there (its last lines were a passing status), its first lines
// are looked for; 0 when none is there (a cleared screen).
func (r *Reader) start(content []Line) int {
	for n := len(r.anchor); n >= min(2, len(r.anchor)) && n > 0; n-- {
		if at, ok := r.after(content, r.anchor[:n]); ok {
			return at
		}
	}
	// The anchor's first lines scrolled away over the top of the screen
	// (no scrollback): the content begins with its last ones.
	for m := len(r.anchor) - 1; m >= 1; m-- {
		if at, ok := beginsWith(content, r.anchor[len(r.anchor)-m:]); ok {
			return at
		}
	}
	// The anchor scrolled away: the turn begins where the turn seen last
	// time began.
	if len(r.prev) > 0 {
		k := min(3, len(r.prev))
		for i := len(content) - 1; i >= 0; i-- {
			if strings.TrimSpace(content[i].Text) != strings.TrimSpace(r.prev[0]) || i+k > len(content) {
				continue
			}
			match := true
			for j := 1; j < k; j++ {
				if content[i+j].Text != r.prev[j] {
					match = false
					break
				}
			}
			if match {
				return i
			}
		}
	}
	if len(r.anchor) == 1 {
		if at, ok := r.after(content, r.anchor); ok {
			return at
		}
	}
	return 0
}

// after finds where content goes on after the anchor's last occurrence
// whose turn begins as the turn seen last time did (else its last
// occurrence).
func (r *Reader) after(content []Line, anchor []string) (int, bool) {
	var ends []int
	k := 0 // anchor lines matched, skipping blank lines
	for i := range content {
		t := strings.TrimSpace(content[i].Text)
		if t == "" {
			continue
		}
		switch {
		case t == anchor[k]:
			k++
		case t == anchor[0]:
			k = 1
		default:
			k = 0
		}
		if k == len(anchor) {
			ends = append(ends, i+1)
			k = 0
			// An anchor may overlap itself ("ok", "ok"): look again from
			// its second line.
			for j := 1; j < len(anchor); j++ {
				if prefixOf(anchor[j:], anchor) {
					k = len(anchor) - j
					break
				}
			}
		}
	}
	if len(ends) == 0 {
		return 0, false
	}
	if len(r.prev) > 0 {
		for i := len(ends) - 1; i >= 0; i-- {
			if turn := r.skipEcho(content[ends[i]:]); len(turn) > 0 && turn[0] == r.prev[0] {
				return ends[i], true
			}
		}
	}
	return ends[len(ends)-1], true
}

// beginsWith reports whether content's first non-blank lines are lines,
// and where it goes on after them.
func beginsWith(content []Line, lines []string) (int, bool) {
	k := 0
	for i := range content {
		t := strings.TrimSpace(content[i].Text)
		if t == "" {
			continue
		}
		if t != lines[k] {
			return 0, false
		}
		if k++; k == len(lines) {
			return i + 1, true
		}
	}
	return 0, false
}

func prefixOf(a, b []string) bool {
	if len(a) > len(b) {
		return false
	}
	return equal(a, b[:len(a)])
}

// pastedMarker is how TUIs show a long paste in their input box and echo.
var pastedMarker = regexp.MustCompile(`^\[Pasted text #\d+[^\]]*\]$|^…\s*\+\d+ lines`)

// skipEcho drops the echo of the prompt at the start of a turn's lines:
// leading blank lines, then, when the first line begins the prompt (or is
// a program's note of a long paste), the lines that go on with it, in
// order. A line the style marks as the agent's ends the echo.
func (r *Reader) skipEcho(lines []Line) []string {
	i := 0
	for i < len(lines) && strings.TrimSpace(lines[i].Text) == "" {
		i++
	}
	if i < len(lines) && !lines[i].Reply && r.prompt != "" {
		pos := 0
		first := true
		gap := false // the echo skipped part of the prompt: the next line may come later in it
		for i < len(lines) {
			l := lines[i]
			w := loose(l.Text)
			if l.Reply || (l.Echo && !first) {
				break
			}
			if w == "" {
				i++
				continue
			}
			if pastedMarker.MatchString(words(l.Text)) {
				i++
				first, gap = false, true
				continue
			}
			at := strings.Index(r.prompt[pos:], w)
			if at < 0 || first && at != 0 || !first && !gap && at > 1 {
				break
			}
			pos += at + len(w)
			first, gap = false, false
			i++
		}
	}
	out := make([]string, 0, len(lines)-i)
	for _, l := range lines[i:] {
		out = append(out, l.Text)
	}
	// The blank lines that end what the screen shows are not read yet.
	for len(out) > 0 && strings.TrimSpace(out[len(out)-1]) == "" {
		out = out[:len(out)-1]
	}
	return out
}

// words is s with its runs of white space made one space.
func words(s string) string { return strings.Join(strings.Fields(s), " ") }

// loose is s as a TUI may show it: without the markdown marks it renders
// ("## Task" shows as "Task", "**bold**" as "bold"), its runs of white
// space made one space.
func loose(s string) string {
	return words(strings.Map(func(r rune) rune {
		switch r {
		case '#', '*', '_', '`', '>':
			return ' '
		}
		return r
	}, s))
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
