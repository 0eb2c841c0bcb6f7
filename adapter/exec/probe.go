package exec

import (
	"context"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"wilco/ack"
	"wilco/core"
)

// ProbeTaskID is the task id of a probe's prompt.
const ProbeTaskID = "PROBE-1"

// ProbeResult is what one probe turn of an exec agent found.
type ProbeResult struct {
	// Program is the program's path ("" when it is not found), Version
	// what its --version printed.
	Program, Version string
	// Newer: the version is newer than the one its preset is known to
	// work with.
	Newer bool
	// OK: the agent answered the probe with a correct [ACK].
	OK bool
	// Problem says what is wrong in words a user can act on, and Fix what
	// to do; both "" when OK.
	Problem, Fix string
	// ExitCode and Output are the probe process's exit status and the
	// tail of what it wrote.
	ExitCode int
	Output   string
	Duration time.Duration
}

// probePrompt asks for the ACK and nothing else.
const probePrompt = "## Task: " + ProbeTaskID + "\n\nThis is a check that you can be reached: do not change any file and do not run any command.\n\n" +
	"Reply with exactly these two lines and stop:\n[ACK] " + ProbeTaskID + " - RECEIVED\nUnderstanding: a check that I can be reached\n"

var (
	unreachableRe = regexp.MustCompile(`(?i)no response from the model's API|ECONNREFUSED|ECONNRESET|connection refused|connection_error|ENOTFOUND|getaddrinfo|fetch failed|Connection error|network (?:error|is unreachable)|timed out connecting|stream disconnected|error sending request`)
)

// Probe runs one turn of agent c in dir (the repository) with a prompt
// that asks for the ACK only, for at most timeout, and says what works and
// what does not: the program missing, a flag the CLI refuses, an
// untrusted folder, no API key or an authentication error, the model's API
// unreachable, or no ACK.
func Probe(ctx context.Context, c AgentConfig, dir string, timeout time.Duration) ProbeResult {
	var r ProbeResult
	inv, err := buildCommand(c, probePrompt, "", "")
	if err != nil {
		r.Problem, r.Fix = err.Error(), "fix the agent in wilco.yaml"
		return r
	}
	if p, err := osexec.LookPath(inv.argv[0]); err == nil {
		r.Program = p
		vctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		out, _ := osexec.CommandContext(vctx, p, "--version").Output()
		cancel()
		r.Version, _ = ParseVersion(string(out))
		if known := PresetVersions[c.Preset]; r.Version != "" && known != "" {
			r.Newer = NewerVersion(r.Version, known)
		}
	} else {
		r.ExitCode = 127
		r.Problem = fmt.Sprintf("the program %q is not installed or not on the PATH (%s)", inv.argv[0], os.Getenv("PATH"))
		r.Fix = "install it, or give its path as the first element of command in wilco.yaml"
		return r
	}
	tmp, err := os.MkdirTemp("", "wilco-probe-")
	if err != nil {
		r.Problem = err.Error()
		return r
	}
	defer os.RemoveAll(tmp)
	promptFile := filepath.Join(tmp, "prompt.md")
	if err := os.WriteFile(promptFile, []byte(probePrompt), 0o600); err != nil {
		r.Problem = err.Error()
		return r
	}
	inv, _ = buildCommand(c, probePrompt, promptFile, "")
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := make(chan struct{})
	go func() {
		<-pctx.Done()
		close(stop)
	}()
	env := envFor(os.Environ(), map[string]string{"WILCO_PHASE": PhaseAck, "WILCO_PROMPT_FILE": promptFile, "WILCO_TASK_ID": ProbeTaskID, "WILCO_AGENT": c.Name}, withPresetEnv(c))
	var ackText string
	start := time.Now()
	res := run(procSpec{inv: inv, dir: dir, env: env, stdin: promptFile, log: io.Discard, timeout: timeout, grace: 2 * time.Second, stop: stop,
		scan: &scanner{wantAck: true}, onAck: func(text string) bool { ackText = text; return false }})
	r.Duration = time.Since(start)
	r.ExitCode = res.exitCode
	r.Output = tailLines(res.text.String(), 15)
	if ackText != "" {
		if a, err := ack.Parse(ackText); err == nil && a.Kind == ack.KindAck && a.TaskID == ProbeTaskID {
			r.OK = true
			return r
		}
	}
	out := r.Output
	if res.startErr != nil {
		out = res.startErr.Error() + "\n" + out
	}
	switch p, ok := core.ClassifyStartup(res.exitCode, out); {
	case res.startErr != nil && !ok:
		r.Problem, r.Fix = "it could not start: "+res.startErr.Error(), "check the command in wilco.yaml"
	case ok:
		r.Problem, r.Fix = p.Cause, p.Fix
	case unreachableRe.MatchString(out):
		r.Problem = "the model's API cannot be reached: " + firstMatchLine(out, unreachableRe)
		r.Fix = "check the network, and the base URL the CLI is given (its env or settings)"
	case res.timedOut:
		r.Problem = fmt.Sprintf("no answer within %s", timeout)
		r.Fix = "check that the CLI runs headless on its own (try its command by hand), or give the check more time with --timeout"
	case ackText != "":
		r.Problem = "it answered, but not with a correct ACK: " + strings.SplitN(ackText, "\n", 2)[0]
		r.Fix = "the model did not follow the ACK instructions; try another model, or see docs/AGENTS.md"
	default:
		r.Problem = fmt.Sprintf("it exited with status %d without an ACK", res.exitCode)
		r.Fix = "run its command by hand to see why (its output is below)"
	}
	return r
}

// withPresetEnv is the agent's env with its preset's variables it does not
// set itself (nor wilco's environment).
func withPresetEnv(c AgentConfig) map[string]string {
	out := map[string]string{}
	for k, v := range presetEnv(c) {
		if _, set := os.LookupEnv(k); !set {
			out[k] = v
		}
	}
	for k, v := range c.Env {
		out[k] = v
	}
	return out
}

func firstMatchLine(text string, re *regexp.Regexp) string {
	for _, l := range strings.Split(text, "\n") {
		if re.MatchString(l) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
