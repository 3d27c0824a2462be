package web

import (
	"html/template"
	"strings"
	"time"
)

// templateFuncs are the helpers the templates use; now is the Server's clock.
func templateFuncs(now func() time.Time) template.FuncMap {
	return template.FuncMap{
		"ago":   func(t time.Time) string { return since(now(), t) },
		"dur":   roundDuration,
		"stamp": func(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") },
		"title": func(s string) string {
			if s == "" {
				return s
			}
			return strings.ToUpper(s[:1]) + s[1:]
		},
	}
}
