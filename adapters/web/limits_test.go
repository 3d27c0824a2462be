package web_test

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"threadflow/db"
	"threadflow/db/dbtest"
	"threadflow/orchestrator/reporting"
)

// The chat page refuses NUL bytes, invalid UTF-8 and oversized arguments with the limit's name,
// before it shows the message or hands it to the bot: nothing is written, on either engine.
func TestChatRefusesNulAndOversizedArgumentsWritingNothing(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, open func(t testing.TB, opts db.Options) db.Store) {
		r := newRig(t, rigOptions{open: open})
		b := r.browser("")
		for _, c := range []struct{ text, want string }{
			{"/workflow run gated a\x00b", "NUL byte"},
			{"/workflow run gated \xffv1", "not valid UTF-8"},
			{"/workflow run gated " + strings.Repeat("v", 200_000), "at most 16000 bytes (MAX_ARGS_BYTES)"},
		} {
			code, body := b.post("/chat", url.Values{"text": {c.text}})
			if code != 400 || !strings.Contains(body, c.want) {
				t.Errorf("%.30q = %d %s; want 400 naming %q", c.text, code, body, c.want)
			}
		}
		r.idle()
		if runs, err := r.store.ListRuns(context.Background(), db.RunFilter{}); err != nil || len(runs) != 0 {
			t.Fatalf("refused messages left %d runs (%v)", len(runs), err)
		}
		if _, chat := b.get("/chat"); strings.Contains(chat, "/workflow run gated") || strings.Contains(chat, "queued") {
			t.Fatalf("chat page shows a refused message:\n%s", chat)
		}
		b.say("/workflow run gated v1")
		r.waitRun("gated", db.StatusPaused)
	})
}

// A retried node shows each retry with its reason, and the same duration as /workflow status.
func TestRunPageShowsRetriesAndTheOneDuration(t *testing.T) {
	r := newRig(t, rigOptions{workflows: map[string]string{"flaky.yaml": `name: flaky
nodes:
  - id: flaky
    retry: {max_attempts: 2}
    bash: 'if [ "$ATTEMPT" = 1 ]; then echo "port busy" >&2; exit 1; fi; echo up'
`}})
	b := r.browser("")
	b.say("/workflow run flaky")
	run := r.waitRun("flaky", db.StatusCompleted)
	_, page := b.get("/runs/" + run.ID)
	if !strings.Contains(page, "attempt 1 failed, retried: <span class=\"user-text\">exit status 1: port busy</span>") {
		t.Fatalf("run page does not show the retry and its reason:\n%s", page)
	}
	timeline, err := reporting.RunTimeline(context.Background(), r.store, run, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	inStatus := regexp.MustCompile(`flaky \(attempt 2\) (\S+)`).FindStringSubmatch(timeline.String())
	onPage := regexp.MustCompile(`attempt 2</span> <span class="muted">([^<]+)</span>`).FindStringSubmatch(page)
	if inStatus == nil || onPage == nil || inStatus[1] != onPage[1] {
		t.Fatalf("duration in /workflow status %v, on the run page %v; want the same\n%s", inStatus, onPage, timeline.String())
	}
}
