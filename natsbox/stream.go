package natsbox

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// streamMaxAge is how long a message waits in the stream for its consumer.
const streamMaxAge = 7 * 24 * time.Hour

// ensureStream creates the repository's stream unless it exists.
func ensureStream(ctx context.Context, js jetstream.JetStream, repo string) (jetstream.Stream, error) {
	s, err := js.Stream(ctx, Stream(repo))
	if err == nil {
		return s, nil
	}
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, err
	}
	s, err = js.CreateStream(ctx, jetstream.StreamConfig{
		Name:        Stream(repo),
		Description: "wilco's mailbox of repository " + repo,
		Subjects:    []string{"wilco." + Escape(repo) + ".>"},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		MaxAge:      streamMaxAge,
		Duplicates:  2 * time.Minute,
	})
	if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return js.Stream(ctx, Stream(repo))
	}
	return s, err
}
