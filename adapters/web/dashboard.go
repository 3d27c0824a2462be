package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"threadflow/commands"
	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator/execution"
	"threadflow/orchestrator/reporting"
)

// pageSize is how many runs one page of the runs list shows; maxPage bounds how far back the
// pages go (narrower filters find older runs).
const (
	pageSize = 50
	maxPage  = 100
)

// countCap bounds each state's count on the runs list: past it the page says "1000+". A count of
// more costs a walk of that many index entries on every load, the one part of the page that would
// grow with history (BENCHMARKS.md, scale).
const countCap = 1000

// runIDPattern accepts run ids (and the prefixes chat accepts) and nothing that could smuggle
// another argument into the command a button sends.
var runIDPattern = regexp.MustCompile(`^[0-9a-z]{6,32}$`)

// buttonCommands maps a dashboard button to the chat command it sends.
var buttonCommands = map[string]string{"approve": "approve", "reject": "reject", "resume": "resume", "abandon": "abandon", "cancel": "cancel",
	actionFresh: "resume"}

// actionFresh is the button of a run whose workspace is lost, or whose WORKSPACE_REMOTE did not
// answer: /workflow resume ID --fresh-workspace.
const actionFresh = "fresh-workspace"

// buttonCommand is the chat command of a button of run id; ok is false for an unknown button.
func buttonCommand(action, id, note string) (string, bool) {
	cmd, ok := buttonCommands[action]
	if !ok {
		return "", false
	}
	return commands.Command{Kind: commands.Kind(cmd), RunID: id, Text: note, FreshWorkspace: action == actionFresh}.String(), true
}

// listFilter is the runs list's query: ?state=&workflow=&conversation=.
type listFilter struct {
	State, Workflow, Conversation string
	Page                          int // from 1
}

func parseFilter(q url.Values) listFilter {
	f := listFilter{Workflow: strings.TrimSpace(q.Get("workflow")), Conversation: strings.TrimSpace(q.Get("conversation")), Page: 1}
	if st := db.Status(q.Get("state")); st.Valid() {
		f.State = string(st)
	}
	if p, err := strconv.Atoi(q.Get("page")); err == nil {
		f.Page = min(max(p, 1), maxPage)
	}
	return f
}

// query is the filter as a URL query, for the live view's address and the poller's key.
func (f listFilter) query() string {
	v := url.Values{}
	for k, s := range map[string]string{"state": f.State, "workflow": f.Workflow, "conversation": f.Conversation} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if f.Page > 1 {
		v.Set("page", strconv.Itoa(f.Page))
	}
	return v.Encode()
}

// with returns the filter's address with one state and page, for the counts and page links.
func (f listFilter) with(state string, page int) string {
	f.State, f.Page = state, page
	return "/?" + f.query()
}

// stateCount is one state's number of runs matching the other filters.
type stateCount struct {
	State string
	N     int
	More  bool // more than countCap
	URL   string
}

// runRow is one line of the runs list.
type runRow struct {
	Run   db.Run
	State string
	Usage string // what its agent turns cost (reporting.UsageText); "" for a run without any
	Cost  string // the short form shown in the table
	// Depth is how deep a child run is nested under its parent's row on the page (nestRows); 0
	// for a run a person or a trigger started, and for a child whose parent is on another page.
	Depth int
}

type runsPageData struct {
	Filter     listFilter
	Statuses   []db.Status
	Table      template.HTML // the runs list (runsTable)
	Counts     []stateCount
	Prev, Next string // page links; empty on the first and the last page
	LiveURL    string
	User       string
	Kept       string   // how long runs are kept (RETENTION, RETENTION_UNFINISHED)
	Forms      []string // workflows the viewer may start with a Run form
}

func (s *Server) runsPage(w http.ResponseWriter, r *http.Request) {
	f := parseFilter(r.URL.Query())
	// The counts do not wait for the list: on PostgreSQL each is a round trip, and the list is two
	// (its runs, then their usage).
	var counts []stateCount
	g, ctx := errgroup.WithContext(r.Context())
	g.Go(func() (err error) { counts, err = s.countStates(ctx, f); return err })
	rows, more, err := s.listPage(ctx, f)
	if werr := g.Wait(); err == nil {
		err = werr
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	data := runsPageData{Filter: f, Statuses: db.AllStatuses, Table: s.runsTable(rows), Counts: counts,
		LiveURL: "/live/runs?" + f.query(), User: s.viewer(r).Label(), Forms: s.formWorkflows(r.Context(), s.viewer(r)), Kept: keptFor(s.cfg.Retention)}
	if f.Page > 1 {
		data.Prev = f.with(f.State, f.Page-1)
	}
	if more && f.Page < maxPage {
		data.Next = f.with(f.State, f.Page+1)
	}
	s.render(w, "runs.html", data)
}

// listPage is the filter's page of runs, and whether an older page follows.
func (s *Server) listPage(ctx context.Context, f listFilter) ([]runRow, bool, error) {
	runs, err := s.collectRuns(ctx, f, f.Page*pageSize+1)
	if err != nil {
		return nil, false, err
	}
	more := len(runs) > f.Page*pageSize
	runs = runs[min(len(runs), (f.Page-1)*pageSize):min(len(runs), f.Page*pageSize)]
	now := s.cfg.Now()
	usage, err := s.runsUsage(ctx, runs)
	if err != nil {
		return nil, false, err
	}
	rows := make([]runRow, 0, len(runs))
	for _, run := range runs {
		row := runRow{Run: run, State: reporting.DisplayState(run, now)}
		if u := db.UsageOf(usage, run.ID); u.Turns > 0 {
			row.Usage, row.Cost = reporting.UsageText(u), shortCost(u)
		}
		rows = append(rows, row)
	}
	return nestRows(rows), more, nil
}

// nestRows moves each child run (issue 32) right under its parent's row when the parent is on the
// same page, its children newest first, each indented one level deeper than its parent; a child
// whose parent is not on the page stays where it is (it names its parent). The page holds the same
// runs: nesting is an order, not a query.
func nestRows(rows []runRow) []runRow {
	on := make(map[string]bool, len(rows))
	for _, r := range rows {
		on[r.Run.ID] = true
	}
	kids := map[string][]runRow{}
	var top []runRow
	for _, r := range rows {
		if p := r.Run.ParentRunID; p != "" && on[p] {
			kids[p] = append(kids[p], r)
			continue
		}
		top = append(top, r)
	}
	out := make([]runRow, 0, len(rows))
	var add func(r runRow, depth int)
	add = func(r runRow, depth int) {
		r.Depth = depth
		out = append(out, r)
		for _, k := range kids[r.Run.ID] {
			add(k, depth+1)
		}
	}
	for _, r := range top {
		add(r, 0)
	}
	return out
}

// listRuns is the filter's page of runs, for the live table.
func (s *Server) listRuns(ctx context.Context, f listFilter) ([]runRow, error) {
	rows, _, err := s.listPage(ctx, f)
	return rows, err
}

// countStates counts the runs of each state that match the filter's workflow and conversation, up
// to countCap each, in one statement.
func (s *Server) countStates(ctx context.Context, f listFilter) ([]stateCount, error) {
	n, err := s.cfg.Store.CountRuns(ctx, f.runFilter(countCap))
	if err != nil {
		return nil, fmt.Errorf("web: count runs: %w", err)
	}
	out := make([]stateCount, 0, len(db.AllStatuses))
	for _, st := range db.AllStatuses {
		out = append(out, stateCount{State: string(st), N: min(n[st], countCap), More: n[st] > countCap, URL: f.with(string(st), 1)})
	}
	return out, nil
}

// runFilter is the store's filter of f's workflow and conversation (not its state), returning at
// most limit runs, without their frozen sources (a list shows runs, it never parses them). A conversation matches runs started in it and runs reporting in
// it (a thread the run opened).
func (f listFilter) runFilter(limit int) db.RunFilter {
	return db.RunFilter{Workflow: f.Workflow, InConversation: f.Conversation, Limit: limit, WithoutSource: true}
}

// collectRuns reads up to limit runs the filter selects, newest first.
func (s *Server) collectRuns(ctx context.Context, f listFilter, limit int) ([]db.Run, error) {
	rf := f.runFilter(limit)
	if f.State != "" {
		rf.Statuses = []db.Status{db.Status(f.State)}
	}
	runs, err := s.cfg.Store.ListRuns(ctx, rf)
	if err != nil {
		return nil, fmt.Errorf("web: list runs: %w", err)
	}
	return runs, nil
}

// keptFor says how long runs are kept, for the runs page.
func keptFor(r db.Retention) string {
	s := reporting.KeptFor(r)
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

type runPageData struct {
	runView
	Notes     map[string]nodeNote  // issue 17: why a node has not run, a running or cancelled node's latest output
	Graph     *graphView           // issue 17: the workflow drawn with each node's state
	Artifacts []execution.Artifact // issue 17: files the run's nodes left in $ARTIFACTS_DIR
	Sent      string               // the command a button just sent, shown once after the redirect
	Thread    string               // the address of the run's thread on the chat page, if it has one
	Offer     *reporting.GateOffer // what the viewer may answer at the gate the run waits at
	Instead   template.HTML        // who may approve, to a viewer who may not
	LiveURL   string
	User      string
	// Undelivered are messages the run owes its thread that failed for good, or are being retried
	// after a platform error (issue 27): what the thread misses, and why.
	Undelivered []db.OutboxEntry
	// Usage is what the run's agent turns used (reporting.UsageText), NodeUsage each node's; empty
	// without agent turns.
	Usage     string
	NodeUsage map[string]string
	// Place is where the run stands in its concurrency group (nil: no group, or it ended).
	Place *db.GroupPlace
	Ahead string // Place's place in line, "2nd"
	// Children are the runs this run's `workflow:` nodes started (issue 32), newest first.
	Children []db.Run
}

// MayApprove reports whether the page offers the viewer Approve; MayReject, Reject. The
// orchestrator decides again when one is pressed: the page only spares people a refusal.
func (d runPageData) MayApprove() bool { return d.Offer == nil || d.Offer.MayApprove() }

// MayReject: see MayApprove.
func (d runPageData) MayReject() bool { return d.Offer == nil || d.Offer.MayReject() }

func (s *Server) runPage(w http.ResponseWriter, r *http.Request) {
	v := s.viewer(r)
	data, err := s.readRun(r.Context(), r.PathValue("id"), v)
	if err != nil {
		s.fail(w, err)
		return
	}
	data.LiveURL, data.Thread = "/live/runs/"+data.Run.ID, webThread(data.Run)
	if a := r.URL.Query().Get("sent"); buttonCommands[a] != "" {
		data.Sent = "/workflow " + a + " " + data.Run.ID
	}
	s.render(w, "run.html", data)
}

// readRun reads what the run page shows the viewer.
func (s *Server) readRun(ctx context.Context, id string, viewer viewer) (runPageData, error) {
	if !runIDPattern.MatchString(id) {
		return runPageData{}, db.ErrNotFound
	}
	run, err := s.cfg.Store.GetRun(ctx, id)
	if err != nil {
		return runPageData{}, fmt.Errorf("web: read run %s: %w", id, err)
	}
	events, err := s.cfg.Store.Events(ctx, id)
	if err != nil {
		return runPageData{}, fmt.Errorf("web: read events of run %s: %w", id, err)
	}
	v := foldRun(run, events, s.cfg.Now())
	notes, graph := planNodes(&v)
	owed, err := s.cfg.Store.Undelivered(ctx, id)
	if err != nil {
		return runPageData{}, fmt.Errorf("web: read undelivered messages of run %s: %w", id, err)
	}
	children, err := s.cfg.Store.ListRuns(ctx, db.RunFilter{ParentRunID: id, WithoutSource: true}) // listed, not run
	if err != nil {
		return runPageData{}, fmt.Errorf("web: read child runs of run %s: %w", id, err)
	}
	data := runPageData{runView: v, Notes: notes, Graph: graph, Artifacts: execution.Artifacts(run), User: viewer.Label(), Children: children}
	if err := s.nodesUsage(ctx, &data); err != nil {
		return runPageData{}, err
	}
	for _, o := range owed {
		if o.State == db.OutboxFailed || o.LastError != "" { // not one on its way for a moment
			data.Undelivered = append(data.Undelivered, o)
		}
	}
	if run.Group != "" && !run.Status.Terminal() {
		p, err := s.cfg.Store.GroupPlace(ctx, id)
		if err != nil && !errors.Is(err, db.ErrNotFound) {
			return runPageData{}, fmt.Errorf("web: read the concurrency group of run %s: %w", id, err)
		}
		if err == nil {
			data.Place, data.Ahead = &p, reporting.Ordinal(p.Place)
		}
	}
	if v.CanAnswer() {
		offer := s.cfg.Auth.GateOffer(run, viewer.ID)
		data.Offer, data.Instead = &offer, Render(offer.Instead(""))
	}
	return data, nil
}

// webThread is the chat page's address of the run's thread, or "" when the run reports elsewhere
// (Slack, Discord, a terminal, or a person's own web conversation before runs had threads there).
func webThread(run db.Run) string {
	platform, channel, thread, ok := db.ParseConversationKey(run.ConversationID)
	if !ok || platform != Platform || channel != threadsChannel || !refPattern.MatchString(thread) {
		return ""
	}
	return threadPath(thread)
}

// nodeOutput serves the output of a node's latest attempt as plain text, streamed from its file:
// all of it, with ranges (a browser or curl can fetch part of a large one), once the attempt ended;
// under a first line saying it is partial, and why, while it runs or after the run stopped it.
func (s *Server) nodeOutput(w http.ResponseWriter, r *http.Request) {
	run, ok := s.pathRun(w, r)
	if !ok {
		return
	}
	id := run.ID
	events, err := s.cfg.Store.Events(r.Context(), id)
	if err != nil {
		s.fail(w, err)
		return
	}
	ref, err := execution.NodeOutputFile(run, events, r.PathValue("node"))
	if err != nil {
		http.Error(w, capitalize(err.Error())+". The run page lists its nodes and their outputs.", http.StatusNotFound)
		return
	}
	f, err := os.Open(ref.File)
	if err != nil {
		s.cfg.Log.Warn("web.output_read_failed", zap.String("run_id", id), zap.Error(err))
		http.Error(w, "The output file of this node is gone from the bot's disk.", http.StatusGone)
		return
	}
	defer f.Close()
	// The output is text a node printed: shown as text, never run as a page.
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if ref.Partial == "" {
		s.serveUntrusted(w, r, f)
		return
	}
	untrustedHeaders(w)
	w.Header().Set("Cache-Control", "no-store") // it grows, or is all there will ever be of it
	fmt.Fprintf(w, "[partial output of attempt %d of %s: %s]\n\n", ref.Attempt, ref.Node, ref.Partial)
	if _, err := io.Copy(w, f); err != nil {
		s.cfg.Log.Debug("web.output_send_failed", zap.String("run_id", id), zap.Error(err))
	}
}

// capitalize starts a sentence an error wrote in lower case.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// runAction sends the chat command a button stands for, as the web user, through the same Handler
// as typed chat: the orchestrator authorizes it and answers in the user's chat conversation.
func (s *Server) runAction(w http.ResponseWriter, r *http.Request) {
	id, action := r.PathValue("id"), r.PathValue("action")
	note := strings.Join(strings.Fields(r.PostFormValue("note")), " ") // on one line
	text, ok := buttonCommand(action, id, note)
	if !ok || !runIDPattern.MatchString(id) {
		http.Error(w, "Unknown action; the run page's buttons are approve, reject, resume, fresh-workspace, abandon and cancel.", http.StatusNotFound)
		return
	}
	if err := s.cfg.Limits.Check(text); err != nil { // the same limits as every chat
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	v := s.viewer(r)
	if !s.mayAct(w, v) {
		return
	}
	s.cfg.Handler.Handle(r.Context(), conversation.Message{Address: v.Chat, UserID: v.ID, UserName: v.Name, Via: v.via(),
		Text: text, Direct: true})
	http.Redirect(w, r, "/runs/"+id+"?sent="+action, http.StatusSeeOther)
}

// fingerprint summarises a live view's key ("run:ID" or "list:QUERY") for the poller.
func (s *Server) fingerprint(ctx context.Context, key string) (string, error) {
	kind, arg, _ := strings.Cut(key, ":")
	if kind == "run" {
		run, err := s.cfg.Store.GetRun(ctx, arg)
		if err != nil {
			return "", fmt.Errorf("web: read run %s: %w", arg, err)
		}
		events, err := s.cfg.Store.Events(ctx, arg)
		if err != nil {
			return "", fmt.Errorf("web: read events of run %s: %w", arg, err)
		}
		// Events are append-only, so their count and the displayed state say whether anything
		// the page shows changed; so does a running node's output growing.
		v := foldRun(run, events, s.cfg.Now())
		notes, _ := planNodes(&v)
		var live int64
		for _, n := range notes {
			live += n.LiveBytes
		}
		return fmt.Sprintf("%s|%d|%d", reporting.DisplayState(run, s.cfg.Now()), len(events), live), nil
	}
	q := (&url.URL{RawQuery: arg}).Query() // read as the list page reads its own query
	rows, err := s.listRuns(ctx, parseFilter(q))
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, row := range rows {
		b.WriteString(row.Run.ID + "=" + row.State + ";")
	}
	return b.String(), nil
}

func (s *Server) liveRuns(w http.ResponseWriter, r *http.Request) {
	f := parseFilter(r.URL.Query())
	sub := s.watch.subscribe("list:" + f.query())
	defer s.watch.unsubscribe(sub)
	s.stream(w, r, func() <-chan struct{} { return sub.changed }, func(ctx context.Context) (string, error) {
		rows, err := s.listRuns(ctx, f)
		if err != nil {
			return "", err
		}
		return string(s.runsTable(rows)), nil
	})
}

func (s *Server) liveRun(w http.ResponseWriter, r *http.Request) {
	id, user := r.PathValue("id"), s.viewer(r)
	if !runIDPattern.MatchString(id) {
		http.NotFound(w, r)
		return
	}
	sub := s.watch.subscribe("run:" + id)
	defer s.watch.unsubscribe(sub)
	s.stream(w, r, func() <-chan struct{} { return sub.changed }, func(ctx context.Context) (string, error) {
		v, err := s.readRun(ctx, id, user)
		if err != nil {
			return "", err
		}
		return s.fragment("run-body", v)
	})
}

// fragment renders a named template block to a string for a live update.
func (s *Server) fragment(name string, data any) (string, error) {
	var b bytes.Buffer
	if err := s.pages.ExecuteTemplate(&b, name, data); err != nil {
		return "", fmt.Errorf("web: render %s: %w", name, err)
	}
	return b.String(), nil
}

// since is how long ago t was, for people.
func since(now, t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return execution.FormatDuration(now.Sub(t)) + " ago"
}
