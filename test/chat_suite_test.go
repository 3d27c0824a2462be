package test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"threadflow/db/dbtest"
	"threadflow/testkit"
	"threadflow/testkit/botproc"
)

// The chat acceptance suite: one list of scenarios, written once against what a person does in a
// chat (send a message, reply in a run's thread, click a button, read), run on every platform the
// bot speaks (Slack and Discord through their fakes, the terminal, the web chat) and on both
// database engines. What only one platform has (Slack's envelope acks, Discord's deferred
// interactions) is checked by that platform's gestures or in its own tests.

// chatMsg is one message as a person sees it.
type chatMsg struct {
	ID      string
	Text    string   // as the platform shows it (markup as typed: `code`, *bold* or **bold**)
	Visible []string // every piece of text the platform renders for it: Text, and Slack's blocks
	Buttons []string // the labels of its buttons, in order
	Edited  bool
	native  any // the platform's own message, for Click
}

// chatRun is one run as its conversation announced it.
type chatRun struct {
	ID   string
	Root chatMsg // the announcement; the platform finds the run's thread from it
}

// gesture is something a person can do on some platforms only.
type gesture string

const (
	gestureEdit      gesture = "edits a message in place"
	gestureRedeliver gesture = "delivers one message twice"
	gestureWait      gesture = "keeps a conversation open while time passes"
)

// chat is one platform as a person meets it. Users are named alice, bob, carol and mallory; each
// platform maps them to its own ids.
type chat interface {
	// Send types text as user where people talk to the bot: the conversation's channel, the
	// terminal, the chat page. Commands are typed as "/workflow run hello world".
	Send(t *testing.T, user, text string)
	// Reply types text as user in r's thread.
	Reply(t *testing.T, user string, r chatRun, text string)
	// Click presses the button labelled label of m, as user.
	Click(t *testing.T, user string, m chatMsg, label string)
	// Conversation is what the bot posted where people talk to it, oldest first.
	Conversation(t *testing.T) []chatMsg
	// Thread is what the bot posted in r's thread, oldest first.
	Thread(t *testing.T, r chatRun) []chatMsg
	// Private is what the bot showed only to user, oldest first.
	Private(t *testing.T, user string) []chatMsg
	// Lacks says why the platform cannot do g, "" when it can.
	Lacks(g gesture) string
	// Words are how the platform writes names and emphasis.
	Words() chatWords
	// Stopped waits until the worker executing r let go of it, as a person answering later would
	// find the run.
	Stopped(t *testing.T, r chatRun)
	// Home is the bot's HOME, where workflows read files a test leaves.
	Home() string
}

// redeliverer is a platform that can deliver one message to the bot twice.
type redeliverer interface {
	// SendTwice sends text as user and has the platform deliver it again, as it does after a lost
	// acknowledgement (Slack), or to a second replica (Discord). verify checks, once the run is announced, that the second delivery did reach
	// the bot and was recognised, so the scenario is not vacuous.
	SendTwice(t *testing.T, user, text string) (verify func(t *testing.T))
}

// chatWords are how a platform writes what the scenarios read.
type chatWords struct {
	Starter  string            // how an announcement names alice, who started the run
	Answerer map[string]string // how a gate's answer names each person
	Output   map[string]string // how a gate's output names each person who approved it
	Bold     string            // the markup around bold text, such as "*"
	// Ping is text that would notify people if the bot posted it as typed, and Pings matches
	// such text in what the bot rendered; nil where nothing notifies anyone.
	Ping  string
	Pings *regexp.Regexp
}

// qualified names each person of ids by platform:id, as gates and their outputs do.
func qualified(platform string, ids map[string]string) map[string]string {
	out := map[string]string{}
	for name, id := range ids {
		out[name] = platform + ":" + id
	}
	return out
}

// chatPlatforms are the platforms the suite runs on. open starts what a platform needs on env (a
// bot and a fake, or nothing but a home) and returns how to open a conversation of its own with it
// for each scenario: a channel on Slack and Discord, a named conversation on the terminal; the web
// chat, where a conversation is a person's, starts a bot for each.
var chatPlatforms = []struct {
	name string
	open func(t *testing.T, env map[string]string) (conversation func(t *testing.T) chat)
}{
	{"slack", openSlackChat},
	{"discord", openDiscordChat},
	{"terminal", openTerminalChat},
	{"web", openWebChat},
}

// chatScenarios are the scenarios every platform runs. Those that leave marks outside their
// conversation (picky's files in the bot's home, a second replica) run on a bot of their own.
var chatScenarios = []struct {
	name   string
	run    func(t *testing.T, p chat)
	ownBot bool
}{
	{"start", scenarioStart, false},
	{"gate by reply", scenarioGateByReply, false},
	{"gate by button", scenarioGateByButton, false},
	{"objection", scenarioObjection, false},
	{"unclear reply", scenarioUnclearReply, false},
	{"abandon", scenarioAbandon, true},
	{"resume prompt: start fresh", scenarioPromptStartFresh, true},
	{"resume prompt: resume", scenarioPromptResume, true},
	{"de-duplication", scenarioDeduplication, true},
	{"refusal", scenarioRefusal, false},
	{"access", scenarioAccess, false},
	{"gate times out", scenarioGateTimesOut, false},
}

func TestChatAcceptance(t *testing.T) {
	t.Parallel()
	for _, platform := range chatPlatforms {
		t.Run(platform.name, func(t *testing.T) {
			t.Parallel()
			botproc.ForEachEngine(t, botproc.Env, func(t *testing.T, env map[string]string) {
				shared := platform.open(t, env)
				for _, sc := range chatScenarios {
					t.Run(sc.name, func(t *testing.T) {
						t.Parallel()
						conversation := shared
						if sc.ownBot {
							conversation = platform.open(t, sameEngine(t, env))
						}
						sc.run(t, conversation(t))
					})
				}
			})
		})
	}
}

// sameEngine is a fresh environment on env's database engine: its own home, and its own database.
func sameEngine(t *testing.T, env map[string]string) map[string]string {
	t.Helper()
	fresh := botproc.Env(t)
	if env["DATABASE_URL"] != "" {
		fresh["DATABASE_URL"] = dbtest.PostgresDatabase(t)
	}
	return fresh
}

// stopped waits until bot logged that the worker executing run id let go of it, failing t (not the
// test that started the bot, which a conversation may share).
func stopped(t *testing.T, bot *botproc.Process, id string) {
	t.Helper()
	testkit.Eventually(t, "the worker to let go of run "+id, func() bool {
		return slices.ContainsFunc(bot.LogEvents("orchestrator.run_stopped"), func(rec map[string]any) bool {
			return botproc.HasFields(rec, map[string]string{"run_id": id})
		})
	})
}

// needs stops a scenario on a platform that lacks g, saying why: a gap is reported, not hidden.
func needs(t *testing.T, p chat, g gesture) {
	t.Helper()
	if why := p.Lacks(g); why != "" {
		notApplicable(t, "this platform never %s: %s", g, why)
	}
}

// notApplicable stops a scenario that does not apply where it runs, saying why. It skips on CI too:
// nothing is missing, the platform simply has no such thing.
func notApplicable(t *testing.T, why string, args ...any) {
	t.Helper()
	t.Skipf("not applicable: "+why, args...)
}

// waitMsg waits until read returns a message satisfying match, and returns it. Each platform's own
// tests wait for its own messages with it too.
func waitMsg[M any](t *testing.T, what string, read func() []M, match func(M) bool) M {
	t.Helper()
	var found M
	testkit.Eventually(t, what, func() bool {
		all := read()
		i := slices.IndexFunc(all, match)
		if i >= 0 {
			found = all[i]
		}
		return i >= 0
	})
	return found
}

// inThread waits for a message in r's thread satisfying match.
func inThread(t *testing.T, p chat, r chatRun, what string, match func(chatMsg) bool) chatMsg {
	t.Helper()
	return waitMsg(t, what, func() []chatMsg { return p.Thread(t, r) }, match)
}

// inConversation waits for a message of the conversation satisfying match.
func inConversation(t *testing.T, p chat, what string, match func(chatMsg) bool) chatMsg {
	t.Helper()
	return waitMsg(t, what, func() []chatMsg { return p.Conversation(t) }, match)
}

func textHas(sub string) func(chatMsg) bool {
	return func(m chatMsg) bool { return strings.Contains(m.Text, sub) }
}

func textPrefix(prefix string) func(chatMsg) bool {
	return func(m chatMsg) bool { return strings.HasPrefix(m.Text, prefix) }
}

// firstLine is a message's first line: a terminal prints an announcement with what follows it.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// runs are the run announcements of the conversation, with their run ids.
func runs(t *testing.T, p chat, workflow string) []chatRun {
	t.Helper()
	var out []chatRun
	for _, m := range p.Conversation(t) {
		if sm := rootRE.FindStringSubmatch(firstLine(m.Text)); sm != nil && (workflow == "" || sm[1] == workflow) {
			out = append(out, chatRun{ID: sm[2], Root: m})
		}
	}
	return out
}

// waitRun waits for the n-th (1-based) announcement of a run of workflow.
func waitRun(t *testing.T, p chat, workflow string, n int) chatRun {
	t.Helper()
	var r chatRun
	testkit.Eventually(t, "run "+workflow+" to be announced", func() bool {
		all := runs(t, p, workflow)
		if len(all) < n {
			return false
		}
		r = all[n-1]
		return true
	})
	return r
}

// status is the line a run's status message starts with when it shows state.
func status(p chat, r chatRun, state string) string {
	return "Status of run `" + r.ID + "`: " + bold(p, state)
}

// statusShower is a platform that keeps no status message up to date: a person asks for a run's
// status instead.
type statusShower interface {
	// WaitStatus waits until r's status, asked for, is state.
	WaitStatus(t *testing.T, r chatRun, state string)
}

// bold is text as p writes it in bold.
func bold(p chat, text string) string { return p.Words().Bold + text + p.Words().Bold }

// waitStatus waits until r's status message (or, where there is none, its status asked for) shows
// state.
func waitStatus(t *testing.T, p chat, r chatRun, state string) {
	t.Helper()
	if s, ok := p.(statusShower); ok {
		s.WaitStatus(t, r, state)
		return
	}
	inThread(t, p, r, "status "+state, textPrefix(status(p, r, state)))
}

// statusMessages are r's status messages.
func statusMessages(t *testing.T, p chat, r chatRun) []chatMsg {
	t.Helper()
	var out []chatMsg
	for _, m := range p.Thread(t, r) {
		if strings.HasPrefix(m.Text, "Status of run `"+r.ID+"`") {
			out = append(out, m)
		}
	}
	return out
}

// checkOneStatus checks that r has one status message, edited as the run went: where the platform
// cannot edit, each state is a message of its own, and the check says so.
func checkOneStatus(t *testing.T, p chat, r chatRun) {
	t.Helper()
	st := statusMessages(t, p, r)
	if why := p.Lacks(gestureEdit); why != "" {
		t.Logf("a status message edited in place is not checked: %s", why)
		return
	}
	if len(st) != 1 || !st[0].Edited {
		t.Errorf("status messages = %q; want one, edited in place", chatTexts(st))
	}
}

// settled waits until an answered message m shows the answer, starting with prefix, and offers no
// buttons. Where the platform cannot edit, the answer is a message of its own after m.
func settled(t *testing.T, p chat, read func() []chatMsg, m chatMsg, prefix string) chatMsg {
	t.Helper()
	if p.Lacks(gestureEdit) != "" {
		return waitMsg(t, "the answer to "+firstLine(m.Text), read, textPrefix(prefix))
	}
	var now chatMsg
	testkit.Eventually(t, "the answered message to settle", func() bool {
		i := slices.IndexFunc(read(), func(c chatMsg) bool { return c.ID == m.ID })
		if i < 0 {
			return false
		}
		now = read()[i]
		return now.Edited && len(now.Buttons) == 0 && strings.HasPrefix(now.Text, prefix)
	})
	return now
}

func chatTexts(ms []chatMsg) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Text
	}
	return out
}

// scenarioStart: a person starts a run; it is announced once, reports its status in one message
// and its output in its thread.
func scenarioStart(t *testing.T, p chat) {
	p.Send(t, "alice", "/workflow run hello world")
	r := waitRun(t, p, "hello", 1)
	waitStatus(t, p, r, "completed")
	out := inThread(t, p, r, "the completion message", textPrefix("✅ Run `"+r.ID+"` of `hello` completed."))
	if want := "▶ `hello` - run `" + r.ID + "` by " + p.Words().Starter; firstLine(r.Root.Text) != want {
		t.Errorf("announcement = %q, want %q", r.Root.Text, want)
	}
	if n := len(runs(t, p, "")); n != 1 {
		t.Errorf("%d run announcements, want 1", n)
	}
	checkOneStatus(t, p, r)
	if !strings.Contains(out.Text, "Hello, world!") {
		t.Errorf("completion message %q does not show the output Hello, world!", out.Text)
	}
}

// waitGate starts workflow (gated or asked) with v1.2 and waits for its gate message, checking what
// it offers, and until the worker let go of the run.
func waitGate(t *testing.T, p chat, workflow string) (chatRun, chatMsg) {
	t.Helper()
	n := len(runs(t, p, workflow))
	p.Send(t, "alice", "/workflow run "+workflow+" v1.2")
	r := waitRun(t, p, workflow, n+1)
	gate := inThread(t, p, r, "the gate message", textPrefix("⏸ Run `"+r.ID+"` is waiting at `gate`."))
	if !slices.Equal(gate.Buttons, []string{"Approve", "Reject"}) {
		t.Fatalf("gate buttons = %v, want [Approve Reject]", gate.Buttons)
	}
	if !strings.Contains(gate.Text, "Ship v1.2?") {
		t.Errorf("gate message %q does not show the approval message", gate.Text)
	}
	waitStatus(t, p, r, "paused")
	p.Stopped(t, r)
	return r, gate
}

// gateAnswer is one way a person answers the gate of gated or asked, and what follows.
type gateAnswer struct {
	workflow string
	answer   func(t *testing.T, p chat, r chatRun, gate chatMsg)
	status   string // the run's status afterwards
	gate     string // how the answered gate starts, after the answerer's name is put in
	output   string // what the node after the gate prints; "" when it must not run
}

// answerGate runs each answer on a run of its own, and returns the runs.
func answerGate(t *testing.T, p chat, answers ...gateAnswer) []chatRun {
	t.Helper()
	var answered []chatRun
	for _, a := range answers {
		r, gate := waitGate(t, p, a.workflow)
		answered = append(answered, r)
		a.answer(t, p, r, gate)
		waitStatus(t, p, r, a.status)
		if a.output != "" {
			inThread(t, p, r, "the completion message", textHas(a.output))
		} else {
			inThread(t, p, r, "the cancellation notice", textHas("The run is cancelled."))
			for _, m := range p.Thread(t, r) {
				if strings.Contains(m.Text, "finished after") || strings.Contains(m.Text, "answer was") {
					t.Errorf("the node after a rejected gate ran: %q", m.Text)
				}
			}
		}
		settled(t, p, func() []chatMsg { return p.Thread(t, r) }, gate, a.gate)
	}
	return answered
}

func reply(text string) func(*testing.T, chat, chatRun, chatMsg) {
	return func(t *testing.T, p chat, r chatRun, _ chatMsg) { p.Reply(t, "alice", r, text) }
}

func click(label string) func(*testing.T, chat, chatRun, chatMsg) {
	return func(t *testing.T, p chat, _ chatRun, gate chatMsg) { p.Click(t, "alice", gate, label) }
}

// scenarioGateByReply: "lgtm" typed in the thread approves; a bare yes carries no note.
func scenarioGateByReply(t *testing.T, p chat) {
	w := p.Words()
	answerGate(t, p,
		gateAnswer{"gated", reply("lgtm"), "completed", "✅ Approved by " + w.Answerer["alice"], "finished after approved by " + w.Output["alice"]},
		gateAnswer{"asked", reply("lgtm"), "completed", "✅ Approved by " + w.Answerer["alice"], "answer was []"})
}

// scenarioGateByButton: the Approve button approves.
func scenarioGateByButton(t *testing.T, p chat) {
	w := p.Words()
	answerGate(t, p,
		gateAnswer{"gated", click("Approve"), "completed", "✅ Approved by " + w.Answerer["alice"], "finished after approved by " + w.Output["alice"]},
		gateAnswer{"asked", click("Approve"), "completed", "✅ Approved by " + w.Answerer["alice"], "answer was []"})
}

// scenarioObjection: a no, or an objection in words, rejects the gate with the words as reason, and
// the node after it never runs.
func scenarioObjection(t *testing.T, p chat) {
	w := p.Words()
	rejected := "🛑 Rejected by " + w.Answerer["alice"]
	answered := answerGate(t, p,
		gateAnswer{"gated", reply("no"), "cancelled", rejected, ""},
		gateAnswer{"asked", reply("no"), "cancelled", rejected, ""},
		gateAnswer{"asked", reply("nah, fix the tests first"), "cancelled", rejected, ""})
	r := answered[2]
	inThread(t, p, r, "the rejection with its reason", textHas(rejected+": gate `gate` of run `"+r.ID+
		"` with reason: fix the tests first. The run is cancelled."))
}

// scenarioUnclearReply: an objection that also says yes changes nothing; the bot quotes it, unable
// to ping anyone, with buttons that answer with it in one click.
func scenarioUnclearReply(t *testing.T, p chat) {
	w := p.Words()
	r, _ := waitGate(t, p, "gated")
	p.Reply(t, "bob", r, "ship it but not on "+w.Ping+" friday")
	ask := inThread(t, p, r, "the ask-back", textHas("I could not tell whether that approves or rejects `gate`"))
	if !slices.Equal(ask.Buttons, []string{"Approve with this note", "Reject with this reason"}) {
		t.Fatalf("ask-back buttons = %v", ask.Buttons)
	}
	for _, text := range ask.Visible {
		if w.Pings != nil && w.Pings.MatchString(text) {
			t.Errorf("the quoted reply can ping people: %q", text)
		}
	}
	p.Click(t, "alice", ask, "Reject with this reason")
	waitStatus(t, p, r, "cancelled")
	inThread(t, p, r, "the rejection", textHas("🛑 Rejected by "+w.Answerer["alice"]+": gate `gate` of run `"+r.ID+"` with reason: ship it but not on"))
	if why := p.Lacks(gestureEdit); why != "" {
		t.Logf("the ask-back's answer is not checked: %s", why)
	} else {
		settled(t, p, func() []chatMsg { return p.Thread(t, r) }, ask, "")
	}
}

// failPicky runs picky with the input it fails on and waits for the failure report.
func failPicky(t *testing.T, p chat) chatRun {
	t.Helper()
	p.Send(t, "alice", "/workflow run picky A")
	r := waitRun(t, p, "picky", 1)
	waitStatus(t, p, r, "failed")
	failure := inThread(t, p, r, "the failure message", textPrefix("❌ Run `"+r.ID+"` of `picky` failed at node `deploy`"))
	if !slices.Equal(failure.Buttons, []string{"Resume", "Abandon"}) {
		t.Errorf("failure buttons = %v, want [Resume Abandon]", failure.Buttons)
	}
	if !strings.Contains(failure.Text, "target for A is not ready") {
		t.Errorf("failure message %q does not say why", failure.Text)
	}
	p.Stopped(t, r)
	return r
}

// scenarioAbandon: a failed run abandoned with its button is gone: the next run of its workflow
// starts at once, without asking about it.
func scenarioAbandon(t *testing.T, p chat) {
	failed := failPicky(t, p)
	failure := inThread(t, p, failed, "the failure message", textPrefix("❌ Run `"+failed.ID+"`"))
	p.Click(t, "alice", failure, "Abandon")
	waitStatus(t, p, failed, "cancelled")
	p.Send(t, "alice", "/workflow run picky B")
	fresh := waitRun(t, p, "picky", 2)
	inThread(t, p, fresh, "the new run's completion", textHas("deployed B"))
	for _, m := range p.Conversation(t) {
		if strings.HasPrefix(m.Text, "Nothing was started") {
			t.Errorf("after the abandon, the bot still asked about the failed run: %q", m.Text)
		}
	}
}

// promptAfterFailure fails picky, asks for a run with other arguments, and checks the prompt that
// answers instead of starting it (seed 001: a fresh run never silently resumes a failed one).
func promptAfterFailure(t *testing.T, p chat) (failed chatRun, prompt chatMsg) {
	t.Helper()
	failed = failPicky(t, p)
	p.Send(t, "alice", "/workflow run picky B")
	prompt = inConversation(t, p, "the failed-run prompt", textPrefix("Nothing was started: run `"+failed.ID+"`"))
	if !slices.Equal(prompt.Buttons, []string{"Resume", "Abandon", "Start fresh"}) {
		t.Fatalf("prompt buttons = %v, want [Resume Abandon Start fresh]", prompt.Buttons)
	}
	for _, want := range []string{bold(p, "failed"), "It was started with: A", "/workflow run picky --force B"} {
		if !strings.Contains(prompt.Text, want) {
			t.Errorf("prompt %q does not contain %q", prompt.Text, want)
		}
	}
	if n := len(runs(t, p, "")); n != 1 {
		t.Fatalf("%d runs announced after the prompt, want only the failed one", n)
	}
	return failed, prompt
}

// scenarioPromptStartFresh: Start fresh runs the new arguments and leaves the failed run failed.
func scenarioPromptStartFresh(t *testing.T, p chat) {
	failed, prompt := promptAfterFailure(t, p)
	p.Click(t, "alice", prompt, "Start fresh")
	fresh := waitRun(t, p, "picky", 2)
	done := inThread(t, p, fresh, "the fresh run's completion", textPrefix("✅ Run `"+fresh.ID+"` of `picky` completed."))
	if !strings.Contains(done.Text, "deployed B") {
		t.Errorf("the fresh run reported %q, want the output of the new arguments, deployed B", done.Text)
	}
	if fresh.ID == failed.ID {
		t.Fatalf("Start fresh reused run %s", failed.ID)
	}
	if why := p.Lacks(gestureEdit); why != "" {
		t.Logf("the prompt's answer is not checked: %s", why)
	} else {
		settled(t, p, func() []chatMsg { return p.Conversation(t) }, prompt, "Started a fresh run `"+fresh.ID+"` for "+p.Words().Answerer["alice"])
	}
	st := statusMessages(t, p, failed)
	if !strings.Contains(st[len(st)-1].Text, bold(p, "failed")) || (p.Lacks(gestureEdit) == "" && len(st) != 1) {
		t.Errorf("the failed run's status = %q; a fresh run must leave it failed", chatTexts(st))
	}
	if got := readFile(t, p.Home()+"/prepared"); got != "A\nB\n" {
		t.Errorf("prepare ran with %q, want A then B", got)
	}
}

// scenarioPromptResume: Resume continues the failed run at the failed node, with its own arguments.
func scenarioPromptResume(t *testing.T, p chat) {
	failed, prompt := promptAfterFailure(t, p)
	touch(t, p.Home()+"/ready")
	p.Click(t, "alice", prompt, "Resume")
	inThread(t, p, failed, "the resumed run's completion", textPrefix("✅ Run `"+failed.ID+"` of `picky` completed."))
	done := inThread(t, p, failed, "the resumed run's output", textHas("deployed A"))
	if strings.Contains(done.Text, "deployed B") {
		t.Errorf("the resumed run used the new arguments: %q", done.Text)
	}
	if n := len(runs(t, p, "")); n != 1 {
		t.Errorf("%d runs announced, want only the resumed one", n)
	}
	if got := readFile(t, p.Home()+"/prepared"); got != "A\n" {
		t.Errorf("prepare ran with %q; a resume must continue at the failed node, not restart", got)
	}
	if why := p.Lacks(gestureEdit); why != "" {
		t.Logf("the prompt's answer is not checked: %s", why)
	} else {
		settled(t, p, func() []chatMsg { return p.Conversation(t) }, prompt, "")
	}
}

// scenarioDeduplication: a command delivered twice starts one run.
func scenarioDeduplication(t *testing.T, p chat) {
	needs(t, p, gestureRedeliver)
	verify := p.(redeliverer).SendTwice(t, "alice", "/workflow run hello redelivered")
	r := waitRun(t, p, "hello", 1)
	inThread(t, p, r, "the completion message", textHas("Hello, redelivered!"))
	verify(t)
	if n := len(runs(t, p, "")); n != 1 {
		t.Errorf("%d runs announced for one command delivered twice, want 1", n)
	}
	if n := len(statusMessages(t, p, r)); n != 1 {
		t.Errorf("%d status messages, want 1", n)
	}
}

// scenarioRefusal: someone the gate does not list answers it; only they are told why, nothing
// changes, and the gate stays open for the people it lists.
func scenarioRefusal(t *testing.T, p chat) {
	p.Send(t, "alice", "/workflow run guarded v1")
	r := waitRun(t, p, "guarded", 1)
	gate := inThread(t, p, r, "the gate message", textPrefix("⏸ Run `"+r.ID+"` is waiting at `confirm`."))
	waitStatus(t, p, r, "paused")
	p.Stopped(t, r)

	p.Click(t, "mallory", gate, "Approve")
	told := waitMsg(t, "mallory's private answer", func() []chatMsg { return p.Private(t, "mallory") }, textHas("You may not answer gate `confirm`"))
	if !strings.Contains(told.Text, "Nothing was changed") {
		t.Errorf("mallory was told %q; want it to say nothing was changed", told.Text)
	}
	for _, m := range p.Thread(t, r) {
		if m.ID == gate.ID && (m.Edited || len(m.Buttons) != 2) {
			t.Errorf("gate message after mallory's click = %q (edited %v, buttons %v); want it unchanged", m.Text, m.Edited, m.Buttons)
		}
	}
	if st := statusMessages(t, p, r); !strings.Contains(st[len(st)-1].Text, bold(p, "paused")) {
		t.Errorf("status after mallory's click = %q; want the run still paused", chatTexts(st))
	}

	p.Reply(t, "bob", r, "lgtm, changelog checked")
	p.Click(t, "carol", gate, "Approve")
	waitStatus(t, p, r, "completed")
	inThread(t, p, r, "the completion message", textHas("shipped v1 with notes [changelog checked"))
}

// scenarioAccess: a workflow's access refuses someone outside access.run and a channel outside
// access.channels before anything is written, telling only them which rule refused them; the list
// shows a person only what they may run here; someone inside starts it.
func scenarioAccess(t *testing.T, p chat) {
	p.Send(t, "mallory", "/workflow run restricted x")
	told := waitMsg(t, "mallory's refusal", func() []chatMsg { return p.Private(t, "mallory") }, textHas("may not start workflow restricted: its access.run allows only "))
	if !strings.Contains(told.Text, "Nothing was started") {
		t.Errorf("mallory was told %q; want it to say nothing was started", told.Text)
	}
	p.Send(t, "alice", "/workflow run elsewhere")
	waitMsg(t, "the channel refusal", func() []chatMsg { return p.Private(t, "alice") },
		textHas("Workflow elsewhere cannot be started here: its access.channels allows only slack:C0NOWHERE. Nothing was started."))
	p.Send(t, "alice", "/workflow list")
	list := inConversation(t, p, "alice's workflow list", textHas("Workflows"))
	if !strings.Contains(list.Text, "restricted") || strings.Contains(list.Text, "elsewhere") || !strings.Contains(list.Text, "guarded") {
		t.Errorf("alice's list = %q; want restricted and guarded, not elsewhere", list.Text)
	}
	if n := len(runs(t, p, "")); n != 0 {
		t.Fatalf("%d runs announced after two refusals, want none", n)
	}

	p.Send(t, "alice", "/workflow run restricted x")
	r := waitRun(t, p, "restricted", 1)
	waitStatus(t, p, r, "completed")
	inThread(t, p, r, "the output", textHas("restricted work on x"))
	if n := len(runs(t, p, "")); n != 1 {
		t.Errorf("%d runs announced, want alice's only", n)
	}
}

// scenarioGateTimesOut: nobody answers; one reminder, then the gate is rejected, and the node after
// it never runs.
func scenarioGateTimesOut(t *testing.T, p chat) {
	needs(t, p, gestureWait)
	p.Send(t, "alice", "/workflow run timed")
	r := waitRun(t, p, "timed", 1)
	gate := inThread(t, p, r, "the gate message", textHas("(4s after it was asked), it is rejected."))
	inThread(t, p, r, "the reminder", textPrefix("⏰ Reminder: run `"+r.ID+"` of `timed` is still waiting at `confirm`"))
	waitStatus(t, p, r, "cancelled")
	inThread(t, p, r, "the timeout", textHas("timed out: nobody answered within 4s. The gate is rejected and the run is cancelled."))
	reminders, timeouts := 0, 0
	for _, m := range p.Thread(t, r) {
		switch {
		case m.ID == gate.ID:
			if len(m.Buttons) != 0 || !strings.Contains(m.Text, "timed out") {
				t.Errorf("gate message after the timeout = %q with buttons %v", m.Text, m.Buttons)
			}
		case strings.HasPrefix(m.Text, "⏰ Reminder"):
			reminders++
		case strings.Contains(m.Text, "timed out: nobody answered"):
			timeouts++
		case strings.Contains(m.Text, "answered in time"):
			t.Errorf("the node after a timed-out gate ran: %q", m.Text)
		}
	}
	if reminders != 1 || timeouts != 1 {
		t.Errorf("%d reminders and %d timeout notices in the thread, want 1 and 1", reminders, timeouts)
	}
}
