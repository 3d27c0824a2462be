package web

import (
	"net/http"
	"strings"
	"time"

	"threadflow/audit"
)

// auditLimit bounds the audit page; `bot audit --limit` reads further.
const auditLimit = 500

// auditSpans are the periods the audit page offers, as ?since= takes them.
var auditSpans = []string{"1h", "24h", "168h", "720h"}

type auditPageData struct {
	Since   string
	Spans   []string
	Entries []audit.Entry
	More    bool // the page shows auditLimit entries and there may be older ones
}

// auditPage lists who did what to runs: the dashboard's `bot audit`.
func (s *Server) auditPage(w http.ResponseWriter, r *http.Request) {
	since := strings.TrimSpace(r.URL.Query().Get("since"))
	d, err := time.ParseDuration(since)
	if err != nil || d <= 0 {
		since, d = "24h", 24*time.Hour
	}
	entries, err := audit.Read(r.Context(), s.cfg.Store, s.cfg.Now().Add(-d), auditLimit)
	if err != nil {
		s.fail(w, err)
		return
	}
	s.render(w, "audit.html", auditPageData{Since: since, Spans: auditSpans, Entries: entries, More: len(entries) >= auditLimit})
}
