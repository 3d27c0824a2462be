package web

import (
	"html/template"
	"net/url"
	"strconv"
	"strings"
)

// runsTable is the runs list as HTML: the runs page's table, and what /live/runs sends whenever it
// changes. It is written here rather than by html/template, which spent 15-18 µs and about 90
// allocations a row on it (a reflective call for each of a row's thirteen escaped values): 0.8 ms
// of a page whose queries take 0.6 ms, and again for every live update (BENCHMARKS.md, issue 34).
//
// One escaping rule holds for every value, as html/template applied it: each goes through esc,
// and always lands in text or in a double-quoted attribute; a value inside a link is URL-escaped
// first (path or query), and every link starts with "/", so no value chooses a scheme.
func (s *Server) runsTable(rows []runRow) template.HTML {
	if len(rows) == 0 {
		return `<p class="empty">No runs match. Start one from the <a href="/chat">chat page</a> with <code>/workflow run hello world</code>.</p>`
	}
	var b strings.Builder
	b.Grow(128 + 640*len(rows))
	b.WriteString("<table class=\"runs\">\n<thead><tr><th>Run</th><th>Workflow</th><th>State</th><th>Started</th><th>By</th><th>Conversation</th><th>AI cost</th></tr></thead>\n<tbody>")
	now := s.cfg.Now()
	for _, row := range rows {
		s.runsTableRow(&b, row, since(now, row.Run.CreatedAt))
	}
	b.WriteString("\n</tbody></table>")
	return template.HTML(b.String()) //nolint:gosec // every value escaped by esc, see above
}

// runsTableRow writes one run's row; started is how long ago it started.
func (s *Server) runsTableRow(b *strings.Builder, row runRow, started string) {
	r := row.Run
	child := r.ParentRunID != ""
	write(b, "\n<tr id=\"run-", esc(r.ID), `"`)
	if child {
		b.WriteString(` class="child-run"`)
	}
	b.WriteString("><td")
	if row.Depth != 0 {
		write(b, ` style="padding-left: `, strconv.Itoa(row.Depth), `em"`)
	}
	b.WriteString(">")
	if child {
		b.WriteString("↳ ")
	}
	runLink(b, r.ID)
	write(b, "</td><td>", esc(r.Workflow))
	if child {
		b.WriteString(` <span class="muted child-of">child of `)
		runLink(b, r.ParentRunID)
		write(b, ", node <code>", esc(r.ParentNode), "</code></span>")
	}
	write(b, `</td><td><span class="state state-`, esc(row.State), `">`, esc(row.State), "</span></td><td>", esc(started),
		"</td><td>", esc(person(r.UserID, r.UserName)), "</td><td>",
		`<a href="/?conversation=`, esc(url.QueryEscape(r.ParentConversationID)), `">`, esc(r.ParentConversationID), "</a></td>",
		`<td class="cost" title="`, esc(row.Usage), `">`, esc(row.Cost), "</td></tr>")
}

// runLink writes a link to a run's page, its id in code.
func runLink(b *strings.Builder, id string) {
	write(b, `<a href="/runs/`, esc(url.PathEscape(id)), `"><code>`, esc(id), "</code></a>")
}

// write writes each of parts to b: no concatenated copy of them first.
func write(b *strings.Builder, parts ...string) {
	for _, p := range parts {
		b.WriteString(p)
	}
}

// esc escapes s for HTML text and for a double-quoted attribute value.
func esc(s string) string { return template.HTMLEscapeString(s) }
