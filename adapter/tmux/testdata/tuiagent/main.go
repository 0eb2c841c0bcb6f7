// Command tuiagent is a scripted interactive agent for wilco's tests of
// tmux agents: it draws a prompt ("> "), reads keys in raw mode with
// bracketed paste on, shows "working… (esc to interrupt)" while it works,
// and answers what it is given the way an agent would — an [ACK], a file
// written, "Status: complete", "ok" to an operation's request.
//
// The task's words steer it:
//
//	write FILE      write FILE ("attempt 1", or "fixed ID" on a retry)
//	PERMISSION      ask "Allow write to FILE? (y/n)" before writing
//	DEAF            take no key of the first moment of its question (a key then is lost)
//	TWICE           ask the same question again, unchanged, after a step of work (drawn)
//	REDRAW          draw its question again, unchanged, a while after it took the answer, and take a key for it
//	CRASH           exit with status 3 after a few lines
//	IDLE            acknowledge, then go quiet without finishing
//	BUSY=DURATION   work that long (default TUIAGENT_BUSY, else 300ms)
//
//	LONG            acknowledge with an Understanding longer than the pane is wide
//
// Environment: TUIAGENT_ALT=1 draws as full-screen TUIs do: on the
// alternate screen (no scrollback), its conversation wrapped by itself
// (continuation rows indented), the last rows of it redrawn on every
// change under a width that narrows by 12 columns once a file was written
// (a side panel opening), and its input box and status at the bottom.
// TUIAGENT_SWALLOW=1 ignores the first Enter after every paste; TUIAGENT_SWALLOW_RATE=0.3 ignores it with that probability
// (TUIAGENT_SEED seeds it); TUIAGENT_PASTE_LAG=DURATION reads a paste
// that long before it shows in the input box — saying so on a line of its
// own at once, the input box still empty — and loses the keys that came
// meanwhile (an Enter sent with the paste is taken as part of it);
// TUIAGENT_OP_ANSWER is the answer to an
// operation's request (default "ok"); TUIAGENT_LOG appends every prompt
// received to that file.
package main

import (
	"fmt"
	"math/rand"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

func main() {
	restore := rawMode()
	defer restore()
	signal.Ignore(syscall.SIGINT)
	a := &agent{busyFor: 300 * time.Millisecond, opAnswer: "ok"}
	if d, err := time.ParseDuration(os.Getenv("TUIAGENT_BUSY")); err == nil {
		a.busyFor = d
	}
	if s := os.Getenv("TUIAGENT_OP_ANSWER"); s != "" {
		a.opAnswer = s
	}
	a.swallow = os.Getenv("TUIAGENT_SWALLOW") == "1"
	alt = os.Getenv("TUIAGENT_ALT") == "1"
	a.rate, _ = strconv.ParseFloat(os.Getenv("TUIAGENT_SWALLOW_RATE"), 64)
	a.pasteLag, _ = time.ParseDuration(os.Getenv("TUIAGENT_PASTE_LAG"))
	seed, _ := strconv.ParseInt(os.Getenv("TUIAGENT_SEED"), 10, 64)
	a.rnd = rand.New(rand.NewSource(seed))
	for i, arg := range os.Args[1:] {
		if arg == "--resume" && i+2 < len(os.Args) {
			fmt.Printf("resumed conversation %s\r\n", os.Args[i+2])
		}
	}
	fmt.Print("\x1b[?2004h")
	if alt {
		fmt.Print("\x1b[?1049h")
		conversation = append(conversation, "tuiagent 1.0 — a scripted agent", "")
		redraw()
	} else {
		fmt.Print("tuiagent 1.0 — a scripted agent\r\n\r\n")
	}
	a.run()
}

type agent struct {
	busyFor  time.Duration
	opAnswer string
	swallow  bool
	rate     float64
	pasteLag time.Duration
	rnd      *rand.Rand

	input      []byte
	pasted     bool // a paste landed since the last submit
	swallowed  bool // the Enter after this paste was already ignored once
	keys       chan byte
	interrupt  chan struct{}
	permission chan byte
}

func (a *agent) prompt() {
	shown := string(a.input)
	if i := strings.IndexByte(shown, '\n'); i >= 0 {
		shown = shown[:i] + fmt.Sprintf(" [+%d lines]", strings.Count(string(a.input), "\n"))
	}
	if alt {
		status, input = "", "> "+shown
		redraw()
		return
	}
	fmt.Print("\r\x1b[K> " + shown)
}

// The alternate screen's state: the conversation (logical lines), the
// status row and the input row.
var (
	alt           bool
	conversation  []string
	status, input string
	narrow        bool
)

// redraw draws the last rows of the conversation, wrapped at the width,
// then the status and the input box, on the alternate screen.
func redraw() {
	w, h := termSize()
	width := w - 2
	if narrow {
		width -= 12
	}
	var rows []string
	for _, l := range conversation {
		rows = append(rows, wrap(l, width)...)
	}
	room := h - 2
	if len(rows) > room {
		rows = rows[len(rows)-room:]
	}
	var b strings.Builder
	b.WriteString("\x1b[H\x1b[2J")
	for _, r := range rows {
		b.WriteString(r + "\r\n")
	}
	// The bottom row: the input box, or what the agent is doing.
	bottom := input
	if status != "" {
		bottom = status
	}
	b.WriteString(fmt.Sprintf("\x1b[%d;1H%s", h, bottom))
	fmt.Print(b.String())
}

// wrap cuts a line into rows of at most width columns at spaces; the rows
// after the first are indented by two.
func wrap(l string, width int) []string {
	if width < 10 {
		width = 10
	}
	var rows []string
	indent := ""
	for {
		r := []rune(l)
		if len(r)+len(indent) <= width {
			return append(rows, indent+l)
		}
		cut := width - len(indent)
		sp := strings.LastIndex(string(r[:cut+1]), " ")
		if sp <= 0 {
			sp = len(string(r[:cut]))
			rows = append(rows, indent+l[:sp])
			l = l[sp:]
		} else {
			rows = append(rows, indent+l[:sp])
			l = l[sp+1:]
		}
		indent = "  "
	}
}

// termSize is the terminal's width and height.
func termSize() (int, int) {
	var ws struct{ Row, Col, X, Y uint16 }
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, os.Stdout.Fd(), syscall.TIOCGWINSZ, uintptr(unsafe.Pointer(&ws))); e != 0 || ws.Col == 0 {
		return 80, 24
	}
	return int(ws.Col), int(ws.Row)
}

func (a *agent) run() {
	a.keys = make(chan byte, 4096)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := os.Stdin.Read(buf)
			if err != nil {
				os.Exit(0)
			}
			for _, b := range buf[:n] {
				a.keys <- b
			}
		}
	}()
	a.prompt()
	for {
		b := <-a.keys
		switch b {
		case 0x1b:
			if seq := a.escape(); seq == "[200~" {
				a.paste()
			}
		case '\r', '\n':
			if len(a.input) == 0 {
				continue
			}
			if a.pasted && !a.swallowed && (a.swallow || a.rate > 0 && a.rnd.Float64() < a.rate) {
				a.swallowed = true
				continue
			}
			text := string(a.input)
			a.input, a.pasted, a.swallowed = nil, false, false
			if strings.TrimSpace(text) == "/exit" {
				fmt.Print("\r\x1b[Kbye\r\n")
				os.Exit(0)
			}
			a.answer(text)
			a.prompt()
		case 0x15: // C-u
			a.input = nil
			a.prompt()
		case 0x03: // C-c
			fmt.Print("\r\x1b[Kbye\r\n")
			os.Exit(130)
		case 0x7f:
			if len(a.input) > 0 {
				a.input = a.input[:len(a.input)-1]
			}
			a.prompt()
		default:
			if b >= 0x20 {
				a.input = append(a.input, b)
				a.prompt()
			}
		}
	}
}

// escape reads the rest of an escape sequence ("" for a lone Escape).
func (a *agent) escape() string {
	select {
	case b := <-a.keys:
		if b != '[' {
			return string(b)
		}
		seq := "["
		for {
			c := <-a.keys
			seq += string(c)
			if c >= 0x40 && c <= 0x7e {
				return seq
			}
		}
	case <-time.After(30 * time.Millisecond):
		return ""
	}
}

// paste reads a bracketed paste into the input.
func (a *agent) paste() {
	var got []byte
	for {
		b := <-a.keys
		got = append(got, b)
		if strings.HasSuffix(string(got), "\x1b[201~") {
			got = got[:len(got)-len("\x1b[201~")]
			break
		}
	}
	text := strings.ReplaceAll(string(got), "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	if a.pasteLag > 0 {
		say("(reading the pasted text)")
		a.prompt()
		time.Sleep(a.pasteLag)
		for len(a.keys) > 0 {
			<-a.keys
		}
	}
	a.input = append(a.input, text...)
	a.pasted, a.swallowed = true, false
	a.prompt()
}

func say(lines ...string) {
	if alt {
		conversation = append(conversation, lines...)
		status = ""
		redraw()
		return
	}
	fmt.Print("\r\x1b[K")
	for _, l := range lines {
		fmt.Print(l + "\r\n")
	}
}

var (
	ackRequest = regexp.MustCompile(`Reply with \[ACK\] (\S+) - RECEIVED`)
	writeWord  = regexp.MustCompile(`(?i)\bwrite (?:the fix into )?([\w./-]+\.txt)`)
	busyWord   = regexp.MustCompile(`BUSY=(\S+)`)
)

// answer works on one submitted prompt.
func (a *agent) answer(text string) {
	if path := os.Getenv("TUIAGENT_LOG"); path != "" {
		if f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintf(f, "=== prompt\n%s\n", text)
			f.Close()
		}
	}
	echo(text)
	busy := a.busyFor
	if m := busyWord.FindStringSubmatch(text); m != nil {
		if d, err := time.ParseDuration(m[1]); err == nil {
			busy = d
		}
	}
	if strings.Contains(text, `reply with "ok"`) || strings.Contains(text, "Reminder: Please reply") || strings.Contains(text, "reply 'ok'") {
		if a.work(busy / 3) {
			say(a.opAnswer)
		}
		return
	}
	m := ackRequest.FindStringSubmatch(text)
	if m == nil && strings.Contains(text, "WHERE") {
		// Says the folder it runs in.
		if wd, err := os.Getwd(); a.work(busy/3) && err == nil {
			say("working in " + wd)
		}
		return
	}
	if m == nil {
		if a.work(busy / 3) {
			say("noted")
		}
		return
	}
	id := m[1]
	understanding := "will do the task as it is described"
	if strings.Contains(text, "LONG") {
		understanding = "will write the fix into file.txt so that the check passes, and make sure that first.txt holds the word first, " +
			"that second.txt holds the word second, and that third.txt holds the word third, as the criteria say"
	}
	say("", "[ACK] "+id+" - RECEIVED", "Understanding: "+understanding, "")
	if strings.Contains(text, "CRASH") {
		say("starting the work", "panic: scripted crash", "goroutine 1 [running]:", "main.main()")
		os.Exit(3)
	}
	if strings.Contains(text, "IDLE") {
		a.idle()
		return
	}
	if !a.work(busy) {
		return
	}
	if w := writeWord.FindStringSubmatch(text); w != nil && !a.write(text, w[1], id, busy) {
		return
	}
	say("Status: complete", "Summary: did what the task asked")
}

// echo shows the prompt, as a plain program shows what it was given.
func echo(text string) {
	if !alt {
		fmt.Print("\r\x1b[K")
		for _, l := range strings.Split(text, "\n") {
			fmt.Print(l + "\r\n")
		}
		return
	}
	for i, l := range strings.Split(text, "\n") {
		if i == 0 {
			l = "> " + l
		} else {
			l = "  " + l
		}
		conversation = append(conversation, l)
	}
	input = "> "
	redraw()
}

// showStatus shows line where the program says what it does.
func showStatus(line string) {
	if alt {
		status = line
		redraw()
	} else {
		fmt.Print("\r\x1b[K" + line)
	}
}

// idle thinks until it is interrupted.
func (a *agent) idle() {
	showStatus("thinking (esc to interrupt)")
	for {
		if b := <-a.keys; b == 0x1b || b == 0x03 {
			say("interrupted")
			return
		}
	}
}

// write writes file for task id, asking for permission first when the
// prompt says PERMISSION (once) or TWICE; false when it did not.
func (a *agent) write(text, file, id string, busy time.Duration) bool {
	content := "attempt 1\n"
	if strings.Contains(text, "<retry_context") {
		content = "fixed " + id + "\n"
	}
	asks := 0
	if strings.Contains(text, "PERMISSION") {
		asks = 1
	}
	if strings.Contains(text, "TWICE") {
		asks = 2
	}
	for i := range asks {
		if i > 0 && !a.work(busy) {
			return false
		}
		showStatus("Allow write to " + file + "? (y/n) ")
		if i == 0 && strings.Contains(text, "DEAF") {
			a.deaf(time.Second)
		}
		if b := <-a.keys; b != 'y' && b != 'Y' {
			say("", "Permission denied: "+file+" was not written.", "Status: blocked", "Reason: permission to write "+file+" was denied")
			return false
		}
		if i+1 < asks {
			// The step the answer let it take, as a program draws it.
			say("y", "Wrote a draft of "+file+".")
		}
	}
	if asks > 0 && strings.Contains(text, "REDRAW") {
		// The question drawn again, unchanged, once gone a while: it
		// takes a key again.
		if !a.work(busy) {
			return false
		}
		showStatus("Allow write to " + file + "? (y/n) ")
		if b := <-a.keys; b != 'y' && b != 'Y' {
			say("", "Permission denied: "+file+" was not written.", "Status: blocked", "Reason: permission to write "+file+" was denied")
			return false
		}
	}
	if asks > 0 {
		say("y")
	}
	if err := os.WriteFile(filepath.Clean(file), []byte(content), 0o644); err != nil {
		say("could not write "+file+": "+err.Error(), "Status: failure")
		return false
	}
	narrow = alt
	say("Wrote "+file+".", "")
	return true
}

// deaf drops the keys that come in the next d.
func (a *agent) deaf(d time.Duration) {
	deadline := time.After(d)
	for {
		select {
		case <-deadline:
			return
		case <-a.keys:
		}
	}
}

// work shows the busy line for d; an Escape interrupts it (false).
func (a *agent) work(d time.Duration) bool {
	if alt {
		status = "working… (esc to interrupt)"
		redraw()
	} else {
		fmt.Print("\r\x1b[Kworking… (esc to interrupt)")
	}
	deadline := time.After(d)
	for {
		select {
		case <-deadline:
			fmt.Print("\r\x1b[K")
			return true
		case b := <-a.keys:
			if b == 0x1b || b == 0x03 {
				say("interrupted")
				return false
			}
		}
	}
}

// rawMode puts the terminal in raw mode (no echo, no line editing, no
// signals from keys) and returns what restores it.
func rawMode() func() {
	var t syscall.Termios
	fd := os.Stdin.Fd()
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TCGETS, uintptr(unsafe.Pointer(&t))); e != 0 {
		return func() {}
	}
	old := t
	t.Iflag &^= syscall.IGNBRK | syscall.BRKINT | syscall.PARMRK | syscall.ISTRIP | syscall.INLCR | syscall.IGNCR | syscall.ICRNL | syscall.IXON
	t.Oflag &^= syscall.OPOST
	t.Lflag &^= syscall.ECHO | syscall.ECHONL | syscall.ICANON | syscall.ISIG | syscall.IEXTEN
	t.Cflag &^= syscall.CSIZE | syscall.PARENB
	t.Cflag |= syscall.CS8
	t.Cc[syscall.VMIN], t.Cc[syscall.VTIME] = 1, 0
	syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TCSETS, uintptr(unsafe.Pointer(&t)))
	return func() { syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TCSETS, uintptr(unsafe.Pointer(&old))) }
}
