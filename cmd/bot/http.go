package main

import (
	"context"
	"errors"
	stdlog "log"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"

	"threadflow/adapters/hooks"
	"threadflow/orchestrator/execution"
)

// defaultReadyTimeout bounds one readiness probe: a database that takes longer is not ready.
const defaultReadyTimeout = 2 * time.Second

// readinessChecker is what /readyz asks; db.Store satisfies it.
type readinessChecker interface {
	Ready(ctx context.Context) error
}

// readiness is what /readyz checks: the disk holding THREADFLOW_HOME has MIN_FREE_DISK free, the
// database answers with its schema current, and it accepts a write. Every failing check is named,
// so the reason says what to fix.
type readiness struct {
	store interface {
		readinessChecker
		ProbeWrite(ctx context.Context, replica string) error
	}
	disk    execution.DiskGuard
	replica string
}

func (r readiness) Ready(ctx context.Context) error {
	var errs []string
	if err := r.disk.Check(); err != nil {
		errs = append(errs, err.Error())
	}
	if err := r.store.Ready(ctx); err != nil {
		errs = append(errs, err.Error())
	} else if err := r.store.ProbeWrite(ctx, r.replica); err != nil {
		errs = append(errs, "the database does not accept writes: "+err.Error())
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// httpDeps are the pieces the HTTP server exposes, routed in newMux. /healthz and /readyz stay
// open for load balancers; /metrics and the dashboard check DASHBOARD_TOKEN themselves.
type httpDeps struct {
	ready        readinessChecker
	readyTimeout time.Duration // zero means defaultReadyTimeout
	secrets      []string      // scrubbed from readiness reasons
	log          *zap.Logger
	metrics      http.Handler // /metrics, behind DASHBOARD_TOKEN when one is set; optional
	dashboard    http.Handler // the dashboard and chat page (adapters/web); optional
	hooks        http.Handler // POST /hooks/<workflow>/<name>: signed trigger deliveries (adapters/hooks); optional
}

// newMux routes the bot's HTTP endpoints.
func newMux(d httpDeps) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", handleHealthz)
	mux.Handle("GET /readyz", readyzHandler(d))
	if d.metrics != nil {
		mux.Handle("GET /metrics", d.metrics)
	}
	if d.hooks != nil { // signed, so outside DASHBOARD_TOKEN
		mux.Handle(hooks.Pattern, d.hooks)
	}
	if d.dashboard != nil {
		mux.Handle("/", d.dashboard) // everything else: the dashboard answers 404 for what it lacks
	}
	return mux
}

// handleHealthz answers while the process serves at all: a liveness probe.
func handleHealthz(w http.ResponseWriter, _ *http.Request) {
	writeText(w, http.StatusOK, "ok")
}

// readyzHandler answers 200 when the store is usable (reachable, schema current) and 503 with the
// reason otherwise, so a load balancer sends no work to a replica that cannot record it.
func readyzHandler(d httpDeps) http.Handler {
	timeout := d.readyTimeout
	if timeout == 0 {
		timeout = defaultReadyTimeout
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()
		if err := d.ready.Ready(ctx); err != nil {
			reason := scrub(err.Error(), d.secrets)
			d.log.Warn("http.ready_failed", zap.String("reason", reason))
			writeText(w, http.StatusServiceUnavailable, "not ready: "+reason)
			return
		}
		writeText(w, http.StatusOK, "ok")
	})
}

func writeText(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body + "\n")) // the client went away; nothing to do
}

// newHTTPServer wraps h with timeouts, so slow or idle clients cannot hold connections forever.
// A handler that streams for longer than WriteTimeout (the dashboard's live updates) extends its
// own deadline with http.ResponseController.SetWriteDeadline.
func newHTTPServer(h http.Handler, log *zap.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          stdlog.New(serverErrorLog{log}, "", 0),
	}
}

// serverErrorLog turns net/http's own error lines (failed TLS handshakes, handler panics) into an
// event, so they read like every other log line.
type serverErrorLog struct{ log *zap.Logger }

func (w serverErrorLog) Write(p []byte) (int, error) {
	w.log.Warn("http.request_failed", zap.String("error", strings.TrimSpace(string(p))))
	return len(p), nil
}
