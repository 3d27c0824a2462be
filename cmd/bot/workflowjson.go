package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator/execution"
	"threadflow/orchestrator/reporting"
)

// The --json shapes of `bot workflow list|runs|status` are an interface scripts depend on; they
// are documented in README.md ("Output for scripts") and only ever gain fields.

// workflowJSON is one workflow of `bot workflow list --json`.
type workflowJSON struct {
	Name        string `json:"name"`
	Origin      string `json:"origin"` // bundled, or the directory it was loaded from
	Description string `json:"description"`
}

// runJSON is one run of `bot workflow runs --json`, and the head of `status --json`.
type runJSON struct {
	ID         string     `json:"id"`
	Workflow   string     `json:"workflow"`
	State      string     `json:"state"` // queued, running, paused, completed, failed, cancelled or interrupted
	User       string     `json:"user"`
	Args       string     `json:"args"`
	CreatedAt  time.Time  `json:"created_at"`
	FinishedAt *time.Time `json:"finished_at"` // null while the run has not stopped
	Usage      usageJSON  `json:"usage"`       // what the run's agent turns used
	// Inputs are the run's typed inputs by name ({} when its workflow has none).
	Inputs map[string]string `json:"inputs"`
	// ConcurrencyGroup is the group the run joined ("" for none).
	ConcurrencyGroup string `json:"concurrency_group"`
}

// usageJSON is what agent turns used (db.UsageSum).
type usageJSON struct {
	// CostUSD is null when the cost of a turn is unknown: its CLI reported no usage, or tokens of a
	// model the price table does not list.
	CostUSD          *float64 `json:"cost_usd"`
	Estimated        bool     `json:"estimated"` // some of the cost comes from the price table
	Turns            int64    `json:"turns"`
	UnknownTurns     int64    `json:"unknown_turns"`  // turns whose CLI reported no usage
	UnpricedTurns    int64    `json:"unpriced_turns"` // turns of unknown cost (unknown_turns included)
	InputTokens      int64    `json:"input_tokens"`
	OutputTokens     int64    `json:"output_tokens"`
	CacheReadTokens  int64    `json:"cache_read_tokens"`
	CacheWriteTokens int64    `json:"cache_write_tokens"`
}

func toUsageJSON(u db.UsageSum) usageJSON {
	j := usageJSON{Estimated: u.Estimated, Turns: u.Turns, UnknownTurns: u.UnknownTurns, UnpricedTurns: u.UnpricedTurns,
		InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens}
	if u.CostKnown() {
		usd := db.USD(u.CostNanos)
		j.CostUSD = &usd
	}
	return j
}

// groupJSON is where a queued run waits in its concurrency group.
type groupJSON struct {
	Group  string `json:"group"`
	Holder string `json:"holder"` // the run holding the group
	Place  int    `json:"place"`  // 1 for the next in line
}

// statusJSON is `bot workflow status RUN_ID --json`.
type statusJSON struct {
	runJSON
	Resumes   int        `json:"resumes"`
	Nodes     []nodeJSON `json:"nodes"`
	WaitingAt *placeJSON `json:"waiting_at"` // the gate or pause the run waits at, else null
	// WaitingForGroup is the concurrency group a queued run waits in line for, else null.
	WaitingForGroup *groupJSON `json:"waiting_for_group"`
	LastError       *placeJSON `json:"last_error"` // null unless the run failed or paused on an error
	// Undelivered are the messages the run owes its conversation that are not posted yet: still
	// being tried (owed), or given up on (failed, with the platform's words).
	Undelivered []undeliveredJSON `json:"undelivered"`
}

type undeliveredJSON struct {
	Kind      string    `json:"kind"`  // announce, status, gate, completed, failed, paused, cancelled, note, resolved
	State     string    `json:"state"` // owed or failed
	Attempts  int       `json:"attempts"`
	LastError string    `json:"last_error"`
	Since     time.Time `json:"since"`
}

type nodeJSON struct {
	ID          string     `json:"id"`
	State       string     `json:"state"` // pending, running, waiting, completed, failed, skipped, rejected, cancelled or not_run
	DependsOn   []string   `json:"depends_on"`
	Attempts    int        `json:"attempts"`
	DurationMS  int64      `json:"duration_ms"`
	Reason      string     `json:"reason,omitempty"` // why it was skipped, rejected, cancelled or not run, or its error
	By          string     `json:"by,omitempty"`     // who rejected or cancelled it
	OutputBytes int64      `json:"output_bytes"`     // for a cancelled node, what its stopped attempt printed
	Usage       *usageJSON `json:"usage,omitempty"`  // what the node's agent turns used; omitted for a node without any
}

type placeJSON struct {
	Node    string `json:"node"`
	Message string `json:"message"`
}

// outputFlags parses the flags of the commands that print: --json for list, runs and status, and
// for runs the filters --limit, --state and --workflow; logs has none, so a flag there is refused
// rather than taken for a run id.
type outputFlags struct {
	json     bool
	limit    int
	state    string
	workflow string
}

func parseOutputFlags(sub string, args []string) (outputFlags, []string, error) {
	var o outputFlags
	fs := flag.NewFlagSet("workflow "+sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if sub != "logs" {
		fs.BoolVar(&o.json, "json", false, "")
	}
	if sub == "runs" {
		fs.IntVar(&o.limit, "limit", 20, "")
		fs.StringVar(&o.state, "state", "", "")
		fs.StringVar(&o.workflow, "workflow", "", "")
	}
	// Flags may follow the run id too (status RUN_ID --json): parse what remains after each argument.
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			return o, nil, &usageError{fmt.Sprintf("bot workflow %s: %s; %s", sub, flagProblem(fs, err, "--"), usageOf(sub))}
		}
		if fs.NArg() == 0 {
			break
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if sub == "runs" && (o.limit < 1 || o.limit > 1000) {
		return o, nil, &usageError{fmt.Sprintf("bot workflow runs --limit %d: give a number from 1 to 1000", o.limit)}
	}
	if o.state != "" && !knownStatus(o.state) {
		return o, nil, &usageError{fmt.Sprintf("bot workflow runs --state %q: use one of %s%s", o.state, strings.Join(statusNames(), ", "), didYouMean(o.state, statusNames()))}
	}
	return o, rest, nil
}

func statusNames() []string {
	return []string{string(db.StatusQueued), string(db.StatusRunning), string(db.StatusPaused),
		string(db.StatusCompleted), string(db.StatusFailed), string(db.StatusCancelled)}
}

func knownStatus(s string) bool {
	for _, n := range statusNames() {
		if n == s {
			return true
		}
	}
	return false
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func toRunJSON(r db.Run, now time.Time) runJSON {
	j := runJSON{ID: r.ID, Workflow: r.Workflow, State: reporting.DisplayState(r, now), User: r.UserID,
		Args: r.UserMessage, CreatedAt: r.CreatedAt.UTC(), Inputs: r.Inputs, ConcurrencyGroup: r.Group}
	if j.Inputs == nil {
		j.Inputs = map[string]string{}
	}
	if !r.FinishedAt.IsZero() && !reporting.Active(r) {
		t := r.FinishedAt.UTC()
		j.FinishedAt = &t
	}
	return j
}

func (c *cliSession) listJSON(ctx context.Context, w io.Writer) error {
	cat := c.engine.Dispatcher.Catalogs.Catalog()
	out := []workflowJSON{}
	for _, wf := range c.runnable(ctx, cat) {
		out = append(out, workflowJSON{Name: wf.Name, Origin: string(cat.Origin(wf.Name)), Description: strings.TrimSpace(wf.Description)})
	}
	return writeJSON(w, out)
}

// runs lists the newest runs on the bot's database, from every conversation and adapter.
func (c *cliSession) runs(ctx context.Context, w io.Writer, o outputFlags) error {
	f := db.RunFilter{Workflow: o.workflow, Limit: o.limit, WithoutSource: true}
	if o.state != "" {
		f.Statuses = []db.Status{db.Status(o.state)}
	}
	runs, err := c.store.ListRuns(ctx, f)
	if err != nil {
		return err
	}
	now := time.Now()
	if o.json {
		ids := make([]string, len(runs))
		for i, r := range runs {
			ids[i] = r.ID
		}
		var usage []db.UsageSum
		if len(ids) > 0 {
			if usage, err = c.store.AgentUsage(ctx, db.UsageQuery{By: db.UsageByRun, RunIDs: ids}); err != nil {
				return err
			}
		}
		out := make([]runJSON, 0, len(runs))
		for _, r := range runs {
			j := toRunJSON(r, now)
			j.Usage = toUsageJSON(db.UsageOf(usage, r.ID))
			out = append(out, j)
		}
		return writeJSON(w, out)
	}
	if len(runs) == 0 {
		fmt.Fprintln(w, "No runs yet; bot workflow run NAME starts one (bot workflow list shows the names).")
		return nil
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tWORKFLOW\tSTATE\tUSER\tSTARTED")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.ID, r.Workflow, reporting.DisplayState(r, now),
			conversation.Person{ID: r.UserID, Name: r.UserName}.Label(), r.CreatedAt.Local().Format(time.DateTime))
	}
	return tw.Flush()
}

func (c *cliSession) statusJSON(ctx context.Context, w io.Writer, r db.Run) error {
	events, err := c.store.Events(ctx, r.ID)
	if err != nil {
		return err
	}
	owed, err := c.store.Undelivered(ctx, r.ID)
	if err != nil {
		return err
	}
	byNode, err := c.store.AgentUsage(ctx, db.UsageQuery{By: db.UsageByNode, RunIDs: []string{r.ID}})
	if err != nil {
		return err
	}
	s := statusJSON{runJSON: toRunJSON(r, time.Now()), Resumes: r.Attempt, Nodes: []nodeJSON{}, Undelivered: []undeliveredJSON{}}
	var total db.UsageSum
	for _, u := range byNode {
		total = total.Add(u)
	}
	s.Usage = toUsageJSON(total)
	for _, o := range owed {
		s.Undelivered = append(s.Undelivered, undeliveredJSON{Kind: o.Kind, State: string(o.State), Attempts: o.Attempts,
			LastError: o.LastError, Since: o.CreatedAt})
	}
	for _, n := range execution.RunNodes(r, events) {
		deps := n.DependsOn
		if deps == nil {
			deps = []string{}
		}
		j := nodeJSON{ID: n.ID, State: n.State, DependsOn: deps, Attempts: n.Attempts,
			DurationMS: n.Duration.Milliseconds(), Reason: n.Reason, By: n.By, OutputBytes: n.Output.Bytes}
		if u := db.UsageOf(byNode, n.ID); u.Turns > 0 {
			uj := toUsageJSON(u)
			j.Usage = &uj
		}
		s.Nodes = append(s.Nodes, j)
	}
	if p := r.Meta.Pause; r.Status == db.StatusPaused && p != nil {
		s.WaitingAt = &placeJSON{Node: p.Node, Message: firstNonEmpty(p.Message, p.Error)}
	}
	if e := r.Meta.LastError; e != nil && r.Status != db.StatusCompleted {
		s.LastError = &placeJSON{Node: e.Node, Message: e.Message}
	}
	if r.Group != "" && r.Status == db.StatusQueued {
		p, err := c.store.GroupPlace(ctx, r.ID)
		if err != nil && !errors.Is(err, db.ErrNotFound) {
			return err
		}
		if p.Waiting() {
			s.WaitingForGroup = &groupJSON{Group: p.Group, Holder: p.Holder, Place: p.Place}
		}
	}
	return writeJSON(w, s)
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
