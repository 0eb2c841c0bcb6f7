package loadgen

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"strconv"
	"time"
	"testing"
)

func init() { if v := os.Getenv("CKPT"); v != "" { ckptEvery, _ = strconv.Atoi(v); ckptInterval = time.Hour } }

var full = flag.Int("loadgen.deliveries", 0, "run the full workload with this many deliveries")

func TestFull(t *testing.T) {
	if *full == 0 {
		t.Skip("set -loadgen.deliveries")
	}
	o := Defaults()
	o.Deliveries = *full
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	json.NewEncoder(os.Stdout).Encode(res)
}
