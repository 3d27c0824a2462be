package web

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path"
	"strings"
	"threadflow/orchestrator/execution"
	"time"

	"go.uber.org/zap"
)

// artifact serves one file of a run's $ARTIFACTS_DIR as a download. The file is opened through an
// os.Root on that directory, so neither "..", an absolute name nor a symbolic link a node left
// there can reach anything outside it.
func (s *Server) artifact(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("path")
	if name == "" || !fs.ValidPath(name) || strings.Contains(name, "\\") {
		http.NotFound(w, r)
		return
	}
	run, ok := s.pathRun(w, r)
	if !ok {
		return
	}
	root, err := os.OpenRoot(execution.ArtifactsDir(run))
	if err != nil {
		http.Error(w, "This run has no artifacts on the bot's disk.", http.StatusNotFound)
		return
	}
	defer root.Close()
	if st, err := root.Lstat(name); err != nil || !st.Mode().IsRegular() {
		http.Error(w, "No such artifact. The run page lists the run's artifacts.", http.StatusNotFound)
		return
	}
	f, err := root.Open(name)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.cfg.Log.Warn("web.artifact_read_failed", zap.String("run_id", run.ID), zap.Error(err))
		}
		http.Error(w, "No such artifact. The run page lists the run's artifacts.", http.StatusNotFound)
		return
	}
	defer f.Close()
	// A workflow wrote it: always a download, never a page the browser renders or runs.
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="`+safeFileName(path.Base(name))+`"`)
	s.serveUntrusted(w, r, f)
}

// serveUntrusted streams a file a workflow wrote, with ranges (a browser or curl may fetch part of
// a large one), under headers that keep a browser from running it as a page, and without the
// server's WriteTimeout, which a large file outlasts. The caller sets Content-Type.
func (s *Server) serveUntrusted(w http.ResponseWriter, r *http.Request, f *os.File) {
	st, err := f.Stat()
	if err != nil {
		s.fail(w, err)
		return
	}
	untrustedHeaders(w)
	http.ServeContent(w, r, "", st.ModTime(), f)
}

// untrustedHeaders keeps a browser from running what a workflow wrote as a page, and lifts the
// server's WriteTimeout, which a large file outlasts.
func untrustedHeaders(w http.ResponseWriter) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; sandbox")
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
}

// safeFileName keeps a download's suggested name to characters that need no quoting.
func safeFileName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '"' || r == '\\' || r < 0x20 || r == 0x7f {
			return '_'
		}
		return r
	}, s)
}
