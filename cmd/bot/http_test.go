package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
)

// fixedReadiness is a readinessChecker answering err.
type fixedReadiness struct{ err error }

func (r fixedReadiness) Ready(context.Context) error { return r.err }

func TestHealthEndpoints(t *testing.T) {
	down := errors.New("postgres: ping: dial tcp: password hunter2 rejected")
	tests := []struct {
		name       string
		method     string
		path       string
		ready      error
		wantStatus int
		wantBody   string
	}{
		{"healthz", http.MethodGet, "/healthz", nil, 200, "ok\n"},
		{"healthz while the database is down", http.MethodGet, "/healthz", down, 200, "ok\n"},
		{"readyz", http.MethodGet, "/readyz", nil, 200, "ok\n"},
		{"readyz not ready, secret scrubbed", http.MethodGet, "/readyz", down, 503,
			"not ready: postgres: ping: dial tcp: password xxxxx rejected\n"},
		{"readyz is read-only", http.MethodPost, "/readyz", nil, 405, ""},
		{"unknown path", http.MethodGet, "/nope", nil, 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mux := newMux(httpDeps{ready: fixedReadiness{tt.ready}, secrets: []string{"hunter2"}, log: zap.NewNop()})
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)
			req, err := http.NewRequest(tt.method, srv.URL+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status = %d, want %d (body %q)", resp.StatusCode, tt.wantStatus, body)
			}
			if tt.wantBody != "" && string(body) != tt.wantBody {
				t.Errorf("body = %q, want %q", body, tt.wantBody)
			}
		})
	}
}

func TestReadyzBoundsTheProbe(t *testing.T) {
	// A store that never answers must not hang the probe: the handler's deadline reaches it.
	stuck := readinessFunc(func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
	rec := httptest.NewRecorder()
	readyzHandler(httpDeps{ready: stuck, readyTimeout: time.Millisecond, log: zap.NewNop()}).ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	if rec.Code != 503 || !strings.Contains(rec.Body.String(), "deadline exceeded") {
		t.Errorf("stuck store: %d %q, want 503 naming the deadline", rec.Code, rec.Body.String())
	}
}

type readinessFunc func(ctx context.Context) error

func (f readinessFunc) Ready(ctx context.Context) error { return f(ctx) }
