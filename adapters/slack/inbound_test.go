package slack

import (
	"errors"
	"strings"
	"testing"

	"threadflow/adapters/slack/slackfake"
	"threadflow/conversation"
	"threadflow/testkit"
)

func TestNewRejectsBadConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		cfg      Config
		h        conversation.Handler
		wantHint string
	}{
		{"user token as bot token", Config{BotToken: "xoxp-1", AppToken: "xapp-1"}, &recorder{}, "xoxb-"},
		{"empty bot token", Config{AppToken: "xapp-1"}, &recorder{}, "SLACK_BOT_TOKEN"},
		{"bot token as app token", Config{BotToken: "xoxb-1", AppToken: "xoxb-1"}, &recorder{}, "connections:write"},
		{"no handler", Config{BotToken: "xoxb-1", AppToken: "xapp-1"}, nil, "handler"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg, tt.h)
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tt.wantHint) {
				t.Fatalf("New() error = %v, want ErrConfig mentioning %q", err, tt.wantHint)
			}
		})
	}
}

func TestRunFailsOnRejectedToken(t *testing.T) {
	t.Parallel()
	fake := slackfake.New(t)
	a, err := New(Config{BotToken: "xoxb-revoked", AppToken: slackfake.AppToken, APIURL: fake.URL()}, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Run(t.Context()); err == nil || !strings.Contains(err.Error(), "invalid_auth") {
		t.Fatalf("Run() = %v, want an auth.test error naming invalid_auth", err)
	}
}

// The handler is the bot's Inbox, which records the event and queues it: Slack gets its ack only
// once that returned, so a bot killed in between gets the event again instead of losing it.
func TestSlashCommandAckedOnceTheHandlerTookIt(t *testing.T) {
	t.Parallel()
	fake, rec, _ := startAdapter(t)
	rec.gate = make(chan struct{})

	env := fake.SlashCommand("U1", "C1", "run hello world")
	got := rec.waitMessages(t, fake, 1)[0]
	if fake.Acked(env) { // the handler has not returned
		t.Fatal("the command was acked before the handler took it")
	}
	close(rec.gate)
	fake.WaitFor(t, testkit.Deadline, func(s *slackfake.Server) bool { return s.Acked(env) })

	want := conversation.Message{
		Address:   conversation.Address{Platform: Platform, ChannelID: "C1"},
		UserID:    "slack:U1",
		UserName:  "user-U1",
		Text:      "/workflow run hello world",
		Mentioned: true,
	}
	if !strings.HasPrefix(got.EventID, "command:") {
		t.Errorf("EventID = %q, want the trigger id", got.EventID)
	}
	got.EventID = ""
	if got != want {
		t.Errorf("message =\n%+v\nwant\n%+v", got, want)
	}
}

func TestInboundEvents(t *testing.T) {
	t.Parallel()
	mine := map[string]any{"type": "message", "channel": "C1", "thread_ts": "1.0", "ts": "2.0",
		"user": slackfake.BotUserID, "bot_id": slackfake.BotID, "text": "progress"}
	tests := []struct {
		name string
		push func(f *slackfake.Server)
		want []conversation.Message // EventID is checked separately
	}{
		{"mention at top level is the channel's",
			func(f *slackfake.Server) { f.Mention("U1", "C1", "", "run deploy prod") },
			[]conversation.Message{{Address: addr("C1", ""), UserID: "slack:U1", Text: "run deploy prod", Mentioned: true}}},
		{"mention in a thread is the thread's",
			func(f *slackfake.Server) { f.Mention("U1", "C1", "1.0", "approve") },
			[]conversation.Message{{Address: addr("C1", "1.0"), UserID: "slack:U1", Text: "approve", Mentioned: true}}},
		{"thread reply without mention",
			func(f *slackfake.Server) { f.ThreadMessage("U2", "C1", "1.0", "looks good") },
			[]conversation.Message{{Address: addr("C1", "1.0"), UserID: "slack:U2", Text: "looks good"}}},
		{"slack entities and links decoded",
			func(f *slackfake.Server) {
				f.ThreadMessage("U2", "C1", "1.0", "a &lt; b &amp;&amp; <https://x.io/a|x.io>")
			},
			[]conversation.Message{{Address: addr("C1", "1.0"), UserID: "slack:U2", Text: "a < b && https://x.io/a"}}},
		{"direct message",
			func(f *slackfake.Server) { f.DirectMessage("U3", "D1", "status") },
			[]conversation.Message{{Address: addr("D1", ""), UserID: "slack:U3", Text: "status", Direct: true}}},
		{"bot's own message ignored", func(f *slackfake.Server) { f.PushEvent(mine) }, nil},
		{"bot user without bot_id ignored", func(f *slackfake.Server) {
			f.PushEvent(with(mine, "bot_id", ""))
		}, nil},
		{"other bots ignored", func(f *slackfake.Server) { f.PushEvent(with(mine, "user", "U9", "bot_id", "B9")) }, nil},
		{"edit ignored", func(f *slackfake.Server) {
			f.PushEvent(with(mine, "user", "U1", "bot_id", "", "subtype", "message_changed"))
		}, nil},
		{"deletion ignored", func(f *slackfake.Server) {
			f.PushEvent(with(mine, "user", "U1", "bot_id", "", "subtype", "message_deleted"))
		}, nil},
		{"top-level chatter ignored", func(f *slackfake.Server) { f.ThreadMessage("U1", "C1", "", "lunch?") }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake, rec, _ := startAdapter(t)
			tt.push(fake)
			// Handling is in arrival order, so once the sentinel is in, everything before it was
			// either delivered or dropped.
			fake.ThreadMessage("U0", "C0", "0.1", "sentinel")
			got := rec.waitMessages(t, fake, len(tt.want)+1)
			if len(got) != len(tt.want)+1 || got[len(got)-1].Text != "sentinel" {
				t.Fatalf("handled %d messages %+v, want %d then the sentinel", len(got), got, len(tt.want))
			}
			for i, w := range tt.want {
				g := got[i]
				if !strings.HasPrefix(g.EventID, "message:"+w.ChannelID+":") {
					t.Errorf("EventID = %q, want message:<channel>:<ts>", g.EventID)
				}
				g.EventID = ""
				if g != w {
					t.Errorf("message %d =\n%+v\nwant\n%+v", i, g, w)
				}
			}
		})
	}
}

func TestRedeliveredEnvelopeKeepsEventID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		push func(f *slackfake.Server) string
	}{
		{"slash command", func(f *slackfake.Server) string { return f.SlashCommand("U1", "C1", "status") }},
		{"mention", func(f *slackfake.Server) string { return f.Mention("U1", "C1", "1.0", "status") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake, rec, _ := startAdapter(t)
			env := tt.push(fake)
			for range 3 {
				fake.Redeliver(env)
			}
			got := rec.waitMessages(t, fake, 4)
			for _, m := range got {
				if m.EventID == "" || m.EventID != got[0].EventID {
					t.Fatalf("redeliveries carry EventIDs %q and %q; the database dedup needs them equal", got[0].EventID, m.EventID)
				}
			}
		})
	}
}

func TestReconnectsAfterDroppedConnection(t *testing.T) {
	t.Parallel()
	fake, rec, _ := startAdapter(t)
	fake.SlashCommand("U1", "C1", "status")
	rec.waitMessages(t, fake, 1)

	fake.DropConnection()
	fake.WaitFor(t, testkit.Deadline, func(s *slackfake.Server) bool { return s.Connections() == 2 && s.Connected() })
	env := fake.SlashCommand("U1", "C1", "list")
	got := rec.waitMessages(t, fake, 2)
	if got[1].Text != "/workflow list" {
		t.Fatalf("after reconnect got %q, want /workflow list", got[1].Text)
	}
	fake.WaitFor(t, testkit.Deadline, func(s *slackfake.Server) bool { return s.Acked(env) })
}

func addr(channel, thread string) conversation.Address {
	return conversation.Address{Platform: Platform, ChannelID: channel, ThreadID: thread}
}

// with returns a copy of ev with key/value pairs set; an empty value deletes the key.
func with(ev map[string]any, kv ...string) map[string]any {
	out := make(map[string]any, len(ev))
	for k, v := range ev {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(out, kv[i])
		} else {
			out[kv[i]] = kv[i+1]
		}
	}
	return out
}
