package slack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
	"go.uber.org/zap"
)

// Reconnection backoff after socketmode gives up on a connection attempt.
const (
	reconnectBase = time.Second
	reconnectMax  = time.Minute
)

// stayConnected runs Socket Mode until ctx ends. socketmode reconnects by itself after a dropped
// connection or a Slack "disconnect"; it only returns on errors it treats as fatal, of which only a
// rejected token really is. Anything else is retried here with a bounded backoff, so one bad moment
// of Slack's never stops the bot.
func (a *Adapter) stayConnected(ctx context.Context, sm *socketmode.Client) error {
	for attempt := 0; ; attempt++ {
		err := sm.RunContext(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if authRejected(err) {
			return fmt.Errorf("slack: Socket Mode rejected the app token; create an App-Level Token with "+
				"connections:write and enable Socket Mode: %w", err)
		}
		wait := min(reconnectBase<<min(attempt, 6), reconnectMax)
		a.log.Warn("slack.connection_lost", zap.Error(err), zap.Duration("retry_in", wait))
		if sleep(ctx, wait) != nil {
			return nil
		}
	}
}

func authRejected(err error) bool {
	var se slackapi.SlackErrorResponse
	if errors.As(err, &se) {
		switch se.Err {
		case "invalid_auth", "not_authed", "account_inactive", "token_revoked", "not_allowed_token_type":
			return true
		}
	}
	var sc slackapi.StatusCodeError
	return errors.As(err, &sc) && (sc.Code == http.StatusUnauthorized || sc.Code == http.StatusForbidden)
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
