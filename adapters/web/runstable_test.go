package web

import (
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"threadflow/db"
)

// The runs table is written without html/template (runsTable), so it is checked here for what
// html/template guaranteed: hostile values in every field stay text, attributes stay closed,
// links lead where their values say and only inside the dashboard.
func TestRunsTableKeepsEveryValueText(t *testing.T) {
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	s, err := New(Config{Log: zap.NewNop(), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	const hostile = `"><img src=x onerror=alert(1)>&amp;'` + "`"
	rows := []runRow{{
		Run: db.Run{ID: "parent0001", Workflow: "release" + hostile, UserID: "slack:U1", UserName: "Mallory" + hostile,
			ParentConversationID: "slack:C1:1.2?x=" + hostile, CreatedAt: now.Add(-90 * time.Minute)},
		State: "paused" + hostile, Usage: "usage" + hostile, Cost: "$1" + hostile,
	}, {
		Run:   db.Run{ID: "child00001", Workflow: "kid", ParentRunID: "parent0001", ParentNode: "sub" + hostile, UserID: "web:x", CreatedAt: now},
		State: "running", Depth: 1,
	}}
	table := string(s.runsTable(rows))

	wellFormed := regexp.MustCompile(`^</?(table|thead|tbody|tr|th|td|a|code|span)( [a-z-]+="[^"<>]*")*>$`)
	for _, tag := range regexp.MustCompile(`<[^>]*>`).FindAllString(table, -1) {
		if !wellFormed.MatchString(tag) {
			t.Fatalf("a value broke out of its text or attribute: tag %s in\n%s", tag, table)
		}
	}
	text := html.UnescapeString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(table, "\x00"))
	for _, want := range []string{"release" + hostile, "Mallory" + hostile + " (slack:U1)", "slack:C1:1.2?x=" + hostile, "paused" + hostile,
		"$1" + hostile, "sub" + hostile, "1h30m0s ago", "web:x (unverified)", "↳ "} {
		if !strings.Contains(text, "\x00"+want+"\x00") {
			t.Errorf("the table does not show %q as text:\n%s", want, table)
		}
	}
	if !strings.Contains(table, `title="`+html.EscapeString("usage"+hostile)+`"`) {
		t.Errorf("the cost's title does not hold the usage escaped:\n%s", table)
	}
	var links []string
	for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(table, -1) {
		links = append(links, html.UnescapeString(m[1]))
	}
	if len(links) != 5 || links[0] != "/runs/parent0001" || links[2] != "/runs/child00001" || links[3] != "/runs/parent0001" {
		t.Fatalf("links %q; want each run's page, and each conversation's list", links)
	}
	for _, l := range []string{links[1], links[4]} {
		u, err := url.Parse(l)
		if err != nil || u.Scheme != "" || u.Host != "" || u.Path != "/" {
			t.Errorf("conversation link %q leaves the dashboard's list", l)
		}
	}
	if u, _ := url.Parse(links[1]); u.Query().Get("conversation") != rows[0].Run.ParentConversationID {
		t.Errorf("conversation link %q filters by %q; want %q", links[1], u.Query().Get("conversation"), rows[0].Run.ParentConversationID)
	}
	if !strings.Contains(table, `<tr id="run-child00001" class="child-run"><td style="padding-left: 1em">`) {
		t.Errorf("the child's row is not marked and indented:\n%s", table)
	}
	if empty := string(s.runsTable(nil)); !strings.Contains(empty, `class="empty"`) || strings.Contains(empty, "<table") {
		t.Errorf("no runs renders %q; want the empty-list hint", empty)
	}
}
