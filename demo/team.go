package demo

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"wilco/client"
)

// The --scout scenario: an editor that consults a scout before it changes
// anything, and a reviewer whose first verdict asks for one more test.

const (
	scoutQuestion = "What must Add return, and which test checks it?"
	scoutAnswer   = "Add must return the sum a + b: TestAdd in calc_test.go checks Add(2, 3) == 5."
	reviewReason  = "Add has no test for negative numbers: add TestAddNegative (Add(-2, -3) == -5)."
	calcTestMore  = calcTest + `
func TestAddNegative(t *testing.T) {
	if got := Add(-2, -3); got != -5 {
		t.Fatalf("Add(-2, -3) = %d, want -5", got)
	}
}
`
)

// RunRole is the scripted agent in one of its roles: "" the editor of the
// first demo, "editor" the editor that consults the scout, "scout" the
// scout, "reviewer" the reviewer.
func RunRole(role string, stdin io.Reader, stdout io.Writer) int {
	switch role {
	case "":
		return RunAgent(stdin, stdout)
	case "scout":
		prompt := readPrompt(stdin)
		if !strings.Contains(prompt, scoutQuestion) {
			fmt.Fprintln(stdout, "I can only say what Add must return.")
			return 0
		}
		fmt.Fprintln(stdout, scoutAnswer)
		return 0
	case "reviewer":
		prompt := readPrompt(stdin)
		if strings.Contains(prompt, "TestAddNegative") {
			fmt.Fprintln(stdout, "APPROVED\nAdd returns a + b and its tests cover negative numbers.")
			return 0
		}
		fmt.Fprintf(stdout, "REJECTED\n- %s\n", reviewReason)
		return 0
	case "editor":
		return runEditor(stdin, stdout)
	}
	fmt.Fprintf(stdout, "demo agent: unknown role %q\n", role)
	return 2
}

func readPrompt(stdin io.Reader) string {
	raw, _ := io.ReadAll(stdin)
	if len(raw) == 0 {
		if f := os.Getenv("WILCO_PROMPT_FILE"); f != "" {
			raw, _ = os.ReadFile(f)
		}
	}
	return string(raw)
}

// runEditor acknowledges, consults the scout (through wilco, as wilco ask
// does), fixes Add with its answer, and adds the test a reviewer asked for
// once its reasons are in the retry context.
func runEditor(stdin io.Reader, stdout io.Writer) int {
	prompt := readPrompt(stdin)
	task := os.Getenv("WILCO_TASK_ID")
	fmt.Fprintf(stdout, "[ACK] %s - RECEIVED\nUnderstanding: Will fix Add in calc.go so that go test passes\n\n", task)
	cl := client.New(os.Getenv("WILCO_URL"), os.Getenv("WILCO_AGENT_TOKEN"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q, err := cl.Ask(ctx, "scout", scoutQuestion, time.Minute)
	if err != nil || q.State != "answered" {
		fmt.Fprintf(stdout, "The scout gave no answer (%v); stopping.\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "The scout says: %s\n", q.Answer)
	if err := os.WriteFile("calc.go", []byte(calcFixed), 0o644); err != nil {
		fmt.Fprintf(stdout, "demo agent: %v\n", err)
		return 1
	}
	if strings.Contains(prompt, "TestAddNegative") {
		fmt.Fprintln(stdout, "The reviewer asked for TestAddNegative: adding it.")
		if err := os.WriteFile("calc_test.go", []byte(calcTestMore), 0o644); err != nil {
			fmt.Fprintf(stdout, "demo agent: %v\n", err)
			return 1
		}
	}
	fmt.Fprintln(stdout, "Done: edited calc.go.")
	return 0
}
