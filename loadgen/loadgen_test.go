package loadgen

import (
	"context"
	"testing"
)

func TestRunSettlesEveryDelivery(t *testing.T) {
	t.Parallel()
	o := Defaults()
	o.Deliveries, o.Agents, o.Dir = 3000, 10, t.TempDir()
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Acked+res.Failed != int64(o.Deliveries) {
		t.Fatalf("acked %d + failed %d != %d", res.Acked, res.Failed, o.Deliveries)
	}
	if res.Sends > int64(o.Deliveries*(o.MaxRetries+1)) || res.Sends < int64(o.Deliveries) {
		t.Fatalf("sends %d out of range", res.Sends)
	}
	// With P = 0.7 and four sends, about 0.3^4 = 0.8% fail.
	if res.Failed > int64(o.Deliveries)/20 {
		t.Fatalf("failed %d of %d", res.Failed, o.Deliveries)
	}
	if res.P99MS <= 0 || res.AckedPerSec <= 0 || res.PeakRSSMB <= 0 {
		t.Fatalf("missing measurements: %+v", res)
	}
	t.Logf("%+v", res)
}

func TestOptionsValidate(t *testing.T) {
	t.Parallel()
	for _, mut := range []func(*Options){
		func(o *Options) { o.Deliveries = 0 },
		func(o *Options) { o.Agents = -1 },
		func(o *Options) { o.AckProb = 1.5 },
		func(o *Options) { o.Timeout = 0 },
		func(o *Options) { o.MaxRetries = -1 },
	} {
		o := Defaults()
		mut(&o)
		if o.Validate() == nil {
			t.Fatalf("accepted %+v", o)
		}
	}
}
