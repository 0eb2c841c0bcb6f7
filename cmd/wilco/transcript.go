package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// cmdTranscript prints an attempt's conversation with its agent: the
// prompt, the assistant's text, each tool call and its result.
func cmdTranscript(ctx context.Context, c *cli, v *verb, args []string) int {
	fs := c.flags(v)
	attempt := fs.Int("attempt", 0, "the attempt (default: the task's current one)")
	full := fs.Bool("full", false, "print the prompt and tool results whole (default: their first lines)")
	asJSON := fs.Bool("json", false, "print the API JSON")
	pos, _, code, ok := c.parse(v, fs, args, 1, 1)
	if !ok {
		return code
	}
	cl, err := c.admin()
	if err != nil {
		return c.fail(err)
	}
	t, err := cl.Transcript(ctx, pos[0], *attempt)
	if err != nil {
		return c.fail(err)
	}
	if *asJSON {
		return c.printJSON(t)
	}
	fmt.Fprintf(c.stdout, "%s attempt %d (run %s)\n", t.TaskID, t.Attempt, t.RunID)
	if len(t.Entries) == 0 {
		fmt.Fprintln(c.stdout, "no transcript: the agent is not an exec agent, or its turn has not started")
		return exitOK
	}
	short := func(s string, n int) string {
		if *full {
			return s
		}
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		if len(lines) > n {
			lines = append(lines[:n], fmt.Sprintf("… (%d more lines; --full prints them)", len(lines)-n))
		}
		return strings.Join(lines, "\n")
	}
	for _, e := range t.Entries {
		at := e.At.In(c.loc).Format("15:04:05")
		switch e.Kind {
		case "prompt":
			fmt.Fprintf(c.stdout, "%s  prompt:\n%s\n", at, indent(short(e.Text, 8)))
		case "text":
			fmt.Fprintf(c.stdout, "%s  agent:\n%s\n", at, indent(e.Text))
		case "tool_call":
			in, _ := json.Marshal(e.Input)
			fmt.Fprintf(c.stdout, "%s  tool %s %s\n", at, e.Tool, oneLine(string(in), 200))
		case "tool_result":
			fmt.Fprintf(c.stdout, "%s  result:\n%s\n", at, indent(short(e.Text, 6)))
		default:
			fmt.Fprintf(c.stdout, "%s  %s: %s\n", at, e.Kind, oneLine(e.Text, 300))
		}
	}
	return exitOK
}
