package test

import (
	"regexp"
	"strings"
	"testing"

	"threadflow/adapters/discord/discordfake"
	"threadflow/testkit/botproc"
)

// inertWorkflow fails quoting, in its error, a masked link and two code fences that no line closes:
// one in mid-line, one on a line of its own. The failure message puts the bot's own text ("Next:
// ..." with commands in code spans) after the error.
const inertWorkflow = `name: inert
description: Fails with a masked link and an unclosed code fence in its error.
nodes:
  - id: print
    bash: |
      echo 'see [click](https://evil.example) and a stray ` + "```" + ` fence' >&2
      echo '` + "```" + `' >&2
      echo 'no longer code? @everyone <!channel>' >&2
      exit 3
`

// fenceProblem says what is wrong with the code fences of message text, or "": each must be a
// line of its own (``` and maybe a language) and they must pair up before the bot's "Next:", so
// that no block the output opened runs into the bot's text.
func fenceProblem(text string) string {
	output, _, ok := strings.Cut(text, "\nNext: ")
	if !ok {
		return "no Next: line"
	}
	for line := range strings.SplitSeq(text, "\n") {
		if strings.Contains(line, "```") && !fenceLine.MatchString(line) {
			return "a fence in mid-line: " + line
		}
	}
	if strings.Count(output, "```")%2 != 0 {
		return "the output's code block runs into the bot's text"
	}
	return ""
}

var fenceLine = regexp.MustCompile("^```[a-z]*$")

// TestSlackWorkflowOutputIsInertText: a masked link in a workflow's output is posted as text that
// shows where it goes, never as Slack's <url|label>, and code fences the output left open are
// closed before the bot's own text.
func TestSlackWorkflowOutputIsInertText(t *testing.T) {
	t.Parallel()
	s := startSlackBot(t, botproc.Env(t), nil)
	r := s.start(t, "inert", "")
	failure := s.waitInThread(t, r, "the failure message", containsText("Next: "))
	hidden := regexp.MustCompile(`<https?://[^>]*\|`)
	for _, text := range visibleTexts(t, failure) {
		if !strings.Contains(text, "Next: ") {
			continue // a button's label
		}
		for _, want := range []string{"see click (<https://evil.example>) and", "a stray `\u200b`\u200b` fence", "&lt;!channel&gt;"} {
			if !strings.Contains(text, want) {
				t.Errorf("the failure message lacks %q:\n%s", want, text)
			}
		}
		if hidden.MatchString(text) || liveMention.MatchString(text) {
			t.Errorf("the failure message has a link hiding its URL or a live mention:\n%s", text)
		}
		if problem := fenceProblem(text); problem != "" {
			t.Errorf("%s:\n%s", problem, text)
		}
	}
}

// TestDiscordWorkflowOutputIsInertText: the same on Discord, where a masked link [label](url) is
// Markdown Discord itself would draw, and ``` opens a code block even in mid-line.
func TestDiscordWorkflowOutputIsInertText(t *testing.T) {
	fake := discordfake.New(t)
	startDiscordBot(t, fake, botproc.Env(t))
	r := startDiscordRun(t, fake, "inert", "")
	failure := waitInRunThread(t, fake, r, "the failure message", contentHas("Next: "))
	text := failure.Content
	for _, want := range []string{"see click (<https://evil.example>) and", "a stray \\`\\`\\` fence"} {
		if !strings.Contains(text, want) {
			t.Errorf("the failure message lacks %q:\n%s", want, text)
		}
	}
	if regexp.MustCompile(`(^|[^\\])\[[^\]]*\]\(`).MatchString(text) || liveDiscordMention.MatchString(text) {
		t.Errorf("the failure message has a masked link or a live mention:\n%s", text)
	}
	if problem := fenceProblem(text); problem != "" {
		t.Errorf("%s:\n%s", problem, text)
	}
}
