package core

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClassifyEnvironmentFindsWhatNoRetryFixes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		exit     int
		output   string
		kind     string
		program  string
		inReason string
	}{
		{"go cannot find the agent", 127, `could not start the agent: exec: "claude": executable file not found in $PATH (PATH searched: /usr/bin:/bin)`, EnvMissingProgram, "claude", `"claude" is not installed`},
		{"an absolute path that is not there", 127, "could not start the agent: fork/exec /opt/agent/bin/aider: no such file or directory", EnvMissingProgram, "/opt/agent/bin/aider", "aider"},
		{"dash", 127, "sh: 1: pytest: not found\n", EnvMissingProgram, "pytest", `"pytest"`},
		{"dash running a script", 127, "running checks\ncheck.sh: 3: golangci-lint: not found", EnvMissingProgram, "golangci-lint", "golangci-lint"},
		{"bash", 127, "bash: line 1: npm: command not found", EnvMissingProgram, "npm", "npm"},
		{"zsh", 127, "zsh: command not found: cargo", EnvMissingProgram, "cargo", "cargo"},
		{"env", 127, "env: 'node': No such file or directory", EnvMissingProgram, "node", "node"},
		{"127 without a name", 127, "", EnvMissingProgram, "", "exit status 127"},
		{"bash and a path", 127, "bash: /opt/tools/lint: No such file or directory", EnvMissingProgram, "/opt/tools/lint", "/opt/tools/lint"},
		{"wilco's own file is no program", 127, "could not start the agent: open the prompt for standard input: open /r/prompt.md: no such file or directory", EnvMissingProgram, "", "exit status 127"},
		{"not executable", 126, "sh: 1: ./run-tests: Permission denied", EnvNotExecutable, "./run-tests", "cannot be executed"},
		{"anthropic key", 1, `API Error: 401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`, EnvAuthentication, "", "authenticate"},
		{"login", 1, "Invalid API key · Please run /login", EnvAuthentication, "", "/login"},
		{"gemini", 1, "Error: API key not valid. Please pass a valid API key.", EnvAuthentication, "", "API key not valid"},
		{"gemini without an auth method", 41, "Invalid auth method selected.", EnvAuthentication, "", "Invalid auth method"},
		{"openai key unset", 1, "Error: OPENAI_API_KEY environment variable is not set", EnvAuthentication, "", "OPENAI_API_KEY"},
		{"401", 1, "request failed: 401 Unauthorized", EnvAuthentication, "", "401 Unauthorized"},
		{"a tool needs approval", 1, "This command requires approval: rm -rf build", EnvPermission, "", "requires approval"},
		{"claude permissions", 1, "Claude requested permissions to use Bash, but you haven't granted it yet.", EnvPermission, "", "requested permissions"},
		{"claude, the model API refuses the request", 1, `API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 999999 > 64000"}}`, EnvInvalidRequest, "", "max_tokens: 999999"},
		{"gemini, invalid argument", 1, `[API Error: {"error":{"code":400,"message":"Request contains an invalid argument.","status":"INVALID_ARGUMENT"}}]`, EnvInvalidRequest, "", "invalid argument"},
		{"a tool's permission denied", 0, "Permission denied for tool Edit: not allowed in this mode", EnvPermission, "", "Permission denied for tool"},
	}
	for _, c := range cases {
		p, ok := ClassifyEnvironment(c.exit, c.output)
		if !ok || p.Kind != c.kind || p.Program != c.program || !strings.Contains(p.Cause, c.inReason) || p.Fix == "" {
			t.Errorf("%s: got %+v, %v; want kind %s, program %q, a cause with %q", c.name, p, ok, c.kind, c.program, c.inReason)
		}
	}
}

func TestClassifyEnvironmentLeavesOrdinaryFailuresToTheDebugLoop(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		exit   int
		output string
	}{
		{1, "--- FAIL: TestAdd (0.00s)\n    add_test.go:9: got 3, want 4\nFAIL"},
		{2, "main.go:3:2: undefined: foo"},
		{1, "open /etc/shadow: permission denied"},
		{1, "bash: foo: command not found\nbut the last command failed otherwise"},
		{1, "the test checks that a 401 is returned for a bad token: ok\nFAIL: expected 403"},
		{0, "All done."},
		{1, "rewrote the config loader to read OPENAI_API_KEY from the environment"},
	} {
		if p, ok := ClassifyEnvironment(c.exit, c.output); ok {
			t.Errorf("exit %d, %q: classified as %+v", c.exit, c.output, p)
		}
	}
}

func FuzzClassifyEnvironment(f *testing.F) {
	f.Add(127, "sh: 1: pytest: not found\n")
	f.Add(1, "Invalid API key · Please run /login")
	f.Add(126, "sh: 1: ./x: Permission denied")
	f.Add(1, "This command requires approval")
	f.Fuzz(func(t *testing.T, exit int, output string) {
		p, ok := ClassifyEnvironment(exit, output)
		if !ok {
			if p != (EnvironmentProblem{}) {
				t.Fatalf("no problem, yet %+v", p)
			}
			return
		}
		if p.Kind == "" || p.Cause == "" || p.Fix == "" {
			t.Fatalf("incomplete: %+v", p)
		}
		if utf8.ValidString(output) && len(p.Line) > 310 {
			t.Fatalf("line of %d bytes", len(p.Line))
		}
		if (exit == 127 || exit == 126) && p.Program != "" && !strings.Contains(output, p.Program) {
			t.Fatalf("program %q is not in the output", p.Program)
		}
	})
}
