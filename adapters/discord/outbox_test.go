package discord

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"threadflow/adapters/discord/discordfake"
	"threadflow/conversation"
	"threadflow/testkit"
)

var channel500 = conversation.Address{Platform: Platform, ChannelID: "500"}

func TestPostButtonsBecomeComponentsAndEditClearsThem(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	out := e.adapter.Outbox()
	ref, err := out.Post(t.Context(), channel500, conversation.Reply{
		Text: conversation.T(conversation.P("Run "), conversation.C("7k2m9x4q1c"), conversation.P(" waits for approval")),
		Buttons: []conversation.Button{
			{Label: "Approve", Command: "/workflow approve 7k2m9x4q1c", Style: conversation.StylePrimary},
			{Label: "Reject", Command: "/workflow reject 7k2m9x4q1c", Style: conversation.StyleDanger},
			{Label: "Status", Command: "/workflow status 7k2m9x4q1c"},
		},
	})
	if err != nil {
		t.Fatalf("Post: %v", err)
	}
	msgs := e.fake.BotMessages("500")
	want := []discordfake.Button{
		{Label: "Approve", CustomID: "/workflow approve 7k2m9x4q1c", Style: 1},
		{Label: "Reject", CustomID: "/workflow reject 7k2m9x4q1c", Style: 4},
		{Label: "Status", CustomID: "/workflow status 7k2m9x4q1c", Style: 2},
	}
	if len(msgs) != 1 || msgs[0].ID != ref.MessageID || !equalButtons(msgs[0].Buttons, want) || !msgs[0].AllowedMentionsNone {
		t.Fatalf("posted %+v, want one message %s with buttons %+v and no allowed mentions", msgs, ref.MessageID, want)
	}
	if msgs[0].Content != "Run `7k2m9x4q1c` waits for approval" {
		t.Errorf("content = %q", msgs[0].Content)
	}
	if err := out.Edit(t.Context(), ref, conversation.Reply{Text: conversation.T(conversation.P("Approved"))}); err != nil {
		t.Fatalf("Edit: %v", err)
	}
	got := e.fake.BotMessages("500")[0]
	if got.Content != "Approved" || len(got.Buttons) != 0 || !got.AllowedMentionsNone {
		t.Errorf("after edit: %+v, want content Approved, no buttons, no allowed mentions", got)
	}
}

func equalButtons(a, b []discordfake.Button) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestLongOutputIsSplitBelowTheLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	line := strings.Repeat("o", 99) + "\n"
	_, err := e.adapter.Outbox().Post(t.Context(), channel500, conversation.Reply{
		Text:    conversation.T(conversation.O(strings.Repeat(line, 50))), // 5,000 characters
		Buttons: []conversation.Button{{Label: "Again", Command: "/workflow run hello"}},
	})
	if err != nil {
		t.Fatalf("Post: %v", err)
	}
	msgs := e.fake.BotMessages("500")
	if len(msgs) != 3 {
		t.Fatalf("got %d messages, want 3", len(msgs))
	}
	var all strings.Builder
	for i, m := range msgs {
		if n := utf8.RuneCountInString(m.Content); n >= 2000 {
			t.Errorf("message %d has %d characters, want under 2000", i, n)
		}
		if hasButtons := len(m.Buttons) > 0; hasButtons != (i == 2) {
			t.Errorf("message %d buttons = %v; want buttons on the last message only", i, m.Buttons)
		}
		if !m.AllowedMentionsNone {
			t.Errorf("message %d allows mentions", i)
		}
		all.WriteString(m.Content)
	}
	if all.String() != strings.Repeat(line, 50) {
		t.Error("the chunks do not add up to the output")
	}
}

func TestUserTextCannotPing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, err := e.adapter.Outbox().Post(t.Context(), channel500, conversation.Reply{
		Text: conversation.T(conversation.P("Previous request: "), conversation.U("@everyone deploy <@&42> now @here")),
	})
	if err != nil {
		t.Fatalf("Post: %v", err)
	}
	m := e.fake.BotMessages("500")[0]
	for _, live := range []string{"@everyone", "@here", "<@&"} {
		if strings.Contains(m.Content, live) {
			t.Errorf("content %q contains a live %s", m.Content, live)
		}
	}
	if !strings.Contains(m.Content, "@\u200beveryone") || !m.AllowedMentionsNone {
		t.Errorf("content %q (none=%v): want @everyone shown but broken, and no allowed mentions", m.Content, m.AllowedMentionsNone)
	}
}

func TestSendFailureIsRetried(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		failures int
		wantErr  bool
	}{
		{"recovers", 2, false},
		{"gives up after five attempts", 5, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.fake.FailNextSends(tt.failures)
			_, err := e.adapter.Outbox().Post(t.Context(), channel500, conversation.Reply{Text: conversation.T(conversation.P("hello"))})
			if (err != nil) != tt.wantErr {
				t.Fatalf("Post error = %v, want error: %v", err, tt.wantErr)
			}
			if want := map[bool]int{false: 1, true: 0}[tt.wantErr]; len(e.fake.BotMessages("500")) != want {
				t.Errorf("got %d messages, want %d", len(e.fake.BotMessages("500")), want)
			}
			logs := e.logs.FilterMessage("discord.send_failed").All()
			if len(logs) != tt.failures {
				t.Fatalf("logged %d send failures, want %d", len(logs), tt.failures)
			}
			if ch := logs[0].ContextMap()["channel"]; ch != "500" {
				t.Errorf("failure logged channel %v, want 500", ch)
			}
			for _, l := range logs {
				if strings.Contains(l.ContextMap()["error"].(string), "hello") {
					t.Errorf("log carries the message text: %v", l.ContextMap())
				}
			}
		})
	}
}

func TestEphemeralReply(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.fake.SlashCommand("301", "500", "status", nil)
	e.rec.waitEvent(t, id)
	reply := conversation.Reply{Text: conversation.T(conversation.P("only for you")), Ephemeral: true, ToUser: "discord:301"}
	if _, err := e.adapter.Outbox().Post(t.Context(), channel500, reply); err != nil {
		t.Fatalf("Post: %v", err)
	}
	r := waitResponse(t, e.fake, id, discordfake.KindFollowup)
	if !r.Ephemeral || r.Content != "only for you" {
		t.Errorf("followup = %+v, want an ephemeral 'only for you'", r)
	}
	// No interaction of this user in another channel: the reply is posted there, naming the user.
	other := conversation.Address{Platform: Platform, ChannelID: "501"}
	if _, err := e.adapter.Outbox().Post(t.Context(), other, reply); err != nil {
		t.Fatalf("Post: %v", err)
	}
	m := e.fake.BotMessages("501")
	if len(m) != 1 || m[0].Content != "<@301> only for you" || !m[0].AllowedMentionsNone {
		t.Errorf("posted %+v, want '<@301> only for you' without allowed mentions", m)
	}
}

func TestOutboxRefusesOtherPlatformsAndUneditableRefs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	out := e.adapter.Outbox()
	slack := conversation.Address{Platform: "slack", ChannelID: "C1"}
	if _, err := out.Post(t.Context(), slack, conversation.Reply{}); !errors.Is(err, ErrWrongPlatform) {
		t.Errorf("Post to slack: %v, want ErrWrongPlatform", err)
	}
	if err := out.Edit(t.Context(), conversation.Ref{Address: channel500}, conversation.Reply{}); !errors.Is(err, ErrNotEditable) {
		t.Errorf("Edit without message id: %v, want ErrNotEditable", err)
	}
}

func TestStartThreadOpensAThreadOnTheRootMessage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	addr, ref, err := e.adapter.Outbox().StartThread(t.Context(), channel500,
		conversation.Reply{Text: conversation.T(conversation.B("hello"), conversation.P(" run 7k2m9x4q1c started\ndetails"))})
	if err != nil {
		t.Fatalf("StartThread: %v", err)
	}
	th := e.fake.Threads()
	if len(th) != 1 || th[0].MessageID != ref.MessageID || th[0].ParentID != "500" || th[0].Name != "hello run 7k2m9x4q1c started" {
		t.Fatalf("threads = %+v, want one on message %s named after the first line", th, ref.MessageID)
	}
	if want := (conversation.Address{Platform: Platform, ChannelID: "500", ThreadID: th[0].ID}); addr != want {
		t.Errorf("address = %+v, want %+v", addr, want)
	}
	if _, err := e.adapter.Outbox().Post(t.Context(), addr, conversation.Reply{Text: conversation.T(conversation.P("step 1 done"))}); err != nil {
		t.Fatalf("Post in thread: %v", err)
	}
	if m := e.fake.BotMessages(th[0].ID); len(m) != 1 || m[0].Content != "step 1 done" {
		t.Errorf("thread messages = %+v", m)
	}
}

func TestCommandsAreRegistered(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		guilds []string
		scopes []string
	}{
		{"globally", nil, []string{"global"}},
		{"per guild", []string{"111", "222"}, []string{"111", "222"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := discordfake.New(t)
			start(t, fake, newClaimer(), tt.guilds...)
			for _, scope := range tt.scopes {
				fake.WaitFor(t, testkit.Deadline, func(s *discordfake.Server) bool { return s.Commands(scope) != nil })
				body := string(fake.Commands(scope))
				for _, want := range []string{`"name":"workflow"`, `"name":"run"`, `"name":"approve"`, `"autocomplete":true`} {
					if !strings.Contains(body, want) {
						t.Errorf("scope %s: registration lacks %s", scope, want)
					}
				}
			}
		})
	}
}
