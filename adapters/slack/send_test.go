package slack

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	slackapi "github.com/slack-go/slack"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

func TestSenderRetryPolicy(t *testing.T) {
	t.Parallel()
	netErr := &url.Error{Op: "Post", URL: "https://slack.com/api/chat.postMessage", Err: errors.New("connection reset")}
	tests := []struct {
		name      string
		errs      []error // answers of successive calls; nil is success
		wantCalls int
		wantWaits []time.Duration
		wantErr   bool
	}{
		{"success", []error{nil}, 1, nil, false},
		{"429 waits Retry-After", []error{&slackapi.RateLimitedError{RetryAfter: 3 * time.Second}, nil}, 2,
			[]time.Duration{3 * time.Second}, false},
		{"permanent error not retried", []error{slackapi.SlackErrorResponse{Err: "channel_not_found"}}, 1, nil, true},
		{"network failure retried", []error{netErr, netErr, nil}, 3, []time.Duration{1, 2}, false},
		{"5xx keeps failing, bounded", []error{
			slackapi.StatusCodeError{Code: 503}, slackapi.StatusCodeError{Code: 503}, slackapi.StatusCodeError{Code: 503},
			slackapi.StatusCodeError{Code: 503}, slackapi.StatusCodeError{Code: 503}, nil}, 5, []time.Duration{1, 2, 4, 8}, true},
		{"4xx not retried", []error{slackapi.StatusCodeError{Code: 404}}, 1, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			core, logs := observer.New(zap.DebugLevel)
			s := newSender(zap.New(core))
			s.backoff = func(attempt int) time.Duration { return time.Duration(1 << (attempt - 1)) }
			var waits []time.Duration
			s.sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
			calls := 0
			err := s.do(t.Context(), "chat.post", "C1", func(context.Context) error {
				calls++
				return tt.errs[calls-1]
			})
			if calls != tt.wantCalls || (err != nil) != tt.wantErr || !slices.Equal(waits, tt.wantWaits) {
				t.Fatalf("calls=%d err=%v waits=%v; want calls=%d err=%v waits=%v",
					calls, err, waits, tt.wantCalls, tt.wantErr, tt.wantWaits)
			}
			failed := logs.FilterMessage("slack.send_failed").All()
			if tt.wantErr != (len(failed) == 1) {
				t.Fatalf("slack.send_failed logged %d times", len(failed))
			}
			if tt.wantErr && failed[0].ContextMap()["channel"] != "C1" {
				t.Errorf("send_failed fields %v lack the channel", failed[0].ContextMap())
			}
		})
	}
}

func TestSenderStopsWhenContextEnds(t *testing.T) {
	t.Parallel()
	s := newSender(zap.NewNop())
	ctx, cancel := context.WithCancel(t.Context())
	calls := 0
	err := s.do(ctx, "chat.post", "C1", func(context.Context) error {
		calls++
		cancel()
		return &slackapi.RateLimitedError{RetryAfter: time.Hour}
	})
	if calls != 1 || !strings.Contains(err.Error(), "after 1 attempt") {
		t.Fatalf("calls=%d err=%v, want one call and no hour-long wait", calls, err)
	}
}
