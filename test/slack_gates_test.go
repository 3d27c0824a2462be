package test

import (
	"strings"
	"testing"

	"threadflow/adapters/slack/slackfake"
	"threadflow/db"
	"threadflow/testkit"
	"threadflow/testkit/botproc"
	"threadflow/testkit/runevents"
)

// waitEphemeral waits until user was shown n private messages and returns the last one.
func (s *slackBot) waitEphemeral(t *testing.T, user string, n int) slackfake.Message {
	t.Helper()
	s.fake.WaitFor(t, testkit.Deadline, func(f *slackfake.Server) bool { return len(f.Ephemerals(user)) >= n })
	got := s.fake.Ephemerals(user)
	return got[n-1]
}

// countRunEvents counts a run's events of one type in the bot's database.
func countRunEvents(t *testing.T, env map[string]string, id string, typ db.EventType) int {
	t.Helper()
	return runevents.InRun(t, openStore(t, env), id, typ)
}

// TestSlackGateRules: a gate that only three people may answer, never its requester, needing two of
// them. Every refused path changes nothing and tells only the person why; two approvals ship.
func TestSlackGateRules(t *testing.T) {
	t.Parallel()
	botproc.ForEachEngine(t, botproc.Env, func(t *testing.T, env map[string]string) {
		s := startSlackBot(t, env, nil)
		s.fake.SlashCommand(alice, channel, "run guarded v1")
		r := s.waitRoot(t, "guarded", 1)
		gate := s.waitInThread(t, r, "the gate message", hasPrefix("⏸ Run `"+r.id+"` is waiting at `confirm`."))
		for _, want := range []string{"Who may answer: slack:" + alice + ", slack:" + bob + ", slack:" + carol + ".",
			"It needs 2 approvals from different people", "The requester (" + slackName(alice) + ") may not approve it",
			"reply in this thread with a clear yes or no", "Or click Approve or Reject."} {
			if !strings.Contains(gate.Text, want) {
				t.Errorf("gate message lacks %q:\n%s", want, gate.Text)
			}
		}
		if strings.Contains(gate.Text, "/workflow") {
			t.Errorf("gate message suggests a slash command, which Slack refuses in threads:\n%s", gate.Text)
		}
		s.waitStopped(t, r)

		s.fake.ThreadMessage(alice, channel, r.root.TS, "lgtm")
		if got := s.waitEphemeral(t, alice, 1); !strings.Contains(got.Text, "does not allow self-approval") {
			t.Errorf("alice was told %q", got.Text)
		}
		refusals := []func(){
			func() { s.fake.Click(mallory, gate, "Approve") },
			func() { s.fake.ThreadMessage(mallory, channel, r.root.TS, "no") },
			func() { s.fake.Mention(mallory, channel, r.root.TS, "approve") },
			func() { s.fake.SlashCommand(mallory, channel, "reject "+r.id+" not mine to answer") },
		}
		for i, refuse := range refusals {
			refuse()
			if got := s.waitEphemeral(t, mallory, i+1); !strings.Contains(got.Text, "You may not answer gate `confirm`") || !strings.Contains(got.Text, "Nothing was changed") {
				t.Errorf("refusal %d told mallory %q", i, got.Text)
			}
		}
		if n := countRunEvents(t, env, r.id, db.EventGateRefused); n != 1+len(refusals) {
			t.Errorf("%d refusals recorded, want %d", n, 1+len(refusals))
		}
		if now := s.message(t, gate.TS); now.Edited || len(now.Buttons) != 2 {
			t.Errorf("gate message after refusals = %q with %v; want it unchanged", now.Text, buttonLabels(now))
		}

		s.fake.ThreadMessage(bob, channel, r.root.TS, "lgtm, changelog checked")
		s.waitInThread(t, r, "bob's counted approval", containsText("👍 Approved by slack:"+bob+" (1 of 2 approvals)"))
		s.fake.Mention(carol, channel, r.root.TS, "approve")
		s.waitStatus(t, r, "completed")
		s.waitInThread(t, r, "the completion message", containsText("shipped v1 with notes [changelog checked"))
		if now := s.message(t, gate.TS); len(now.Buttons) != 0 || !strings.HasPrefix(now.Text, "✅ Approved by slack:"+bob+" and slack:"+carol) {
			t.Errorf("answered gate message = %q with %v", now.Text, buttonLabels(now))
		}
	})
}
