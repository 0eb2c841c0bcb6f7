package mailbox_test

import (
	"testing"

	"wilco/adapter"
	"wilco/adapter/adaptertest"
	"wilco/adapter/mailbox"
)

func TestTheMailboxSidePassesTheConformanceSuite(t *testing.T) {
	t.Parallel()
	adaptertest.Run(t, adaptertest.Harness{Pull: true, Start: func(t *testing.T, r adapter.Reporter) adaptertest.Started {
		a := &mailbox.Adapter{}
		t.Cleanup(func() { _ = a.Close() })
		return adaptertest.Started{Adapter: a, Agent: "remote", Dir: t.TempDir()}
	}})
}
