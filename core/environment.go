package core

import (
	"regexp"
	"strings"
)

// Kinds of environment problems.
const (
	EnvMissingProgram = "missing_program"
	EnvNotExecutable  = "not_executable"
	EnvAuthentication = "authentication"
	EnvPermission     = "permission"
	// EnvInvalidRequest: the model's API refused the agent's request as
	// invalid (HTTP 400): the same request fails again however often it
	// is retried.
	EnvInvalidRequest = "invalid_request"
	// EnvRefusedFlag: the agent's CLI refused a flag of its command line
	// (a version newer than its preset knows, or an extra argument).
	EnvRefusedFlag = "refused_flag"
	// EnvUntrusted: the agent's CLI refuses to run in a folder it does
	// not trust.
	EnvUntrusted = "untrusted_folder"
)

var (
	refusedFlagRe = regexp.MustCompile(`(?i)unexpected argument|unknown (?:option|flag|argument)|unrecognized (?:option|arguments?|subcommand)|invalid (?:option|flag)|no such option`)
	untrustedRe   = regexp.MustCompile(`(?i)untrusted (?:folder|workspace|directory)|not (?:running )?in a trusted|not a trusted|trust (?:this|the) (?:folder|workspace)`)
)

// ClassifyStartup is ClassifyEnvironment for a turn that failed before the
// agent acknowledged, with what a CLI that refuses to start says: a flag of
// its command line it does not know, a folder it does not trust. Those are
// read only there: once an agent works, its output quotes the commands it
// runs, whose errors are the work's.
func ClassifyStartup(exitCode int, output string) (EnvironmentProblem, bool) {
	if p, ok := ClassifyEnvironment(exitCode, output); ok {
		return p, true
	}
	if exitCode == 0 {
		return EnvironmentProblem{}, false
	}
	if m := refusedFlagRe.FindString(output); m != "" {
		return EnvironmentProblem{Kind: EnvRefusedFlag, Line: lineOf(output, m),
			Cause: "the agent's CLI refuses a flag of its command line: " + lineOf(output, m),
			Fix:   "its version may be newer than its preset knows (see docs/AGENTS.md, wilco agents check): remove or change the extra arguments in the agent's command in wilco.yaml; then answer retry"}, true
	}
	if m := untrustedRe.FindString(output); m != "" {
		return EnvironmentProblem{Kind: EnvUntrusted, Line: lineOf(output, m),
			Cause: "the agent's CLI refuses to run in a folder it does not trust: " + lineOf(output, m),
			Fix:   "trust the repository in the CLI's own settings, or set its trust variable in the agent's env in wilco.yaml (Gemini CLI: GEMINI_CLI_TRUST_WORKSPACE=true); then answer retry"}, true
	}
	return EnvironmentProblem{}, false
}

// EnvironmentProblem is what ClassifyEnvironment found.
type EnvironmentProblem struct {
	// Kind is EnvMissingProgram, EnvNotExecutable, EnvAuthentication or
	// EnvPermission.
	Kind string
	// Program is the program that is missing or not executable, when the
	// output names it.
	Program string
	// Line is the line of the output that shows the problem.
	Line string
	// Cause says what is wrong, in one sentence.
	Cause string
	// Fix says what the user must do.
	Fix string
}

var (
	// "sh: 1: foo: not found", "bash: foo: command not found",
	// "bash: line 1: foo: command not found", "zsh: command not found: foo".
	notFoundShRe = regexp.MustCompile(`(?m)^(?:[\w./-]+: )?(?:line \d+: |\d+: )?([^\s:]+): (?:command )?not found\s*$`)
	notFoundZsh  = regexp.MustCompile(`(?m)command not found: (\S+)`)
	// exec: "foo": executable file not found in $PATH
	notFoundGoRe = regexp.MustCompile(`exec: "([^"]+)": executable file not found`)
	// fork/exec /x/foo: no such file or directory
	noSuchFileGoRe = regexp.MustCompile(`fork/exec ([^\s:]+): no such file or directory`)
	// env: 'node': No such file or directory; bash: /x/foo: No such file
	// or directory — at the start of a line, so that wilco's own "open
	// <file>: no such file or directory" does not pass for a program.
	noSuchFileShRe = regexp.MustCompile(`(?im)^(?:[\w./-]+: )?(?:line \d+: |\d+: )?'?([^\s':]+)'?: no such file or directory`)
	// sh: 1: ./foo: Permission denied; fork/exec ./foo: permission denied
	notExecRe = regexp.MustCompile(`(?i)(?:fork/exec )?([^\s:]+): (?:permission denied|cannot execute)`)

	// "Invalid auth method selected." is Gemini CLI's (exit 41) when no
	// authentication is chosen in its settings.
	authRe = regexp.MustCompile(`(?i)invalid auth method selected|API Error: 40[13]\b|authentication_failed|invalid x-api-key|authentication_error|\b401\b.{0,20}unauthori[sz]ed|unauthori[sz]ed.{0,20}\b401\b|api key not valid|invalid[ _-]api[ _-]key|incorrect api key|please run /login|not logged in|\blogin required\b|please log ?in|credit balance is too low|insufficient_quota|\b[A-Z][A-Z0-9]*_API_KEY\b.{0,40}(?:not set|missing|required|invalid|must be set|is empty|environment variable)|(?:set|missing|provide|no) (?:the )?\b[A-Z][A-Z0-9]*_API_KEY\b`)

	// Claude Code: "API Error: 400 {…invalid_request_error…}"; the OpenAI
	// and Anthropic APIs' error type; Gemini's INVALID_ARGUMENT.
	invalidRequestRe = regexp.MustCompile(`invalid_request_error|API Error: 400\b|\bINVALID_ARGUMENT\b`)

	permissionRe = regexp.MustCompile(`(?i)requires approval|approval required|requested permissions? to|haven't granted|have not granted|needs your (?:permission|approval)|waiting for (?:your )?approval|permission to use \w+ (?:was|has been) denied|permission denied.{0,40}\b(?:tool|approval|allow|grant)|(?:tool|approval|allow).{0,40}permission denied`)
)

// ClassifyEnvironment reports whether an agent's failed turn failed
// because of its environment rather than the work: exit status 127 (a
// program not found), 126 (a program that cannot be executed), or output
// that shows an authentication or API-key error or a permission the agent
// asked for and cannot get. output is what the agent wrote (and wilco's
// error starting it). Only a failed turn is classified: an exec agent's
// turn that ended without its ACK, or with a failure, exits 0 as often as
// not.
func ClassifyEnvironment(exitCode int, output string) (EnvironmentProblem, bool) {
	if p, ok := ClassifyProgram(exitCode, output); ok {
		return p, true
	}
	if m := authRe.FindString(output); m != "" {
		return EnvironmentProblem{Kind: EnvAuthentication, Line: lineOf(output, m),
			Cause: "the agent could not authenticate: " + lineOf(output, m),
			Fix:   "log the agent's CLI in, or set its API key in the environment wilco runs with (for example ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY), or in the agent's env in wilco.yaml; then answer retry"}, true
	}
	if m := invalidRequestRe.FindString(output); m != "" {
		return EnvironmentProblem{Kind: EnvInvalidRequest, Line: lineOf(output, m),
			Cause: "the model's API refused the agent's request as invalid: " + lineOf(output, m),
			Fix:   "check the agent's model name and settings (its args and env in wilco.yaml, or its own configuration) and the API it talks to; then answer retry"}, true
	}
	if m := permissionRe.FindString(output); m != "" {
		return EnvironmentProblem{Kind: EnvPermission, Line: lineOf(output, m),
			Cause: "the agent asked for a permission it cannot get without a person: " + lineOf(output, m),
			Fix:   "grant the permission in the agent's own settings (its allowed tools or approval mode, through args in wilco.yaml), or run it where it may act; then answer retry"}, true
	}
	return EnvironmentProblem{}, false
}

// ClassifyProgram reports whether a failed process failed because a
// program it needs is missing (exit status 127) or cannot be executed
// (126). It is the part of ClassifyEnvironment that holds for verify steps
// too, whose output (a test of an HTTP API printing "401 Unauthorized")
// says nothing of wilco's environment.
func ClassifyProgram(exitCode int, output string) (EnvironmentProblem, bool) {
	switch exitCode {
	case 127:
		p := EnvironmentProblem{Kind: EnvMissingProgram}
		for _, re := range []*regexp.Regexp{notFoundGoRe, noSuchFileGoRe, notFoundShRe, notFoundZsh, noSuchFileShRe} {
			if m := re.FindStringSubmatch(output); m != nil {
				p.Program, p.Line = m[1], lineOf(output, m[0])
				break
			}
		}
		if p.Program != "" {
			p.Cause = "the program " + quote(p.Program) + " is not installed or not on the PATH"
			p.Fix = "install " + quote(p.Program) + " or put it on the PATH wilco runs with, or change the command in wilco.yaml; then answer retry"
		} else {
			p.Cause = "a program was not found (exit status 127)"
			p.Fix = "install the missing program or put it on the PATH wilco runs with, or change the command in wilco.yaml; then answer retry"
		}
		return p, true
	case 126:
		p := EnvironmentProblem{Kind: EnvNotExecutable}
		if m := notExecRe.FindStringSubmatch(output); m != nil {
			p.Program, p.Line = m[1], lineOf(output, m[0])
		}
		p.Cause = "a program cannot be executed (exit status 126)"
		if p.Program != "" {
			p.Cause = "the program " + quote(p.Program) + " cannot be executed"
		}
		p.Fix = "make it executable (chmod +x) or change the command in wilco.yaml; then answer retry"
		return p, true
	}
	return EnvironmentProblem{}, false
}

// lineOf is the whole line of text that holds part, trimmed and at most
// 300 bytes long.
func lineOf(text, part string) string {
	i := strings.Index(text, part)
	if i < 0 {
		return strings.TrimSpace(part)
	}
	start := strings.LastIndexByte(text[:i], '\n') + 1
	end := strings.IndexByte(text[i:], '\n')
	if end < 0 {
		end = len(text)
	} else {
		end += i
	}
	l := strings.TrimSpace(text[start:end])
	if len(l) > 300 {
		l = l[:299] + "…"
	}
	return l
}

func quote(s string) string { return "\"" + s + "\"" }

// MaxRateLimitedSends bounds how often a turn cut short by a rate-limited
// model API is taken up again (a delegation sent again before the ACK, the
// work gone on with after it): past it, the attempt fails as any other.
const MaxRateLimitedSends = 5

// rateLimitRe is a model API that is rate limited or overloaded, as agent
// CLIs report it: a transient no change of the work fixes, but time does.
var rateLimitRe = regexp.MustCompile(`(?i)rate_limit_error|overloaded_error|API Error: (?:429|529)\b|\b(?:429|529)\b.{0,30}(?:too many requests|overloaded|rate limit)|RESOURCE_EXHAUSTED|rate limit(?:ed)? (?:exceeded|reached)|too many requests`)

// RateLimited reports whether an agent's output shows a rate-limited or
// overloaded model API, and the line that shows it: the one place that
// decides it, for a turn that ends before its ACK (the core sends the
// delegation again) and for one that ends after it (the exec adapter goes
// on with the same turn).
func RateLimited(output string) (string, bool) {
	m := rateLimitRe.FindString(output)
	if m == "" {
		return "", false
	}
	return lineOf(output, m), true
}
