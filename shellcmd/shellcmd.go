// Package shellcmd reads a shell command line as sh does and says which
// programs it runs: the first word of each simple command — through
// pipelines, && and ||, subshells, { } blocks, $( ) and ` `, if, while,
// for and case bodies, and the commands that wrappers such as env, sudo,
// timeout and xargs run — leaving out the shell's own builtins and
// keywords, functions the line defines, variable assignments, words that
// are not literal ($CMD), and scripts of the repository (a path, or a
// name ending in .sh). It parses with mvdan.cc/sh's syntax package; it
// runs nothing.
package shellcmd

import (
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// maxDepth bounds how deep `sh -c '…'` lines are read inside one another.
const maxDepth = 4

// Programs returns the programs line runs, each once, in the order they
// first appear. A line the shell cannot parse runs none that can be told.
func Programs(line string) []string {
	var r reader
	r.line(line, 0)
	return r.out
}

// reader collects the programs of a line and the lines it hands to a
// shell.
type reader struct {
	out []string
}

// line parses one command line: as bash (a superset of what most verify
// steps are written in), else as POSIX sh.
func (r *reader) line(line string, depth int) {
	if depth > maxDepth || strings.ContainsRune(line, 0) {
		return // too deep, or no line sh can be given (its argv ends at a NUL)
	}
	var f *syntax.File
	for _, lang := range []syntax.LangVariant{syntax.LangBash, syntax.LangPOSIX} {
		parsed, err := syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(line), "")
		if err == nil {
			f = parsed
			break
		}
	}
	if f == nil {
		return
	}
	funcs := map[string]bool{}
	syntax.Walk(f, func(n syntax.Node) bool {
		if fd, ok := n.(*syntax.FuncDecl); ok {
			if fd.Name != nil {
				funcs[fd.Name.Value] = true
			}
			for _, l := range fd.Names {
				funcs[l.Value] = true
			}
		}
		return true
	})
	syntax.Walk(f, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok {
			r.call(c.Args, funcs, depth)
		}
		return true // $( ) in the words run programs too
	})
}

// call reads one simple command's words: past the wrappers to the program
// they run.
func (r *reader) call(args []*syntax.Word, funcs map[string]bool, depth int) {
	for len(args) > 0 {
		name, ok := literal(args[0])
		if !ok || funcs[name] {
			return
		}
		if shells[name] {
			if script, ok := shellScript(args[1:]); ok {
				r.line(script, depth+1)
			}
			return
		}
		if line, ok := later(name, args[1:]); ok {
			r.line(line, depth+1) // eval's words, trap's action
			return
		}
		w, wraps := wrappers[name]
		if !wraps {
			if !builtins[name] && program(name) && !slices.Contains(r.out, name) {
				r.out = append(r.out, name)
			}
			return
		}
		rest, ok := w.command(args[1:])
		if !ok {
			return
		}
		args = rest
	}
}

// later is the line the builtins eval and trap run: eval's words joined
// with spaces, trap's action.
func later(name string, args []*syntax.Word) (string, bool) {
	switch {
	case name == "eval":
		words := make([]string, 0, len(args))
		for _, a := range args {
			w, ok := literal(a)
			if !ok {
				return "", false
			}
			words = append(words, w)
		}
		return strings.Join(words, " "), len(words) > 0
	case name == "trap" && len(args) > 1:
		action, ok := literal(args[0])
		return action, ok && !strings.HasPrefix(action, "-")
	}
	return "", false
}

// programName is what a probe can ask about (core.ProbeText's "tool NAME:"
// lines, which core.ParseProbe reads back).
var programName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._+-]*$`)

// program reports whether name is a program to find on the PATH: not a
// path or a script of the repository.
func program(name string) bool {
	return programName.MatchString(name) && !strings.HasSuffix(name, ".sh")
}

// literal is the word as the shell passes it when no expansion changes it:
// plain and quoted text without $, ` or a pattern.
func literal(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "*?[") {
				return "", false // a pattern: not one known word
			}
			b.WriteString(unescape(p.Value, ""))
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(unescape(l.Value, "$`\"\\\n"))
			}
		default:
			return "", false
		}
	}
	return b.String(), len(w.Parts) > 0
}

// unescape removes the backslashes the shell removes: before any
// character outside quotes (special ""), before one of special inside
// double quotes; a backslash and a newline go together.
func unescape(s, special string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) || special != "" && !strings.ContainsRune(special, rune(s[i+1])) {
			b.WriteByte(s[i])
			continue
		}
		i++
		if s[i] != '\n' {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// shells are the shells a line may hand another line to (sh -c '…'); they
// are not asked about: the verify steps run in sh already.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "ash": true, "zsh": true, "ksh": true}

// shellScript is the line a shell's words give it with -c; ok is false
// for a script file (of the repository) or a line that is not literal.
func shellScript(args []*syntax.Word) (string, bool) {
	withC := false
	for i := 0; i < len(args); i++ {
		w, ok := literal(args[i])
		if !ok {
			return "", false
		}
		if w == "--" || !strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "+") || w == "-" {
			if w == "--" {
				if i+1 >= len(args) {
					return "", false
				}
				w, ok = literal(args[i+1])
			}
			return w, ok && withC
		}
		if strings.HasPrefix(w, "--") {
			continue // --norc, --posix, …
		}
		withC = withC || strings.Contains(w[1:], "c")
		if strings.ContainsAny(w[1:], "oO") { // -o pipefail
			i++
		}
	}
	return "", false
}

// wrapper is a program that runs another: its options, then (past skip
// more words, such as timeout's duration) the command it runs.
type wrapper struct {
	// withArg are the short options that take the next word as their value.
	withArg string
	// skip counts the words between the options and the command.
	skip int
	// lookup are the options that make it only look a program up (command -v).
	lookup string
}

// wrappers run the command that follows their options. They are not
// asked about themselves: each is a shell builtin or a basic utility.
var wrappers = map[string]wrapper{
	"env":     {withArg: "uCS"},
	"sudo":    {withArg: "ugCDprtUT"},
	"exec":    {withArg: "a"},
	"command": {lookup: "vV"},
	"nice":    {withArg: "n"},
	"nohup":   {},
	"time":    {withArg: "fo"},
	"timeout": {withArg: "sk", skip: 1},
	"xargs":   {withArg: "adEILnPs"},
	"stdbuf":  {withArg: "ioe"},
	"chrt":    {},
	"ionice":  {withArg: "cnp"},
}

// command returns the words of the command the wrapper runs; ok is false
// when it runs none that can be told.
func (w wrapper) command(args []*syntax.Word) ([]*syntax.Word, bool) {
	skip := w.skip
	for i := 0; i < len(args); i++ {
		word, ok := literal(args[i])
		switch {
		case !ok:
			return nil, false
		case word == "--":
			return w.past(args[i+1:], skip)
		case strings.HasPrefix(word, "--"):
			// a long option: its value is joined with =
		case strings.HasPrefix(word, "-") && len(word) > 1:
			opts := word[1:]
			for j, o := range opts {
				if strings.ContainsRune(w.lookup, o) {
					return nil, false
				}
				if strings.ContainsRune(w.withArg, o) {
					if j == len(opts)-1 {
						i++ // the value is the next word
					}
					break
				}
			}
		case strings.Contains(word, "="):
			// env NAME=value, sudo NAME=value
		default:
			return w.past(args[i:], skip)
		}
	}
	return nil, false
}

// past drops the skip words before the command.
func (w wrapper) past(args []*syntax.Word, skip int) ([]*syntax.Word, bool) {
	if len(args) <= skip {
		return nil, false
	}
	return args[skip:], true
}

// builtins are the shell's builtins and keywords (POSIX sh, dash and
// bash): the shell runs them itself, so no agent's side needs them.
var builtins = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`
		: . [ [[ ]] { } ! alias bg bind break builtin caller case cd compgen complete compopt continue
		declare dirs disown do done echo elif else enable esac eval exit export false fc fg fi for
		function getopts hash help history if in jobs kill let local logout mapfile popd printf
		pushd pwd read readarray readonly return select set shift shopt source suspend test then
		times trap true type typeset ulimit umask unalias unset until wait while`) {
		builtins[w] = true
	}
}
