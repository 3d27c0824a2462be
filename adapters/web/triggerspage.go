package web

import (
	"net/http"

	"threadflow/orchestrator/maintenance"
)

// pageFires is how many fires of each trigger the triggers page shows.
const pageFires = 10

type triggersPageData struct {
	Triggers []maintenance.TriggerView
}

// triggersPage lists every trigger: what fires it, where its runs talk, its next fire and its
// latest fires with their runs (`bot workflow triggers` prints the same).
func (s *Server) triggersPage(w http.ResponseWriter, r *http.Request) {
	var data triggersPageData
	if s.cfg.Catalogs != nil {
		var err error
		if data.Triggers, err = maintenance.Overview(r.Context(), s.cfg.Store, s.cfg.Catalogs.Catalog(), s.cfg.Now(), pageFires); err != nil {
			s.fail(w, err)
			return
		}
	}
	s.render(w, "triggers.html", data)
}
