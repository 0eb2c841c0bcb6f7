package tmux

import (
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Screen is one capture of a pane: the scrollback above the screen, and
// the screen's rows, each as it reads (escape sequences stripped), and the
// screen's rows without their faint text.
type Screen struct {
	History []string
	Rows    []string
	// Undimmed are Rows without the text drawn faint (placeholders).
	Undimmed []string
	Width    int
}

// ParseScreen reads the two parts of a capture (`capture-pane -p -e -J`
// of the scrollback, then of the screen), each a text of lines. Trailing
// blanks are trimmed from every line.
func ParseScreen(history, screen string, width int) Screen {
	s := Screen{Width: width}
	for _, l := range splitLines(history) {
		s.History = append(s.History, strings.TrimRight(StripANSI(l), " "))
	}
	for _, l := range splitLines(screen) {
		text, undimmed := parseLine(l)
		s.Rows = append(s.Rows, strings.TrimRight(text, " "))
		s.Undimmed = append(s.Undimmed, strings.TrimRight(undimmed, " "))
	}
	for len(s.Rows) > 0 && s.Rows[len(s.Rows)-1] == "" {
		s.Rows, s.Undimmed = s.Rows[:len(s.Rows)-1], s.Undimmed[:len(s.Undimmed)-1]
	}
	return s
}

func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// Text is the screen's rows, one text.
func (s Screen) Text() string { return strings.Join(s.Rows, "\n") }

// Tail is the last n non-blank rows of the screen, one text.
func (s Screen) Tail(n int) string {
	var out []string
	for i := len(s.Rows) - 1; i >= 0 && len(out) < n; i-- {
		if strings.TrimSpace(s.Rows[i]) != "" {
			out = append(out, s.Rows[i])
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return strings.Join(out, "\n")
}

// State is what an agent's pane shows.
type State string

// Pane states.
const (
	// Ready: the input box is empty and the agent waits for input.
	Ready State = "ready"
	// Busy: the agent is working on a prompt.
	Busy State = "busy"
	// Permission: the agent asks for permission to use a tool.
	Permission State = "permission"
	// Dialog: a question of the program itself (trust this folder, use
	// this API key…) that its preset answers.
	Dialog State = "dialog"
	// Typing: neither ready nor busy: the input box holds text (a prompt
	// pasted and not submitted yet), or the program is starting.
	Typing State = "typing"
	// Dead: the program in the pane has exited.
	Dead State = "dead"
)

// A Dialog question of a program, answered by keys.
type DialogRule struct {
	Name  string
	Match *regexp.Regexp
	Keys  []string
}

// Style is how an agent's screen is drawn: how to tell its state, and what
// of it is decoration rather than the conversation.
type Style struct {
	// Ready, Busy and Permission tell the state. Ready is matched against
	// the last non-blank row when ReadyLastLine is set, else against the
	// screen's rows (without their faint text) in multi-line mode; Busy
	// and Permission against the screen's rows.
	Ready, Busy, Permission *regexp.Regexp
	ReadyLastLine           bool
	// Dialogs are the program's own questions and how to answer them.
	Dialogs []DialogRule
	// LiveRule, when set, is the character of the horizontal rule that
	// opens the program's live region at the bottom of the screen (the
	// input box, its status lines, a permission dialog): that region is
	// not conversation. When it is not set, the last non-blank row is the
	// live region (a prompt or a status line).
	LiveRule rune
	// LiveFrom, when set, opens the live region at the last row it
	// matches (an input box drawn without a rule).
	LiveFrom *regexp.Regexp
	// Drop are decoration lines anywhere (spinners, hints, timings);
	// DropBlock the same, with the lines indented under them (a hint
	// wrapped on several lines).
	Drop, DropBlock []*regexp.Regexp
	// EchoMarkers begin the echo of a prompt the program shows; ReplyMarkers
	// begin the agent's own messages and tool calls. Both are taken off.
	EchoMarkers, ReplyMarkers []string
	// SidePanel: the program draws a panel on the right of the screen;
	// it is cut off.
	SidePanel bool
	// HiddenInput: the input box looks the same empty or holding a prompt
	// (opencode's), so a paste has landed once the pane changed since it.
	// Else a paste has landed once the pane no longer looks ready: a pane
	// that changes otherwise (a hint that goes, a line the program adds
	// while it starts) says nothing of the paste.
	HiddenInput bool
	// Panel, when set, is the column the program's side panel begins at on
	// a screen of the width given (0: it draws none), where the program
	// lays it out so; else, with SidePanel, it is found on the screen.
	Panel func(width int) int
	// Tool finds, in the rows above a permission prompt, the tool it asks
	// for (its first group).
	Tool *regexp.Regexp
	// PermissionBelow: a permission question shows what it asks below its
	// first line (Codex: the command, the model's reason for it), so its
	// text is read from the question down, not from the rows above it
	// (the conversation, the echo of a prompt).
	PermissionBelow bool
	// Asks finds, in a permission question's text, the whole of what it
	// asks for (its first group: the command Codex would run). What it
	// finds is the question's tool, and the only thing an allow list is
	// matched against: the words around it (the model's reason) are not,
	// and a question it finds nothing in is answered no.
	Asks *regexp.Regexp
	// AskRows, when set, is the most rows a question may take from its
	// first row to the last one Asks matched for what it asks to show
	// whole: a taller one may be cut off by the program (opencode's
	// question box is at most 15 rows tall), and reads as none.
	AskRows int
}

// Classify tells the state a screen shows, and for a dialog, which one.
func (st *Style) Classify(s Screen) (State, *DialogRule) {
	text := s.Text()
	for i := range st.Dialogs {
		if st.Dialogs[i].Match.MatchString(text) {
			return Dialog, &st.Dialogs[i]
		}
	}
	if st.Permission != nil && st.Permission.MatchString(text) {
		return Permission, nil
	}
	if st.Busy != nil && st.Busy.MatchString(text) {
		return Busy, nil
	}
	if st.Ready != nil {
		if st.ReadyLastLine {
			for i := len(s.Undimmed) - 1; i >= 0; i-- {
				if strings.TrimSpace(s.Rows[i]) == "" {
					continue
				}
				if st.Ready.MatchString(s.Undimmed[i]) || st.Ready.MatchString(s.Rows[i]) {
					return Ready, nil
				}
				break
			}
		} else if st.Ready.MatchString(strings.Join(s.Undimmed, "\n")) {
			return Ready, nil
		}
	}
	return Typing, nil
}

// Line is one line of the conversation a pane shows.
type Line struct {
	Text string
	// Echo: the line begins the echo of a prompt; Reply: it begins one of
	// the agent's messages (each as the style's markers say).
	Echo, Reply bool
	// cols is how wide the last row of the line is drawn (for joining a
	// row the program wrapped with the next).
	cols int
}

// Content is the conversation a screen shows, scrollback included: the
// rows without the live region at the bottom, without decoration lines
// and rules, without a side panel, without the markers that begin
// messages and without box borders, each right-trimmed; the rows the
// program wrapped itself joined again (see joinWrapped).
func (st *Style) Content(s Screen) []Line {
	rows := st.conversationRows(s)
	cut, sep := st.panelCut(s, rows)
	out := make([]Line, 0, len(s.History)+len(rows))
	block := false // in a dropped block
	add := func(raw string) {
		if cut > 0 {
			raw = cutPanel(raw, cut, sep)
		}
		if block && strings.HasPrefix(raw, "    ") && strings.TrimSpace(raw) != "" {
			return
		}
		block = false
		for _, re := range st.DropBlock {
			if re.MatchString(raw) {
				block = true
				return
			}
		}
		if isRule(raw) || st.dropped(raw) {
			return
		}
		l := st.line(raw)
		l.cols = utf8.RuneCountInString(strings.TrimRight(raw, " "))
		out = append(out, l)
	}
	for _, l := range s.History {
		add(l)
	}
	for _, l := range rows {
		add(l)
	}
	width := s.Width
	if cut > 0 {
		width = cut
	}
	return joinWrapped(out, width)
}

// panelCut is where the style's side panel begins on the screen (0: it
// shows none): where Panel says, else found among rows — the column of its
// rule (sep), else where its text begins.
func (st *Style) panelCut(s Screen, rows []string) (cut int, sep bool) {
	if st.Panel != nil {
		return st.Panel(s.Width), false
	}
	if !st.SidePanel {
		return 0, false
	}
	if cut = separatorColumn(s.Rows, s.Width); cut > 0 {
		return cut, true
	}
	return panelColumn(rows, s.Width), false
}

// joinWrapped joins the rows a program wrapped itself (tmux joins the
// rows it wrapped; a TUI wraps its text before tmux sees it): a row goes
// on in the next one when the next one's first word would not have fit
// in it, and the next row does not begin a line of its own — a message,
// an echo, a list item, a field such as "Understanding:". Where the
// program wraps is the widest row of the conversation when another row
// reaches near it (a conversation whose rows end anywhere is not taken as
// wrapped there), else the width of the screen.
func joinWrapped(lines []Line, width int) []Line {
	wrapAt := 0
	for _, l := range lines {
		wrapAt = max(wrapAt, l.cols)
	}
	near := 0
	for _, l := range lines {
		if l.cols >= wrapAt-8 {
			near++
		}
	}
	if near < 2 || wrapAt < 40 {
		wrapAt = width
	}
	if wrapAt < 40 {
		return lines
	}
	out := lines[:0]
	for _, l := range lines {
		if n := len(out); n > 0 && wrapped(out[n-1], l, wrapAt) {
			out[n-1].Text = strings.TrimRight(out[n-1].Text, " ") + " " + strings.TrimLeft(l.Text, " ")
			out[n-1].cols = l.cols
			continue
		}
		out = append(out, l)
	}
	return out
}

// ownLine begins a line that is never the rest of the row above: a list
// item, a field of the acknowledgment language or of a report, an
// [ACK], a JSON object.
var ownLine = regexp.MustCompile(`^(?:[-*•+]\s|\d+[.)]\s|\[ACK\]|[A-Z][A-Za-z_ ]{0,30}:(\s|$)|[{}\[\]<#>|` + "`" + `])`)

// wrapped reports whether next is the rest of the row prev, wrapped by
// the program at the column wrapAt.
func wrapped(prev, next Line, wrapAt int) bool {
	t := strings.TrimSpace(next.Text)
	if t == "" || strings.TrimSpace(prev.Text) == "" || next.Echo || next.Reply || ownLine.MatchString(t) {
		return false
	}
	word, _, _ := strings.Cut(t, " ")
	return prev.cols+1+utf8.RuneCountInString(word) > wrapAt && prev.cols*3 >= wrapAt*2
}

// conversationRows are the screen's rows above its live region.
func (st *Style) conversationRows(s Screen) []string {
	rows := s.Rows
	if st.LiveFrom != nil {
		for i := len(rows) - 1; i >= 0; i-- {
			if st.LiveFrom.MatchString(rows[i]) {
				return rows[:i]
			}
		}
		return rows
	}
	if st.LiveRule != 0 {
		if i := liveStart(rows, st.LiveRule, s.Width); i >= 0 {
			return rows[:i]
		}
		return rows
	}
	for i := len(rows) - 1; i >= 0; i-- {
		if strings.TrimSpace(rows[i]) != "" {
			return rows[:i]
		}
	}
	return rows
}

// liveStart finds the rule that opens the live region: the first row, in
// the last rows of the screen, drawn across most of its width with the
// rule character. -1 when there is none.
func liveStart(rows []string, rule rune, width int) int {
	const window = 40
	from := max(0, len(rows)-window)
	min := 20
	if width > 0 {
		min = width * 3 / 4
	}
	for i := from; i < len(rows); i++ {
		t := strings.TrimSpace(rows[i])
		if t == "" {
			continue
		}
		n := 0
		only := true
		for _, r := range t {
			if r == rule {
				n++
			} else {
				only = false
				break
			}
		}
		if only && n >= min {
			return i
		}
	}
	return -1
}

func (st *Style) dropped(l string) bool {
	for _, re := range st.Drop {
		if re.MatchString(l) {
			return true
		}
	}
	return false
}

// boxChars are drawn by TUIs around and between their text.
const boxChars = "─━═╌╍┄┅┈┉│┃║╎╏┆┇┊┋╭╮╯╰┌┐└┘├┤┬┴┼╹╻▀▄▔▁"

// isRule reports whether a line is only box-drawing characters (at least
// three) and spaces: a rule or a box's edge.
func isRule(l string) bool {
	n := 0
	for _, r := range l {
		switch {
		case r == ' ':
		case strings.ContainsRune(boxChars, r):
			n++
		default:
			return false
		}
	}
	return n >= 3
}

// line makes one row a line of the conversation: box borders and markers
// taken off.
func (st *Style) line(raw string) Line {
	t := unbox(raw)
	l := Line{}
	lead := strings.TrimLeft(t, " ")
	for _, m := range st.ReplyMarkers {
		if rest, ok := strings.CutPrefix(lead, m); ok {
			l.Reply = true
			t = rest
			break
		}
	}
	if !l.Reply {
		for _, m := range st.EchoMarkers {
			if rest, ok := strings.CutPrefix(lead, m); ok {
				l.Echo = true
				t = rest
				break
			}
		}
	}
	l.Text = strings.TrimRight(t, " ")
	return l
}

// unbox is a row without the left and right edges of a box it is drawn
// in ("│ text │", "┃  text"), right-trimmed.
func unbox(raw string) string {
	t := strings.TrimRight(raw, " ")
	trimmed := strings.TrimLeft(t, " ")
	if r, size := utf8.DecodeRuneInString(trimmed); size > 0 && strings.ContainsRune("│┃║", r) {
		t = strings.TrimLeft(trimmed[size:], " ")
		if r2, size2 := utf8.DecodeLastRuneInString(t); size2 > 0 && strings.ContainsRune("│┃║", r2) {
			t = strings.TrimRight(t[:len(t)-size2], " ")
		}
	}
	return t
}

// panelColumn finds where a side panel begins: a column past the middle
// of the screen where, in many rows, text starts after a wide gap. 0 when
// there is none.
func panelColumn(rows []string, width int) int {
	if width <= 0 {
		for _, r := range rows {
			width = max(width, utf8.RuneCountInString(r))
		}
	}
	counts := map[int]int{}
	nonEmpty := 0
	for _, r := range rows {
		if strings.TrimSpace(r) == "" {
			continue
		}
		nonEmpty++
		col, gap := 0, 0
		seen := map[int]bool{}
		for _, c := range r {
			if c == ' ' {
				gap++
			} else {
				if gap >= 4 && col >= width*2/5 && !seen[col] {
					counts[col]++
					seen[col] = true
				}
				gap = 0
			}
			col++
		}
	}
	best, n := 0, 0
	for c, k := range counts {
		if k > n || k == n && c < best {
			best, n = c, k
		}
	}
	if n >= 3 && n*4 >= nonEmpty {
		return best
	}
	return 0
}

// separatorColumn finds the column of a side panel's vertical rule: a
// column past the first third of the screen holding a vertical bar in
// most of the screen's rows. 0 when there is none.
func separatorColumn(rows []string, width int) int {
	counts := map[int]int{}
	nonEmpty := 0
	for _, r := range rows {
		if strings.TrimSpace(r) == "" {
			continue
		}
		nonEmpty++
		col := 0
		for _, c := range r {
			if (c == '│' || c == '┃') && col > width/3 {
				counts[col]++
			}
			col++
		}
	}
	best, n := 0, 0
	for c, k := range counts {
		if k > n || k == n && c < best {
			best, n = c, k
		}
	}
	if n >= 8 && n*5 >= nonEmpty*3 {
		return best
	}
	return 0
}

// cutPanel keeps the part of a row left of a side panel at column col (in
// runes): with sep, only a row that holds the panel's rule there is cut;
// else only a row with a gap of blanks before col (a row of the
// conversation that runs through col is not the panel's).
func cutPanel(l string, col int, sep bool) string {
	i := 0
	var prev1, prev2 rune
	for j, c := range l {
		if i == col {
			switch {
			case sep && (c == '│' || c == '┃'):
				return strings.TrimRight(l[:j], " ")
			case !sep && prev1 == ' ' && prev2 == ' ':
				return strings.TrimRight(l[:j], " ")
			}
			return l
		}
		prev2, prev1 = prev1, c
		i++
	}
	return l
}

// ToolOf is the tool a permission prompt asks for: what Asks finds in its
// text (with Asks: its first group that took part in the match; none when
// the question takes more than AskRows rows), else what Tool finds in the
// screen's rows ("" when the style cannot tell).
func (st *Style) ToolOf(s Screen) string {
	if st.Asks != nil {
		lines, rows := st.permissionLines(s)
		text := strings.Join(lines, "\n")
		m := st.Asks.FindStringSubmatchIndex(text)
		if m == nil {
			return ""
		}
		if last := strings.Count(text[:m[1]], "\n"); st.AskRows > 0 && rows[last]-rows[0]+1 > st.AskRows {
			return "" // what it asks may be cut off
		}
		for i := 2; i+1 < len(m); i += 2 {
			if m[i] >= 0 {
				return text[m[i]:m[i+1]]
			}
		}
		return ""
	}
	if st.Tool == nil {
		return ""
	}
	var last string
	for _, m := range st.Tool.FindAllStringSubmatch(s.Text(), -1) {
		if len(m) > 1 {
			last = m[1]
		}
	}
	return last
}

// PermissionText is the prompt a permission question shows: the screen's
// rows from a few above the first row that matches the permission pattern
// (from that row itself with PermissionBelow; never above the rule that
// opens the live region, with LiveRule — the agent's words above it are not
// the question's — but for the tool call drawn just above it; from the row
// among those that names its tool, with Tool, when one does: a question
// drawn as a box headed by its tool), to the end, each without a side
// panel and the edges of its boxes, trimmed; without blank rows and rules.
func (st *Style) PermissionText(s Screen) string {
	lines, _ := st.permissionLines(s)
	return strings.Join(lines, "\n")
}

// PermissionAbove is the conversation above the permission question a
// screen shows (above the first row of its PermissionText, scrollback
// included): each row without a side panel and the edges of its boxes,
// trimmed; without blank rows, rules, decoration (Drop) and the lines that
// say the program is busy (a spinner is no step of the agent's work). Nil
// when the screen shows no question.
func (st *Style) PermissionAbove(s Screen) []string {
	_, rows := st.permissionLines(s)
	if len(rows) == 0 {
		return nil
	}
	cut, sep := st.panelCut(s, s.Rows)
	var out []string
	for _, r := range append(slices.Clip(s.History), s.Rows[:rows[0]]...) {
		if cut > 0 {
			r = cutPanel(r, cut, sep)
		}
		if st.dropped(r) || st.Busy != nil && st.Busy.MatchString(r) {
			continue
		}
		if r = unboxAll(r); r != "" && !isRule(r) {
			out = append(out, r)
		}
	}
	return out
}

// permissionLines are the lines of PermissionText, each with the screen's
// row it was read from. With PermissionBelow, none when the question's
// own row reads as nothing (the pattern matched in a side panel).
func (st *Style) permissionLines(s Screen) (lines []string, rows []int) {
	if st.Permission == nil {
		return nil, nil
	}
	loc := st.Permission.FindStringIndex(s.Text())
	if loc == nil {
		return nil, nil
	}
	row := strings.Count(s.Text()[:loc[0]], "\n")
	from := row
	top := 0
	if st.LiveRule != 0 {
		if i := liveStart(s.Rows, st.LiveRule, s.Width); i >= 0 && i <= row {
			top = i
			// The tool call the question is about, drawn just above it.
			for k := i - 1; k >= 0 && st.Tool != nil; k-- {
				if strings.TrimSpace(s.Rows[k]) == "" {
					continue
				}
				if st.Tool.MatchString(strings.TrimSpace(s.Rows[k])) {
					top = k
				}
				break
			}
		}
	}
	for n := 0; from > top && n < 8 && !st.PermissionBelow; {
		from--
		if strings.TrimSpace(s.Rows[from]) != "" && !isRule(s.Rows[from]) {
			n++
		}
	}
	if st.Tool != nil {
		// Gemini CLI's box, below the prompt and the model's words.
		for r := row; r >= from; r-- {
			if st.Tool.MatchString(s.Rows[r]) {
				from = r
				break
			}
		}
	}
	cut, sep := st.panelCut(s, s.Rows)
	for i := from; i < len(s.Rows); i++ {
		r := s.Rows[i]
		if cut > 0 {
			r = cutPanel(r, cut, sep)
		}
		if r = unboxAll(r); r == "" || isRule(r) {
			continue
		}
		if st.PermissionBelow && len(lines) == 0 && i != row {
			return nil, nil
		}
		lines, rows = append(lines, r), append(rows, i)
	}
	return lines, rows
}

// Allows reports whether an entry of an allow list answers yes to a
// permission question for tool whose text is text: the entry matches the
// tool, or its text — except with Asks, which tells the whole of what a
// question asks: then only the tool it found counts.
func (st *Style) Allows(entry *regexp.Regexp, tool, text string) bool {
	if st.Asks != nil {
		return tool != "" && entry.MatchString(tool)
	}
	return tool != "" && entry.MatchString(tool) || entry.MatchString(text)
}

// unboxAll is a row without the edges of all the boxes it is drawn in
// ("│ │ rm -f keep.txt │ │": "rm -f keep.txt"), trimmed.
func unboxAll(r string) string {
	for {
		t := strings.TrimSpace(unbox(r))
		if t == strings.TrimSpace(r) {
			return t
		}
		r = t
	}
}
