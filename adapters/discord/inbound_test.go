package discord

import (
	"reflect"
	"slices"
	"testing"

	"threadflow/adapters/discord/discordfake"
	"threadflow/conversation"
	"threadflow/testkit"
)

func TestSlashCommandDefersThenHandsOverTheTextCommand(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		sub  string
		opts map[string]any
		want string
	}{
		{"run", map[string]any{"name": "hello", "arguments": "world", "force": true}, "/workflow run hello world --force"},
		{"run", map[string]any{"name": "hello", "arguments": `fix "the bug" now`}, `/workflow run hello fix "the bug" now`},
		{"run", map[string]any{"name": "hello", "arguments": `the user's login`}, `/workflow run hello "the user's login"`},
		{"run", map[string]any{"name": "hello", "arguments": "the user’s login"}, "/workflow run hello \"the user’s login\""},
		{"run", map[string]any{"name": "hello", "arguments": `C:\work`}, `/workflow run hello "C:\\work"`},
		{"run", map[string]any{"name": "my flow"}, `/workflow run "my flow"`},
		{"resume", map[string]any{"id": "7k2m9x4q1c"}, "/workflow resume 7k2m9x4q1c"},
		{"resume", map[string]any{"id": "7k2m9x4q1c", "fresh-workspace": true}, "/workflow resume 7k2m9x4q1c --fresh-workspace"},
		{"abandon", map[string]any{"id": "7k2m9x4q1c"}, "/workflow abandon 7k2m9x4q1c"},
		{"approve", map[string]any{"id": "7k2m9x4q1c", "comment": "looks good"}, "/workflow approve 7k2m9x4q1c looks good"},
		{"reject", map[string]any{"id": "7k2m9x4q1c", "reason": "too risky"}, "/workflow reject 7k2m9x4q1c too risky"},
		{"status", nil, "/workflow status"},
		{"status", map[string]any{"id": "7k2m9x4q1c"}, "/workflow status 7k2m9x4q1c"},
		{"list", nil, "/workflow list"},
		{"cancel", nil, "/workflow cancel"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			id := e.fake.SlashCommand("301", "500", tt.sub, tt.opts)
			h := e.rec.waitEvent(t, id)
			want := conversation.Message{
				Address: conversation.Address{Platform: Platform, ChannelID: "500"}, UserID: "discord:301",
				UserName: "user301", Text: tt.want, EventID: id, Mentioned: true,
			}
			if !reflect.DeepEqual(h.msg, want) {
				t.Errorf("handler got %+v\nwant %+v", h.msg, want)
			}
			if got := kinds(h.responsesBefore); !slices.Equal(got, []string{discordfake.KindDeferred}) {
				t.Errorf("answers before the handler ran = %v, want one deferral", got)
			}
			done := waitResponse(t, e.fake, id, discordfake.KindEditOriginal)
			if want := "`" + tt.want + "`"; done.Content != want {
				t.Errorf("deferred response finished with %q, want %q", done.Content, want)
			}
		})
	}
}

func TestSlashCommandInThreadIsAddressedToTheThread(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	thread := e.startThread(t, "run hello")
	id := e.fake.SlashCommand("301", thread.ThreadID, "status", nil)
	if got := e.rec.waitEvent(t, id).msg.Address; got != thread {
		t.Errorf("address = %+v, want the thread %+v", got, thread)
	}
}

func TestAutocompleteAnswersFromTheAutocompleter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		sub, option, partial string
		want                 []string
	}{
		{"run", "name", "he", []string{"hello", "help-desk"}},
		{"approve", "id", "7", []string{"7k2m9x4q1c", "7zzzzzzzzz"}},
		{"status", "id", "nothing", nil},
	}
	for _, tt := range tests {
		t.Run(tt.sub+"/"+tt.partial, func(t *testing.T) {
			id := e.fake.Autocomplete("301", "500", tt.sub, tt.option, tt.partial)
			r := waitResponse(t, e.fake, id, discordfake.KindAutocomplete)
			var got []string
			for _, c := range r.Choices {
				got = append(got, c.Value)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("choices = %v, want %v", got, tt.want)
			}
		})
	}
	e.ac.mu.Lock()
	defer e.ac.mu.Unlock()
	if want := (conversation.Address{Platform: Platform, ChannelID: "500"}); e.ac.conv != want {
		t.Errorf("run ids asked for %+v, want %+v", e.ac.conv, want)
	}
}

func TestTwoReplicasAnswerAnInteractionOnce(t *testing.T) {
	t.Parallel()
	fake := discordfake.New(t)
	cl := newClaimer()
	a, b := start(t, fake, cl), start(t, fake, cl)
	id := fake.SlashCommand("301", "500", "list", nil)
	fake.WaitFor(t, testkit.Deadline, func(*discordfake.Server) bool { return cl.attemptsFor(id) == 2 })
	waitResponse(t, fake, id, discordfake.KindEditOriginal)
	a.stop()
	b.stop() // both have finished every handler: nothing more can arrive
	if n := len(a.rec.all()) + len(b.rec.all()); n != 1 {
		t.Errorf("handled %d times, want once", n)
	}
	if got := kinds(fake.InteractionResponses(id)); !slices.Equal(got, []string{discordfake.KindDeferred, discordfake.KindEditOriginal}) {
		t.Errorf("answers = %v, want one deferral then its completion", got)
	}
}

func TestMentionIsStripped(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.fake.Mention("301", "500", "  /workflow status 7k2m9x4q1c")
	got := e.rec.waitEvent(t, id).msg
	if got.Text != "/workflow status 7k2m9x4q1c" || !got.Mentioned || got.Direct || got.ThreadID != "" {
		t.Errorf("got %+v, want the command without the mention, Mentioned", got)
	}
}

func TestThreadMessageWithoutMentionIsRouted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	thread := e.startThread(t, "Run 7k2m9x4q1c\nwaiting")
	id := e.fake.ThreadMessage("301", thread.ThreadID, "yes, ship it")
	got := e.rec.waitEvent(t, id).msg
	want := conversation.Address{Platform: Platform, ChannelID: "500", ThreadID: thread.ThreadID}
	if got.Address != want || got.Mentioned || got.Text != "yes, ship it" {
		t.Errorf("got %+v, want text in %+v, not mentioned", got, want)
	}
}

func TestDirectMessageIsDirect(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.fake.DirectMessage("301", "/workflow list")
	got := e.rec.waitEvent(t, id).msg
	if !got.Direct || got.Mentioned || got.ChannelID != discordfake.DMChannel("301") || got.Text != "/workflow list" {
		t.Errorf("got %+v, want a direct message", got)
	}
}

func TestOwnMessagesAndChannelChatterAreIgnored(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, err := e.adapter.Outbox().Post(t.Context(), conversation.Address{Platform: Platform, ChannelID: "500"},
		conversation.Reply{Text: conversation.T(conversation.P("<@" + discordfake.BotUserID + "> hello me"))}); err != nil {
		t.Fatalf("Post: %v", err)
	}
	e.fake.ChannelMessage("301", "500", "just chatting")
	e.fake.WaitFor(t, testkit.Deadline, func(*discordfake.Server) bool {
		return e.logs.FilterMessage("discord.message_ignored").Len() == 2
	})
	e.stop()
	if got := e.rec.all(); len(got) != 0 {
		t.Errorf("handler got %+v, want nothing", got)
	}
}

func TestButtonClickRunsItsCommand(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	long := "/workflow run hello --force \"" + string(slices.Repeat([]byte("x"), 150)) + "\""
	to := conversation.Address{Platform: Platform, ChannelID: "500"}
	ref, err := e.adapter.Outbox().Post(t.Context(), to, conversation.Reply{
		Text: conversation.T(conversation.P("Approve?")),
		Buttons: []conversation.Button{
			{Label: "Approve", Command: "/workflow approve 7k2m9x4q1c", Style: conversation.StylePrimary},
			{Label: "Start fresh", Command: long},
		},
	})
	if err != nil {
		t.Fatalf("Post: %v", err)
	}
	msgs := e.fake.BotMessages("500")
	tests := []struct{ label, want string }{{"Approve", "/workflow approve 7k2m9x4q1c"}, {"Start fresh", long}}
	for _, tt := range tests {
		id := e.fake.Click("301", msgs[len(msgs)-1], tt.label)
		got := e.rec.waitEvent(t, id).msg
		if got.Text != tt.want || got.Action == nil || got.Action.Ref != ref || got.UserID != "discord:301" {
			t.Errorf("click %q: got %+v (action %+v), want %q on %+v", tt.label, got, got.Action, tt.want, ref)
		}
		if r := kinds(e.fake.InteractionResponses(id)); !slices.Equal(r, []string{discordfake.KindDeferredUpdate}) {
			t.Errorf("click %q answered %v, want a deferred update", tt.label, r)
		}
	}
}
