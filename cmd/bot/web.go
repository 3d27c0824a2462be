package main

import (
	"context"
	"net"
	"net/http"
	"strings"

	"go.uber.org/zap"

	"threadflow/adapters/web"
	"threadflow/conversation"
	"threadflow/db"
	"threadflow/metrics"
	"threadflow/orchestrator"
)

// webInboxWorkers bounds how many web conversations are handled at once.
const webInboxWorkers = 4

// webParts are the dashboard, its chat page and the metrics, built for serve.
type webParts struct {
	dashboard http.Handler
	metrics   http.Handler
	component component
}

// newMetrics builds the Prometheus measurements on the store.
func newMetrics(log *zap.Logger, st db.Store) *metrics.Metrics {
	return metrics.New(st, log.Named("metrics"), nil)
}

// newWeb builds the web adapter, registers its Outbox so runs started from the chat page report
// there, and returns the HTTP handlers and the component that stops it. Chat messages and dashboard
// buttons reach the bot through their own Inbox, like every other platform's.
func newWeb(cfg Config, log *zap.Logger, st db.Store, keeper conversation.Keeper, eng *orchestrator.Engine, m *metrics.Metrics,
	outboxes map[string]conversation.Outbox) (webParts, error) {
	wlog := log.With(zap.String("platform", web.Platform))
	in := conversation.NewInbox(eng.Dispatcher, keeper, webInboxWorkers, wlog)
	signIn, err := newSignIn(context.Background(), cfg)
	if err != nil {
		return webParts{}, err
	}
	srv, err := web.New(web.Config{Store: st, Handler: inboxHandler{in: in, log: wlog, dups: m}, Forms: eng.Dispatcher, Token: cfg.DashboardToken, Log: wlog,
		Limits: cfg.limits(), Auth: eng.Dispatcher.Auth, SignIn: signIn, Catalogs: eng.Dispatcher.Catalogs, Retention: cfg.Retention})
	if err != nil {
		return webParts{}, err
	}
	outboxes[web.Platform] = srv.Outbox()
	stop := func(ctx context.Context) error {
		<-ctx.Done()
		srv.Close() // ends live views, so the HTTP server's shutdown is not held open by them
		return in.Close(context.WithoutCancel(ctx))
	}
	return webParts{dashboard: srv.Handler(), metrics: web.RequireToken(cfg.DashboardToken, m.Handler()),
		component: component{name: "web", run: stop}}, nil
}

// loopback reports whether HTTP_ADDR listens on the loopback interface only. An empty host
// listens on every interface.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
