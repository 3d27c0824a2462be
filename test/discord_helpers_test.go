package test

import (
	"regexp"
	"strings"
	"testing"

	"threadflow/adapters/discord/discordfake"
	"threadflow/testkit"
	"threadflow/testkit/botproc"
)

// The Discord guild of these tests: one text channel of discordfake.GuildID and one requester.
const (
	discordChannel = "910000000000000001"
	discordAlice   = "920000000000000001"
	discordBob     = "920000000000000002"
	discordCarol   = "920000000000000003"
	discordMallory = "920000000000000004" // never an approver

	discordReleaseRole = "930000000000000001" // the role the grouped workflow's gate lists
)

// How the people of these tests present themselves, and the names Discord shows for them: the
// guild nickname, else the global display name, else the username. Mallory's nickname tries to
// ping everyone and mention Alice, in bold, on two lines.
var discordProfiles = map[string]discordfake.Profile{
	discordAlice:   {Username: "alice", GlobalName: "Alice Liddell", Nick: "Alice L"},
	discordBob:     {Username: "bob", GlobalName: "Bob Stone"},
	discordCarol:   {Username: "carol"},
	discordMallory: {Username: "mallory", Nick: "@everyone <@" + discordAlice + "> **boss**\nsecond line"},
}

const (
	aliceShown = "Alice L"
	bobShown   = "Bob Stone"
	carolShown = "carol"
)

// discordLimit is Discord's hard limit on a message's content, in characters.
const discordLimit = 2000

// discordWorkflows are written to WORKFLOWS_DIR for every Discord bot, with chatWorkflows.
var discordWorkflows = map[string]string{
	"grouped.yaml": groupedWorkflow("discord:role:" + discordReleaseRole),
	"inert.yaml":   inertWorkflow,
	// long prints 5,000 characters: 50 numbered lines of 99 characters and a newline each.
	"long.yaml": `name: long
description: Prints 5,000 characters.
nodes:
  - id: report
    bash: |
      i=1
      while [ $i -le 50 ]; do
        printf 'line %02d %s\n' $i "$(printf '%091d' 0 | tr 0 .)"
        i=$((i+1))
      done
`,
}

// discordBot is one bot process connected to a Discord fake.
type discordBot struct {
	fake *discordfake.Server
	bot  *botproc.Process
}

// startDiscordBot starts the bot with env (from botproc.Env or ForEachEngine) connected to fake, and
// waits until its gateway session is identified and /workflow is registered in the guild. Several
// bots may share one fake: like replicas with one token, each then receives every event.
func startDiscordBot(t *testing.T, fake *discordfake.Server, env map[string]string) *discordBot {
	t.Helper()
	return startDiscordBotIn(t, fake, env, writeDiscordWorkflows(t))
}

// startDiscordBotIn is startDiscordBot with the workflows of dir.
func startDiscordBotIn(t *testing.T, fake *discordfake.Server, env map[string]string, dir string) *discordBot {
	t.Helper()
	env["DISCORD_BOT_TOKEN"] = "fake-discord-token"
	env["DISCORD_APP_ID"] = discordfake.AppID
	env["DISCORD_GUILD_IDS"] = discordfake.GuildID
	env["DISCORD_API_URL"] = fake.URL()
	env["WORKFLOWS_DIR"] = dir
	for id, p := range discordProfiles {
		fake.SetProfile(id, p)
	}
	before := fake.Sessions()
	b := &discordBot{fake: fake, bot: botproc.Start(t, env)}
	fake.WaitFor(t, testkit.Deadline, func(f *discordfake.Server) bool {
		return f.Sessions() > before && f.Commands(discordfake.GuildID) != nil
	})
	// Registration follows the handshake, so the bot is ready once it logged that it connected.
	b.bot.WaitLog("discord.gateway_connected", nil)
	return b
}

// writeDiscordWorkflows writes the workflows of every Discord bot to a fresh directory.
func writeDiscordWorkflows(t *testing.T) string {
	t.Helper()
	return workflowDir(t, discordWorkflows, chatWorkflows, gateWorkflows("discord:"+discordAlice, "discord:"+discordBob, "discord:"+discordCarol))
}

// runWorkflow types "/workflow run name arguments" in the test channel and returns the
// interaction id.
func runWorkflow(fake *discordfake.Server, name, args string) string {
	opts := map[string]any{"name": name}
	if args != "" {
		opts["arguments"] = args
	}
	return fake.SlashCommand(discordAlice, discordChannel, "run", opts)
}

// discordRun is one run as Discord shows it: its announcement in the channel and its thread.
type discordRun struct {
	id     string
	root   discordfake.Message
	thread string // the thread's channel id
}

var discordRootRE = regexp.MustCompile("^▶ `([^`]+)` - run `([^`]+)` by ")

// discordRoots are the run announcements in the test channel.
func discordRoots(f *discordfake.Server) []discordfake.Message {
	var out []discordfake.Message
	for _, m := range f.BotMessages(discordChannel) {
		if discordRootRE.MatchString(m.Content) {
			out = append(out, m)
		}
	}
	return out
}

// waitDiscordRun waits for the n-th (1-based) announcement of workflowName and for its thread.
func waitDiscordRun(t *testing.T, f *discordfake.Server, workflowName string, n int) discordRun {
	t.Helper()
	var r discordRun
	f.WaitFor(t, testkit.Deadline, func(f *discordfake.Server) bool {
		seen := 0
		for _, m := range discordRoots(f) {
			if sm := discordRootRE.FindStringSubmatch(m.Content); sm[1] == workflowName {
				if seen++; seen == n {
					r = discordRun{id: sm[2], root: m}
				}
			}
		}
		return r.id != "" && threadOf(f, r.root) != ""
	})
	r.thread = threadOf(f, r.root)
	return r
}

// threadOf returns the id of the thread started on msg, "" while there is none.
func threadOf(f *discordfake.Server, msg discordfake.Message) string {
	for _, th := range f.Threads() {
		if th.ParentID == msg.ChannelID && th.MessageID == msg.ID {
			return th.ID
		}
	}
	return ""
}

// waitDiscordMessage waits until a message of channel (a thread id works) satisfies match and
// returns its current state.
func waitDiscordMessage(t *testing.T, f *discordfake.Server, channel, what string, match func(discordfake.Message) bool) discordfake.Message {
	t.Helper()
	return waitMsg(t, what, func() []discordfake.Message { return f.BotMessages(channel) }, match)
}

// waitInRunThread waits for a bot message in r's thread satisfying match.
func waitInRunThread(t *testing.T, f *discordfake.Server, r discordRun, what string, match func(discordfake.Message) bool) discordfake.Message {
	t.Helper()
	return waitDiscordMessage(t, f, r.thread, what, match)
}

// waitDiscordStatus waits until r's live status message shows state.
func waitDiscordStatus(t *testing.T, f *discordfake.Server, r discordRun, state string) discordfake.Message {
	t.Helper()
	return waitInRunThread(t, f, r, "status "+state, contentPrefix("Status of run `"+r.id+"`: **"+state+"**"))
}

// discordMessage returns the current state of a message.
func discordMessage(t *testing.T, f *discordfake.Server, msg discordfake.Message) discordfake.Message {
	t.Helper()
	for _, m := range f.Messages(msg.ChannelID) {
		if m.ID == msg.ID {
			return m
		}
	}
	t.Fatalf("message %s is gone", msg.ID)
	return discordfake.Message{}
}

func contentPrefix(prefix string) func(discordfake.Message) bool {
	return func(m discordfake.Message) bool { return strings.HasPrefix(m.Content, prefix) }
}

func contentHas(sub string) func(discordfake.Message) bool {
	return func(m discordfake.Message) bool { return strings.Contains(m.Content, sub) }
}

// shownHas matches a message whose text, as Discord shows it, holds sub: workflow output arrives
// with its brackets escaped (\[), which Discord shows as the brackets alone.
func shownHas(sub string) func(discordfake.Message) bool {
	return func(m discordfake.Message) bool { return strings.Contains(discordShown(m.Content), sub) }
}

// discordShown is content without the backslashes of Discord's escapes (a backslash before anything
// but a letter, a digit or a space), as Discord shows it outside code.
func discordShown(content string) string { return discordEscape.ReplaceAllString(content, "$1") }

var discordEscape = regexp.MustCompile(`\\([^0-9A-Za-z\s])`)

// discordLabels lists a message's button labels in order.
func discordLabels(m discordfake.Message) []string {
	out := make([]string, 0, len(m.Buttons))
	for _, b := range m.Buttons {
		out = append(out, b.Label)
	}
	return out
}

// responseKinds lists the kinds of an interaction's answers in order.
func responseKinds(rs []discordfake.Response) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Kind
	}
	return out
}

// startDiscordRun runs workflowName with args by slash command and waits for its run (the
// workflow's first in the channel).
func startDiscordRun(t *testing.T, fake *discordfake.Server, workflowName, args string) discordRun {
	t.Helper()
	runWorkflow(fake, workflowName, args)
	return waitDiscordRun(t, fake, workflowName, 1)
}
