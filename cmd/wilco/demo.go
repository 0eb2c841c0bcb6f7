package main

import (
	"context"
	"fmt"
	"io"
)

// runDemo is `wilco demo` (the lead writes it).
func runDemo(_ context.Context, _ []string, _, stderr io.Writer) int {
	fmt.Fprintln(stderr, "wilco demo: not built yet")
	return 1
}
