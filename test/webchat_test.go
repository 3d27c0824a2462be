package test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"threadflow/db/dbtest"
	"threadflow/testkit"
	"threadflow/testkit/botproc"
)

// chatClient talks to one bot's web chat page as a named user (the threadflow_user cookie).
type chatClient struct {
	t    *testing.T
	base string
	user string
}

func (c chatClient) request(ctx context.Context, method, path string, form url.Values) *http.Response {
	c.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.base, "/")+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	req.AddCookie(&http.Cookie{Name: "threadflow_user", Value: c.user})
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Requested-With", "threadflow")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

// say types text on the chat page.
func (c chatClient) say(text string) {
	c.t.Helper()
	resp := c.request(context.Background(), "POST", "/chat", url.Values{"text": {text}})
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		b, _ := io.ReadAll(resp.Body)
		c.t.Fatalf("chat send %q = %d: %s", text, resp.StatusCode, b)
	}
}

// page returns the chat page's HTML.
func (c chatClient) page() string {
	c.t.Helper()
	resp := c.request(context.Background(), "GET", "/chat", nil)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// threadLink finds the link to a run's thread on the chat page.
var threadLink = regexp.MustCompile(`href="(/chat/threads/[0-9a-f]{16})"`)

// thread returns the address of the newest run thread the chat page links to, and its HTML; ""
// when the page links to none yet.
func (c chatClient) thread() (path, page string) {
	c.t.Helper()
	m := threadLink.FindStringSubmatch(c.page())
	if m == nil {
		return "", ""
	}
	resp := c.request(context.Background(), "GET", m[1], nil)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return m[1], string(b)
}

// live opens the chat page's live view and returns the HTML of each update it sends.
func (c chatClient) live() <-chan string { return c.liveAt("/live/chat") }

// liveAt opens a live view and returns the HTML of each update it sends.
func (c chatClient) liveAt(path string) <-chan string {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c.t.Cleanup(cancel)
	resp := c.request(ctx, "GET", path, nil)
	if resp.StatusCode != http.StatusOK {
		c.t.Fatalf("GET %s = %d", path, resp.StatusCode)
	}
	out := make(chan string, 64)
	go func() {
		defer resp.Body.Close()
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		var data []string
		for sc.Scan() {
			switch line := sc.Text(); {
			case strings.HasPrefix(line, "data: "):
				data = append(data, strings.TrimPrefix(line, "data: "))
			case line == "" && data != nil:
				out <- strings.Join(data, "\n")
				data = nil
			}
		}
	}()
	return out
}

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
