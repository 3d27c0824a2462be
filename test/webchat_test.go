package test

import (
	"strings"
	"testing"

	"threadflow/db/dbtest"
	"threadflow/testkit"
	"threadflow/testkit/botproc"
)

// TestWebChatFollowsTheUserAcrossReplicas: two `bot serve` processes on one PostgreSQL database.
// Alice's chat page on B, open before she types on A, receives live the link to the run's thread,
// and B shows the whole conversation and thread, whichever replica ran the run.
func TestWebChatFollowsTheUserAcrossReplicas(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.PostgresDatabase(t)
	start := func() *botproc.Process {
		env := botproc.Env(t)
		env["DATABASE_URL"], env["WORKFLOWS_DIR"] = dbURL, writeWorkflows(t)
		return botproc.Start(t, env)
	}
	a, b := start(), start()
	onA, onB := chatClient{t, a.URL(), "alice"}, chatClient{t, b.URL(), "alice"}
	updates := onB.live()
	testkit.ReceiveContaining(t, updates, testkit.Deadline, "No messages yet")

	onA.say("/workflow run hello world")
	testkit.ReceiveContaining(t, updates, testkit.Deadline, "Open the run's thread")
	path, _ := onB.thread()
	testkit.ReceiveContaining(t, onB.liveAt("/live"+path), testkit.Deadline, "of <code>hello</code> completed.")
	if page := onB.page(); !strings.Contains(page, "/workflow run hello world") {
		t.Errorf("server B's chat page lacks what alice typed:\n%s", page)
	}
	_, page := onB.thread()
	for _, want := range []string{"<strong>completed</strong>", "Hello, world!"} {
		if !strings.Contains(page, want) {
			t.Errorf("server B's view of the run's thread lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(chatClient{t, b.URL(), "bob"}.page(), `user-text">/workflow run hello world`) {
		t.Error("bob's chat page on B shows alice's conversation")
	}
}

// TestWebChatSurvivesRestart: a single server on SQLite, restarted while a run waits at its gate,
// shows the chat and the run's thread as they were.
func TestWebChatSurvivesRestart(t *testing.T) {
	t.Parallel()
	env := botproc.Env(t)
	env["WORKFLOWS_DIR"] = writeWorkflows(t)
	bot := botproc.Start(t, env)
	alice := chatClient{t, bot.URL(), "alice"}
	alice.say("/workflow run gated v4")
	testkit.Eventually(t, "the gate question in the run's thread", func() bool {
		_, page := alice.thread()
		return strings.Contains(page, "Ship v4?")
	})

	bot.Stop()
	bot.Restart()
	alice = chatClient{t, bot.URL(), "alice"}
	if page := alice.page(); !strings.Contains(page, "/workflow run gated v4") {
		t.Errorf("chat page after the restart lacks what alice typed:\n%s", page)
	}
	_, page := alice.thread()
	for _, want := range []string{"Ship v4?", "/workflow approve "} {
		if !strings.Contains(page, want) {
			t.Errorf("the run's thread after the restart lacks %q:\n%s", want, page)
		}
	}
}
