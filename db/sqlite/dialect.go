package sqlite

import (
	"maps"
	"slices"
	"strings"
	"time"

	"threadflow/db"
)

// dialect is how this engine writes the SQL package db renders (db.Dialect): positional
// parameters, times as unix microseconds, JSON through json_set and json_remove. The writer holds
// the whole database, so a claim or a rescue needs no row locks.
var dialect = db.Dialect{
	Param:    func(int) string { return "?" },
	Time:     func(t time.Time) any { return micros(t) },
	NullTime: nullMicros,
	In:       in,
	Platform: "substr(runs.conversation_id, 1, instr(runs.conversation_id, ':') - 1)",
	Meta:     metaSQL,
	// The single writer holds the write lock, so MAX + 1 is unique and larger than every committed seq.
	MessageSeq: "(SELECT COALESCE(MAX(seq), 0) + 1 FROM transcript_messages)",
	// The single writer makes MAX + 1 a fresh id; AUTOINCREMENT then continues past it.
	NextOutboxID: "(SELECT MAX(id) + 1 FROM run_outbox)",
	Micros:       func(expr string) string { return expr },
	Size:         func(col string) string { return "length(CAST(" + col + " AS BLOB))" },
}

// in is expr IN (?, ...), one parameter per value.
func in(q *db.SQL, expr string, vals []string) string {
	ps := make([]string, len(vals))
	for i, v := range vals {
		ps[i] = q.Arg(v)
	}
	return expr + " IN (" + strings.Join(ps, ", ") + ")"
}

// metaSQL is the expression of runs.meta after e; the patch's keys go in sorted order, so one edit
// has one statement text.
func metaSQL(q *db.SQL, e db.MetaEdit) string {
	expr := "meta"
	for _, k := range e.Remove {
		expr = "json_remove(" + expr + ", '$." + k + "')"
	}
	for _, k := range slices.Sorted(maps.Keys(e.Patch)) {
		expr = "json_set(" + expr + ", '$." + k + "', json(" + q.Arg(string(e.Patch[k])) + "))"
	}
	for _, kc := range e.FromColumn {
		expr = "json_set(" + expr + ", '$." + kc[0] + "', " + kc[1] + ")"
	}
	return expr
}
