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
// each (queries.go), with the engine's Dialect; the engine only runs the text it gets.
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
	// SkipLocked ends a SELECT whose rows the transaction takes, passing over rows another
	// transaction holds (" FOR UPDATE SKIP LOCKED"); empty where the single writer holds them all.
	SkipLocked string
	// NextOutboxID is a fresh id of run_outbox, after every one so far: a replaced message moves
	// to the end of its run's (Dialect.Owe).
	NextOutboxID string
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
	D    Dialect
	Args []any
}

// Query starts a statement in d.
func (d Dialect) Query() *SQL { return &SQL{D: d} }

// Arg adds v as the next parameter and returns its placeholder.
func (q *SQL) Arg(v any) string {
	q.Args = append(q.Args, v)
	return q.D.Param(len(q.Args))
}

// Time adds t, stored as the engine stores times, and returns its placeholder.
func (q *SQL) Time(t time.Time) string { return q.Arg(q.D.Time(t)) + q.D.TimeCast }

// NullTime is Time with the zero time as NULL.
func (q *SQL) NullTime(t time.Time) string { return q.Arg(q.D.NullTime(t)) + q.D.TimeCast }

// In is the condition "expr is one of vals" in q's dialect.
func (q *SQL) In(expr string, vals []string) string { return q.D.In(q, expr, vals) }

// Lit is a status, pause kind or event type written into the SQL text as a literal. Queries that
// match a fixed value say it literally, so the engine's planner can use a partial index on it and
// the statement text stays one; the value comes from its Go constant, never from a caller.
func Lit[T ~string](v T) string { return "'" + strings.ReplaceAll(string(v), "'", "''") + "'" }

// Lits is Lit of each of vs, comma-separated.
func Lits[T ~string](vs ...T) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = Lit(v)
	}
	return strings.Join(out, ", ")
}

// And joins the non-empty conditions with AND.
func And(conds ...string) string { return join(conds, " AND ") }

// Or joins the non-empty conditions with OR, in parentheses; empty when all are.
func Or(conds ...string) string {
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

// Where is " WHERE " and the conditions, or nothing when there is none.
func Where(conds ...string) string {
	if c := And(conds...); c != "" {
		return " WHERE " + c
	}
	return ""
}

// Strings is ss as a []string, for In.
func Strings[T ~string](ss []T) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}
