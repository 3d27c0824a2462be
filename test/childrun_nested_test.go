package test

import (
	"strings"
	"testing"

	"threadflow/adapters/discord/discordfake"
	"threadflow/db"
	"threadflow/testkit/botproc"
)

// nestedWorkflows: a parent whose node starts a child run that asks a gate.
var nestedWorkflows = map[string]string{
	"nestkid.yaml":    "name: nestkid\nnodes:\n  - id: say\n    bash: echo \"kid of $ARGUMENTS\"\n  - id: ok\n    depends_on: [say]\n    approval:\n      message: Kid fine?\n",
	"nestparent.yaml": "name: nestparent\nnodes:\n  - id: sub\n    workflow: nestkid\n  - id: after\n    depends_on: [sub]\n    bash: echo \"parent got $sub.output\"\n",
}

// TestSlackChildRunIsNestedInItsParentsThread: on Slack, a child run is one line in its parent's
// thread, edited in place; its gate is asked in the parent's thread, marked as the child's, and a
// reply there answers it; the child has no announcement, status message or end message of its own.
func TestSlackChildRunIsNestedInItsParentsThread(t *testing.T) {
	t.Parallel()
	botproc.ForEachEngine(t, botproc.Env, func(t *testing.T, env map[string]string) {
		s := startSlackBot(t, env, map[string]string{"WORKFLOWS_DIR": workflowDir(t, nestedWorkflows)})
		r := s.start(t, "nestparent", "v7")
		child := db.ChildRunID(r.id, "sub", -1)
		gate := s.waitInThread(t, r, "the child's gate", containsText("Kid fine?"))
		if !strings.HasPrefix(gate.Text, "↳ child run `"+child+"` of run `"+r.id+"` (node `sub`):\n⏸ Run `"+child+"` is waiting at `ok`.") || len(gate.Buttons) != 2 {
			t.Fatalf("the child's gate in the parent's thread = %q with %v", gate.Text, buttonLabels(gate))
		}
		s.fake.ThreadMessage(bob, channel, r.root.TS, "lgtm")
		s.waitStatus(t, r, "completed")
		s.waitInThread(t, r, "the parent's end", containsText("parent got approved by slack:"+bob))
		line := "↳ child run `" + child + "` (workflow `nestkid`, node `sub`): "
		got := s.waitInThread(t, r, "the child's line completed", hasPrefix(line+"*completed*"))
		var lines int
		for _, m := range s.fake.Messages(channel) {
			if strings.HasPrefix(m.Text, line) {
				lines++
			}
			if strings.Contains(m.Text, "Status of run `"+child+"`") || strings.Contains(m.Text, "Run `"+child+"` of `nestkid` completed") ||
				(m.ThreadTS == "" && strings.Contains(m.Text, "nestkid")) {
				t.Errorf("the child was reported as a run of its own: %q", m.Text)
			}
		}
		if lines != 1 || !got.Edited {
			t.Errorf("the child has %d lines (edited %v), want one edited in place:\n%v", lines, got.Edited, texts(s.fake.Messages(channel)))
		}
	})
}

// TestDiscordChildRunIsNestedInItsParentsThread: the same on Discord, where the run's thread is a
// thread channel the announcement opened.
func TestDiscordChildRunIsNestedInItsParentsThread(t *testing.T) {
	t.Parallel()
	botproc.ForEachEngine(t, botproc.Env, func(t *testing.T, env map[string]string) {
		fake := discordfake.New(t)
		startDiscordBotIn(t, fake, env, workflowDir(t, nestedWorkflows))
		r := startDiscordRun(t, fake, "nestparent", "v7")
		child := db.ChildRunID(r.id, "sub", -1)
		gate := waitInRunThread(t, fake, r, "the child's gate", contentHas("Kid fine?"))
		if !strings.HasPrefix(gate.Content, "↳ child run `"+child+"` of run `"+r.id+"` (node `sub`):\n⏸ Run `"+child+"` is waiting at `ok`.") || len(gate.Buttons) != 2 {
			t.Fatalf("the child's gate in the parent's thread = %q with %v", gate.Content, discordLabels(gate))
		}
		fake.ThreadMessage(discordBob, r.thread, "lgtm")
		waitDiscordStatus(t, fake, r, "completed")
		line := "↳ child run `" + child + "` (workflow `nestkid`, node `sub`): "
		got := waitInRunThread(t, fake, r, "the child's line completed", contentPrefix(line+"**completed**"))
		var lines int
		for _, ch := range []string{discordChannel, r.thread} {
			for _, m := range fake.BotMessages(ch) {
				if strings.HasPrefix(m.Content, line) {
					lines++
				}
				if strings.Contains(m.Content, "Status of run `"+child+"`") || strings.Contains(m.Content, "Run `"+child+"` of `nestkid` completed") ||
					(ch == discordChannel && strings.Contains(m.Content, "nestkid")) {
					t.Errorf("the child was reported as a run of its own: %q", m.Content)
				}
			}
		}
		if lines != 1 || !got.Edited {
			t.Errorf("the child has %d lines (edited %v), want one edited in place", lines, got.Edited)
		}
	})
}
