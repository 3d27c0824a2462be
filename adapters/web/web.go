// Package web is the browser adapter: a run dashboard (the runs list, one run's timeline, live
// updates over server-sent events, and approve/reject/resume/abandon buttons) and a chat page that
// talks to the bot. Each person has a conversation of their own there; a run started from it
// reports in a thread of a channel every web user shares, where anyone answers its gate in plain
// words, as in a Slack or Discord thread. Its platform name is "web".
//
// Everything is server-rendered from html/template files embedded in the binary, with a little
// plain JavaScript and no build step. The dashboard reads runs and their events from the store and
// never changes them itself: every button becomes the chat command it stands for
// ("/workflow approve ID"), sent as the web user through the same Handler as typed chat, so the
// orchestrator's authorization and state machine apply exactly as on Slack or Discord.
//
// Who the web user is: with sign-in configured (package signin), the person signed in, by their
// platform id ("slack:U123"), so every gate and access rule naming them holds on the dashboard too.
// Without it, a name the person types on the chat page (a cookie, "local" by default, giving the id
// "web:local"), self-declared and shown as unverified. DASHBOARD_TOKEN (RequireToken) protects the
// pages for machines, and is required whenever the dashboard listens beyond loopback.
package web

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"time"

	"go.uber.org/zap"

	"threadflow/adapters/web/signin"
	"threadflow/audit"
	"threadflow/commands"
	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator/dispatch"
	"threadflow/orchestrator/maintenance"
	"threadflow/platform"
)

// Platform is the platform name of web addresses and user ids ("web:alice").
const Platform = platform.Web

// Defaults of Config.
const (
	defaultPoll       = time.Second
	defaultMaxStreams = 64
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Store is what the dashboard reads and where the chat page's conversations live; db.Store
// satisfies it.
type Store interface {
	GetRun(ctx context.Context, runID string) (db.Run, error)
	ListRuns(ctx context.Context, f db.RunFilter) ([]db.Run, error)
	CountRuns(ctx context.Context, f db.RunFilter) (map[db.Status]int, error)
	Events(ctx context.Context, runID string) ([]db.Event, error)
	audit.Source // the audit page
	Undelivered(ctx context.Context, runID string) ([]db.OutboxEntry, error)
	maintenance.FireLister // the triggers page
	AgentUsage(ctx context.Context, q db.UsageQuery) ([]db.UsageSum, error)
	GroupPlace(ctx context.Context, runID string) (db.GroupPlace, error) // where a run waits for its concurrency group
	Transcripts
}

// Config configures a Server.
type Config struct {
	Store   Store
	Handler conversation.Handler // receives chat messages and button commands; an Inbox in the bot
	Forms   conversation.Forms   // the Run forms (/run/{workflow}); nil: none
	Token   string               // DASHBOARD_TOKEN; empty leaves the pages open (loopback only)
	Limits  commands.Limits      // MAX_ARGS_BYTES: a refused message is not shown nor handed on
	SignIn  *signin.Service      // sign-in (DASHBOARD_URL, SESSION_SECRET, a provider); nil: self-declared web names
	Auth    dispatch.Auth        // who is an admin, so a run page offers a person only the gate answers they may give
	// Catalogs gives the workflows whose triggers the triggers page lists; nil lists none.
	Catalogs maintenance.Catalogs
	Log      *zap.Logger
	Poll     time.Duration    // how often live views look for changes; 0 means one second
	Streams  int              // live views open at once; 0 means 64
	Now      func() time.Time // nil means time.Now
	// Retention is how long runs are kept (RETENTION, RETENTION_UNFINISHED): the runs page says it.
	Retention db.Retention
}

// Server serves the dashboard and the chat page.
type Server struct {
	cfg    Config
	outbox *Outbox
	watch  *watcher
	pages  *template.Template
	slots  chan struct{} // one token per open live view
	done   chan struct{} // closed by Close: live views end
}

// New builds a Server. It fails only when the embedded templates do not parse, which a test
// catches before release.
func New(c Config) (*Server, error) {
	if c.Poll <= 0 {
		c.Poll = defaultPoll
	}
	if c.Streams <= 0 {
		c.Streams = defaultMaxStreams
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	pages, err := template.New("").Funcs(templateFuncs(c.Now)).ParseFS(templateFS, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("web: parse templates: %w", err)
	}
	s := &Server{cfg: c, outbox: NewOutbox(c.Store), pages: pages, slots: make(chan struct{}, c.Streams), done: make(chan struct{})}
	s.watch = newWatcher(c.Poll, s.fingerprint, c.Log)
	s.outbox.onPost = s.watch.kick
	return s, nil
}

// Outbox is the chat page's conversation.Outbox, to register with the orchestrator.
func (s *Server) Outbox() *Outbox { return s.outbox }

// Close ends every live view, so an HTTP server shutting down is not held open by them.
func (s *Server) Close() {
	select {
	case <-s.done:
	default:
		close(s.done)
	}
}

// Handler routes the dashboard and chat pages behind RequireToken and cross-origin protection
// (a page on another site cannot make a browser press the dashboard's buttons).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.runsPage)
	mux.HandleFunc("GET /runs/{id}", s.runPage)
	mux.HandleFunc("POST /runs/{id}/{action}", s.runAction)
	mux.HandleFunc("GET /runs/{id}/output/{node}", s.nodeOutput)
	mux.HandleFunc("GET /runs/{id}/artifacts/{path...}", s.artifact) // issue 17
	mux.HandleFunc("GET /live/runs", s.liveRuns)
	mux.HandleFunc("GET /live/runs/{id}", s.liveRun)
	mux.HandleFunc("GET /audit", s.auditPage)
	mux.HandleFunc("GET /triggers", s.triggersPage)
	mux.HandleFunc("GET /usage", s.usagePage)
	mux.HandleFunc("GET /run/{workflow}", s.runForm)
	mux.HandleFunc("POST /run/{workflow}", s.runFormSubmit)
	mux.HandleFunc("GET /chat", s.chatPage)
	mux.HandleFunc("POST /chat", s.chatSend)
	mux.HandleFunc("POST /chat/name", s.chatName)
	mux.HandleFunc("GET /live/chat", s.liveChat)
	mux.HandleFunc("GET /chat/threads/{thread}", s.threadPage)
	mux.HandleFunc("POST /chat/threads/{thread}", s.threadSend)
	mux.HandleFunc("GET /live/chat/threads", s.liveThreads)
	mux.HandleFunc("GET /live/chat/threads/{thread}", s.liveThread)
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic("web: the embedded static directory is missing: " + err.Error()) // a build fault, never input
	}
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	if s.cfg.SignIn != nil {
		s.cfg.SignIn.Register(mux)
	}
	return s.guard(http.NewCrossOriginProtection().Handler(mux))
}

// render executes a page template; a failure after the header went out can only be logged.
func (s *Server) render(w http.ResponseWriter, name string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'")
	if err := s.pages.ExecuteTemplate(w, name, data); err != nil {
		s.cfg.Log.Warn("web.render_failed", zap.String("template", name), zap.Error(err))
	}
}

// pathRun reads the run the request's path names ({id}). When it cannot, it answers the request
// itself (404 for an id that is no run's, as fail says for a failed read) and returns false.
func (s *Server) pathRun(w http.ResponseWriter, r *http.Request) (db.Run, bool) {
	id := r.PathValue("id")
	if !runIDPattern.MatchString(id) {
		http.NotFound(w, r)
		return db.Run{}, false
	}
	run, err := s.cfg.Store.GetRun(r.Context(), id)
	if err != nil {
		s.fail(w, err)
		return db.Run{}, false
	}
	return run, true
}

// fail answers an error as a short page; store details go to the log only.
func (s *Server) fail(w http.ResponseWriter, err error) {
	if errors.Is(err, db.ErrNotFound) {
		http.Error(w, "No such run. The runs list at / shows every run.", http.StatusNotFound)
		return
	}
	s.cfg.Log.Warn("web.request_failed", zap.Error(err))
	http.Error(w, "The dashboard could not read the database; try again in a moment.", http.StatusServiceUnavailable)
}
