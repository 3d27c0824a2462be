package web

import (
	"html/template"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator/execution"
)

// person names someone on the dashboard: the name their platform showed (as chat messages do) with
// the id that ALLOWED_USER_IDS and approvers use, or the id alone when the name adds nothing (none
// was recorded, or it is the id's own, as for the web chat's users). A web: id is a name someone
// typed (sign-in acts under Slack or Discord ids), so it says so.
func person(id, name string) string {
	if strings.HasPrefix(id, Platform+":") {
		return id + " (unverified)"
	}
	label := conversation.Person{ID: id, Name: name}.Label()
	if label == (conversation.Person{ID: id}).Label() {
		return id
	}
	return label + " (" + id + ")"
}

// templateFuncs are the helpers the templates use; now is the Server's clock.
func templateFuncs(now func() time.Time) template.FuncMap {
	return template.FuncMap{
		"ago": func(t time.Time) string { return since(now(), t) },
		"in": func(t time.Time) string {
			if d := t.Sub(now()); d > 0 {
				return "in " + db.ShortDuration(d)
			}
			return "due now"
		},
		"dur":         execution.FormatDuration,
		"person":      person,
		"bytes":       func(n int64) string { return humanize.IBytes(uint64(max(n, 0))) },
		"inlineLimit": func() int64 { return execution.InlineLimit },
		"stamp":       func(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") },
		"words":       func(state string) string { return strings.ReplaceAll(state, "_", " ") }, // not_run reads "not run"
		"title": func(s string) string {
			if s == "" {
				return s
			}
			return strings.ToUpper(s[:1]) + s[1:]
		},
	}
}
