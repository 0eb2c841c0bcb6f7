package ack_test

import (
	"fmt"
	"strings"
	"testing"

	"wilco/ack"
)

// largeInputs are replies an agent could send within the API's 1 MiB limit,
// shaped to make a careless parser quadratic. Every function must stay
// linear on them (run with -bench . and compare sizes).
func largeInputs(size int) map[string]string {
	fill := func(unit string) string { return strings.Repeat(unit, size/len(unit)) }
	return map[string]string{
		"prose":            fill("Working on it, almost done with the parser. "),
		"ack-lines":        fill("[ACK] T-3 - RECEIVED\n"),
		"broken-ack-lines": fill("[ACK] - RECEIVED\n"),
		"questions":        "[ACK] T-3 - CLARIFICATION_NEEDED\nQuestions:\n" + fill("1. q?\n\n"),
		"understanding":    "[ACK] T-3 - RECEIVED\nUnderstanding:\n" + fill("x\n"),
		"broken-json":      fill(`{"type":"task-complete"` + "\n"),
		"nested-json":      fill(`{"a":`) + `{"type":"task-complete"`,
		"open-braces":      fill(`{"`),
	}
}

func BenchmarkParse(b *testing.B) {
	for _, size := range []int{16 << 10, 256 << 10} {
		for name, text := range largeInputs(size) {
			b.Run(fmt.Sprintf("%s/%dKiB", name, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				for b.Loop() {
					ack.Parse(text)
					ack.ParseOperationReply(text)
					ack.Classify(text)
				}
			})
		}
	}
}
