package exec

import "testing"

func TestInitNotesAnAgentNewerThanItsPresetKnows(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		out, want string
	}{
		{"2.1.331 (Claude Code)", "2.1.331"},
		{"codex-cli 0.169.0", "0.169.0"},
		{"0.61.0\n", "0.61.0"},
	} {
		if got, ok := ParseVersion(c.out); !ok || got != c.want {
			t.Errorf("ParseVersion(%q) = %q, %v", c.out, got, ok)
		}
	}
	if _, ok := ParseVersion("no version here"); ok {
		t.Error("a version found in text without one")
	}
	for _, c := range []struct {
		a, b  string
		newer bool
	}{
		{"2.1.332", "2.1.331", true}, {"2.2.0", "2.1.331", true}, {"10.0.0", "9.9.9", true},
		{"2.1.331", "2.1.331", false}, {"0.60.9", "0.61.0", false},
	} {
		if got := NewerVersion(c.a, c.b); got != c.newer {
			t.Errorf("NewerVersion(%s, %s) = %v", c.a, c.b, got)
		}
	}
	for p := range presets {
		if _, ok := PresetVersions[p]; !ok && p != PresetAider {
			t.Errorf("preset %s has no known version", p)
		}
	}
}
