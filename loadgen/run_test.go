package loadgen

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"testing"
)

var full = flag.Int("loadgen.deliveries", 0, "run the full workload with this many deliveries (a measurement, not a test)")

func TestFull(t *testing.T) {
	if *full == 0 {
		t.Skip("set -loadgen.deliveries to measure")
	}
	o := Defaults()
	o.Deliveries = *full
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	json.NewEncoder(os.Stdout).Encode(res)
}
