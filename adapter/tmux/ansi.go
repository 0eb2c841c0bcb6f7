package tmux

import (
	"strings"
	"unicode/utf8"
)

// StripANSI returns a captured line as it reads on the screen: without its
// escape sequences (CSI — colours, cursor moves —, OSC, DCS, APC, PM, SOS,
// character set designations and the other two-byte ESC sequences, 8-bit
// CSI included) and without control characters (a tab or a no-break
// space becomes a space).
// Invalid UTF-8 is replaced by U+FFFD. It never panics.
func StripANSI(s string) string {
	text, _ := parseLine(s)
	return text
}

// Undim returns a captured line as StripANSI does, but without the text
// drawn faint (SGR 2): the placeholder an empty input box shows ("Ask
// Codex to do anything") is drawn so, and is no input.
func Undim(s string) string {
	_, undimmed := parseLine(s)
	return undimmed
}

// parseLine reads one captured line: its text, and its text without the
// runs drawn faint.
func parseLine(s string) (text, undimmed string) {
	if !strings.ContainsAny(s, "\x1b\u009b\t\u00a0") && !hasControl(s) && utf8.ValidString(s) {
		return s, s
	}
	var all, bright strings.Builder
	dim := false
	write := func(r rune) {
		all.WriteRune(r)
		if !dim {
			bright.WriteRune(r)
		}
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			write(utf8.RuneError)
			i++
		case r == 0x1b:
			n, d := escape(s[i+1:], dim)
			dim = d
			i += 1 + n
		case r == 0x9b: // CSI as one 8-bit control
			n, d := csi(s[i+size:], dim)
			dim = d
			i += size + n
		case r == '\t' || r == 0xa0: // a tab, a no-break space (after a prompt sign)
			write(' ')
			i += size
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0:
			i += size // another control character
		default:
			write(r)
			i += size
		}
	}
	return all.String(), bright.String()
}

func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return true
		}
	}
	return false
}

// escape reads what follows an ESC: it returns how many bytes the sequence
// holds after the ESC, and the faint state after it.
func escape(s string, dim bool) (int, bool) {
	if s == "" {
		return 0, dim
	}
	switch c := s[0]; {
	case c == '[':
		n, d := csi(s[1:], dim)
		return 1 + n, d
	case c == ']' || c == 'P' || c == '_' || c == '^' || c == 'X':
		return 1 + stringEnd(s[1:]), dim
	case c >= 0x20 && c <= 0x2f:
		// nF: intermediates, then one final byte (ESC ( B, ESC # 8…).
		i := 0
		for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
			i++
		}
		if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
			i++
		}
		return i, dim
	case c >= 0x30 && c <= 0x7e:
		return 1, dim // ESC 7, ESC =, ESC M, ESC c…
	}
	return 0, dim // a lone ESC
}

// csi reads a control sequence after its introducer: parameters,
// intermediates and a final byte. A select graphic rendition (final m)
// updates the faint state.
func csi(s string, dim bool) (int, bool) {
	i := 0
	for i < len(s) && s[i] >= 0x30 && s[i] <= 0x3f {
		i++
	}
	params := s[:i]
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i >= len(s) {
		return i, dim
	}
	final := s[i]
	if final < 0x40 || final > 0x7e {
		return i, dim // broken: drop what was read
	}
	if final == 'm' {
		dim = sgrDim(params, dim)
	}
	return i + 1, dim
}

// sgrDim applies the parameters of an SGR sequence to the faint state: 2
// sets it, 0 (or none) and 22 clear it; the arguments of 38 and 48
// (colours) are skipped.
func sgrDim(params string, dim bool) bool {
	if params == "" {
		return false
	}
	fields := strings.FieldsFunc(params, func(r rune) bool { return r == ';' })
	for i := 0; i < len(fields); i++ {
		f, _, _ := strings.Cut(fields[i], ":")
		switch f {
		case "0", "":
			dim = false
		case "2":
			dim = true
		case "22":
			dim = false
		case "38", "48", "58":
			if i+1 < len(fields) {
				switch fields[i+1] {
				case "5":
					i += 2
				case "2":
					i += 4
				}
			}
		}
	}
	return dim
}

// stringEnd finds the end of a control string (OSC, DCS…): BEL, ESC \ or
// the 8-bit ST; the end of the line when it has none.
func stringEnd(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case 0x07:
			return i + 1
		case 0x1b:
			if i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
		case 0xc2:
			if i+1 < len(s) && s[i+1] == 0x9c {
				return i + 2
			}
		}
	}
	return len(s)
}
