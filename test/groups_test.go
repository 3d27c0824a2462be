package test

import (
	"strings"
	"testing"

	"threadflow/adapters/discord/discordfake"
	"threadflow/adapters/slack/slackfake"
	"threadflow/db"
	"threadflow/testkit/botproc"
)

// A gate whose approvers are a Slack user group: membership is read from Slack (usergroups.users.list,
// through slack-go against the fake) when someone answers. A lookup that fails refuses and says
// so; a non-member is refused; a member approves.
func TestSlackGateApproversByUserGroup(t *testing.T) {
	t.Parallel()
	botproc.ForEachEngine(t, botproc.Env, func(t *testing.T, env map[string]string) {
		s := startSlackBot(t, env, nil)
		s.fake.SetUserGroup(releaseGroup, bob)
		s.fake.FailUserGroups("ratelimited")
		s.fake.SlashCommand(alice, channel, "run grouped v1")
		r := s.waitRoot(t, "grouped", 1)
		gate := s.waitInThread(t, r, "the gate message", hasPrefix("⏸ Run `"+r.id+"` is waiting at `confirm`."))
		if !strings.Contains(gate.Text, "slack:group:"+releaseGroup) {
			t.Errorf("gate message does not say who may answer:\n%s", gate.Text)
		}
		s.waitStopped(t, r)

		s.fake.Click(bob, gate, "Approve")
		told := s.waitEphemeral(t, bob, 1)
		if !strings.Contains(told.Text, "whether you are in it could not be checked, so you are refused. Nothing was changed") ||
			!strings.Contains(told.Text, "slack:group:"+releaseGroup) {
			t.Errorf("bob, while Slack cannot be asked, was told %q", told.Text)
		}
		if now := s.message(t, gate.TS); now.Edited || len(now.Buttons) != 2 {
			t.Errorf("gate message after the failed lookup = %q; want it unchanged", now.Text)
		}
		s.fake.FailUserGroups("")

		s.fake.Click(mallory, gate, "Approve")
		if got := s.waitEphemeral(t, mallory, 1); !strings.Contains(got.Text, "You may not answer gate `confirm`") {
			t.Errorf("mallory, outside the group, was told %q", got.Text)
		}
		if n := countRunEvents(t, env, r.id, db.EventGateRefused); n != 1 {
			t.Errorf("%d refusals recorded, want mallory's (the failed lookup wrote nothing)", n)
		}

		s.fake.Click(bob, gate, "Approve")
		s.waitInThread(t, r, "the approval", hasPrefix("✅ Approved by slack:"+bob))
		s.waitStatus(t, r, "completed")
		s.waitInThread(t, r, "the output", func(m slackfake.Message) bool { return strings.Contains(m.Text, "shipped v1") })
	})
}

// A gate whose approvers are a Discord role: the roles Discord sends with the click decide.
func TestDiscordGateApproversByRole(t *testing.T) {
	t.Parallel()
	botproc.ForEachEngine(t, botproc.Env, func(t *testing.T, env map[string]string) {
		fake := discordfake.New(t)
		b := startDiscordBot(t, fake, env)
		withRole := discordProfiles[discordBob]
		withRole.Roles = []string{"930000000000000099", discordReleaseRole}
		fake.SetProfile(discordBob, withRole)
		runWorkflow(fake, "grouped", "v1")
		r := waitDiscordRun(t, fake, "grouped", 1)
		gate := waitInRunThread(t, fake, r, "the gate message", contentPrefix("⏸ Run `"+r.id+"` is waiting at `confirm`."))
		b.bot.WaitLog("orchestrator.run_stopped", map[string]string{"run_id": r.id})

		click := fake.Click(discordMallory, gate, "Approve")
		waitEphemeralAnswer(t, fake, click, "You may not answer gate `confirm`")
		if n := countRunEvents(t, env, r.id, db.EventGateRefused); n != 1 {
			t.Errorf("%d refusals recorded, want mallory's", n)
		}
		fake.Click(discordBob, gate, "Approve")
		waitDiscordStatus(t, fake, r, "completed")
		waitInRunThread(t, fake, r, "the output", contentHas("shipped v1"))
	})
}
