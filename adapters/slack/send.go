package slack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	slackapi "github.com/slack-go/slack"
	"go.uber.org/zap"
	"golang.org/x/time/rate"

	"threadflow/conversation"
)

// Sending policy. Slack allows about one message per second per channel with short bursts; a
// rate-limited or failing call is retried a bounded number of times.
const (
	sendAttempts   = 5
	sendBackoff    = 500 * time.Millisecond
	sendBackoffMax = 8 * time.Second
	channelRate    = rate.Limit(1) // messages per second per channel
	channelBurst   = 3
	// Reads (conversations.history and .replies, to find keyed messages) are Tier 3 for an app
	// installed in its own workspace: about 50 a minute per method for the whole workspace. The
	// two methods share one pace, which keeps each below its limit.
	readRate  = rate.Limit(50.0 / 60)
	readBurst = 5
)

// transientCodes are Slack error codes worth retrying; every other code (channel_not_found,
// not_in_channel, invalid_blocks, ...) will fail the same way again.
var transientCodes = map[string]bool{
	"ratelimited": true, "internal_error": true, "fatal_error": true,
	"service_unavailable": true, "request_timeout": true,
}

// sender paces and retries Web API calls that send to a channel.
type sender struct {
	log      *zap.Logger
	attempts int
	backoff  func(attempt int) time.Duration // wait after failed attempt n (1-based)
	sleep    func(ctx context.Context, d time.Duration) error

	mu       sync.Mutex
	limiters map[string]*rate.Limiter // per channel; channels a bot posts to are few
	reads    *rate.Limiter            // the whole workspace's
}

func newSender(log *zap.Logger) *sender {
	return &sender{
		log:      log,
		attempts: sendAttempts,
		backoff: func(attempt int) time.Duration {
			return min(sendBackoff<<(attempt-1), sendBackoffMax)
		},
		sleep:    sleep,
		limiters: map[string]*rate.Limiter{},
		reads:    rate.NewLimiter(readRate, readBurst),
	}
}

// do runs call, paced for channel, until it succeeds, fails for good, or runs out of attempts. A
// 429 waits the Retry-After Slack asked for. The failure is logged with the channel only: message
// text and tokens never reach logs.
func (s *sender) do(ctx context.Context, op, channel string, call func(context.Context) error) error {
	return s.try(ctx, op, channel, s.limiter(channel), call)
}

// read is do for a read of channel's messages: retried alike, but paced by the workspace's read
// limit rather than by the channel's posting pace, which it leaves to the posts.
func (s *sender) read(ctx context.Context, op, channel string, call func(context.Context) error) error {
	return s.try(ctx, op, channel, s.reads, call)
}

func (s *sender) try(ctx context.Context, op, channel string, pace *rate.Limiter, call func(context.Context) error) error {
	for attempt := 1; ; attempt++ {
		if err := pace.Wait(ctx); err != nil {
			return fmt.Errorf("slack: %s to %s: %w", op, channel, err)
		}
		err := call(ctx)
		if err == nil {
			return nil
		}
		wait, retry := s.retryAfter(err, attempt)
		if !retry || attempt >= s.attempts || ctx.Err() != nil {
			s.log.Warn("slack.send_failed", zap.String("op", op), zap.String("channel", channel),
				zap.Int("attempts", attempt), zap.Error(err))
			if !retry && ctx.Err() == nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				err = fmt.Errorf("%w: %w", conversation.ErrRefused, err) // Slack's own words follow
			}
			return fmt.Errorf("slack: %s to %s failed after %d attempt(s): %w", op, channel, attempt, err)
		}
		s.log.Debug("slack.send_retrying", zap.String("op", op), zap.String("channel", channel),
			zap.Int("attempt", attempt), zap.Duration("wait", wait), zap.Error(err))
		if err := s.sleep(ctx, wait); err != nil {
			return fmt.Errorf("slack: %s to %s: %w", op, channel, err)
		}
	}
}

// retryAfter says whether err is worth another attempt and how long to wait first.
func (s *sender) retryAfter(err error, attempt int) (time.Duration, bool) {
	var limited *slackapi.RateLimitedError
	if errors.As(err, &limited) {
		return max(limited.RetryAfter, time.Second), true
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return 0, false
	}
	var se slackapi.SlackErrorResponse
	if errors.As(err, &se) {
		return s.backoff(attempt), transientCodes[se.Err]
	}
	var sc slackapi.StatusCodeError
	if errors.As(err, &sc) {
		return s.backoff(attempt), sc.Code >= http.StatusInternalServerError || sc.Code == http.StatusRequestTimeout
	}
	// A network failure: the call may or may not have reached Slack; a rare duplicate message
	// is better than a lost approval prompt.
	return s.backoff(attempt), true
}

func (s *sender) limiter(channel string) *rate.Limiter {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.limiters[channel]
	if !ok {
		l = rate.NewLimiter(channelRate, channelBurst)
		s.limiters[channel] = l
	}
	return l
}
