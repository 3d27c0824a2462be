package web_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"

	"threadflow/db"
	"threadflow/orchestratortest"
	"threadflow/testkit"
)

// threadLink finds the link to a run's thread on a page.
var threadLink = regexp.MustCompile(`href="/chat/threads/([0-9a-f]{16})"`)

// runThread returns the thread id that the page links to, failing when there is none.
func runThread(t *testing.T, page string) string {
	t.Helper()
	m := threadLink.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no link to a run's thread on the page:\n%s", page)
	}
	return m[1]
}

// reply types text in a run's thread.
func (b *browser) reply(thread, text string) {
	b.r.t.Helper()
	if code, body := b.post("/chat/threads/"+thread, url.Values{"text": {text}}); code != 200 {
		b.r.t.Fatalf("reply %q in thread %s = %d: %s", text, thread, code, body)
	}
}

// TestAnyWebUserAnswersARunInItsThread: local starts the release, which refuses its requester; bob,
// another browser, finds the run's thread on his chat page and approves it in plain words there. Both
// see the run complete in the thread; neither sees the other's own conversation.
func TestAnyWebUserAnswersARunInItsThread(t *testing.T) {
	r := newRig(t, rigOptions{workflows: map[string]string{"release.yaml": orchestratortest.ReleaseWorkflow("allow_self_approval: false")}})
	local, bob := r.browser(""), r.browser("bob")
	bob.say("hello from bob") // bob's own conversation, which local must not see
	local.say("/workflow run release v1.0")
	run := r.waitRun("release", db.StatusPaused)

	_, mine := local.get("/chat")
	thread := runThread(t, mine)
	if !strings.Contains(mine, "/workflow run release v1.0") || !strings.Contains(mine, "Open the run's thread") {
		t.Errorf("local's chat page lacks the command and the link to its run's thread:\n%s", mine)
	}
	_, theirs := bob.get("/chat")
	if got := runThread(t, theirs); got != thread {
		t.Errorf("bob's chat page lists thread %s, want local's run's %s", got, thread)
	}
	if strings.Contains(theirs, "/workflow run release v1.0") {
		t.Errorf("bob's chat page shows what local typed in local's own conversation:\n%s", theirs)
	}
	if _, page := local.get("/chat"); strings.Contains(page, "hello from bob") {
		t.Errorf("local's chat page shows what bob typed in his own conversation:\n%s", page)
	}
	_, dash := bob.get("/runs/" + run.ID)
	if !strings.Contains(dash, `id="run-thread" href="/chat/threads/`+thread+`"`) {
		t.Errorf("the run page does not link to the run's thread %s:\n%s", thread, dash)
	}
	if !strings.Contains(dash, `id="btn-approve"`) || strings.Contains(dash, `id="gate-offer"`) {
		t.Errorf("the run page does not offer bob, who may approve, Approve:\n%s", dash)
	}
	// The requester is offered Reject, not Approve, and told who may approve.
	_, dash = local.get("/runs/" + run.ID)
	if strings.Contains(dash, `id="btn-approve"`) || !strings.Contains(dash, `id="btn-reject"`) ||
		!strings.Contains(dash, `<p class="hint" id="gate-offer">You talk as <code>web:local (unverified)</code>: Someone other than you must approve it.</p>`) {
		t.Errorf("the run page offers its requester Approve, or does not say who may approve:\n%s", dash)
	}

	path := "/chat/threads/" + thread
	testkit.Eventually(t, "the gate's question in the run's thread, for bob", func() bool {
		_, page := bob.get(path)
		return strings.Contains(page, "is waiting at <code>confirm</code>")
	})
	_, page := bob.get(path)
	for _, want := range []string{"Ship v1.0?", "To answer, reply in this thread with a clear yes or no",
		"The requester (<span class=\"user-text\">web:local</span>) may not approve it, only reject it."} {
		if !strings.Contains(page, want) {
			t.Errorf("the run's thread lacks %q:\n%s", want, page)
		}
	}
	events := bob.live("/live/chat/threads/" + thread)
	testkit.ReceiveContaining(t, events, testkit.Deadline, "is waiting at <code>confirm</code>")

	// The requester's own approval is refused, to the requester alone.
	local.reply(thread, "lgtm")
	r.idle()
	refusal := "You started this run, and gate <code>confirm</code> of run <code>" + run.ID + "</code> does not allow self-approval"
	if _, page := local.get(path); !strings.Contains(page, refusal) {
		t.Errorf("local's view of the thread lacks the refusal %q:\n%s", refusal, page)
	}
	if _, page := bob.get(path); strings.Contains(page, refusal) || !strings.Contains(page, "lgtm") {
		t.Errorf("bob's view of the thread shows local's refusal, or lacks local's reply:\n%s", page)
	}

	// A reply in a thread has the limits of every chat message (MAX_ARGS_BYTES, 16KB by default).
	if code, body := bob.post(path, url.Values{"text": {"lgtm, " + strings.Repeat("x", 16_001)}}); code != 400 || !strings.Contains(body, "MAX_ARGS_BYTES") {
		t.Errorf("an oversized reply in the thread = %d %q, want 400 naming MAX_ARGS_BYTES", code, body)
	}
	if _, page := bob.get(path); strings.Contains(page, "xxxxxxxxxx") {
		t.Errorf("the thread shows an oversized reply that was refused")
	}

	bob.reply(thread, "lgtm, ship it")
	r.waitRun("release", db.StatusCompleted)
	done := "✅ Approved by <span class=\"user-text\">web:bob</span>: gate <code>confirm</code> of run <code>" + run.ID +
		"</code> with note: <span class=\"user-text\">ship it</span>. The run continues."
	testkit.ReceiveContaining(t, events, testkit.Deadline, "shipped v1.0 with note [ship it]")
	for name, b := range map[string]*browser{"local": local, "bob": bob} {
		testkit.Eventually(t, name+"'s view of the completed thread", func() bool {
			_, page := b.get(path)
			return strings.Contains(page, done) && strings.Contains(page, "<strong>completed</strong>") &&
				strings.Contains(page, "shipped v1.0 with note [ship it]")
		})
	}
	if _, page := bob.get("/chat"); strings.Contains(page, "ship it") {
		t.Errorf("bob's own conversation shows what he said in the run's thread:\n%s", page)
	}
}

// A thread is the bot's: nobody opens one by posting to an address that does not exist.
func TestThreadsThatDoNotExist(t *testing.T) {
	r := newRig(t, rigOptions{})
	b := r.browser("")
	for _, path := range []string{"/chat/threads/0123456789abcdef", "/chat/threads/nope", "/live/chat/threads/%3Cb%3E"} {
		if code, _ := b.get(path); code != 404 {
			t.Errorf("GET %s = %d, want 404", path, code)
		}
	}
	if code, body := b.post("/chat/threads/0123456789abcdef", url.Values{"text": {"lgtm"}}); code != 404 || !strings.Contains(body, "No such thread") {
		t.Errorf("a reply to a thread that does not exist = %d %q, want 404", code, body)
	}
	r.idle()
	if rows, err := r.store.Transcript(t.Context(), "web:#runs:0123456789abcdef", 10); err != nil || len(rows) != 0 {
		t.Errorf("a reply to a thread that does not exist was recorded: %d rows (%v)", len(rows), err)
	}
}
