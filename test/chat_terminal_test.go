package test

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"threadflow/testkit"
)

// terminalChat is the terminal as the chat suite's platform: `bot chat` run once per message, as
// people sharing the bot's database from their terminals would, all in one conversation. A terminal
// has no threads (a run reports where it was started), no buttons (it prints each button's command
// after its label, and clicking is typing that command), no edits and no redeliveries.
type terminalChat struct {
	*terminal
	conversation string

	mu     sync.Mutex
	output []printed // what each message typed printed, in order
}

// printed is what one message typed printed, on the terminal of the person who typed it.
type printed struct{ user, out string }

func openTerminalChat(t *testing.T, env map[string]string) func(t *testing.T) chat {
	newTerminal(t, env) // writes the workflows once
	var n atomic.Int32
	return func(t *testing.T) chat {
		return &terminalChat{terminal: &terminal{t: t, env: env}, conversation: fmt.Sprintf("suite-%d", n.Add(1))}
	}
}

// Send types text as user, and keeps what the terminal printed as one message.
func (c *terminalChat) Send(t *testing.T, user, text string) {
	t.Helper()
	out, code := c.run("chat", "--conversation", c.conversation, "--user", user, text)
	if code != 0 {
		t.Fatalf("bot chat as %s exited %d:\n%s", user, code, out)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.output = append(c.output, printed{user: user, out: out})
}

// Reply types in the conversation: the terminal has no threads.
func (c *terminalChat) Reply(t *testing.T, user string, _ chatRun, text string) {
	t.Helper()
	c.Send(t, user, text)
}

// terminalButton is a button as a terminal prints it: its label in brackets, then its command.
var terminalButton = regexp.MustCompile(`(?m)^  \[([^\]]+)\] (/workflow .*)$`)

func terminalLabels(out string) []string {
	var labels []string
	for _, m := range terminalButton.FindAllStringSubmatch(out, -1) {
		labels = append(labels, m[1])
	}
	return labels
}

// Click types the command the terminal printed after the button's label.
func (c *terminalChat) Click(t *testing.T, user string, m chatMsg, label string) {
	t.Helper()
	for _, b := range terminalButton.FindAllStringSubmatch(m.Text, -1) {
		if b[1] == label {
			c.Send(t, user, b[2])
			return
		}
	}
	t.Fatalf("no button %q in:\n%s", label, m.Text)
}

// Conversation is every message the people's terminals printed, split where the bot's messages
// start: the suite reads over everyone's shoulder.
func (c *terminalChat) Conversation(t *testing.T) []chatMsg { return c.printedTo("") }

// printedTo is what the terminal of user ("" for everyone) printed.
func (c *terminalChat) printedTo(user string) []chatMsg {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []chatMsg
	for i, p := range c.output {
		if user != "" && p.user != user {
			continue
		}
		for j, text := range terminalMessages(p.out) {
			id := fmt.Sprintf("%d.%d", i, j) // the j-th message the i-th line typed printed
			out = append(out, chatMsg{ID: id, Text: text, Visible: []string{text}, Buttons: terminalLabels(text)})
		}
	}
	return out
}

// terminalOpeners are how the bot's messages begin; lines that begin otherwise continue the
// message before them (a status message's node lines, a button's command).
var terminalOpeners = regexp.MustCompile("^(▶ `|Status of run |✅ |❌ |⏸ Run |🛑 |🤔 |👍 |⏰ |Nothing was started|Started a fresh|Resuming |run [0-9a-z]+ keeps)")

func terminalMessages(printed string) []string {
	var out []string
	for _, line := range strings.Split(strings.TrimRight(printed, "\n"), "\n") {
		if len(out) == 0 || terminalOpeners.MatchString(line) {
			out = append(out, line)
			continue
		}
		out[len(out)-1] += "\n" + line
	}
	return out
}

// Thread is the conversation: a terminal's run reports where it was started.
func (c *terminalChat) Thread(t *testing.T, _ chatRun) []chatMsg { return c.Conversation(t) }

// Private is what user's own terminal printed: nobody else sees it.
func (c *terminalChat) Private(t *testing.T, user string) []chatMsg { return c.printedTo(user) }

func (c *terminalChat) Lacks(g gesture) string {
	switch g {
	case gestureEdit:
		return "a terminal cannot change what it printed; each status and answer is printed anew"
	case gestureRedeliver:
		return "a terminal hands each line typed to the bot once; nothing delivers it again"
	case gestureWait:
		return "`bot chat MESSAGE` returns when its run stops, and no timer fires without a process; an open session's timers are TestTerminalGateTimesOut's"
	}
	return ""
}

// Words: a terminal notifies nobody, and shows bold as plain text.
func (c *terminalChat) Words() chatWords {
	names := qualified("console", map[string]string{"alice": "alice", "bob": "bob", "carol": "carol"})
	return chatWords{Starter: names["alice"], Answerer: names, Output: names}
}

// WaitStatus asks `bot workflow status` until it shows r in state: a terminal prints a run's status
// messages only while the command that started it waits.
func (c *terminalChat) WaitStatus(t *testing.T, r chatRun, state string) {
	t.Helper()
	want := regexp.MustCompile("^Run `" + r.ID + "` of `[^`]+` - " + state + "\\b")
	testkit.Eventually(t, "run "+r.ID+" to be "+state, func() bool {
		out, _ := c.run("workflow", "status", r.ID)
		return want.MatchString(out)
	})
}

// Stopped returns at once: `bot chat` returns when the run it started stops.
func (c *terminalChat) Stopped(*testing.T, chatRun) {}

func (c *terminalChat) Home() string { return c.env["HOME"] }
