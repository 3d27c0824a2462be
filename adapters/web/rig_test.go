package web_test

import (
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"threadflow/adapters/web"
	"threadflow/adapters/web/signin"
	"threadflow/conversation"
	"threadflow/db"
	"threadflow/db/dbtest"
	"threadflow/orchestrator"
	"threadflow/orchestrator/dispatch"
	"threadflow/orchestrator/execution"
	"threadflow/orchestratortest"
	"threadflow/testkit"
)

const gatedWorkflow = "name: gated\nnodes:\n  - id: build\n    bash: echo built \"$ARGUMENTS\"\n  - id: ship\n    depends_on: [build]\n    approval: {message: \"Ship it?\"}\n  - id: deploy\n    depends_on: [ship]\n    bash: echo deployed\n"

// guardedWorkflow's gate needs two approvals from web:alice, web:bob or an admin, and times out.
const guardedWorkflow = `name: guarded
nodes:
  - id: ship
    approval:
      message: Ship it?
      capture_response: true
      approvers: ["web:alice", "web:bob", "@admins"]
      required_approvals: 2
      timeout: 24h
      remind_after: 4h
  - id: deploy
    depends_on: [ship]
    bash: |
      printf 'deployed with notes: %s' "$ship.output"
`

// loudWorkflow prints more than the inline limit, then markup that must stay text.
const loudWorkflow = `name: loud
nodes:
  - id: print
    bash: |
      head -c 40000 /dev/zero | tr '\0' 'y'
      echo '<script>alert(1)</script>'
`

// rig is the dashboard on the real orchestrator wiring and a real SQLite store, served by httptest.
type rig struct {
	t     *testing.T
	store db.Store
	web   *web.Server
	srv   *httptest.Server
	inbox *conversation.Inbox
}

// idle waits until every message sent so far was handled.
func (r *rig) idle() {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Deadline)
	defer cancel()
	if err := r.inbox.Idle(ctx); err != nil {
		r.t.Fatal(err)
	}
}

type rigOptions struct {
	allowed, admins []string
	token           string
	open            func(t testing.TB, opts db.Options) db.Store    // nil: SQLite
	workflows       map[string]string                               // more workflow files, by file name
	home            string                                          // THREADFLOW_HOME; empty: a new one
	signIn          func(t *testing.T, base string) *signin.Service // sign-in for a dashboard at base; nil: none
	retention       db.Retention                                    // what the runs page says of RETENTION
	now             func() time.Time                                // the dashboard's clock; nil: time.Now
}

func newRig(t *testing.T, o rigOptions) *rig {
	t.Helper()
	home := o.home
	if home == "" {
		home = t.TempDir()
	}
	dir := filepath.Join(home, "wf")
	files := map[string]string{"gated.yaml": gatedWorkflow, "guarded.yaml": guardedWorkflow, "loud.yaml": loudWorkflow}
	maps.Copy(files, o.workflows)
	orchestratortest.WriteWorkflows(t, dir, files)
	log := zaptest.NewLogger(t)
	open := o.open
	if open == nil {
		open = dbtest.SQLite
	}
	st := open(t, db.Options{})
	outboxes := map[string]conversation.Outbox{}
	eng := orchestrator.New(orchestrator.Config{
		Store: st, Catalogs: orchestratortest.Catalog{Home: home, Dir: dir}, Providers: orchestratortest.NoProviders{}, Outboxes: outboxes,
		Auth: dispatch.NewAuth(o.allowed, o.admins), Dirs: execution.Dirs{Home: home}, Log: log,
		Owner: "web-test", LeaseTTL: 10 * time.Second, Poll: 20 * time.Millisecond, Debounce: time.Millisecond,
	})
	in := conversation.NewInbox(eng.Dispatcher, st, 2, log)
	srv := httptest.NewUnstartedServer(nil) // its address is known now; sign-in needs it
	var signIn *signin.Service
	if o.signIn != nil {
		signIn = o.signIn(t, "http://"+srv.Listener.Addr().String())
	}
	w, err := web.New(web.Config{Store: st, Handler: submitter{in}, Token: o.token, Log: log, Poll: 20 * time.Millisecond, Auth: eng.Dispatcher.Auth,
		SignIn: signIn, Retention: o.retention, Now: o.now})
	if err != nil {
		t.Fatal(err)
	}
	outboxes[web.Platform] = w.Outbox()
	orchestratortest.Run(t, eng) // stops after the cleanup below
	srv.Config.Handler = w.Handler()
	srv.Start()
	t.Cleanup(func() {
		w.Close()
		srv.Close()
		_ = in.Close(context.Background())
	})
	return &rig{t: t, store: st, web: w, srv: srv, inbox: in}
}

// browser is a client with its own cookies (its own web user).
type browser struct {
	r *rig
	c *http.Client
}

func (r *rig) browser(name string) *browser {
	r.t.Helper()
	jar, _ := cookiejar.New(nil)
	b := &browser{r: r, c: &http.Client{Jar: jar, Timeout: testkit.Deadline}}
	if name != "" {
		b.post("/chat/name", url.Values{"name": {name}})
	}
	return b
}

// get returns the status and body of a page.
func (b *browser) get(path string) (int, string) {
	b.r.t.Helper()
	resp, err := b.c.Get(b.r.srv.URL + path)
	if err != nil {
		b.r.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// post submits a form as the page would (same origin) and returns the final status and body.
func (b *browser) post(path string, form url.Values) (int, string) {
	b.r.t.Helper()
	req, _ := http.NewRequest("POST", b.r.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := b.c.Do(req)
	if err != nil {
		b.r.t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// say types text on the chat page.
func (b *browser) say(text string) {
	b.r.t.Helper()
	if code, body := b.post("/chat", url.Values{"text": {text}}); code != 200 {
		b.r.t.Fatalf("chat send %q = %d: %s", text, code, body)
	}
}

// waitRun waits until the store has a run of workflow in one of the statuses.
func (r *rig) waitRun(workflow string, want ...db.Status) db.Run {
	r.t.Helper()
	var found db.Run
	testkit.Eventually(r.t, workflow+" run in "+strings.Join(statusNames(want), "/"), func() bool {
		runs, err := r.store.ListRuns(context.Background(), db.RunFilter{Workflow: workflow, Statuses: want})
		if err != nil {
			r.t.Fatal(err)
		}
		if len(runs) > 0 {
			found = runs[0]
			return true
		}
		return false
	})
	return found
}

func statusNames(ss []db.Status) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}

// submitter hands messages to the Inbox, as the bot's inboxHandler does.
type submitter struct{ in *conversation.Inbox }

func (s submitter) Handle(ctx context.Context, m conversation.Message) { _, _ = s.in.Submit(ctx, m) }
