package slackfake

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
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

// TestMetadataIsKeptAndReadBackOnlyWhenAsked: chat.postMessage's metadata comes back from
// conversations.history and conversations.replies with include_all_metadata, and only then;
// both read in pages, people's messages included; Posts counts what was created.
func TestMetadataIsKeptAndReadBackOnlyWhenAsked(t *testing.T) {
	s := New(t)
	c := slack.New(BotToken, slack.OptionAPIURL(s.URL()))
	md := func(key string) slack.MsgOption {
		return slack.MsgOptionMetadata(slack.SlackMetadata{EventType: "threadflow_message", EventPayload: map[string]any{"key": key}})
	}
	_, root, err := c.PostMessageContext(t.Context(), "C1", slack.MsgOptionText("root", false), md("r"))
	if err != nil {
		t.Fatal(err)
	}
	s.ThreadMessage("U1", "C1", root, "a person's reply")
	for _, key := range []string{"a", "b", "c"} {
		if _, _, err := c.PostMessageContext(t.Context(), "C1", slack.MsgOptionText(key, false), slack.MsgOptionTS(root), md(key)); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := c.PostMessageContext(t.Context(), "C1", slack.MsgOptionText("top", false)); err != nil {
		t.Fatal(err)
	}

	hist, err := c.GetConversationHistoryContext(t.Context(), &slack.GetConversationHistoryParameters{ChannelID: "C1"})
	if err != nil || len(hist.Messages) != 2 || hist.Messages[0].Text != "top" || hist.Messages[1].Timestamp != root ||
		hist.Messages[1].ReplyCount != 4 || hist.Messages[1].Metadata.EventType != "" {
		t.Fatalf("history without include_all_metadata = %+v, %v; want top then the root (4 replies), no metadata", hist, err)
	}
	hist, err = c.GetConversationHistoryContext(t.Context(), &slack.GetConversationHistoryParameters{ChannelID: "C1", IncludeAllMetadata: true})
	if err != nil || hist.Messages[1].Metadata.EventType != "threadflow_message" || hist.Messages[1].Metadata.EventPayload["key"] != "r" ||
		hist.Messages[1].User != BotUserID {
		t.Fatalf("history with include_all_metadata = %+v, %v; want the root's metadata", hist, err)
	}

	var keys []string
	cursor, pages := "", 0
	for {
		msgs, more, next, err := c.GetConversationRepliesContext(t.Context(), &slack.GetConversationRepliesParameters{
			ChannelID: "C1", Timestamp: root, Limit: 2, Cursor: cursor, IncludeAllMetadata: true})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, m := range msgs {
			keys = append(keys, fmt.Sprint(m.User, ":", m.Metadata.EventPayload["key"]))
		}
		if !more {
			break
		}
		cursor = next
	}
	want := []string{BotUserID + ":r", "U1:<nil>", BotUserID + ":a", BotUserID + ":b", BotUserID + ":c"}
	if pages != 3 || !slices.Equal(keys, want) {
		t.Fatalf("replies in %d pages = %v; want 3 pages of %v", pages, keys, want)
	}
	_, _, _, err = c.GetConversationRepliesContext(t.Context(), &slack.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: "1.0"})
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) || se.Err != "thread_not_found" {
		t.Fatalf("replies of an unknown thread: %v, want thread_not_found", err)
	}
	if s.Posts("C1", "") != 2 || s.Posts("C1", root) != 3 {
		t.Errorf("Posts = %d top-level, %d in the thread; want 2 and 3", s.Posts("C1", ""), s.Posts("C1", root))
	}
	_, _, err = c.PostMessageContext(t.Context(), "C1", slack.MsgOptionText("x", false),
		slack.MsgOptionMetadata(slack.SlackMetadata{EventPayload: map[string]any{"key": "k"}}))
	if !errors.As(err, &se) || se.Err != "invalid_metadata_format" {
		t.Errorf("metadata without an event_type: %v, want invalid_metadata_format", err)
	}

	// chat.update keeps the metadata unless it sends some; an empty object removes it.
	if _, _, _, err := c.UpdateMessageContext(t.Context(), "C1", root, slack.MsgOptionText("root, edited", false)); err != nil {
		t.Fatal(err)
	}
	if m := s.Messages("C1")[0]; m.Text != "root, edited" || m.Metadata.Payload["key"] != "r" {
		t.Fatalf("after an update without metadata: %+v, want the metadata kept", m)
	}
	resp, err := http.PostForm(s.URL()+"chat.update", url.Values{"token": {BotToken}, "channel": {"C1"}, "ts": {root},
		"text": {"root"}, "metadata": {"{}"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if m := s.Messages("C1")[0]; m.Metadata.EventType != "" {
		t.Errorf("after an update with empty metadata: %+v, want none", m.Metadata)
	}
}
