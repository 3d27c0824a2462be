package db

// Runs, events, conversations, sessions and message refs as stored and read: the listings' order
// and limits, what a resumable run is, and what an empty field means (a forgotten message ref, a
// cleared session).

import (
	"strconv"
	"strings"
	"time"
)

// RunColumns is the column list every run query selects or returns, in the engines' scanRun order.
const RunColumns = `id, workflow, conversation_id, parent_conversation_id, user_id, user_name, user_message, status,
	working_path, workflow_source, workflow_digest, meta, attempt, recoveries, lease_owner, lease_token,
	lease_expires_at, heartbeat_at, created_at, queued_at, started_at, finished_at, workspace_home, workspace_remote,
	inputs, concurrency_group, COALESCE(parent_run_id, '') AS parent_run_id, parent_node`

// listColumns are the columns of a list of f's runs: RunColumns, with an empty workflow_source
// when f asks for runs without it (RunFilter.WithoutSource), so the engines scan both alike.
func listColumns(f RunFilter) string {
	if f.WithoutSource {
		return runColumnsWithoutSource
	}
	return RunColumns
}

var runColumnsWithoutSource = strings.Replace(RunColumns, "workflow_source,", "'' AS workflow_source,", 1)

// EventColumns is the column list every event query selects or returns, in the engines' scanEvent
// order.
const EventColumns = `run_id, seq, type, node_id, attempt, data, at`

// GetRun selects one run.
func (d Dialect) GetRun(runID string) (string, []any) {
	q := d.Query()
	return "SELECT " + RunColumns + " FROM runs WHERE id = " + q.Arg(runID), q.Args
}

// SetRunConversation moves a run, with its child runs at any depth, to another conversation
// (Store.SetRunConversation, and the delivery that opens a run's thread): children live in their
// parent's thread, also those created before it opened.
func (d Dialect) SetRunConversation(runID, conversationID string) (string, []any) {
	q := d.Query()
	return "UPDATE runs SET conversation_id = " + q.Arg(conversationID) + ` WHERE id IN (WITH RECURSIVE tree(id) AS (
		SELECT id FROM runs WHERE id = ` + q.Arg(runID) + `
		UNION ALL SELECT c.id FROM runs c JOIN tree ON c.parent_run_id = tree.id) SELECT id FROM tree)`, q.Args
}

// Events selects a run's events in seq order (Store.Events).
func (d Dialect) Events(runID string) (string, []any) {
	q := d.Query()
	return "SELECT " + EventColumns + " FROM run_events WHERE run_id = " + q.Arg(runID) + " ORDER BY seq", q.Args
}

// ActionTypes are the events that record what a person did to a run: started it, approved or
// answered its gate (or was refused), resumed it, cancelled or abandoned it. The audit lists them.
var ActionTypes = []EventType{EventRunCreated, EventGateApproval, EventGateResolved, EventGateRefused, EventResumeRequested, EventRunCancelled}

// ActionEvents selects the ActionTypes events recorded at or after since, newest first
// (Store.ActionEvents).
func (d Dialect) ActionEvents(since time.Time, limit int) (string, []any) {
	q := d.Query()
	return "SELECT " + EventColumns + " FROM run_events WHERE " + q.In("type", strs(ActionTypes)) + " AND at >= " + q.Time(since) +
		" ORDER BY at DESC, run_id DESC, seq DESC LIMIT " + q.Arg(ListLimit(limit)), q.Args
}

// FindResumable selects the newest run of workflow in the parent conversation that a resume may
// leave (Transitions[OpResume]: failed or paused) (Store.FindResumable).
func (d Dialect) FindResumable(workflow, parentConversationID string) (string, []any) {
	q := d.Query()
	return "SELECT " + RunColumns + " FROM runs WHERE workflow = " + q.Arg(workflow) + " AND parent_conversation_id = " +
		q.Arg(parentConversationID) + " AND " + statusIs("", Transitions[OpResume].From...) +
		newestFirst + " LIMIT 1", q.Args
}

// ListRuns selects the runs matching f, newest first (Store.ListRuns). Each branch (one status of
// f.Statuses, one conversation column of f.InConversation) is a walk of its own index newest
// first that stops at the limit, and the branches are merged: a list costs what it returns, not
// what the table holds (runs_status_created, runs_conversation, runs_parent_conversation). The
// two conversation columns can name one run twice (a run reporting where it was started): UNION
// drops the copy, where the branches of states are disjoint.
func (d Dialect) ListRuns(f RunFilter) (string, []any) {
	q := d.Query()
	if len(f.Each) > 0 && d.Lateral {
		return listEachLateral(q, f), q.Args
	}
	if len(f.Each) > 0 {
		return listEach(q, f), q.Args
	}
	limit := ListLimit(f.Limit)
	branches := runBranches(q, f, f.Statuses, limit)
	if len(branches) == 1 {
		return branches[0], q.Args
	}
	return mergeBranches(f, branches) + " LIMIT " + strconv.Itoa(limit), q.Args
}

// mergeBranches merges ListRuns' branches newest first.
func mergeBranches(f RunFilter, branches []string) string {
	for i, b := range branches {
		branches[i] = "SELECT " + RunColumns + " FROM (" + b + ") b" + strconv.Itoa(i)
	}
	union := " UNION ALL "
	if f.InConversation != "" {
		union = " UNION "
	}
	return strings.Join(branches, union) + newestFirst
}

// listEach is ListRuns of f.Each: per status, its branches merged and limited to the status's
// own limit; the statuses' lists merged newest first.
func listEach(q *SQL, f RunFilter) string {
	var lists []string
	for _, st := range AllStatuses { // in a fixed order: one statement text per filter shape
		n, ok := f.Each[st]
		if !ok {
			continue
		}
		branches := runBranches(q, f, []Status{st}, ListLimit(n))
		if len(branches) == 1 {
			lists = append(lists, branches[0])
			continue
		}
		lists = append(lists, mergeBranches(f, branches)+" LIMIT "+strconv.Itoa(ListLimit(n)))
	}
	if len(lists) == 1 {
		return lists[0]
	}
	for i, l := range lists {
		lists[i] = "SELECT " + RunColumns + " FROM (" + l + ") s" + strconv.Itoa(i)
	}
	return strings.Join(lists, " UNION ALL ") + newestFirst
}

// listEachLateral is listEach where a join may read the row before it (Dialect.Lateral): the
// states and their limits are a VALUES list, and one subquery, joined to each state, walks the
// state's branches. PostgreSQL plans that subquery once, where a branch per state and
// conversation column (twelve for /workflow status) cost it 3-5 ms of planning in each custom plan
// (a connection's first five runs of the statement), more than running it took.
func listEachLateral(q *SQL, f RunFilter) string {
	var states []string
	for _, st := range AllStatuses { // in a fixed order: one statement text per filter shape
		if n, ok := f.Each[st]; ok {
			states = append(states, "("+lit(st)+", "+strconv.Itoa(ListLimit(n))+")")
		}
	}
	var branches []string
	for _, conv := range conversationBranches(f.InConversation) {
		branches = append(branches, runBranch(q, f, conv, "status = s.st", "s.n"))
	}
	walk := branches[0]
	if len(branches) > 1 { // the two conversation columns: UNION drops a run named by both
		walk = "SELECT * FROM ((" + strings.Join(branches, ") UNION (") + ")) u" + newestFirst + " LIMIT s.n"
	}
	return "SELECT " + RunColumns + " FROM (VALUES " + strings.Join(states, ", ") + ") AS s (st, n) CROSS JOIN LATERAL (" +
		walk + ") r" + newestFirst
}

// A list's limits are written into its text, not passed as parameters: SQLite plans a LIMIT of a
// compound's branch by its value, so a parameter there made it prepare the statement again on
// every call (sqlite3Reprepare was 45% of /workflow status's CPU in the scale bench). The limits
// are a handful of values, so the texts stay few.

// newestFirst is the order of every run list.
const newestFirst = " ORDER BY created_at DESC, id DESC"

// runBranches are ListRuns' branches, each ordered and limited.
func runBranches(q *SQL, f RunFilter, statuses []Status, limit int) []string {
	var out []string
	for _, conv := range conversationBranches(f.InConversation) {
		for _, st := range statusBranches(statuses) {
			cond := ""
			if st != "" {
				cond = "status = " + lit(st)
			}
			out = append(out, runBranch(q, f, conv, cond, strconv.Itoa(limit)))
		}
	}
	return out
}

// runBranch is one walk of runs newest first: f's conditions, one conversation column's, cond, and
// at most limit runs.
func runBranch(q *SQL, f RunFilter, conv func(q *SQL) []string, cond, limit string) string {
	conds := append(runConds(q, f), conv(q)...)
	if cond != "" {
		conds = append(conds, cond)
	}
	return "SELECT " + listColumns(f) + " FROM runs" + whereAll(conds...) + newestFirst + " LIMIT " + limit
}

// runConds are f's conditions besides its statuses and InConversation.
func runConds(q *SQL, f RunFilter) []string {
	var conds []string
	for _, c := range []struct{ col, val string }{
		{"workflow", f.Workflow}, {"conversation_id", f.ConversationID},
		{"parent_conversation_id", f.ParentConversationID}, {"user_id", f.UserID}, {"parent_run_id", f.ParentRunID},
	} {
		if c.val != "" {
			conds = append(conds, c.col+" = "+q.Arg(c.val))
		}
	}
	return conds
}

// statusBranches is one branch per status, or one of every status when none is given.
func statusBranches(ss []Status) []Status {
	if len(ss) == 0 {
		return []Status{""}
	}
	return ss
}

// conversationBranches selects the runs of a conversation in two branches: those started in it,
// and those reporting in it (a thread the run opened). Without a conversation there is one branch
// of every run.
func conversationBranches(conv string) []func(q *SQL) []string {
	if conv == "" {
		return []func(q *SQL) []string{func(*SQL) []string { return nil }}
	}
	return []func(q *SQL) []string{
		func(q *SQL) []string { return []string{"parent_conversation_id = " + q.Arg(conv)} },
		func(q *SQL) []string { return []string{"conversation_id = " + q.Arg(conv)} },
	}
}

// CountRuns counts the runs matching f per status, in one statement (Store.CountRuns): one
// GROUP BY, or with f.Limit one count per status that stops past Limit (a walk of at most Limit+1
// entries of the state's index, however many runs the state holds).
func (d Dialect) CountRuns(f RunFilter) (string, []any) {
	q := d.Query()
	if f.Limit <= 0 {
		conds := countConds(q, f)
		if len(f.Statuses) > 0 {
			conds = append(conds, q.In("status", strs(f.Statuses)))
		}
		return "SELECT status, COUNT(*) FROM runs" + whereAll(conds...) + " GROUP BY status", q.Args
	}
	statuses := f.Statuses
	if len(statuses) == 0 {
		statuses = AllStatuses
	}
	var counts []string
	stop := strconv.Itoa(f.Limit + 1)
	for i, st := range statuses {
		if f.InConversation == "" {
			// newest first: the order of the state's index, which a planner then walks (PostgreSQL
			// otherwise reads the table from its start, past every run of the other states)
			b := "SELECT 1 FROM runs" + whereAll(append(runConds(q, f), "status = "+lit(st))...) + newestFirst + " LIMIT " + stop
			counts = append(counts, "SELECT "+lit(st)+" AS status, COUNT(*) AS n FROM ("+b+") c"+strconv.Itoa(i))
			continue
		}
		// A conversation's runs in the state are two walks, of the runs started in it and of
		// those reporting in it (runs_parent_conversation, runs_conversation), each stopping past
		// the limit; a run in both is counted once. An OR of the two columns would be a bitmap of,
		// or a sort of, every run of the conversation in the state, however many.
		var walks []string
		for j, conv := range conversationBranches(f.InConversation) {
			b := "SELECT id FROM runs" + whereAll(append(append(runConds(q, f), conv(q)...), "status = "+lit(st))...) + newestFirst + " LIMIT " + stop
			walks = append(walks, "SELECT id FROM ("+b+") w"+strconv.Itoa(i)+strconv.Itoa(j))
		}
		counts = append(counts, "SELECT "+lit(st)+" AS status, COUNT(*) AS n FROM ("+strings.Join(walks, " UNION ")+" LIMIT "+stop+") c"+strconv.Itoa(i))
	}
	return strings.Join(counts, " UNION ALL "), q.Args
}

// countConds are CountRuns' conditions of f besides its statuses.
func countConds(q *SQL, f RunFilter) []string {
	conds := runConds(q, f)
	if f.InConversation != "" {
		conds = append(conds, "(parent_conversation_id = "+q.Arg(f.InConversation)+" OR conversation_id = "+q.Arg(f.InConversation)+")")
	}
	return conds
}

// FindRunsByPrefix selects the runs whose id starts with prefix, newest first; LIKE's
// metacharacters in prefix match only themselves (Store.FindRunsByPrefix).
func (d Dialect) FindRunsByPrefix(prefix string, limit int) (string, []any) {
	q := d.Query()
	pattern := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(prefix) + "%"
	return "SELECT " + RunColumns + ` FROM runs WHERE id LIKE ` + q.Arg(pattern) + ` ESCAPE '\'` +
		newestFirst + " LIMIT " + q.Arg(ListLimit(limit)), q.Args
}

// InsertConversation inserts c unless its id is known already: the first writer's fields win.
func (d Dialect) InsertConversation(c Conversation, now time.Time) (string, []any) {
	q := d.Query()
	return "INSERT INTO conversations (id, platform, channel_id, thread_id, parent_id, created_at) VALUES (" + q.Arg(c.ID) +
		", " + q.Arg(c.Platform) + ", " + q.Arg(c.ChannelID) + ", " + q.Arg(c.ThreadID) + ", NULLIF(" + q.Arg(c.ParentID) +
		", ''), " + q.Time(now) + ") ON CONFLICT (id) DO NOTHING", q.Args
}

// Conversation selects the stored conversation id: id, platform, channel, thread, parent ("" for
// none) and when it was created.
func (d Dialect) Conversation(id string) (string, []any) {
	q := d.Query()
	return "SELECT id, platform, channel_id, thread_id, COALESCE(parent_id, ''), created_at FROM conversations WHERE id = " +
		q.Arg(id), q.Args
}

// Session selects the provider, session id ("" when cleared) and update time stored for
// (conversation) or (run, node) (Store.GetSession).
func (d Dialect) Session(conversationID, runID, nodeID string) (string, []any) {
	q := d.Query()
	return "SELECT provider, COALESCE(session_id, ''), updated_at FROM sessions WHERE conversation_id = " + q.Arg(conversationID) +
		" AND run_id = " + q.Arg(runID) + " AND node_id = " + q.Arg(nodeID), q.Args
}

// SetSession stores s at now; an empty SessionID is stored as NULL: the next turn starts fresh
// (Store.SetSession).
func (d Dialect) SetSession(s Session, now time.Time) (string, []any) {
	q := d.Query()
	return "INSERT INTO sessions (conversation_id, run_id, node_id, provider, session_id, updated_at) VALUES (" +
		q.Arg(s.ConversationID) + ", " + q.Arg(s.RunID) + ", " + q.Arg(s.NodeID) + ", " + q.Arg(s.Provider) + ", NULLIF(" +
		q.Arg(s.SessionID) + ", ''), " + q.Time(now) + `) ON CONFLICT (conversation_id, run_id, node_id)
		DO UPDATE SET provider = excluded.provider, session_id = excluded.session_id, updated_at = excluded.updated_at`, q.Args
}

// SetMessageRef records which message of the run is its ref.Kind, or forgets it when the
// MessageID is empty (Store.SetMessageRef).
func (d Dialect) SetMessageRef(ref MessageRef) (string, []any) {
	q := d.Query()
	if ref.MessageID == "" {
		return "DELETE FROM run_messages WHERE run_id = " + q.Arg(ref.RunID) + " AND kind = " + q.Arg(ref.Kind), q.Args
	}
	return "INSERT INTO run_messages (run_id, kind, platform, channel_id, thread_id, message_id) VALUES (" + q.Arg(ref.RunID) +
		", " + q.Arg(ref.Kind) + ", " + q.Arg(ref.Platform) + ", " + q.Arg(ref.ChannelID) + ", " + q.Arg(ref.ThreadID) + ", " +
		q.Arg(ref.MessageID) + `) ON CONFLICT (run_id, kind) DO UPDATE SET platform = excluded.platform,
		channel_id = excluded.channel_id, thread_id = excluded.thread_id, message_id = excluded.message_id`, q.Args
}

// MessageRefs selects the messages recorded for a run, by kind: kind, platform, channel, thread
// and message id (Store.MessageRefs).
func (d Dialect) MessageRefs(runID string) (string, []any) {
	q := d.Query()
	return "SELECT kind, platform, channel_id, thread_id, message_id FROM run_messages WHERE run_id = " + q.Arg(runID) +
		" ORDER BY kind", q.Args
}

// ProbeWrite rewrites the replica's row in write_probes at now (Store.ProbeWrite).
func (d Dialect) ProbeWrite(replica string, now time.Time) (string, []any) {
	q := d.Query()
	return "INSERT INTO write_probes (replica, probed_at) VALUES (" + q.Arg(replica) + ", " + q.Time(now) + `)
		ON CONFLICT (replica) DO UPDATE SET probed_at = excluded.probed_at`, q.Args
}

// InsertRun inserts the run of c, queued (Transitions[OpCreate]) at c.At, returning it. Its first
// event, which the engine inserts with it, takes seq 1 (on PostgreSQL runs.last_seq starts at 1):
// the event needs no UPDATE of a row that holds the whole workflow source.
func (d Dialect) InsertRun(c RunCreation) (string, []any) {
	q, n := d.Query(), c.Run
	values := []string{q.Arg(n.ID), q.Arg(n.Workflow), q.Arg(n.ConversationID), q.Arg(n.ParentConversationID), q.Arg(n.UserID),
		q.Arg(n.UserName), q.Arg(n.UserMessage), lit(Transitions[OpCreate].To), q.Arg(n.WorkingPath), q.Arg(n.WorkflowSource),
		q.Arg(c.Digest), q.Time(c.At), q.Time(c.At), q.Arg(EncodeInputs(n.Inputs)), q.Arg(n.Group), q.Arg(nullable(n.ParentRunID)), q.Arg(n.ParentNode)}
	return `INSERT INTO runs (id, workflow, conversation_id, parent_conversation_id, user_id, user_name, user_message, status,
		working_path, workflow_source, workflow_digest, created_at, queued_at, inputs, concurrency_group, parent_run_id, parent_node) VALUES (` + strings.Join(values, ", ") +
		") RETURNING " + RunColumns, q.Args
}

// EventAt selects the run's event at seq (DriverTx.EventAt).
func (d Dialect) EventAt(runID string, seq int64) (string, []any) {
	q := d.Query()
	return "SELECT " + EventColumns + " FROM run_events WHERE run_id = " + q.Arg(runID) + " AND seq = " + q.Arg(seq), q.Args
}

// nullable is NULL for "" (a column that references another row, where "" would name none).
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// OpenChildren selects the ids of the child runs of runID that a cancel may still leave
// (Transitions[OpCancel].From), in id order (DriverTx.OpenChildren).
func (d Dialect) OpenChildren(runID string) (string, []any) {
	q := d.Query()
	return "SELECT id FROM runs WHERE parent_run_id = " + q.Arg(runID) + " AND " + statusIs("", Transitions[OpCancel].From...) +
		" ORDER BY id", q.Args
}
