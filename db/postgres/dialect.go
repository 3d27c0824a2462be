package postgres

import (
	"strconv"
	"time"

	"threadflow/db"
)

// dialect is how this engine writes the SQL package db renders (db.Dialect): numbered parameters,
// a list as one array parameter (one statement text whatever its length), jsonb operators for
// meta, and row locks that concurrent claimers and rescuers pass over (SKIP LOCKED) instead of
// waiting for a row and then finding it taken.
var dialect = db.Dialect{
	NextOutboxID: "nextval(pg_get_serial_sequence('run_outbox', 'id'))",
	Micros:       func(expr string) string { return "(EXTRACT(EPOCH FROM " + expr + ") * 1000000)::bigint" },
	Param:        func(n int) string { return "$" + strconv.Itoa(n) },
	Time:         func(t time.Time) any { return t },
	NullTime:     func(t time.Time) any { return nullTime(t) },
	TimeCast:     "::timestamptz",
	In: func(q *db.SQL, expr string, vals []string) string {
		return expr + " = ANY(" + q.Arg(vals) + "::text[])"
	},
	Platform:   "split_part(runs.conversation_id, ':', 1)",
	Meta:       metaSQL,
	MessageSeq: "nextval('transcript_seq')",
	SkipLocked: " FOR UPDATE SKIP LOCKED",
	// a prune batch is one statement: one round trip instead of one per table (Dialect.PruneBatch)
	DeletingCTEs: true,
	// /workflow status's sections are one subquery joined to the states: planned in a tenth of the
	// time of a branch per state (db.listEachLateral)
	Lateral:          true,
	ForceGenericPlan: "SET LOCAL plan_cache_mode = force_generic_plan",
	// as stored, after compression: what deleting it frees
	Size: func(col string) string { return "pg_column_size(" + col + ")" },
}

// metaSQL is the expression of runs.meta after e (jsonb || merges top-level keys).
func metaSQL(q *db.SQL, e db.MetaEdit) string {
	expr := "meta"
	for _, k := range e.Remove {
		expr = "(" + expr + " - '" + k + "')"
	}
	if len(e.Patch) > 0 {
		expr += " || " + q.Arg([]byte(mustJSON(e.Patch))) + "::jsonb"
	}
	for _, kc := range e.FromColumn {
		expr += " || jsonb_build_object('" + kc[0] + "', " + kc[1] + ")"
	}
	return expr
}
