package web

import (
	"html/template"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"threadflow/db"
	"threadflow/orchestrator"
)

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
		"dur":         orchestrator.FormatDuration,
		"bytes":       func(n int64) string { return humanize.IBytes(uint64(max(n, 0))) },
		"inlineLimit": func() int64 { return orchestrator.InlineLimit },
		"stamp":       func(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") },
		"title": func(s string) string {
			if s == "" {
				return s
			}
			return strings.ToUpper(s[:1]) + s[1:]
		},
	}
}
