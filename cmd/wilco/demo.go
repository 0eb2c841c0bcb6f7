package main

import (
	"context"
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
	if err := fs.Parse(args); err != nil {
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
	if err := demo.Run(ctx, demo.Options{Self: self, Dir: *dir, Stdout: stdout}); err != nil {
		fmt.Fprintf(stderr, "wilco demo: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// runDemoAgent is the scripted agent the demo configures (`wilco
// demo-agent`): not for people.
func runDemoAgent(stdin io.Reader, stdout io.Writer) int {
	return demo.RunAgent(stdin, stdout)
}
