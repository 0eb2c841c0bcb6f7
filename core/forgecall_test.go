package core

import "testing"

// A call to the forge that wrote or failed is an event of its own, which
// changes nothing else and replays; a read that went well is not one.
func TestAForgeCallThatWroteOrFailedIsOnRecord(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, c := range []struct {
		method string
		status int
		failed bool
		want   bool
	}{
		{"GET", 200, false, false}, {"GET", 304, false, false}, {"POST", 201, false, true}, {"PUT", 200, false, true},
		{"GET", 403, false, true}, {"GET", 502, false, true}, {"GET", 0, true, true},
	} {
		if got := IsForgeRecord(c.method, c.status, c.failed); got != c.want {
			t.Errorf("IsForgeRecord(%s, %d, %v) = %v", c.method, c.status, c.failed, got)
		}
	}
	call := ForgeCall{Method: "GET", Path: "/repos/acme/widget/pulls/7", Status: 403, Attempt: 2, DurationMS: 12, Error: "rate limited"}
	_, err := b.c.Report(b.now, ForgeCalled{Call: call})
	b.ok(err)
	if got := b.eventsOf(TypeForgeCall); len(got) != 1 || got[0].Data.(ForgeCall) != call || got[0].TaskID != "" {
		t.Fatalf("the forge's call on record: %+v", got)
	}
	_, err = b.c.Report(b.now, ForgeCalled{})
	b.refused(err, Invalid)
}
