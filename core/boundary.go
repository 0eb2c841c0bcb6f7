package core

import (
	"path"
	"strings"
)

// OutsideBoundaries returns the files (slash-separated, relative to the repository root)
// that fall inside one of the task's boundaries — the "files or modules
// out of scope" of a task — in the order given: each one is a violation.
// See BoundaryPatterns for what a boundary matches.
func OutsideBoundaries(files, boundaries []string) []string {
	var pats []string
	for _, b := range boundaries {
		pats = append(pats, BoundaryPatterns(b)...)
	}
	if len(pats) == 0 {
		return nil
	}
	var out []string
	for _, f := range files {
		f = cleanPath(f)
		for _, p := range pats {
			if MatchPattern(p, f) {
				out = append(out, f)
				break
			}
		}
	}
	return out
}

// BoundaryPatterns returns the path patterns a boundary stands for. A
// boundary without spaces is one pattern ("internal/auth", "vendor/",
// "*.lock", "internal/auth/**"). A boundary in prose ("don't touch
// `db/migrations` or internal/auth/**") stands for its `quoted` parts and
// its words that contain a '/' or a '*'; prose without any ("the session
// storage") is for the agent alone and matches no file.
func BoundaryPatterns(boundary string) []string {
	b := strings.TrimSpace(boundary)
	if b == "" {
		return nil
	}
	if !strings.ContainsAny(b, " \t\r\n") {
		return []string{b}
	}
	var pats []string
	rest := b
	for {
		i := strings.IndexByte(rest, '`')
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i+1:], '`')
		if j < 0 {
			break
		}
		if q := strings.TrimSpace(rest[i+1 : i+1+j]); q != "" && !strings.ContainsAny(q, " \t\r\n") {
			pats = append(pats, q)
		}
		rest = rest[:i] + " " + rest[i+1+j+1:]
	}
	for _, word := range strings.Fields(rest) {
		word = strings.Trim(word, `"'.,;:()[]<>`)
		if strings.ContainsAny(word, "/*") && strings.Trim(word, "/*") != "" {
			pats = append(pats, word)
		}
	}
	return pats
}

// MatchPattern reports whether file (slash-separated, relative to the
// repository root) falls under pattern, with .gitignore's rules:
//
//   - a pattern with a slash at its start or in its middle is anchored at
//     the repository root ("internal/auth", "/Makefile"); one without
//     matches a name at any depth ("*.lock", "vendor", "auth");
//   - a pattern matches a file and, when it matches a directory, every
//     file under it ("internal/auth" covers internal/auth/token.go);
//   - a trailing slash matches directories only ("vendor/");
//   - "*", "?" and "[…]" match within one path segment, "**" any number of
//     segments ("internal/**/testdata", "**/*.pb.go").
func MatchPattern(pattern, file string) bool {
	dirOnly := strings.HasSuffix(pattern, "/")
	p := strings.Trim(strings.TrimPrefix(strings.TrimSpace(pattern), "./"), "/")
	anchored := strings.HasPrefix(strings.TrimPrefix(strings.TrimSpace(pattern), "./"), "/") || strings.Contains(p, "/")
	if p == "" || file == "" {
		return false
	}
	segs := strings.Split(cleanPath(file), "/")
	last := len(segs)
	if dirOnly {
		last-- // the file's own name cannot be the directory
	}
	if !anchored {
		for i := 0; i < last; i++ {
			if matchSeg(p, segs[i]) {
				return true
			}
		}
		return false
	}
	psegs := strings.Split(p, "/")
	for k := 1; k <= last; k++ {
		if matchSegs(psegs, segs[:k]) {
			return true
		}
	}
	return false
}

func matchSegs(p, s []string) bool {
	for len(p) > 0 {
		if p[0] == "**" {
			for len(p) > 0 && p[0] == "**" {
				p = p[1:]
			}
			if len(p) == 0 {
				return true
			}
			for i := 0; i < len(s); i++ {
				if matchSegs(p, s[i:]) {
					return true
				}
			}
			return false
		}
		if len(s) == 0 || !matchSeg(p[0], s[0]) {
			return false
		}
		p, s = p[1:], s[1:]
	}
	return len(s) == 0
}

func matchSeg(pattern, name string) bool {
	if pattern == "**" {
		return true
	}
	ok, err := path.Match(pattern, name)
	if err != nil {
		return pattern == name
	}
	return ok
}

func cleanPath(f string) string {
	f = strings.TrimPrefix(strings.TrimSpace(f), "./")
	return strings.TrimPrefix(f, "/")
}
