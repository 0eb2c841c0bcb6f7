package demo

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// The sample repository.
const (
	goMod   = "module example.com/calc\n\ngo 1.21\n"
	calcBug = `package calc

// Add returns the sum of a and b.
func Add(a, b int) int {
	return a - b
}
`
	calcWrong = `package calc

// Add returns the sum of a and b.
func Add(a, b int) int {
	return a * b // attempt 1: a guess
}
`
	calcFixed = `package calc

// Add returns the sum of a and b.
func Add(a, b int) int {
	return a + b
}
`
	calcTestSums = calcTest + `
func TestAddSums(t *testing.T) {
	for _, c := range []struct{ a, b, want int }{{0, 0, 0}, {-2, 3, 1}, {7, -7, 0}} {
		if got := Add(c.a, c.b); got != c.want {
			t.Errorf("Add(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
`
	calcTest = `package calc

import "testing"

func TestAdd(t *testing.T) {
	if got := Add(2, 3); got != 5 {
		t.Fatalf("Add(2, 3) = %d, want 5", got)
	}
}
`
)

// RunAgent is the scripted agent: the prompt on stdin (or in
// WILCO_PROMPT_FILE), the repository as its working directory. It writes
// the ACK, then edits calc.go: a wrong guess on the first attempt, the fix
// when the prompt carries the failing test from the retry context.
func RunAgent(stdin io.Reader, stdout io.Writer) int {
	raw, err := io.ReadAll(stdin)
	if err != nil || len(raw) == 0 {
		if f := os.Getenv("WILCO_PROMPT_FILE"); f != "" {
			raw, err = os.ReadFile(f)
		}
	}
	if err != nil {
		fmt.Fprintf(stdout, "demo agent: no prompt: %v\n", err)
		return 2
	}
	prompt := string(raw)
	task := os.Getenv("WILCO_TASK_ID")
	if task == "" {
		fmt.Fprintln(stdout, "demo agent: WILCO_TASK_ID is not set")
		return 2
	}
	fmt.Fprintf(stdout, "[ACK] %s - RECEIVED\nUnderstanding: Will fix Add in calc.go so that go test passes\n\n", task)
	retry := strings.Contains(prompt, "<retry_context")
	knows := retry && strings.Contains(prompt, "TestAdd")
	content := calcWrong
	switch {
	case knows:
		fmt.Fprintln(stdout, "The retry context says TestAdd failed: Add(2, 3) must be 5. Writing a + b, and a test of more sums.")
		content = calcFixed
		if err := os.WriteFile(filepath.Join(".", "calc_test.go"), []byte(calcTestSums), 0o644); err != nil {
			fmt.Fprintf(stdout, "demo agent: %v\n", err)
			return 1
		}
	case retry:
		fmt.Fprintln(stdout, "A retry, but the failure is not in the prompt; trying again blind.")
	default:
		fmt.Fprintln(stdout, "Analyzing codebase... Add looks wrong; guessing multiplication.")
	}
	if err := os.WriteFile(filepath.Join(".", "calc.go"), []byte(content), 0o644); err != nil {
		fmt.Fprintf(stdout, "demo agent: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, "Done: edited calc.go.")
	return 0
}
