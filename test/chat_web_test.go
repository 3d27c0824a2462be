package test

import (
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

func openWebChat(t *testing.T, env map[string]string) chat {
	env["WORKFLOWS_DIR"] = workflowDir(t, chatWorkflows, gateWorkflows("web:alice", "web:bob", "web:carol"))
	return webChat{bot: botproc.Start(t, env), home: env["HOME"]}
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
	page := w.client(t, user).page()
	var out []chatMsg
	for _, th := range append([]string{"/chat"}, threadLinks.FindAllString(page, -1)...) {
		for _, m := range webMessages(w.get(t, user, th)) {
			if m.native.(webMsg).private {
				out = append(out, m)
			}
		}
	}
	return out
}

// threadLinks finds the run threads a chat page links to.
var threadLinks = regexp.MustCompile(`/chat/threads/[0-9a-f]{16}`)

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

func (w webChat) Stopped(t *testing.T, r chatRun) {
	w.bot.WaitLog("orchestrator.run_stopped", map[string]string{"run_id": r.ID})
}

func (w webChat) Home() string { return w.home }

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
