package test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"threadflow/adapters/slack/slackfake"
	"threadflow/testkit"
	"threadflow/testkit/botproc"
)

// The Slack workspace of these tests: one channel and a few people.
const (
	channel = "C0E2E0001"
	alice   = "UALICE001" // the usual requester
	bob     = "UBOB00002" // a second person
	mallory = "UMALLORY3" // outside ALLOWED_USER_IDS where a test sets it
	carol   = "UCAROL004" // a third person, an approver of the gate tests

	releaseGroup = "S0RELEASE" // the user group the grouped workflow's gate lists
)

// slackName is how messages name someone who started a run with a slash command: by the user_name
// the command carries (the fake's is "user-" and the id). Message events carry no name, so an
// answer typed in a thread is named by the id.
func slackName(user string) string { return "user-" + user }

// testWorkflows are written to WORKFLOWS_DIR for every Slack bot, with chatWorkflows. Scripts read
// their inputs from the environment, as the bundled workflows do.
var testWorkflows = map[string]string{
	"grouped.yaml": groupedWorkflow("slack:group:" + releaseGroup),
	"broken.yaml": `name: broken
description: Always fails, quoting its input.
nodes:
  - id: try
    bash: |
      echo "cannot handle $ARGUMENTS" >&2
      exit 3
`,
	"inert.yaml": inertWorkflow,
	// long prints 10,000 characters: a heading, a fenced block of 123 numbered 80-character lines,
	// and a closing line.
	"long.yaml": `name: long
description: Prints a 10,000 character report with a code block.
nodes:
  - id: report
    bash: |
      echo "Report start"
      echo '` + "```" + `'
      i=1
      while [ $i -le 123 ]; do
        printf 'line %03d %s\n' $i "......................................................................"
        i=$((i+1))
      done
      echo '` + "```" + `'
      echo "Report end"
`,
}

// writeWorkflows writes the workflows of every Slack bot to a fresh directory.
func writeWorkflows(t *testing.T) string {
	t.Helper()
	return workflowDir(t, testWorkflows, chatWorkflows, gateWorkflows("slack:"+alice, "slack:"+bob, "slack:"+carol))
}

// slackBot is the real bot connected to a Slack fake.
type slackBot struct {
	fake *slackfake.Server
	bot  *botproc.Process
	home string // the bot's HOME, where picky looks for its files
}

// startSlackBot starts a fake and the bot connected to it, with env (from botproc.Env or ForEachEngine)
// plus extra settings, and waits for the Socket Mode connection.
func startSlackBot(t *testing.T, env map[string]string, extra map[string]string) *slackBot {
	t.Helper()
	fake := slackfake.New(t)
	env["SLACK_BOT_TOKEN"] = slackfake.BotToken
	env["SLACK_APP_TOKEN"] = slackfake.AppToken
	env["SLACK_API_URL"] = fake.URL()
	env["WORKFLOWS_DIR"] = writeWorkflows(t)
	for k, v := range extra {
		env[k] = v
	}
	s := &slackBot{fake: fake, bot: botproc.Start(t, env), home: env["HOME"]}
	fake.WaitFor(t, testkit.Deadline, func(f *slackfake.Server) bool { return f.Connected() })
	return s
}

// waitMessage waits until a message of the channel satisfies match and returns its current state.
func (s *slackBot) waitMessage(t *testing.T, what string, match func(slackfake.Message) bool) slackfake.Message {
	t.Helper()
	return waitMsg(t, what, func() []slackfake.Message { return s.fake.Messages(channel) }, match)
}

// message returns the current state of a message.
func (s *slackBot) message(t *testing.T, ts string) slackfake.Message {
	t.Helper()
	for _, m := range s.fake.Messages(channel) {
		if m.TS == ts {
			return m
		}
	}
	t.Fatalf("message %s is gone", ts)
	return slackfake.Message{}
}

// roots are the top-level run announcements of the channel ("▶ workflow - run ID by user").
func (s *slackBot) roots() []slackfake.Message {
	var out []slackfake.Message
	for _, m := range s.fake.Messages(channel) {
		if m.ThreadTS == "" && strings.HasPrefix(m.Text, "▶ ") {
			out = append(out, m)
		}
	}
	return out
}

// thread returns the messages posted in the thread of root, oldest first.
func (s *slackBot) thread(root string) []slackfake.Message {
	var out []slackfake.Message
	for _, m := range s.fake.Messages(channel) {
		if m.ThreadTS == root {
			out = append(out, m)
		}
	}
	return out
}

// run is one run as the channel shows it.
type run struct {
	id   string
	root slackfake.Message
}

var rootRE = regexp.MustCompile("^▶ `([^`]+)` - run `([^`]+)` by ")

// waitRoot waits for the n-th (1-based) run announcement of workflow in the channel.
func (s *slackBot) waitRoot(t *testing.T, workflowName string, n int) run {
	t.Helper()
	var r run
	s.fake.WaitFor(t, testkit.Deadline, func(*slackfake.Server) bool {
		seen := 0
		for _, m := range s.roots() {
			if sm := rootRE.FindStringSubmatch(m.Text); sm != nil && sm[1] == workflowName {
				if seen++; seen == n {
					r = run{id: sm[2], root: m}
					return true
				}
			}
		}
		return false
	})
	return r
}

// waitInThread waits for a message in r's thread satisfying match.
func (s *slackBot) waitInThread(t *testing.T, r run, what string, match func(slackfake.Message) bool) slackfake.Message {
	t.Helper()
	return s.waitMessage(t, what, func(m slackfake.Message) bool { return m.ThreadTS == r.root.TS && match(m) })
}

// waitStatus waits until r's live status message shows state, and returns it.
func (s *slackBot) waitStatus(t *testing.T, r run, state string) slackfake.Message {
	t.Helper()
	prefix := "Status of run `" + r.id + "`: *" + state + "*"
	defer func() { // a run that ended otherwise says why in its thread: show it with the failure
		if t.Failed() {
			for _, m := range s.thread(r.root.TS) {
				t.Logf("in the thread of run %s: %q", r.id, m.Text)
			}
		}
	}()
	return s.waitInThread(t, r, "status "+state, func(m slackfake.Message) bool { return strings.HasPrefix(m.Text, prefix) })
}

// statusMessages are r's status messages; a run has exactly one, edited as it goes.
func (s *slackBot) statusMessages(r run) []slackfake.Message {
	var out []slackfake.Message
	for _, m := range s.thread(r.root.TS) {
		if strings.HasPrefix(m.Text, "Status of run `"+r.id+"`") {
			out = append(out, m)
		}
	}
	return out
}

func containsText(sub string) func(slackfake.Message) bool {
	return func(m slackfake.Message) bool { return strings.Contains(m.Text, sub) }
}

func hasPrefix(prefix string) func(slackfake.Message) bool {
	return func(m slackfake.Message) bool { return strings.HasPrefix(m.Text, prefix) }
}

// buttonLabels lists a message's button labels in order.
func buttonLabels(m slackfake.Message) []string {
	out := make([]string, 0, len(m.Buttons))
	for _, b := range m.Buttons {
		out = append(out, b.Label)
	}
	return out
}

// visibleTexts is every piece of text Slack would render for m: its text and every "text" field of
// its Block Kit JSON (decoded, so an escaped \u003c counts as the "<" Slack sees). Button values
// are not shown to anyone and are left out.
func visibleTexts(t *testing.T, m slackfake.Message) []string {
	t.Helper()
	out := []string{m.Text}
	if m.Blocks == "" {
		return out
	}
	var blocks any
	if err := json.Unmarshal([]byte(m.Blocks), &blocks); err != nil {
		t.Fatalf("blocks of %s are not JSON: %v", m.TS, err)
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for k, e := range v {
				if s, ok := e.(string); ok && k == "text" {
					out = append(out, s)
				}
				walk(e)
			}
		}
	}
	walk(blocks)
	return out
}

// waitStopped waits until the worker that executed r up to now has let go of it. Answering a gate
// or resuming before that is TestSlackGateAnsweredWhilePausing's subject; the other tests act as a
// person would, after the bot is done.
func (s *slackBot) waitStopped(t *testing.T, r run) {
	t.Helper()
	s.bot.WaitLog("orchestrator.run_stopped", map[string]string{"run_id": r.id})
}

// start runs workflowName with args as alice by slash command and waits for its run's root message
// (the workflow's first run in the channel).
func (s *slackBot) start(t *testing.T, workflowName, args string) run {
	t.Helper()
	s.fake.SlashCommand(alice, channel, strings.TrimSpace("run "+workflowName+" "+args))
	return s.waitRoot(t, workflowName, 1)
}
