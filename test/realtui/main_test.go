package realtui

import (
	"testing"

	"wilco/test/blackbox"
)

func TestMain(m *testing.M) { blackbox.Main(m) }
