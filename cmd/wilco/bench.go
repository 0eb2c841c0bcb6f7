package main

import (
	"context"
	"fmt"
	"io"
)

// runBench is `wilco bench` (the lead writes it).
func runBench(_ context.Context, _ []string, _, stderr io.Writer) int {
	fmt.Fprintln(stderr, "wilco bench: not built yet")
	return 1
}
