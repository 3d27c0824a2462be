package db

// Runs, events, conversations, sessions and message refs as stored and read: the listings' order
// and limits, what a resumable run is, and what an empty field means (a forgotten message ref, a
// cleared session).

import (
	"strings"
	"time"
)

// RunColumns is the column list every run query selects or returns, in the engines' scanRun order.
const RunColumns = `id, workflow, conversation_id, parent_conversation_id, user_id, user_name, user_message, status,
	working_path, workflow_source, workflow_digest, meta, attempt, recoveries, lease_owner, lease_token,
	lease_expires_at, heartbeat_at, created_at, queued_at, started_at, finished_at, workspace_home, workspace_remote`

// EventColumns is the column list every event query selects or returns, in the engines' scanEvent
// order.
const EventColumns = `run_id, seq, type, node_id, attempt, data, at`

// GetRun selects one run.
func (d Dialect) GetRun(runID string) (string, []any) {
	q := d.Query()
	return "SELECT " + RunColumns + " FROM runs WHERE id = " + q.Arg(runID), q.Args
}

// SetRunConversation moves a run to another conversation (Store.SetRunConversation).
func (d Dialect) SetRunConversation(runID, conversationID string) (string, []any) {
	q := d.Query()
	return "UPDATE runs SET conversation_id = " + q.Arg(conversationID) + " WHERE id = " + q.Arg(runID), q.Args
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
		" ORDER BY created_at DESC, id DESC LIMIT 1", q.Args
}

// ListRuns selects the runs matching f, newest first (Store.ListRuns).
func (d Dialect) ListRuns(f RunFilter) (string, []any) {
	q := d.Query()
	var conds []string
	for _, c := range []struct{ col, val string }{
		{"workflow", f.Workflow}, {"conversation_id", f.ConversationID},
		{"parent_conversation_id", f.ParentConversationID}, {"user_id", f.UserID},
	} {
		if c.val != "" {
			conds = append(conds, c.col+" = "+q.Arg(c.val))
		}
	}
	if len(f.Statuses) > 0 {
		conds = append(conds, q.In("status", strs(f.Statuses)))
	}
	return "SELECT " + RunColumns + " FROM runs" + whereAll(conds...) + " ORDER BY created_at DESC, id DESC LIMIT " +
		q.Arg(ListLimit(f.Limit)), q.Args
}

// FindRunsByPrefix selects the runs whose id starts with prefix, newest first; LIKE's
// metacharacters in prefix match only themselves (Store.FindRunsByPrefix).
func (d Dialect) FindRunsByPrefix(prefix string, limit int) (string, []any) {
	q := d.Query()
	pattern := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(prefix) + "%"
	return "SELECT " + RunColumns + ` FROM runs WHERE id LIKE ` + q.Arg(pattern) + ` ESCAPE '\'` +
		" ORDER BY created_at DESC, id DESC LIMIT " + q.Arg(ListLimit(limit)), q.Args
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

// InsertRun inserts the run of c, queued (Transitions[OpCreate]) at c.At, returning it. It takes seq
// 1 for its first event, which the engine inserts with it: the event needs no UPDATE of a row that
// holds the whole workflow source.
func (d Dialect) InsertRun(c RunCreation) (string, []any) {
	q, n := d.Query(), c.Run
	values := []string{q.Arg(n.ID), q.Arg(n.Workflow), q.Arg(n.ConversationID), q.Arg(n.ParentConversationID), q.Arg(n.UserID),
		q.Arg(n.UserName), q.Arg(n.UserMessage), lit(Transitions[OpCreate].To), q.Arg(n.WorkingPath), q.Arg(n.WorkflowSource),
		q.Arg(c.Digest), q.Time(c.At), q.Time(c.At), "1"}
	return `INSERT INTO runs (id, workflow, conversation_id, parent_conversation_id, user_id, user_name, user_message, status,
		working_path, workflow_source, workflow_digest, created_at, queued_at, last_seq) VALUES (` + strings.Join(values, ", ") +
		") RETURNING " + RunColumns, q.Args
}

// EventAt selects the run's event at seq (DriverTx.EventAt).
func (d Dialect) EventAt(runID string, seq int64) (string, []any) {
	q := d.Query()
	return "SELECT " + EventColumns + " FROM run_events WHERE run_id = " + q.Arg(runID) + " AND seq = " + q.Arg(seq), q.Args
}
