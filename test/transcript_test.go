package test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"threadflow/adapters/discord/discordfake"
	"threadflow/db"
	"threadflow/testkit"
	"threadflow/testkit/botproc"
)

// posted is a message as the platform fake holds it: its id there and its text.
type posted struct{ id, text string }

// waitTranscript waits until the conversation's transcript in the bot's database holds every
// message the platform shows, under its platform message id, for run, with the same text (markup
// aside), and each only once.
func waitTranscript(t *testing.T, st db.Store, conv, runID string, want []posted, plain func(string) string) {
	t.Helper()
	var last string
	testkit.Eventually(t, "the transcript of "+conv+" to hold every message the platform shows", func() bool {
		rows, err := st.Transcript(context.Background(), conv, db.TranscriptKeep)
		if err != nil {
			t.Fatal(err)
		}
		byID := map[string]db.TranscriptMessage{}
		for _, m := range rows {
			byID[m.MessageID] = m
		}
		last = fmt.Sprintf("%d rows: %+v", len(rows), rows)
		if len(rows) != len(want) {
			return false
		}
		for _, w := range want {
			m, ok := byID[w.id]
			if !ok || m.RunID != runID || m.From != "" || plain(w.text) != m.Text {
				last += fmt.Sprintf("; message %s: row %+v, want text %q", w.id, m, plain(w.text))
				return false
			}
		}
		return true
	})
	if t.Failed() {
		t.Log(last)
	}
}

// TestPostsAreRecordedInTheTranscript: every message the bot posts in a run's Slack or Discord
// thread is recorded with its platform message id and run, and the status message, edited in
// place on the platform, is one row holding its final text.
func TestPostsAreRecordedInTheTranscript(t *testing.T) {
	t.Parallel()
	t.Run("slack", func(t *testing.T) {
		botproc.ForEachEngine(t, botproc.Env, func(t *testing.T, env map[string]string) {
			s := startSlackBot(t, env, nil)
			s.fake.SlashCommand(alice, channel, "run hello world")
			r := s.waitRoot(t, "hello", 1)
			s.waitStatus(t, r, "completed")
			s.waitInThread(t, r, "the completion message", hasPrefix("✅ Run `"+r.id+"` of `hello` completed."))
			want := []posted{{r.root.TS, r.root.Text}}
			for _, m := range s.thread(r.root.TS) {
				want = append(want, posted{m.TS, m.Text})
			}
			waitTranscript(t, openStore(t, env), db.ConversationKey("slack", channel, r.root.TS), r.id, want, withoutMarkup)
		})
	})
	t.Run("discord", func(t *testing.T) {
		fake := discordfake.New(t)
		env := botproc.Env(t)
		startDiscordBot(t, fake, env)
		runWorkflow(fake, "hello", "world")
		r := waitDiscordRun(t, fake, "hello", 1)
		waitDiscordStatus(t, fake, r, "completed")
		waitInRunThread(t, fake, r, "the completion message", contentPrefix("✅ Run `"+r.id+"` of `hello` completed."))
		want := []posted{{r.root.ID, r.root.Content}}
		for _, m := range fake.BotMessages(r.thread) {
			want = append(want, posted{m.ID, m.Content})
		}
		waitTranscript(t, openStore(t, env), db.ConversationKey("discord", discordChannel, r.thread), r.id, want, withoutMarkup)
	})
}

// withoutMarkup is a platform message's text as the transcript keeps it: the spans' text without
// the code and emphasis marks these messages use.
func withoutMarkup(s string) string {
	return strings.NewReplacer("`", "", "*", "").Replace(s)
}
