package natsbox

import (
	"strings"
	"testing"
)

func TestEscapeMakesOneSubjectTokenAndUnescapeUndoesIt(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"far.1", "claude", "a_b", "x y*>", "été", "", "-_-", "_41"} {
		esc := Escape(name)
		if strings.ContainsAny(esc, ".*> \t") {
			t.Errorf("Escape(%q) = %q: not one subject token", name, esc)
		}
		back, err := Unescape(esc)
		if err != nil || back != name {
			t.Errorf("Unescape(Escape(%q)) = %q, %v", name, back, err)
		}
	}
	for _, bad := range []string{"a.b", "_4", "_4g", "_41", "_5F", "_", "a_", "x*"} {
		if got, err := Unescape(bad); err == nil {
			t.Errorf("Unescape(%q) = %q, want an error: Escape never makes it", bad, got)
		}
	}
}

// Unescape takes exactly what Escape makes: any name survives the round
// trip, and every token Unescape accepts is the escape of its result.
func FuzzUnescape(f *testing.F) {
	for _, s := range []string{"far__1", "far_2E1", "agent-x", "_41", "__", "_", "a_2", "x_FF", "_ff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if back, err := Unescape(Escape(s)); err != nil || back != s {
			t.Fatalf("Unescape(Escape(%q)) = %q, %v", s, back, err)
		}
		name, err := Unescape(s)
		if err != nil {
			return
		}
		if esc := Escape(name); esc != s {
			t.Fatalf("Unescape(%q) = %q, whose escape is %q", s, name, esc)
		}
	})
}
