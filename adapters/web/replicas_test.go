package web_test

import (
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"threadflow/db"
	"threadflow/db/dbtest"
	"threadflow/testkit"
)

// live opens a live view of the browser's server and returns the data of its update events.
func (b *browser) live(path string) <-chan string {
	b.r.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b.r.t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", b.r.srv.URL+path, nil)
	resp, err := b.c.Do(req)
	if err != nil {
		b.r.t.Fatal(err)
	}
	b.r.t.Cleanup(func() { _ = resp.Body.Close() })
	if resp.StatusCode != 200 {
		b.r.t.Fatalf("GET %s = %d", path, resp.StatusCode)
	}
	events := make(chan string, 64)
	go readEvents(resp, events)
	return events
}

// approveButton finds the Approve button of run on a chat page: the message id it refers to.
func approveButton(t *testing.T, page, runID string) string {
	t.Helper()
	re := regexp.MustCompile(`value="/workflow approve ` + runID + `"><input type="hidden" name="ref" value="([0-9a-f]+)"`)
	m := re.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no Approve button of %s on the chat page:\n%s", runID, page)
	}
	return m[1]
}

// TestChatPageOnAnyReplica: two servers, each with its own orchestrator, on one PostgreSQL
// database. Alice starts a gated run on server A; her chat page on server B, opened before, is
// updated live with the link to the run's thread; the thread on B shows live what A's side posted;
// she approves with B's button; and both servers show the whole conversation and thread, the status
// message edited in place, whichever replica ran the run.
func TestChatPageOnAnyReplica(t *testing.T) {
	dbURL := dbtest.PostgresDatabase(t)
	open := func(t testing.TB, opts db.Options) db.Store { return dbtest.PostgresOn(t, dbURL, opts) }
	a, b := newRig(t, rigOptions{open: open}), newRig(t, rigOptions{open: open})
	onA, onB := a.browser("alice"), b.browser("alice")
	events := onB.live("/live/chat")
	threads := onB.live("/live/chat/threads")
	testkit.ReceiveContaining(t, events, testkit.Deadline, "No messages yet")
	testkit.ReceiveContaining(t, threads, testkit.Deadline, "No run has been started")

	onA.say("/workflow run gated v2")
	run := a.waitRun("gated", db.StatusPaused)
	testkit.ReceiveContaining(t, events, testkit.Deadline, "Open the run's thread")
	_, chat := onB.get("/chat")
	thread := runThread(t, chat)
	testkit.ReceiveContaining(t, threads, testkit.Deadline, `href="/chat/threads/`+thread+`"`)
	inThread := onB.live("/live/chat/threads/" + thread)
	testkit.ReceiveContaining(t, inThread, testkit.Deadline, "Ship it?")

	_, page := onB.get("/chat/threads/" + thread)
	for _, want := range []string{"run <code>" + run.ID + "</code> by", "Status of run <code>" + run.ID + "</code>", "Ship it?"} {
		if !strings.Contains(page, want) {
			t.Errorf("server B's view of the thread lacks %q:\n%s", want, page)
		}
	}
	ref := approveButton(t, page, run.ID)
	if code, body := onB.post("/chat/threads/"+thread, url.Values{"text": {"/workflow approve " + run.ID}, "ref": {ref}}); code != 200 {
		t.Fatalf("approve from server B's page = %d: %s", code, body)
	}
	b.waitRun("gated", db.StatusCompleted)
	testkit.ReceiveContaining(t, inThread, testkit.Deadline, "of <code>gated</code> completed.")

	for name, br := range map[string]*browser{"A": onA, "B": onB} {
		testkit.Eventually(t, "server "+name+"'s view of the thread to show the completed run once", func() bool {
			_, page := br.get("/chat/threads/" + thread)
			return strings.Contains(page, "<strong>completed</strong>") && strings.Count(page, "of <code>gated</code> completed.") == 1
		})
		if _, page := br.get("/chat"); strings.Count(page, "/workflow run gated v2") != 1 || !strings.Contains(page, `href="/chat/threads/`+thread+`"`) {
			t.Errorf("server %s's chat page does not show the command once with the link to its thread:\n%s", name, page)
		}
	}
}

// TestChatTranscriptSurvivesRestart: a server restarted on the same SQLite file shows the chat and
// the run's thread as they were, with the gate still waiting and its button working. Each server
// lives in a subtest, whose end stops it and closes its store.
func TestChatTranscriptSurvivesRestart(t *testing.T) {
	home := t.TempDir() // outlives both servers, as a host's disk does
	path := filepath.Join(home, "threadflow.db")
	open := func(t testing.TB, opts db.Options) db.Store { return dbtest.SQLiteAt(t, path, opts) }
	var run db.Run
	var thread string
	t.Run("before the restart", func(t *testing.T) {
		first := newRig(t, rigOptions{open: open, home: home})
		alice := first.browser("alice")
		alice.say("/workflow run gated v3")
		run = first.waitRun("gated", db.StatusPaused)
		_, chat := alice.get("/chat")
		thread = runThread(t, chat)
		testkit.Eventually(t, "the gate prompt in the run's thread", func() bool {
			_, page := alice.get("/chat/threads/" + thread)
			return strings.Contains(page, `value="/workflow approve `+run.ID+`"`)
		})
	})
	t.Run("after the restart", func(t *testing.T) {
		second := newRig(t, rigOptions{open: open, home: home})
		alice := second.browser("alice")
		if _, page := alice.get("/chat"); !strings.Contains(page, "/workflow run gated v3") || !strings.Contains(page, `href="/chat/threads/`+thread+`"`) {
			t.Errorf("chat page after the restart lacks the command or the link to its run's thread:\n%s", page)
		}
		_, page := alice.get("/chat/threads/" + thread)
		if !strings.Contains(page, "Ship it?") {
			t.Errorf("the run's thread after the restart lacks the gate's question:\n%s", page)
		}
		ref := approveButton(t, page, run.ID)
		alice.post("/chat/threads/"+thread, url.Values{"text": {"/workflow approve " + run.ID}, "ref": {ref}})
		second.waitRun("gated", db.StatusCompleted)
		testkit.Eventually(t, "the completion in the run's thread on the restarted server", func() bool {
			_, page := alice.get("/chat/threads/" + thread)
			return strings.Contains(page, "of <code>gated</code> completed.")
		})
	})
}
