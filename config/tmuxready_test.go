package config

import (
	"regexp"
	"strings"
	"testing"
)

// TestAReadyPatternThatNeedsABlankAtTheEndNeverMatches: the pane's lines
// are matched with their trailing blanks trimmed, so a ready pattern whose
// every match needs a blank just before the end of the line never
// matches, and only such a pattern is said to.
func TestAReadyPatternThatNeedsABlankAtTheEndNeverMatches(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		expr  string
		never bool
	}{
		{`^> $`, true},
		{`^> +$`, true},
		{`^>  $`, true},
		{`^>\s$`, true},
		{`^>\t$`, true},
		{`^>\x20$`, true},
		{`^>[ ]+$`, true},
		{`^>[ \t]$`, true},
		{`^>[[:space:]]$`, true},
		{`^>\s{2,}$`, true},
		{`(?m)^> $`, true},
		{`^> \z`, true},
		{`^(> |\$ )$`, true},
		{`^(?:> )+$`, true},
		{`^>(?: |\t)$`, true},
		{`foo $|bar $`, true},
		{`^ $`, true},
		{`> $`, true},
		{`(?i)^READY> $`, true},
		{`^>.*\s$`, true},
		{`^>(x|y)? $`, true},

		{`^> ?$`, false},
		{`^>\s*$`, false},
		{`^>$`, false},
		{`(?m)^❯\s*$`, false},
		{`^> *$`, false},
		{`^>[ ]*$`, false},
		{`foo $|bar`, false},
		{`^(> |\$)$`, false},
		{`^>.$`, false},
		{`^>[ a]$`, false},
		{`^> \S$`, false},
		{`^>\s+\w+$`, false},
		{`^(\w+)?> ?$`, false},
		{`> `, false},
		{`^$`, false},
		{`x$ `, false},
		{`^\$ ?$`, false},
		{`working`, false},
		{`^> \n$`, true},
		{`(`, false},
	} {
		if got := needsTrailingBlank(c.expr); got != c.never {
			t.Errorf("needsTrailingBlank(%q) = %v, want %v", c.expr, got, c.never)
		}
	}
}

// TestAReadyPatternThatCanNeverMatchIsWarnedOfWithAFix: the warning names
// the agent, the pattern and why, and suggests patterns that match what
// the program shows (checked against its last line, trimmed).
func TestAReadyPatternThatCanNeverMatchIsWarnedOfWithAFix(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		expr, line string
		fixes      []string
	}{
		{`^> $`, ">", []string{`'^>\s*$'`, `'^>$'`}},
		{`^> +$`, ">", []string{`'^>\s*$'`, `'^>$'`}},
		{`^>\s{2}$`, ">", []string{`'^>\s*$'`, `'^>$'`}},
		{`(?m)^❯ $`, "❯", []string{`'(?m)^❯\s*$'`, `'(?m)^❯$'`}},
		{`^\$ $`, "$", []string{`'^\$\s*$'`, `'^\$$'`}},
		{`^it's> [ \t]+\z`, "it's>", []string{`'^it''s>\s*\z'`, `'^it''s>\z'`}},
		{`^a\\ $`, `a\`, nil}, // the blank follows an escaped backslash: no fix is guessed
		{`^(> |\$ )$`, ">", nil},
	} {
		w := readyWarning("tui", c.expr)
		for _, want := range []string{`agent "tui"`, yamlQuote(c.expr), "can never match", "trims the blanks at the end"} {
			if !strings.Contains(w, want) {
				t.Errorf("the warning of %q does not say %q: %s", c.expr, want, w)
			}
		}
		if c.fixes == nil {
			if !strings.Contains(w, `\s*`) || strings.Contains(w, "; use '") {
				t.Errorf("the warning of %q guesses a fix, or gives no advice: %s", c.expr, w)
			}
			continue
		}
		if !strings.HasSuffix(w, "; use "+strings.Join(c.fixes, " or ")) {
			t.Errorf("the warning of %q does not suggest %v: %s", c.expr, c.fixes, w)
		}
		for _, f := range readyFixes(c.expr) {
			if !regexp.MustCompile(f).MatchString(c.line) {
				t.Errorf("the fix %q of %q does not match %q", f, c.expr, c.line)
			}
		}
	}
	if w := readyWarning("tui", `^> ?$`); w != "" {
		t.Errorf("a pattern that matches is warned of: %s", w)
	}
}

// TestConfigCheckWarnsOfATmuxReadyPatternThatCanNeverMatch: the warning
// is the file's, with the line and key of the pattern.
func TestConfigCheckWarnsOfATmuxReadyPatternThatCanNeverMatch(t *testing.T) {
	t.Parallel()
	c, err := Parse("wilco.yaml", []byte("agents:\n  - name: tui\n    adapter: tmux\n    command: [python3, a.py]\n    tmux:\n      ready: '^> $'\n  - name: ok\n    adapter: tmux\n    command: [python3, a.py]\n    tmux: {ready: '^> ?$'}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := `wilco.yaml:6: agents[0].tmux.ready: '^> $' of agent "tui" can never match`
	if len(c.Warnings) != 1 || !strings.HasPrefix(c.Warnings[0], want) {
		t.Fatalf("warnings %q, want one starting %q", c.Warnings, want)
	}
}

func FuzzReadyWarning(f *testing.F) {
	for _, s := range []string{`^> $`, `^> ?$`, `(?m)^❯\s*$`, `foo $|bar`, `^(> |\$ )$`, `^a\\ $`, `x{2,5} $`, `[^\s]$`, `\b $`, `(?U)a+? $`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		re, err := regexp.Compile(expr)
		w := readyWarning("a", expr)
		if err != nil {
			if w != "" {
				t.Fatalf("a pattern that does not compile is warned of: %s", w)
			}
			return
		}
		if w == "" {
			return
		}
		// Said never to match: it must match no line without a blank at
		// its end — try a few, made of the pattern's own characters.
		for _, line := range []string{"", ">", "a", expr, strings.TrimRight(expr, " \t\n\v\f\r")} {
			line = strings.TrimRight(line, " \t\n\v\f\r")
			if strings.Contains(line, "\n") {
				continue
			}
			if re.MatchString(line) {
				t.Fatalf("%q is said never to match, and matches %q", expr, line)
			}
		}
		for _, fix := range readyFixes(expr) {
			if _, err := regexp.Compile(fix); err != nil || needsTrailingBlank(fix) {
				t.Fatalf("the fix %q of %q does not compile or never matches either", fix, expr)
			}
		}
	})
}
