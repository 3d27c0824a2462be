package db

import (
	"encoding/json"
	"strings"
	"time"
)

// Dialect is how an engine writes SQL: its parameters, how it stores a time, and the few
// expressions each engine spells its own way. It holds no decision. The conditions that decide
// something (which runs a process may claim, whether a lease is held, which statuses a query keeps,
// a compare-and-set's guard and what it writes) are rendered by this package from one Go definition
// each (the sql*.go files), with the engine's Dialect; the engine only runs the text it gets.
type Dialect struct {
	// Param writes the nth parameter, from 1: "?" on SQLite, "$n" on PostgreSQL.
	Param func(n int) string
	// Time is t as the engine stores it; NullTime is Time with the zero time as NULL.
	Time, NullTime func(t time.Time) any
	// TimeCast follows a time parameter where the engine cannot infer its type ("::timestamptz").
	TimeCast string
	// In is the condition "expr is one of vals" (vals is not empty), adding its parameters to q.
	In func(q *SQL, expr string, vals []string) string
	// Platform is the expression of the platform of runs.conversation_id (the part before ':').
	Platform string
	// Meta is the expression of runs.meta after e, adding its parameters to q.
	Meta func(q *SQL, e MetaEdit) string
	// MessageSeq is the expression of a transcript message's next seq, unique and larger than every
	// committed one: a sequence, or MAX + 1 under the single writer's lock.
	MessageSeq string
	// SkipLocked ends a SELECT whose rows the transaction takes, passing over rows another
	// transaction holds (" FOR UPDATE SKIP LOCKED"); empty where the single writer holds them all.
	SkipLocked string
	// DeletingCTEs: a WITH may delete and return rows (PostgreSQL's data-modifying WITH), so a
	// prune batch is one statement (Dialect.PruneBatch) instead of one per table.
	DeletingCTEs bool
	// Lateral: a join may read the row before it (CROSS JOIN LATERAL), so ListRuns' per-state
	// lists are one subquery joined to the states (listEachLateral), planned once.
	Lateral bool
	// ForceGenericPlan is set where the engine may run a statement with a plan made once for any
	// parameters (PostgreSQL's generic plan, which pgx's statement cache gets after five
	// executions), so a query must leave it no plan that is only good for some values
	// (takeOldest). It is the statement that makes the rest of a transaction use such plans: where
	// planning costs more than running (a retention batch: 3.5 ms against 2.5), the first five
	// executions on each connection need not pay it. Empty on SQLite, which plans each statement
	// with its values.
	ForceGenericPlan string
	// Size is the expression of how many bytes the column (or expression) col holds.
	Size func(col string) string
	// NextOutboxID is a fresh id of run_outbox, after every one so far: a replaced message moves
	// to the end of its run's (Dialect.Owe).
	NextOutboxID string
	// Micros is the expression of the time expr as whole microseconds since the Unix epoch (NULL
	// stays NULL): how a statement rendered here returns a time both engines scan alike.
	Micros func(expr string) string
}

// MetaEdit is what a compare-and-set changes in runs.meta, in this order: Remove drops top-level
// keys, Patch's top-level fields replace the stored ones, and each key of FromColumn is set to the
// value the named column had before the update.
type MetaEdit struct {
	Remove     []string
	Patch      map[string]json.RawMessage
	FromColumn [][2]string // {key, column}
}

// Empty reports whether e leaves meta as it is.
func (e MetaEdit) Empty() bool {
	return len(e.Remove) == 0 && len(e.Patch) == 0 && len(e.FromColumn) == 0
}

// SQL is a statement being rendered for one Dialect: its parameters, numbered as they are added.
type SQL struct {
	d    Dialect
	Args []any
}

// Query starts a statement in d.
func (d Dialect) Query() *SQL { return &SQL{d: d} }

// Arg adds v as the next parameter and returns its placeholder, to be written once: a "?"
// parameter takes its value by position, so a value used twice is added twice.
func (q *SQL) Arg(v any) string {
	q.Args = append(q.Args, v)
	return q.d.Param(len(q.Args))
}

// Time adds t, stored as the engine stores times, and returns its placeholder.
func (q *SQL) Time(t time.Time) string { return q.Arg(q.d.Time(t)) + q.d.TimeCast }

// NullTime is Time with the zero time as NULL.
func (q *SQL) NullTime(t time.Time) string { return q.Arg(q.d.NullTime(t)) + q.d.TimeCast }

// In is the condition "expr is one of vals" in q's dialect.
func (q *SQL) In(expr string, vals []string) string { return q.d.In(q, expr, vals) }

// lit is a status, pause kind or event type written into the SQL text as a literal. Queries that
// match a fixed value say it literally, so the engine's planner can use a partial index on it and
// the statement text stays one; the value comes from its Go constant, never from a caller.
func lit[T ~string](v T) string { return "'" + strings.ReplaceAll(string(v), "'", "''") + "'" }

// lits is lit of each of vs, comma-separated.
func lits[T ~string](vs ...T) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = lit(v)
	}
	return strings.Join(out, ", ")
}

// allOf joins the non-empty conditions with AND.
func allOf(conds ...string) string { return join(conds, " AND ") }

// anyOf joins the non-empty conditions with OR, in parentheses; empty when all are.
func anyOf(conds ...string) string {
	if s := join(conds, " OR "); s != "" {
		return "(" + s + ")"
	}
	return ""
}

func join(conds []string, sep string) string {
	kept := conds[:0:0]
	for _, c := range conds {
		if c != "" {
			kept = append(kept, c)
		}
	}
	return strings.Join(kept, sep)
}

// whereAll is " WHERE " and the conditions, or nothing when there is none.
func whereAll(conds ...string) string {
	if c := allOf(conds...); c != "" {
		return " WHERE " + c
	}
	return ""
}

// strs is ss as a []string, for In.
func strs[T ~string](ss []T) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}
