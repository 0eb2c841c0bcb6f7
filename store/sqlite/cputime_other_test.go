//go:build !unix

package sqlite_test

import "time"

// cpuTime is not measured on this platform.
func cpuTime() time.Duration { return 0 }

// writtenBytes is not measured on this platform.
func writtenBytes() int64 { return 0 }
