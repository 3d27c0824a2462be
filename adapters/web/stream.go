package web

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"
)

// Timing of live views. The heartbeat keeps proxies from closing an idle stream and makes a
// vanished browser show up as a failed write; writeWait bounds each write to a slow client.
const (
	heartbeat = 15 * time.Second
	writeWait = 10 * time.Second
)

// stream serves a server-sent event stream: whenever wait's channel fires it renders the view and
// sends it as an "update" event whose data is the HTML to put in place. It returns when the
// browser goes away, a write fails, or the Server closes. At most Config.Streams streams are open
// at once; beyond that the browser is told to fall back to reloading.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, wait func() <-chan struct{}, render func(ctx context.Context) (string, error)) {
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	default:
		http.Error(w, "Too many live views are open; reload the page to see the latest state.", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no") // nginx would otherwise hold the events back
	rc := http.NewResponseController(w)
	if !s.send(rc, w, ": live\n\n") {
		return
	}
	beat := time.NewTicker(heartbeat)
	defer beat.Stop()
	ctx := r.Context()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.done:
			return
		case <-beat.C:
			if !s.send(rc, w, ": ping\n\n") {
				return
			}
		case <-wait():
			html, err := render(ctx)
			if errors.Is(err, errNothingNew) {
				continue
			}
			if err != nil {
				s.cfg.Log.Warn("web.live_render_failed", zap.Error(err))
				continue // the next change tries again; the page keeps its last state
			}
			if !s.send(rc, w, event("update", html)) {
				return
			}
		}
	}
}

// send writes one chunk under a fresh write deadline (the server's WriteTimeout would otherwise
// cut every stream after 30 seconds) and flushes it.
func (s *Server) send(rc *http.ResponseController, w http.ResponseWriter, chunk string) bool {
	if err := rc.SetWriteDeadline(time.Now().Add(writeWait)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return false
	}
	if _, err := w.Write([]byte(chunk)); err != nil {
		return false
	}
	return rc.Flush() == nil
}

// event formats a server-sent event; each line of data becomes a data: line, which the browser
// joins back with newlines.
func event(name, data string) string {
	var b strings.Builder
	b.WriteString("event: " + name + "\n")
	for _, line := range strings.Split(strings.ReplaceAll(data, "\r", ""), "\n") {
		b.WriteString("data: " + line + "\n")
	}
	b.WriteString("\n")
	return b.String()
}
