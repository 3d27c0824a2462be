package test

import (
	"bufio"
	"context"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"threadflow/testkit/botproc"
)

// webChat is the web chat as the chat suite's platform: each person's conversation on the chat
// page, and the run threads every web user sees. People are named by the threadflow_user cookie.
type webChat struct {
	bot  *botproc.Process
	home string
}

// openWebChat starts a bot for each conversation: the one a scenario reads is alice's, and every
// scenario has an alice.
func openWebChat(t *testing.T, env map[string]string) func(t *testing.T) chat {
	return func(t *testing.T) chat {
		env := sameEngine(t, env)
		env["WORKFLOWS_DIR"] = workflowDir(t, chatWorkflows, gateWorkflows("web:alice", "web:bob", "web:carol"))
		return webChat{bot: botproc.Start(t, env), home: env["HOME"]}
	}
}

func (w webChat) client(t *testing.T, user string) chatClient {
	return chatClient{t, w.bot.URL(), user}
}

// Send types text on user's chat page.
func (w webChat) Send(t *testing.T, user, text string) {
	t.Helper()
	w.client(t, user).say(text)
}

// Reply types text in r's thread.
func (w webChat) Reply(t *testing.T, user string, r chatRun, text string) {
	t.Helper()
	w.post(t, user, webThread(t, r), url.Values{"text": {text}})
}

// Click submits the form of the button labelled label: the button's command, with the message
// that holds it.
func (w webChat) Click(t *testing.T, user string, m chatMsg, label string) {
	t.Helper()
	for _, b := range m.native.(webMsg).buttons {
		if b.label == label {
			w.post(t, user, b.action, url.Values{"text": {b.command}, "ref": {m.ID}})
			return
		}
	}
	t.Fatalf("no button %q on %q", label, m.Text)
}

func (w webChat) post(t *testing.T, user, path string, form url.Values) {
	t.Helper()
	resp := w.client(t, user).request(context.Background(), "POST", path, form)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST %s %v = %d: %s", path, form, resp.StatusCode, b)
	}
}

// Conversation is alice's chat page: every scenario talks as alice.
func (w webChat) Conversation(t *testing.T) []chatMsg {
	return webMessages(w.client(t, "alice").page())
}

func (w webChat) Thread(t *testing.T, r chatRun) []chatMsg {
	return webMessages(w.get(t, "alice", webThread(t, r)))
}

// Private is what user's chat page and the run threads it lists show user alone.
func (w webChat) Private(t *testing.T, user string) []chatMsg {
	pages := []string{"/chat"}
	for _, link := range threadLink.FindAllStringSubmatch(w.client(t, user).page(), -1) {
		pages = append(pages, link[1])
	}
	var out []chatMsg
	for _, th := range pages {
		for _, m := range webMessages(w.get(t, user, th)) {
			if m.native.(webMsg).private {
				out = append(out, m)
			}
		}
	}
	return out
}

func (w webChat) get(t *testing.T, user, path string) string {
	t.Helper()
	resp := w.client(t, user).request(context.Background(), "GET", path, nil)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// webThread is the address of r's thread, linked from its announcement.
func webThread(t *testing.T, r chatRun) string {
	t.Helper()
	th := r.Root.native.(webMsg).thread
	if th == "" {
		t.Fatalf("the announcement of run %s links to no thread", r.ID)
	}
	return th
}

func (w webChat) Lacks(g gesture) string {
	if g == gestureRedeliver {
		return "the chat page posts each message once, and the server answers it before the page goes on"
	}
	return ""
}

// Words: on a web page, what would reach people unasked is markup, such as a script.
func (w webChat) Words() chatWords {
	names := qualified("web", map[string]string{"alice": "alice", "bob": "bob", "carol": "carol"})
	return chatWords{Starter: names["alice"], Answerer: names, Output: names, Bold: "**",
		Ping: "<script>alert(1)</script>", Pings: regexp.MustCompile(`<script`)}
}

func (w webChat) Stopped(t *testing.T, r chatRun) { stopped(t, w.bot, r.ID) }

func (w webChat) Home() string { return w.home }

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

// webMsg is what a chat page shows of a message besides its text.
type webMsg struct {
	thread  string // the run thread it links to
	private bool   // shown to the reader only
	buttons []webButton
}

type webButton struct{ action, command, label string }

var (
	webMsgStart = regexp.MustCompile(`<div class="msg([^"]*)" id="msg-([0-9a-f]+)">`)
	webMeta     = regexp.MustCompile(`(?s)<div class="msg-meta">(.*?)</div>`)
	webBody     = regexp.MustCompile(`(?s)<div class="msg-body">(.*?)</div>\n`)
	webLink     = regexp.MustCompile(`<p class="thread-link"><a href="([^"]+)">`)
	webButtonRE = regexp.MustCompile(`<form method="post" action="([^"]+)" data-async><input type="hidden" name="text" value="([^"]*)"><input type="hidden" name="ref" value="[^"]*"><button class="[^"]*">([^<]*)</button></form>`)
	webTag      = regexp.MustCompile(`<[^>]*>`)
)

// webMessages reads the bot's messages of a chat page, with markup turned back into what it
// renders: `code` and **bold**.
func webMessages(page string) []chatMsg {
	var out []chatMsg
	starts := webMsgStart.FindAllStringSubmatchIndex(page, -1)
	for i, st := range starts {
		end := len(page)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		block := page[st[0]:end]
		class, id := page[st[2]:st[3]], page[st[4]:st[5]]
		meta, body := webMeta.FindStringSubmatch(block), webBody.FindStringSubmatch(block)
		if meta == nil || body == nil || !strings.HasPrefix(meta[1], "bot ") {
			continue // what people typed
		}
		native := webMsg{private: strings.Contains(class, "ephemeral")}
		if l := webLink.FindStringSubmatch(block); l != nil {
			native.thread = l[1]
		}
		var labels []string
		for _, b := range webButtonRE.FindAllStringSubmatch(block, -1) {
			native.buttons = append(native.buttons, webButton{action: b[1], command: html.UnescapeString(b[2]), label: html.UnescapeString(b[3])})
			labels = append(labels, html.UnescapeString(b[3]))
		}
		text := webText(body[1])
		out = append(out, chatMsg{ID: id, Text: text, Visible: []string{body[1]}, Buttons: labels,
			Edited: strings.Contains(meta[1], " · edited"), native: native})
	}
	return out
}

var webMarkup = strings.NewReplacer("<code>", "`", "</code>", "`", "<strong>", "**", "</strong>", "**")

func webText(body string) string {
	return html.UnescapeString(webTag.ReplaceAllString(webMarkup.Replace(body), ""))
}
