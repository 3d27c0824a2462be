package test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"threadflow/adapters/discord/discordfake"
	"threadflow/adapters/slack/slackfake"
	"threadflow/db"
	"threadflow/testkit"
	"threadflow/testkit/botproc"
)

// Gates that tell people (issue 29): a gate naming a group mentions exactly that group in its
// question and again at its reminder, or sends each member a direct message linking to the
// question; at escalate_after it escalates to @admins, who are told and may answer from then on.
// Every notification is a `notified` event, the escalation a `gate_escalated` one.

const (
	slackAdmin   = "UADMIN005"
	discordAdmin = "920000000000000005"
)

// notifyWorkflows are the gates of these tests for people of group: pinged mentions them (the
// default), dmed sends them direct messages; both remind after a second and escalate to @admins
// after two.
func notifyWorkflows(group string) map[string]string {
	gate := func(name, notify string) string {
		return fmt.Sprintf(`name: %s
description: Waits for someone of a group, telling them.
nodes:
  - id: confirm
    approval:
      message: Ship $ARGUMENTS?
      approvers: [%q]%s
      timeout: 1h
      remind_after: 1s
      escalate_after: 2s
      escalate_to: ["@admins"]
  - id: ship
    depends_on: [confirm]
    bash: echo "shipped $ARGUMENTS"
`, name, group, notify)
	}
	return map[string]string{"pinged.yaml": gate("pinged", ""), "dmed.yaml": gate("dmed", "\n      notify: dm")}
}

// notifications are the run's notified events, oldest first.
func notifications(t *testing.T, st db.Store, runID string) []db.NotifiedData {
	t.Helper()
	evs, err := st.Events(context.Background(), runID)
	if err != nil {
		t.Fatalf("events of run %s: %v", runID, err)
	}
	var out []db.NotifiedData
	for _, e := range evs {
		if e.Type == db.EventNotified {
			out = append(out, db.Decode[db.NotifiedData](e))
		}
	}
	return out
}

// waitNotifications waits until the run has n notified events and returns them.
func waitNotifications(t *testing.T, st db.Store, runID string, n int) []db.NotifiedData {
	t.Helper()
	var got []db.NotifiedData
	testkit.Eventually(t, fmt.Sprintf("%d notifications of run %s", n, runID), func() bool {
		got = notifications(t, st, runID)
		return len(got) >= n
	})
	return got
}

// told checks one notification: what it was about, how, and exactly whom it reached.
func told(t *testing.T, n db.NotifiedData, about, how string, to []string, skipped []string) {
	t.Helper()
	if n.About != about || n.How != how || !slices.Equal(n.To, to) || !slices.Equal(n.Skipped, skipped) {
		t.Errorf("notified %+v; want about %s by %s to %v, skipped %v", n, about, how, to, skipped)
	}
}

var slackPings = regexp.MustCompile(`<[@!][^>]*>`)

func TestSlackGateNotifiesItsGroup(t *testing.T) {
	t.Parallel()
	botproc.ForEachEngine(t, botproc.Env, func(t *testing.T, env map[string]string) {
		extra := map[string]string{"ADMIN_USER_IDS": "slack:" + slackAdmin,
			"WORKFLOWS_DIR": workflowDir(t, notifyWorkflows("slack:group:"+releaseGroup), chatWorkflows)}
		s := startSlackBot(t, env, extra)
		s.fake.SetUserGroup(releaseGroup, bob, carol)
		st := openStore(t, env)
		pings := func(m slackfake.Message) []string { return slackPings.FindAllString(m.Text, -1) }

		// notify: mention (the default with approvers): the question, the reminder and the
		// escalation each ping exactly who they name.
		s.fake.SlashCommand(alice, channel, "run pinged v1")
		r := s.waitRoot(t, "pinged", 1)
		gate := s.waitInThread(t, r, "the gate message", hasPrefix("⏸ Run `"+r.id+"` is waiting at `confirm`."))
		if got := pings(gate); !slices.Equal(got, []string{"<!subteam^" + releaseGroup + ">"}) {
			t.Errorf("the gate message pings %v, want exactly the group:\n%s", got, gate.Text)
		}
		reminder := s.waitInThread(t, r, "the reminder", hasPrefix("⏰ Reminder"))
		if got := pings(reminder); !slices.Equal(got, []string{"<!subteam^" + releaseGroup + ">"}) {
			t.Errorf("the reminder pings %v, want the group again:\n%s", got, reminder.Text)
		}
		escalated := s.waitInThread(t, r, "the escalation", hasPrefix("⏫ Gate `confirm`"))
		if got := pings(escalated); !slices.Equal(got, []string{"<@" + slackAdmin + ">"}) {
			t.Errorf("the escalation pings %v, want the admin:\n%s", got, escalated.Text)
		}
		ns := waitNotifications(t, st, r.id, 3)
		group := []string{"slack:group:" + releaseGroup}
		told(t, ns[0], "gate", db.NotifyMention, group, nil)
		told(t, ns[1], "reminder", db.NotifyMention, group, nil)
		told(t, ns[2], "escalation", db.NotifyMention, []string{"slack:" + slackAdmin}, nil)
		if n := countRunEvents(t, env, r.id, db.EventGateEscalated); n != 1 {
			t.Errorf("%d gate_escalated events, want 1", n)
		}

		// The admin may answer since the escalation; mallory, named nowhere, may not; bob, in the
		// group, approves.
		s.fake.Click(mallory, gate, "Approve")
		if got := s.waitEphemeral(t, mallory, 1); !strings.Contains(got.Text, "You may not answer gate `confirm`") {
			t.Errorf("mallory was told %q", got.Text)
		}
		s.fake.Click(bob, gate, "Approve")
		s.waitInThread(t, r, "the approval", hasPrefix("✅ Approved by slack:"+bob))
		s.waitStatus(t, r, "completed")

		// notify: dm: each member gets a direct message with a permalink that opens the question;
		// carol takes no DMs and is named; the reminder DMs again, the escalation DMs the admin.
		s.fake.NoDMs(carol, "user_disabled")
		s.fake.SlashCommand(alice, channel, "run dmed v2")
		r = s.waitRoot(t, "dmed", 1)
		gate = s.waitInThread(t, r, "the gate message", hasPrefix("⏸ Run `"+r.id+"` is waiting at `confirm`."))
		if got := pings(gate); len(got) != 0 {
			t.Errorf("with notify: dm the gate message pings %v", got)
		}
		s.fake.WaitFor(t, testkit.Deadline, func(f *slackfake.Server) bool { return len(f.DMs(bob)) >= 2 && len(f.DMs(slackAdmin)) >= 1 })
		asked := s.fake.DMs(bob)[0]
		if !strings.Contains(asked.Text, "is waiting at gate `confirm`, and you may answer it") {
			t.Errorf("bob's DM says %q", asked.Text)
		}
		link := regexp.MustCompile(`https://\S+`).FindString(asked.Text)
		if m, ok := s.fake.Permalinked(link); !ok || m.TS != gate.TS || m.ThreadTS != r.root.TS {
			t.Errorf("the DM's link %q opens %+v (%v), want the gate message %s in the run's thread", link, m, ok, gate.TS)
		}
		if again := s.fake.DMs(bob)[1]; !strings.Contains(again.Text, "Reminder") {
			t.Errorf("bob's second DM says %q, want the reminder", again.Text)
		}
		if esc := s.fake.DMs(slackAdmin)[0]; !strings.Contains(esc.Text, "escalated") || !strings.Contains(esc.Text, "https://slackfake.invalid/archives/") {
			t.Errorf("the admin's DM says %q, want the escalation with its link", esc.Text)
		}
		if got := s.fake.DMs(carol); len(got) != 0 {
			t.Errorf("carol, who takes no DMs, got %d", len(got))
		}
		ns = waitNotifications(t, st, r.id, 3)
		told(t, ns[0], "gate", db.NotifyDM, []string{"slack:" + bob}, []string{"slack:" + carol})
		told(t, ns[1], "reminder", db.NotifyDM, []string{"slack:" + bob}, []string{"slack:" + carol})
		told(t, ns[2], "escalation", db.NotifyDM, []string{"slack:" + slackAdmin}, nil)
		s.fake.Click(slackAdmin, gate, "Approve")
		s.waitStatus(t, r, "completed")
		if got := s.fake.DMs(alice); len(got) != 0 {
			t.Errorf("alice, whose runs ended within REQUESTER_DM_AFTER, got DMs: %v", got)
		}
	})
}

func TestDiscordGateNotifiesItsRole(t *testing.T) {
	t.Parallel()
	botproc.ForEachEngine(t, botproc.Env, func(t *testing.T, env map[string]string) {
		fake := discordfake.New(t)
		env["ADMIN_USER_IDS"] = "discord:" + discordAdmin
		b := startDiscordBotIn(t, fake, env, workflowDir(t, notifyWorkflows("discord:role:"+discordReleaseRole), chatWorkflows))
		for _, id := range []string{discordBob, discordCarol} {
			p := discordProfiles[id]
			p.Roles = []string{discordReleaseRole}
			fake.SetProfile(id, p)
		}
		fake.SetProfile(discordAdmin, discordfake.Profile{Username: "admin"})
		st := openStore(t, env)

		// notify: mention: the message pings the role and only the role (allowed_mentions).
		runWorkflow(fake, "pinged", "v1")
		r := waitDiscordRun(t, fake, "pinged", 1)
		gate := waitInRunThread(t, fake, r, "the gate message", contentPrefix("⏸ Run `"+r.id+"` is waiting at `confirm`."))
		role := "<@&" + discordReleaseRole + ">"
		if !strings.Contains(gate.Content, role) || !slices.Equal(gate.AllowedRoles, []string{discordReleaseRole}) ||
			len(gate.AllowedUsers) != 0 || !gate.AllowedMentionsNone {
			t.Errorf("gate message %q allows users %v roles %v (parse none %v); want exactly the role", gate.Content, gate.AllowedUsers, gate.AllowedRoles, gate.AllowedMentionsNone)
		}
		reminder := waitInRunThread(t, fake, r, "the reminder", contentPrefix("⏰ Reminder"))
		if !strings.Contains(reminder.Content, role) || !slices.Equal(reminder.AllowedRoles, []string{discordReleaseRole}) {
			t.Errorf("reminder %q allows roles %v; want the role again", reminder.Content, reminder.AllowedRoles)
		}
		escalated := waitInRunThread(t, fake, r, "the escalation", contentPrefix("⏫ Gate `confirm`"))
		if !strings.Contains(escalated.Content, "<@"+discordAdmin+">") || !slices.Equal(escalated.AllowedUsers, []string{discordAdmin}) ||
			len(escalated.AllowedRoles) != 0 {
			t.Errorf("escalation %q allows users %v roles %v; want exactly the admin", escalated.Content, escalated.AllowedUsers, escalated.AllowedRoles)
		}
		ns := waitNotifications(t, st, r.id, 3)
		told(t, ns[0], "gate", db.NotifyMention, []string{"discord:role:" + discordReleaseRole}, nil)
		told(t, ns[1], "reminder", db.NotifyMention, []string{"discord:role:" + discordReleaseRole}, nil)
		told(t, ns[2], "escalation", db.NotifyMention, []string{"discord:" + discordAdmin}, nil)

		click := fake.Click(discordMallory, gate, "Approve")
		waitEphemeralAnswer(t, fake, click, "You may not answer gate `confirm`")
		fake.Click(discordBob, gate, "Approve")
		waitDiscordStatus(t, fake, r, "completed")
		// /workflow status shows who was told and the escalation.
		fake.SlashCommand(discordAlice, discordChannel, "status", map[string]any{"id": r.id})
		status := waitDiscordMessage(t, fake, discordChannel, "the run's status", contentPrefix("Run `"+r.id+"` of `pinged`"))
		for _, want := range []string{"discord:role:" + discordReleaseRole + " mentioned about the gate", "mentioned about the reminder",
			"discord:" + discordAdmin + " mentioned about the escalation", "⏫ escalated"} {
			if !strings.Contains(discordShown(status.Content), want) {
				t.Errorf("status lacks %q:\n%s", want, discordShown(status.Content))
			}
		}

		// notify: dm: the role's members (List Guild Members) get a DM linking to the question;
		// carol takes no DMs and is named.
		fake.NoDMs(discordCarol, true)
		runWorkflow(fake, "dmed", "v2")
		r = waitDiscordRun(t, fake, "dmed", 1)
		gate = waitInRunThread(t, fake, r, "the gate message", contentPrefix("⏸ Run `"+r.id+"` is waiting at `confirm`."))
		if len(gate.AllowedRoles) != 0 || len(gate.AllowedUsers) != 0 {
			t.Errorf("with notify: dm the gate message allows mentions of %v %v", gate.AllowedUsers, gate.AllowedRoles)
		}
		fake.WaitFor(t, testkit.Deadline, func(f *discordfake.Server) bool {
			return len(f.DMs(discordBob)) >= 2 && len(f.DMs(discordAdmin)) >= 1
		})
		asked := fake.DMs(discordBob)[0]
		want := "https://discord.com/channels/" + discordfake.GuildID + "/" + r.thread + "/" + gate.ID
		if !strings.Contains(asked.Content, want) || !strings.Contains(discordShown(asked.Content), "and you may answer it") {
			t.Errorf("bob's DM says %q; want the link %s to the gate message", asked.Content, want)
		}
		if len(fake.DMs(discordCarol)) != 0 {
			t.Errorf("carol, who takes no DMs, got some")
		}
		ns = waitNotifications(t, st, r.id, 3)
		told(t, ns[0], "gate", db.NotifyDM, []string{"discord:" + discordBob}, []string{"discord:" + discordCarol})
		told(t, ns[1], "reminder", db.NotifyDM, []string{"discord:" + discordBob}, []string{"discord:" + discordCarol})
		told(t, ns[2], "escalation", db.NotifyDM, []string{"discord:" + discordAdmin}, nil)
		fake.Click(discordAdmin, gate, "Approve")
		waitDiscordStatus(t, fake, r, "completed")
		b.bot.WaitLog("orchestrator.run_stopped", map[string]string{"run_id": r.id})
	})
}

// The requester is told directly when their run is decided or ends after REQUESTER_DM_AFTER, not
// when they end it themselves nor when it ends sooner.
// requesterAway is REQUESTER_DM_AFTER in TestRequesterWhoLeftIsToldDirectly: a run that ends
// sooner tells its requester nothing. Its quick run took 1.4 s from the command to its end on a
// loaded 2-core machine, past the 1s this once was.
const requesterAway = 5 * time.Second

func TestRequesterWhoLeftIsToldDirectly(t *testing.T) {
	t.Parallel()
	env := botproc.Env(t)
	s := startSlackBot(t, env, map[string]string{"REQUESTER_DM_AFTER": requesterAway.String()})
	st := openStore(t, env)

	s.fake.SlashCommand(alice, channel, "run picky B") // ends at once: no DM
	quick := s.waitRoot(t, "picky", 1)
	s.waitStatus(t, quick, "completed")

	s.fake.SlashCommand(alice, channel, "run gated v1")
	r := s.waitRoot(t, "gated", 1)
	gate := s.waitInThread(t, r, "the gate message", hasPrefix("⏸ Run `"+r.id+"`"))
	started := time.Now()
	testkit.Eventually(t, "REQUESTER_DM_AFTER to pass", func() bool { return time.Since(started) > requesterAway })
	s.fake.Click(bob, gate, "Approve")
	status := s.waitStatus(t, r, "completed")
	s.fake.WaitFor(t, testkit.Deadline, func(f *slackfake.Server) bool { return len(f.DMs(alice)) >= 2 })
	dms := s.fake.DMs(alice)
	if !strings.Contains(dms[0].Text, "Your run `"+r.id+"`") || !strings.Contains(dms[0].Text, "Approved by") {
		t.Errorf("alice's first DM says %q, want bob's approval", dms[0].Text)
	}
	if !strings.Contains(dms[1].Text, "Your run `"+r.id+"`") || !strings.Contains(dms[1].Text, "completed") {
		t.Errorf("alice's second DM says %q, want the run's end", dms[1].Text)
	}
	for _, dm := range dms {
		link := regexp.MustCompile(`https://\S+`).FindString(dm.Text)
		if m, ok := s.fake.Permalinked(link); !ok || m.TS != status.TS {
			t.Errorf("the DM's link %q opens %+v, want the run's status message", link, m)
		}
	}
	ns := waitNotifications(t, st, r.id, 2)
	told(t, ns[0], "decision", db.NotifyDM, []string{"slack:" + alice}, nil)
	told(t, ns[1], "end", db.NotifyDM, []string{"slack:" + alice}, nil)

	// Her own abandon, however late, tells her nothing.
	s.fake.SlashCommand(alice, channel, "run gated v2")
	own := s.waitRoot(t, "gated", 2)
	s.waitInThread(t, own, "the gate message", hasPrefix("⏸ Run `"+own.id+"`"))
	started = time.Now()
	testkit.Eventually(t, "REQUESTER_DM_AFTER to pass", func() bool { return time.Since(started) > requesterAway })
	s.fake.SlashCommand(alice, channel, "abandon "+own.id)
	s.waitStatus(t, own, "cancelled")
	testkit.Eventually(t, "every message of the abandoned run delivered", func() bool {
		u, err := st.Undelivered(context.Background(), own.id)
		return err == nil && len(u) == 0
	})
	if n := len(notifications(t, st, own.id)) + len(notifications(t, st, quick.id)); n != 0 || len(s.fake.DMs(alice)) != 2 {
		t.Errorf("alice was told of her own abandon or of a quick run: %d notifications, %d DMs", n, len(s.fake.DMs(alice)))
	}
}
