package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/sync/errgroup"

	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator"
)

// httpShutdownTimeout bounds waiting for in-flight HTTP requests at shutdown; with the store's
// close it keeps the whole shutdown under five seconds.
const httpShutdownTimeout = 3 * time.Second

// component is a long-running part of the bot. It runs until ctx is cancelled, then stops and
// returns nil; an error from one component stops all of them.
type component struct {
	name string
	run  func(ctx context.Context) error
	// connect, on a chat adapter, checks its credentials with the platform and says who the bot is
	// there; wire calls it, so that start-up announces only platforms that answered.
	connect func(ctx context.Context) (string, error)
}

// named is err as the component's failure: prefixed with its name, unless it starts with it already
// (the chat adapters name their platform in every error).
func (c component) named(err error) error {
	if strings.HasPrefix(err.Error(), c.name+": ") {
		return err
	}
	return fmt.Errorf("%s: %w", c.name, err)
}

// app is the wired bot.
type app struct {
	cfg        Config
	log        *zap.Logger
	store      db.Store
	url        string // where the HTTP server actually listens
	components []component
	chatsOn    map[string]string // who the bot is on each chat platform that answered, by component name
	catalogs   *catalogs         // reports broken workflow files once the bot is up
	lock       *serverLock       // held while serving a SQLite database; nil on PostgreSQL
}

// serve runs the bot until ctx is cancelled.
func serve(ctx context.Context, inv invocation, args []string) error {
	cfg, log, err := setup(inv, "serve", args)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }() // stderr cannot always be synced; nothing to do about it
	a, err := wire(ctx, cfg, log, inv.stderr)
	if err != nil {
		return err
	}
	return a.run(ctx, inv.stdout)
}

// setup loads the configuration and builds the logger every command shares.
func setup(inv invocation, cmd string, args []string) (Config, *zap.Logger, error) {
	cfg, err := loadConfig(cmd, args, inv.getenv, inv.host)
	if err != nil {
		return Config{}, nil, err
	}
	hideSecretsFromChildren()
	if quietByDefault(cmd) && strings.TrimSpace(inv.getenv("LOG_LEVEL")) == "" {
		cfg.LogLevel = zapcore.WarnLevel
	}
	return cfg, newLogger(cfg, inv.stderr), nil
}

// quietByDefault reports whether cmd talks to a person in the terminal (chat, workflow), where the
// bot's replies are the output and info log lines would only bury them: those commands log at
// warn unless LOG_LEVEL asks for more. serve and migrate keep LOG_LEVEL's default, info.
func quietByDefault(cmd string) bool { return cmd == "chat" || cmd == "workflow" || cmd == "prune" }

// hideSecretsFromChildren removes the bot's own secrets (chat tokens, the database URL, the
// dashboard token) from the process environment once they are loaded, so the shell nodes and agent
// CLIs it starts cannot read them. Workflows get their values through node variables instead.
func hideSecretsFromChildren() {
	for _, s := range settings {
		if s.isSecret() || s.env == "DATABASE_URL" {
			_ = os.Unsetenv(s.env)
		}
	}
}

// wire builds the bot from cfg: the one place that constructs every part. The orchestrator, the
// rescuer and the chat adapters are constructed here and appended to a.components; the HTTP server
// gets their handlers through httpDeps. Notices for the person who started it go to stderr.
func wire(ctx context.Context, cfg Config, log *zap.Logger, stderr io.Writer) (*app, error) {
	if err := prepareHome(&cfg); err != nil {
		return nil, err
	}
	if err := announceHome(stderr, cfg); err != nil {
		return nil, err
	}
	var lock *serverLock
	if cfg.Engine != EnginePostgres { // issue 17: one server per SQLite file
		l, err := lockServer(cfg.SQLitePath())
		if err != nil {
			return nil, err
		}
		lock = l
	}
	st, err := openStore(ctx, cfg, db.Options{}, log)
	if err != nil {
		return nil, errors.Join(err, lock.release())
	}
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		log.Error("http.listen_failed", zap.String("addr", cfg.HTTPAddr), zap.Error(err))
		return nil, errors.Join(listenError(cfg.HTTPAddr, err), st.Close(), lock.release())
	}
	a := &app{cfg: cfg, log: log, store: st, url: "http://" + ln.Addr().String() + "/", lock: lock}
	outboxes := map[string]conversation.Outbox{}
	m := newMetrics(log, st) // issue 8: /metrics observes the orchestrator
	eng := newEngine(cfg, log, st, outboxes, nil, m)
	if err := checkWorkspaces(ctx, eng, log); err != nil {
		return nil, errors.Join(err, ln.Close(), st.Close(), lock.release())
	}
	a.catalogs, _ = eng.Dispatcher.Catalogs.(*catalogs)
	// One keeper for every platform, so a burst from all of them is recorded in few writes.
	keeper := conversation.NewBatchKeeper(st)
	chats, on, err := chatAdapters(ctx, cfg, log, keeper, eng, outboxes, m, recorder(st, log, m)) // issue 16: transcripts
	if err != nil {
		return nil, errors.Join(err, ln.Close(), st.Close(), lock.release())
	}
	a.chatsOn = on
	webp, err := newWeb(cfg, log, st, keeper, eng, m, outboxes) // issue 8: dashboard and web chat
	if err != nil {
		return nil, errors.Join(err, ln.Close(), st.Close(), lock.release())
	}
	hooksHandler := newHooks(a.catalogs, eng, log, m)
	mux := newMux(httpDeps{ready: readiness{store: st, disk: diskGuard(cfg), replica: cfg.ReplicaID}, secrets: cfg.secrets(), log: log, metrics: webp.metrics, dashboard: webp.dashboard,
		hooks: hooksHandler})
	a.components = append(a.components,
		component{name: "http", run: httpComponent(newHTTPServer(mux, log), ln, log)},
		component{name: "orchestrator", run: func(ctx context.Context) error { eng.Run(ctx); return nil }},
		webp.component,
	)
	a.components = append(a.components, chats...)
	return a, nil
}

// checkWorkspaces makes a server prove at start that it keeps the workspace contract
// (docs/deploy.md, "Workspaces"): WORKSPACE_REMOTE answers, and without one, every live replica
// sees the same THREADFLOW_HOME. A replica that does not still runs (its own runs are safe, and it
// leaves the others' alone), but says so clearly in its log.
func checkWorkspaces(ctx context.Context, eng *orchestrator.Engine, log *zap.Logger) error {
	if err := eng.Executor.Dirs.CheckRemote(ctx); err != nil {
		return err
	}
	problem, err := eng.Presence.CheckHome(ctx)
	if err != nil {
		return fmt.Errorf("announce THREADFLOW_HOME to the database: %w", err)
	}
	if problem != "" {
		log.Warn("serve.home_not_shared", zap.String("problem", problem))
	}
	return nil
}

// run starts every component, announces the bot, and on cancellation (or a component's failure)
// waits for all of them to stop before closing the store they share.
func (a *app) run(ctx context.Context, stdout io.Writer) error {
	g, gctx := errgroup.WithContext(ctx)
	for _, c := range a.components {
		g.Go(func() error {
			if err := c.run(gctx); err != nil {
				return c.named(err)
			}
			return nil
		})
	}
	a.log.Info("bot.start_completed", zap.String("engine", string(a.cfg.Engine)),
		zap.String("home", a.cfg.Home), zap.String("http_addr", a.url))
	fmt.Fprintf(stdout, "Threadflow is up: %s\n", a.url)
	adapterStatus(stdout, a.cfg, a.url, a.chatsOn) // issue 8: names the web chat page
	if a.catalogs != nil {                         // issue 17: broken workflow files are named at start-up and when saved
		a.catalogs.announce(stdout, nil)
		g.Go(func() error { a.catalogs.watch(gctx); return nil })
	}

	<-gctx.Done()
	a.log.Info("bot.shutdown_started")
	err := errors.Join(g.Wait(), a.store.Close(), a.lock.release())
	if err != nil {
		a.log.Error("bot.shutdown_failed", zap.Error(err))
		return err
	}
	a.log.Info("bot.shutdown_completed")
	return nil
}

// httpComponent serves on ln until ctx is cancelled, then lets in-flight requests finish.
func httpComponent(srv *http.Server, ln net.Listener, log *zap.Logger) func(context.Context) error {
	return func(ctx context.Context) error {
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ln) }()
		select {
		case err := <-served: // Serve only returns on failure before Shutdown
			log.Error("http.serve_failed", zap.Error(err))
			return err
		case <-ctx.Done():
		}
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), httpShutdownTimeout)
		defer cancel()
		err := srv.Shutdown(sctx)
		if err != nil {
			err = errors.Join(err, srv.Close()) // stragglers past the timeout are cut off
		}
		<-served // http.ErrServerClosed
		return err
	}
}

// listenError names HTTP_ADDR and, when the port is taken, what to do about it.
func listenError(addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("listen on HTTP_ADDR %s: the port is already in use by another program (perhaps another Threadflow); "+
			"stop it, or set HTTP_ADDR (or -http-addr) to a free port, such as 127.0.0.1:0 to pick one", addr)
	}
	return fmt.Errorf("listen on HTTP_ADDR %s: %w; set HTTP_ADDR (or -http-addr) to a host:port this machine can listen on", addr, err)
}
