package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"wilco/demo"
)

// runDemo is `wilco demo`: a sample repository with a failing test, the
// built-in scripted agent, and a real task through wilco to success.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "make the sample repository here and keep it (default: a temporary directory)")
	scout := fs.Bool("scout", false, "the second scenario: the editor consults a scout, and a reviewer rejects the first verified change, then approves")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, "usage: wilco demo [--dir DIR] [--scout]\n\nA sample repository with a failing test, a built-in scripted agent, and a real task\nthrough wilco: ACK, a failed verification, a retry carrying the failure, success.")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "wilco demo: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "wilco demo: %v\n", err)
		return exitFailure
	}
	if *dir != "" {
		if err := os.MkdirAll(*dir, 0o755); err != nil {
			fmt.Fprintf(stderr, "wilco demo: %v\n", err)
			return exitFailure
		}
	}
	if err := demo.Run(ctx, demo.Options{Self: self, Dir: *dir, Stdout: stdout, Scout: *scout}); err != nil {
		fmt.Fprintf(stderr, "wilco demo: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// runDemoAgent is the scripted agent the demo configures (`wilco
// demo-agent`): not for people.
func runDemoAgent(args []string, stdin io.Reader, stdout io.Writer) int {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		fmt.Fprintln(stdout, "usage: wilco demo-agent\n\nThe demo's scripted agent: reads its prompt on standard input (or $WILCO_PROMPT_FILE),\nacknowledges $WILCO_TASK_ID, and edits calc.go in the working directory.")
		return exitOK
	}
	role := ""
	if len(args) > 0 {
		role = args[0]
	}
	return demo.RunRole(role, stdin, stdout)
}
