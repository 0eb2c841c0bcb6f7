package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// Shells `wilco completion` writes a script for.
var completionShells = []string{"bash", "zsh", "fish"}

// verbWords is what a shell offers after `wilco <verb>`.
type verbWords struct {
	name, summary string
	flags         []string // "--json", …
	words         []string // subcommands and fixed arguments: "add", "retry", …
}

var (
	synopsisFlag = regexp.MustCompile(`--[a-z][a-z0-9-]*`)
	synopsisWord = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
)

// completionWords derives the completions from the verb table: the flags
// each verb's own flag set defines (read by running it with --help),
// the flags and fixed words its synopsis names ("add NAME", "retry|skip"),
// and, for help and completion, the verbs and shells.
func completionWords() []verbWords {
	var out []verbWords
	var names []string
	for _, v := range verbs {
		if v.group != "" {
			names = append(names, v.name)
		}
	}
	for _, v := range verbs {
		if v.group == "" {
			continue
		}
		w := verbWords{name: v.name, summary: v.summary}
		// Fixed words: "a|b|c" alternatives and the first word of each
		// "|"-separated form ("submit FILE … | show ID", "log [--json]"):
		// a lowercase word there is a subcommand.
		for _, form := range strings.Split(v.args, " | ") {
			fields := strings.Fields(form)
			for i, f := range fields {
				f = strings.Trim(f, "[]\"")
				alts := strings.Split(f, "|")
				if len(alts) == 1 && i > 0 {
					continue
				}
				for _, a := range alts {
					if synopsisWord.MatchString(a) {
						w.words = append(w.words, a)
					}
				}
			}
		}
		// The flags of the verb and of its subcommands ("agents add").
		if v.name != "help" && v.name != "completion" {
			for _, sub := range append([]string{""}, w.words...) {
				for _, fs := range verbFlagSets(v, sub) {
					fs.VisitAll(func(f *flag.Flag) { w.flags = append(w.flags, "--"+f.Name) })
				}
			}
		}
		w.flags = append(w.flags, synopsisFlag.FindAllString(v.args, -1)...)
		w.flags = append(w.flags, "--help")
		switch v.name {
		case "help":
			w.words = append(w.words, names...)
		case "completion":
			w.words = append(w.words, completionShells...)
		}
		slices.Sort(w.flags)
		w.flags = slices.Compact(w.flags)
		slices.Sort(w.words)
		w.words = slices.Compact(w.words)
		out = append(out, w)
	}
	return out
}

// verbFlagSets runs a verb (with the subcommand sub, if not "") with
// --help, silently, and returns the flag sets it made.
func verbFlagSets(v *verb, sub string) []*flag.FlagSet {
	args := []string{"--help"}
	if sub != "" {
		args = []string{sub, "--help"}
	}
	c := &cli{stdout: io.Discard, stderr: io.Discard, stdin: strings.NewReader(""),
		getenv: func(string) string { return "" }, wd: ".",
		lookPath: func(string) (string, error) { return "", fmt.Errorf("not looked up") }}
	var sets []*flag.FlagSet
	c.onFlags = func(fs *flag.FlagSet) { sets = append(sets, fs) }
	v.run(context.Background(), c, v, args)
	return sets
}

func cmdCompletion(_ context.Context, c *cli, v *verb, args []string) int {
	fs := c.flags(v)
	pos, _, code, ok := c.parse(v, fs, args, 1, 1)
	if !ok {
		return code
	}
	words := completionWords()
	switch pos[0] {
	case "bash":
		writeBashCompletion(c.stdout, words)
	case "zsh":
		writeZshCompletion(c.stdout, words)
	case "fish":
		writeFishCompletion(c.stdout, words)
	default:
		return c.usageError(v, fs, "unknown shell %q (want %s)", pos[0], strings.Join(completionShells, ", "))
	}
	return exitOK
}

// shellQuote quotes s for a POSIX shell (and zsh, and fish): in single
// quotes, a quote written '\”. Fish reads \' inside single quotes, so
// fishQuote is its own.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}

func writeBashCompletion(w io.Writer, words []verbWords) {
	var names []string
	for _, v := range words {
		names = append(names, v.name)
	}
	fmt.Fprintln(w, "# bash completion for wilco: source it, or: wilco completion bash > /etc/bash_completion.d/wilco")
	fmt.Fprintln(w, "_wilco() {")
	fmt.Fprintln(w, `	local cur="${COMP_WORDS[COMP_CWORD]}"`)
	fmt.Fprintln(w, `	if [ "$COMP_CWORD" -eq 1 ]; then`)
	fmt.Fprintf(w, "\t\tCOMPREPLY=($(compgen -W %s -- \"$cur\"))\n", shellQuote(strings.Join(append(names, "--help", "--version"), " ")))
	fmt.Fprintln(w, "\t\treturn")
	fmt.Fprintln(w, "\tfi")
	fmt.Fprintln(w, `	local words=""`)
	fmt.Fprintln(w, `	case "${COMP_WORDS[1]}" in`)
	for _, v := range words {
		fmt.Fprintf(w, "\t%s) words=%s ;;\n", v.name, shellQuote(strings.Join(append(slices.Clone(v.words), v.flags...), " ")))
	}
	fmt.Fprintln(w, "\tesac")
	fmt.Fprintln(w, `	COMPREPLY=($(compgen -W "$words" -- "$cur"))`)
	fmt.Fprintln(w, "}")
	fmt.Fprintln(w, "complete -o default -F _wilco wilco")
}

func writeZshCompletion(w io.Writer, words []verbWords) {
	fmt.Fprintln(w, "#compdef wilco")
	fmt.Fprintln(w, "# zsh completion for wilco: put it in a directory of $fpath as _wilco, or source it after compinit")
	fmt.Fprintln(w, "_wilco() {")
	fmt.Fprintln(w, "\tlocal -a verbs")
	fmt.Fprintln(w, "\tverbs=(")
	for _, v := range words {
		fmt.Fprintf(w, "\t\t%s\n", shellQuote(v.name+":"+v.summary))
	}
	fmt.Fprintln(w, "\t)")
	fmt.Fprintln(w, "\tif (( CURRENT == 2 )); then")
	fmt.Fprintln(w, "\t\t_describe -t verbs 'wilco verb' verbs")
	fmt.Fprintln(w, "\t\treturn")
	fmt.Fprintln(w, "\tfi")
	fmt.Fprintln(w, "\tcase $words[2] in")
	for _, v := range words {
		var quoted []string
		for _, s := range append(slices.Clone(v.words), v.flags...) {
			quoted = append(quoted, shellQuote(s))
		}
		fmt.Fprintf(w, "\t(%s) compadd -- %s ;;\n", v.name, strings.Join(quoted, " "))
	}
	fmt.Fprintln(w, "\tesac")
	fmt.Fprintln(w, "\t_files")
	fmt.Fprintln(w, "}")
	fmt.Fprintln(w, `if [ "$funcstack[1]" = "_wilco" ]; then`)
	fmt.Fprintln(w, `	_wilco "$@"`)
	fmt.Fprintln(w, "else")
	fmt.Fprintln(w, "\tcompdef _wilco wilco")
	fmt.Fprintln(w, "fi")
}

func writeFishCompletion(w io.Writer, words []verbWords) {
	var names []string
	for _, v := range words {
		names = append(names, v.name)
	}
	fmt.Fprintln(w, "# fish completion for wilco: wilco completion fish > ~/.config/fish/completions/wilco.fish")
	fmt.Fprintln(w, "complete -c wilco -n __fish_use_subcommand -l version -d 'print the version'")
	for _, v := range words {
		fmt.Fprintf(w, "complete -c wilco -f -n __fish_use_subcommand -a %s -d %s\n", fishQuote(v.name), fishQuote(v.summary))
	}
	for _, v := range words {
		cond := fishQuote("__fish_seen_subcommand_from " + v.name)
		if len(v.words) > 0 {
			fmt.Fprintf(w, "complete -c wilco -n %s -a %s\n", cond, fishQuote(strings.Join(v.words, " ")))
		}
		for _, f := range v.flags {
			fmt.Fprintf(w, "complete -c wilco -n %s -l %s\n", cond, fishQuote(strings.TrimPrefix(f, "--")))
		}
	}
}
