package discord

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/bwmarrin/discordgo"
	"go.uber.org/zap"

	"threadflow/conversation"
)

// retryPolicy bounds how often a failed REST write is tried again.
type retryPolicy struct {
	attempts int
	base     time.Duration // doubled after each failure
}

var defaultRetry = retryPolicy{attempts: 5, base: 250 * time.Millisecond}

// withRetry runs f until it succeeds, fails for good (a 4xx other than a rate limit is the
// request's own fault), the attempts run out or ctx ends. Rate-limit waits are discordgo's buckets'
// job; this covers 5xx answers and broken connections. Each failure is logged with the channel,
// never the text.
func (a *Adapter) withRetry(ctx context.Context, op, channelID string, f func() error) error {
	delay := a.retry.base
	var err error
	for attempt := 1; ; attempt++ {
		if err = f(); err == nil {
			return nil
		}
		a.log.Warn("discord.send_failed", zap.String("op", op), zap.String("channel", channelID),
			zap.Int("attempt", attempt), errField(err))
		if !transient(err) && ctx.Err() == nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("%w: %w", conversation.ErrRefused, redact(err)) // Discord's own words follow
		}
		if attempt >= a.retry.attempts || !transient(err) {
			return redact(err)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(redact(err), ctx.Err())
		case <-t.C:
		}
		delay *= 2
	}
}

func transient(err error) bool {
	var rest *discordgo.RESTError
	if errors.As(err, &rest) && rest.Response != nil {
		code := rest.Response.StatusCode
		return code >= http.StatusInternalServerError || code == http.StatusTooManyRequests
	}
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}
