package taskview

import "strings"

// oneLine flattens s to one line of at most n runes, ending with "…" when
// it was cut.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if n > 0 && len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// orDash returns s, or "-" for nothing.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// optional returns prefix+s+suffix, or nothing when s is empty.
func optional(prefix, s string, suffix ...string) string {
	if s == "" {
		return ""
	}
	return prefix + s + strings.Join(suffix, "")
}
