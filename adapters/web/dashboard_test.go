package web_test

import (
	"bufio"
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"threadflow/db"
	"threadflow/testkit"
	"threadflow/testkit/runevents"
)

func TestGatedRunFromChatToApproval(t *testing.T) {
	r := newRig(t, rigOptions{})
	b := r.browser("")
	b.say("/workflow run gated v1.2")
	run := r.waitRun("gated", db.StatusPaused)

	// The run is paused in the store a moment before the reporter posts the gate's message, in the
	// run's thread that the chat page links to.
	_, chat := b.get("/chat")
	thread := runThread(t, chat)
	testkit.Eventually(t, "the gate prompt with an Approve button in the run's thread", func() bool {
		_, page := b.get("/chat/threads/" + thread)
		return strings.Contains(page, "Ship it?") && strings.Contains(page, `value="/workflow approve `+run.ID+`"`)
	})
	if _, list := b.get("/?state=paused&workflow=gated"); !strings.Contains(list, `href="/runs/`+run.ID+`"`) {
		t.Errorf("runs list filtered to paused gated runs lacks %s:\n%s", run.ID, list)
	}
	if _, list := b.get("/?state=completed"); strings.Contains(list, run.ID) {
		t.Errorf("runs list filtered to completed shows the paused run %s", run.ID)
	}
	code, page := b.get("/runs/" + run.ID)
	for _, want := range []string{"Waiting for a person at <code>ship</code>", "built v1.2", `action="/runs/` + run.ID + `/approve"`, "paused"} {
		if code != 200 || !strings.Contains(page, want) {
			t.Errorf("run page (%d) lacks %q:\n%s", code, want, page)
		}
	}

	if code, _ := b.post("/runs/"+run.ID+"/approve", nil); code != 200 {
		t.Fatalf("approve button answered %d", code)
	}
	r.waitRun("gated", db.StatusCompleted)
	_, page = b.get("/runs/" + run.ID)
	for _, want := range []string{"completed", "<strong>approve</strong> by web:local", "deployed"} {
		if !strings.Contains(page, want) {
			t.Errorf("completed run page lacks %q:\n%s", want, page)
		}
	}
}

func TestButtonsGoThroughAuthorization(t *testing.T) {
	r := newRig(t, rigOptions{allowed: []string{"web:alice"}})
	alice, mallory := r.browser("alice"), r.browser("mallory")
	alice.say("/workflow run gated")
	run := r.waitRun("gated", db.StatusPaused)

	mallory.post("/runs/"+run.ID+"/abandon", nil)
	mallory.post("/runs/"+run.ID+"/approve", nil)
	r.idle()
	if got, _ := r.store.GetRun(context.Background(), run.ID); got.Status != db.StatusPaused {
		t.Fatalf("run is %s after mallory's buttons; want paused: mallory is not in ALLOWED_USER_IDS", got.Status)
	}
	alice.post("/runs/"+run.ID+"/reject", nil)
	r.waitRun("gated", db.StatusCancelled)
	events, err := r.store.Events(context.Background(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if strings.Contains(string(e.Data), "mallory") {
			t.Errorf("an event names mallory, who is not allowed: %s %s", e.Type, e.Data)
		}
	}
}

func TestUserTextIsEscaped(t *testing.T) {
	r := newRig(t, rigOptions{})
	b := r.browser("")
	b.say(`/workflow run gated "<script>alert(1)</script><b>x</b>"`)
	run := r.waitRun("gated", db.StatusPaused)
	for _, path := range []string{"/runs/" + run.ID, "/chat", "/"} {
		_, page := b.get(path)
		if strings.Contains(page, "<script>alert") || strings.Contains(page, "<b>x</b>") {
			t.Errorf("%s shows user text as markup:\n%s", path, page)
		}
	}
	if _, page := b.get("/runs/" + run.ID); !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("run page does not show the request escaped:\n%s", page)
	}
}

// inertWorkflow prints a masked link, an HTML link and code fences left open: on the web they must
// all stay text.
const inertWorkflow = "name: inert\nnodes:\n  - id: print\n    bash: |\n" +
	"      echo '[click](https://evil.example) <a href=\"https://evil.example\">click</a>'\n" +
	"      echo 'a stray ``` fence'\n" +
	"      echo '```'\n" +
	"      echo '<b>still text</b>'\n"

// TestWorkflowOutputIsInertText: on the run page and the chat page, what a workflow printed is shown
// as it was printed: no link but the dashboard's own, each showing where it goes or inside the
// site, and no markup of the output's.
func TestWorkflowOutputIsInertText(t *testing.T) {
	r := newRig(t, rigOptions{workflows: map[string]string{"inert.yaml": inertWorkflow}})
	b := r.browser("")
	b.say("/workflow run inert")
	run := r.waitRun("inert", db.StatusCompleted)
	const shown = "[click](https://evil.example) &lt;a href=&#34;https://evil.example&#34;&gt;click&lt;/a&gt;\n" +
		"a stray ``` fence\n```\n&lt;b&gt;still text&lt;/b&gt;"
	_, mine := b.get("/chat")
	thread := runThread(t, mine)
	var chat string
	testkit.Eventually(t, "the completion message with the output in the run's thread", func() bool {
		_, chat = b.get("/chat/threads/" + thread)
		return strings.Contains(chat, "completed.")
	})
	_, page := b.get("/runs/" + run.ID)
	for name, html := range map[string]string{"run page": page, "run's thread": chat} {
		if !strings.Contains(html, shown) {
			t.Errorf("the %s does not show the output as printed (%q):\n%s", name, shown, html)
		}
		if strings.Contains(html, "<b>") {
			t.Errorf("the %s shows the output's markup:\n%s", name, html)
		}
		if hidden := hiddenLinks(html); len(hidden) > 0 {
			t.Errorf("the %s has links whose text hides where they go: %q", name, hidden)
		}
	}
}

var (
	anchor = regexp.MustCompile(`(?s)<a\b([^>]*)>(.*?)</a>`)
	href   = regexp.MustCompile(`\bhref="([^"]*)"`)
	tag    = regexp.MustCompile(`<[^>]*>`)
)

// hiddenLinks returns the links of a page that leave the site without their text showing where
// to: an <a> to another site whose text does not hold its href.
func hiddenLinks(page string) []string {
	var hidden []string
	if n := strings.Count(page, "<a "); n != len(anchor.FindAllString(page, -1)) {
		hidden = append(hidden, fmt.Sprintf("%d <a> opened, %d closed", n, len(anchor.FindAllString(page, -1))))
	}
	for _, m := range anchor.FindAllStringSubmatch(page, -1) {
		target := ""
		if h := href.FindStringSubmatch(m[1]); h != nil {
			target = html.UnescapeString(h[1])
		}
		text := html.UnescapeString(tag.ReplaceAllString(m[2], ""))
		if !strings.HasPrefix(target, "/") && !strings.Contains(text, target) {
			hidden = append(hidden, m[0])
		}
	}
	return hidden
}

func TestRequestsThatAreRefused(t *testing.T) {
	r := newRig(t, rigOptions{})
	b := r.browser("")
	tests := []struct {
		name   string
		do     func() int
		want   int
		reason string
	}{
		{"unknown run", func() int { c, _ := b.get("/runs/zzzzzzzzzz"); return c }, 404, "no such run"},
		{"run id with markup", func() int { c, _ := b.get("/runs/%3Cb%3E"); return c }, 404, "not an id"},
		{"unknown action", func() int { c, _ := b.post("/runs/abcdefgh/explode", nil); return c }, 404, "only the four buttons"},
		{"empty chat message", func() int { c, _ := b.post("/chat", url.Values{"text": {"  "}}); return c }, 400, "nothing to send"},
		{"name with a colon", func() int { c, _ := b.post("/chat/name", url.Values{"name": {"web:admin"}}); return c }, 400, "names cannot forge ids"},
		{"button ref that is not an id", func() int {
			c, _ := b.post("/chat", url.Values{"text": {"/workflow status"}, "ref": {"1 OR 1"}})
			return c
		}, 400, "bad ref"},
		{"cross-site form post", func() int {
			req, _ := http.NewRequest("POST", r.srv.URL+"/runs/abcdefgh/approve", nil)
			req.Header.Set("Sec-Fetch-Site", "cross-site")
			resp, err := b.c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}, 403, "CSRF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.do(); got != tt.want {
				t.Errorf("status %d, want %d (%s)", got, tt.want, tt.reason)
			}
		})
	}
}

func TestLiveRunPageStreamsStateChanges(t *testing.T) {
	r := newRig(t, rigOptions{})
	b := r.browser("")
	b.say("/workflow run gated")
	run := r.waitRun("gated", db.StatusPaused)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", r.srv.URL+"/live/runs/"+run.ID, nil)
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q, want text/event-stream", ct)
	}
	events := make(chan string, 16)
	go readEvents(resp, events)
	testkit.ReceiveContaining(t, events, testkit.Deadline, `state-paused">paused`)
	b.post("/runs/"+run.ID+"/approve", nil)
	testkit.ReceiveContaining(t, events, testkit.Deadline, `state-completed">completed`)
}

// readEvents sends the data of each server-sent event on out until the stream ends.
func readEvents(resp *http.Response, out chan<- string) {
	defer close(out)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var data []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: "))
		case line == "" && data != nil:
			out <- strings.Join(data, "\n")
			data = nil
		}
	}
}

func TestApprovalsWithNotesFromTheRunPage(t *testing.T) {
	// The page is read as at the moment the gate was asked, so it says the timeout is 24h away
	// however long the loaded machine took between the pause and the page.
	var asked atomic.Pointer[time.Time]
	r := newRig(t, rigOptions{now: func() time.Time {
		if at := asked.Load(); at != nil {
			return *at
		}
		return time.Now()
	}})
	alice, bob, mallory := r.browser("alice"), r.browser("bob"), r.browser("mallory")
	alice.say("/workflow run guarded")
	run := r.waitRun("guarded", db.StatusPaused)
	if p := run.Meta.Pause; p == nil || p.Since.IsZero() {
		t.Fatalf("paused run has no pause time: %+v", run.Meta.Pause)
	} else {
		asked.Store(&p.Since)
	}

	_, page := alice.get("/runs/" + run.ID)
	for _, want := range []string{"who may answer: <span class=\"user-text\">web:alice, web:bob and the admins (ADMIN_USER_IDS)</span>",
		"needs 2 approvals from different people", "Times out ", "(in 24h); then the gate is rejected", "Reminder ",
		`<input name="note" id="gate-note"`, `formaction="/runs/` + run.ID + `/reject"`} {
		if !strings.Contains(page, want) {
			t.Errorf("run page lacks %q:\n%s", want, page)
		}
	}
	mallory.post("/runs/"+run.ID+"/approve", url.Values{"note": {"let me in"}})
	alice.post("/runs/"+run.ID+"/approve", url.Values{"note": {"  changelog   <b>checked</b> "}})
	r.idle()
	if got, _ := r.store.GetRun(context.Background(), run.ID); got.Status != db.StatusPaused {
		t.Fatalf("run is %s after one approval of two", got.Status)
	}
	_, page = bob.get("/runs/" + run.ID)
	if !strings.Contains(page, "approved by web:alice") || !strings.Contains(page, "changelog &lt;b&gt;checked&lt;/b&gt;") || strings.Contains(page, "let me in") {
		t.Errorf("run page does not list alice's approval with its escaped note (and only hers):\n%s", page)
	}
	bob.post("/runs/"+run.ID+"/approve", url.Values{"note": {"lgtm"}})
	r.waitRun("guarded", db.StatusCompleted)
	_, page = bob.get("/runs/" + run.ID)
	for _, want := range []string{"<strong>approve</strong> by web:bob", "approved by web:alice", "deployed with notes: changelog &lt;b&gt;checked&lt;/b&gt;\nlgtm"} {
		if !strings.Contains(page, want) {
			t.Errorf("completed run page lacks %q:\n%s", want, page)
		}
	}
	if n := runevents.InRun(t, r.store, run.ID, db.EventGateRefused); n != 1 {
		t.Errorf("%d refusals recorded, want mallory's one", n)
	}
}

func TestRejectWithAReasonFromTheRunPage(t *testing.T) {
	r := newRig(t, rigOptions{})
	alice, run := r.rejectedByAlice("wrong version")
	if _, page := alice.get("/runs/" + run.ID); !strings.Contains(page, "<strong>reject</strong> by web:alice") || !strings.Contains(page, "wrong version") {
		t.Errorf("rejected run page lacks the reason:\n%s", page)
	}
	// Notes follow the limits of every chat message (MAX_ARGS_BYTES, 16KB by default).
	if code, body := alice.post("/runs/"+run.ID+"/approve", url.Values{"note": {strings.Repeat("x", 16_001)}}); code != 400 || !strings.Contains(body, "MAX_ARGS_BYTES") {
		t.Errorf("an oversized note answered %d %q, want 400 naming MAX_ARGS_BYTES", code, body)
	}
}

// A node's full output is linked from the run page and served as plain text, however long.
func TestRunPageLinksTheFullOutput(t *testing.T) {
	r := newRig(t, rigOptions{})
	b := r.browser("")
	b.say("/workflow run loud")
	run := r.waitRun("loud", db.StatusCompleted)
	_, page := b.get("/runs/" + run.ID)
	link := `href="/runs/` + run.ID + `/output/print"`
	for _, want := range []string{link, "full output of attempt 1 (39 KiB)", "above are its first 16 KiB"} {
		if !strings.Contains(page, want) {
			t.Errorf("run page lacks %q", want) // the page holds 16 KiB of output: not printed
		}
	}
	resp, err := b.c.Get(r.srv.URL + "/runs/" + run.ID + "/output/print")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || len(body) != 40000+len("<script>alert(1)</script>\n") || !strings.HasSuffix(string(body), "y<script>alert(1)</script>\n") {
		t.Fatalf("output = %d, %d bytes ending %q; want the whole output", resp.StatusCode, len(body), body[max(0, len(body)-30):])
	}
	if ct, nosniff := resp.Header.Get("Content-Type"), resp.Header.Get("X-Content-Type-Options"); ct != "text/plain; charset=utf-8" || nosniff != "nosniff" {
		t.Fatalf("output served as %q (nosniff %q); want plain text a browser never runs", ct, nosniff)
	}
	if code, _ := b.get("/runs/" + run.ID + "/output/nosuchnode"); code != 404 {
		t.Fatalf("output of an unknown node answered %d, want 404", code)
	}
}

// The audit page lists who started and answered a run, with how they were known: a web name
// typed without sign-in is unverified.
func TestAuditPageListsWhoDidWhat(t *testing.T) {
	r := newRig(t, rigOptions{})
	alice, run := r.rejectedByAlice("not today")
	code, page := alice.get("/audit")
	for _, want := range []string{
		`<tr class="audit-rejected"><td>`, `<td>rejected</td><td>web:alice (unverified)</td><td><span class="verified verified-unverified">unverified</span></td><td>at <code>ship</code> <span class="user-text">not today</span></td>`,
		`<td>started</td><td>web:alice (unverified)</td>`, `href="/runs/` + run.ID + `"`,
	} {
		if code != 200 || !strings.Contains(page, want) {
			t.Errorf("audit page (%d) lacks %q:\n%s", code, want, page)
		}
	}
	if strings.Contains(page, "audit-cancelled") {
		t.Errorf("the rejection is listed twice, also as a cancellation:\n%s", page)
	}
	if _, page := alice.get("/audit?since=1ns"); !strings.Contains(page, `id="audit-empty"`) {
		t.Errorf("audit of the last nanosecond is not empty:\n%s", page)
	}
}

// rejectedByAlice has alice start gated and reject it on its run page with note, and waits until
// the run is cancelled.
func (r *rig) rejectedByAlice(note string) (*browser, db.Run) {
	alice := r.browser("alice")
	alice.say("/workflow run gated v2")
	run := r.waitRun("gated", db.StatusPaused)
	alice.post("/runs/"+run.ID+"/reject", url.Values{"note": {note}})
	r.waitRun("gated", db.StatusCancelled)
	return alice, run
}

// TestRunPagesLinkParentAndChildRuns: a parent's page lists the child runs its `workflow:` nodes
// started, each linked; a child's page links its parent.
func TestRunPagesLinkParentAndChildRuns(t *testing.T) {
	r := newRig(t, rigOptions{workflows: map[string]string{
		"kid.yaml":    "name: kid\nnodes:\n  - id: say\n    bash: echo kid\n",
		"parent.yaml": "name: parent\nnodes:\n  - id: sub\n    workflow: kid\n",
	}})
	b := r.browser("")
	b.say("/workflow run parent")
	parent := r.waitRun("parent", db.StatusCompleted)
	child := db.ChildRunID(parent.ID, "sub", -1)
	_, page := b.get("/runs/" + parent.ID)
	if !strings.Contains(page, `<a href="/runs/`+child+`"><code>`+child+`</code></a> of <code>kid</code>, node <code>sub</code>`) {
		t.Errorf("parent's page does not link its child %s:\n%s", child, page)
	}
	_, page = b.get("/runs/" + child)
	if !strings.Contains(page, `<a id="parent-run" href="/runs/`+parent.ID+`">`) {
		t.Errorf("child's page does not link its parent %s", parent.ID)
	}
	// The runs page nests the child under its parent's row (the child is newer, listed first
	// otherwise), marked as a child and linking its parent.
	_, page = b.get("/")
	p, c := strings.Index(page, `<tr id="run-`+parent.ID+`"`), strings.Index(page, `<tr id="run-`+child+`" class="child-run"><td style="padding-left: 1em">↳ <a href="/runs/`+child+`">`)
	if p < 0 || c < p {
		t.Errorf("runs page does not nest child %s under its parent %s:\n%s", child, parent.ID, page)
	}
	if !strings.Contains(page, `kid <span class="muted child-of">child of <a href="/runs/`+parent.ID+`"><code>`+parent.ID+`</code></a>, node <code>sub</code></span>`) {
		t.Errorf("the child's row does not link its parent %s:\n%s", parent.ID, page)
	}
}

// The runs page says how long runs are kept, as RETENTION and RETENTION_UNFINISHED set it (issue 34).
func TestDashboardSaysHowLongRunsAreKept(t *testing.T) {
	for _, c := range []struct {
		retention db.Retention
		want      string
	}{
		{db.DefaultRetention, "Completed and cancelled runs are kept 90 days after they finish, failed and paused runs 365 days after their last change."},
		{db.Retention{Finished: 36 * time.Hour}, "Completed and cancelled runs are kept 36h0m0s after they finish, failed and paused runs forever."},
		{db.Retention{}, "Completed and cancelled runs are kept forever, failed and paused runs forever."},
	} {
		r := newRig(t, rigOptions{retention: c.retention})
		if _, page := r.browser("alice").get("/"); !strings.Contains(page, c.want) {
			t.Errorf("runs page with retention %+v does not say %q:\n%s", c.retention, c.want, page)
		}
	}
}

// The usage page says so when no agent turn ran in its window, and every page links it.
func TestUsagePageWithoutAgentTurns(t *testing.T) {
	r := newRig(t, rigOptions{})
	b := r.browser("")
	code, page := b.get("/usage")
	if code != http.StatusOK || !strings.Contains(page, "<h1>AI usage per workflow, last 30 days</h1>") || !strings.Contains(page, "No agent turn in the last 30 days.") {
		t.Errorf("GET /usage = %d:\n%s", code, page)
	}
	if _, runs := b.get("/"); !strings.Contains(runs, `<a href="/usage">Usage</a>`) {
		t.Errorf("the runs page does not link the usage page:\n%s", runs)
	}
}
