package slackfake

import (
	"errors"
	"testing"

	"github.com/slack-go/slack"
)

func TestWebAPIChecksTokensLikeSlack(t *testing.T) {
	s := New(t)
	tests := []struct {
		name, bot, app string
		call           func(c *slack.Client) error
		wantCode       string
	}{
		{"wrong bot token", "xoxb-other", AppToken, func(c *slack.Client) error {
			_, err := c.AuthTestContext(t.Context())
			return err
		}, "invalid_auth"},
		{"bot token opening socket mode", BotToken, BotToken, func(c *slack.Client) error {
			_, _, err := c.StartSocketModeContext(t.Context())
			return err
		}, "not_allowed_token_type"},
		{"right tokens", BotToken, AppToken, func(c *slack.Client) error {
			_, _, err := c.StartSocketModeContext(t.Context())
			return err
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := slack.New(tt.bot, slack.OptionAPIURL(s.URL()), slack.OptionAppLevelToken(tt.app))
			err := tt.call(c)
			var se slack.SlackErrorResponse
			if tt.wantCode == "" && err != nil || tt.wantCode != "" && (!errors.As(err, &se) || se.Err != tt.wantCode) {
				t.Fatalf("err = %v, want %q", err, tt.wantCode)
			}
		})
	}
}

func TestBlocksValidatedAndKeptOnTextOnlyUpdate(t *testing.T) {
	s := New(t)
	c := slack.New(BotToken, slack.OptionAPIURL(s.URL()))
	btn := func(id string) slack.BlockElement {
		return slack.NewButtonBlockElement(id, "/workflow approve x", slack.NewTextBlockObject(slack.PlainTextType, "Approve", false, false))
	}
	_, _, err := c.PostMessageContext(t.Context(), "C1", slack.MsgOptionText("t", false),
		slack.MsgOptionBlocks(slack.NewActionBlock("a", btn("same"), btn("same"))))
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) || se.Err != "invalid_blocks" {
		t.Fatalf("duplicate action ids: err = %v, want invalid_blocks", err)
	}

	_, ts, err := c.PostMessageContext(t.Context(), "C1", slack.MsgOptionText("t", false),
		slack.MsgOptionBlocks(slack.NewActionBlock("a", btn("one"))))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := c.UpdateMessageContext(t.Context(), "C1", ts, slack.MsgOptionText("t2", false)); err != nil {
		t.Fatal(err)
	}
	m := s.Messages("C1")[0]
	if m.Text != "t2" || !m.Edited || len(m.Buttons) != 1 {
		t.Fatalf("after a text-only update: %+v; Slack keeps the blocks", m)
	}
}
