package main

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite" // the SQLite driver, for the bulk inserts
)

// fill is one bulk insert of the scale scenario: n runs numbered from first, of status (completed
// or paused at an approval gate), created at spread instants ending age ago, with four events
// each, in the conversation the status measurement asks about (statusConversation) one time in
// every inConv, in one of 100 channels otherwise.
type fill struct {
	prefix    string
	first, n  int
	status    string
	age, span time.Duration
	inConv    int
}

// statusConversation is the conversation whose /workflow status the scale scenario times.
const statusConversation = benchPlatform + ":C1"

// bulkSQL is the fill as SQL of the engine: plain INSERT ... SELECT over a generated series, the
// rows the bot would have written (one conversation row per channel, the runs, their events),
// without the bot: 100,000 runs take seconds.
func (f fill) bulkSQL(engine string, now time.Time) []string {
	paused := f.status == "paused"
	meta, pauseKind := `{"output":"done"}`, ""
	if paused {
		meta, pauseKind = `{"pause":{"kind":"approval","node":"ok","message":"ok?"}}`, "approval"
	}
	end := now.Add(-f.age)
	r := strings.NewReplacer("$PREFIX", f.prefix, "$FIRST", fmt.Sprint(f.first), "$LAST", fmt.Sprint(f.first+f.n-1), "$STATUS", f.status,
		"$META", meta, "$PAUSEKIND", pauseKind, "$INCONV", fmt.Sprint(f.inConv), "$CONV", statusConversation, "$PLATFORM", benchPlatform,
		"$ENDMICROS", fmt.Sprint(end.UnixMicro()), "$STEPMICROS", fmt.Sprint(max(f.span.Microseconds()/int64(max(f.n, 1)), 1)),
		"$END", end.UTC().Format(time.RFC3339Nano), "$STEP", fmt.Sprint(max(f.span.Microseconds()/int64(max(f.n, 1)), 1)),
		"$FINISHED", fmt.Sprint(!paused))
	var stmts []string
	if engine == "postgres" {
		stmts = pgFill
	} else {
		stmts = sqliteFill
	}
	out := make([]string, len(stmts))
	for i, s := range stmts {
		out[i] = r.Replace(s)
	}
	return out
}

var pgFill = []string{
	`INSERT INTO conversations (id, platform, channel_id, created_at)
	SELECT '$PLATFORM:C' || c, '$PLATFORM', 'C' || c, now() FROM generate_series(1, 100) c ON CONFLICT (id) DO NOTHING`,
	`INSERT INTO runs (id, workflow, conversation_id, parent_conversation_id, user_id, user_message, status, pause_kind, pause_node,
		working_path, workflow_source, workflow_digest, meta, attempt, lease_owner, lease_token, created_at, queued_at, started_at,
		heartbeat_at, finished_at, last_seq)
	SELECT '$PREFIX' || lpad(i::text, 9, '0'), 'bench-three',
		CASE WHEN i % $INCONV = 0 THEN '$CONV' ELSE '$PLATFORM:C' || (2 + i % 99) END,
		CASE WHEN i % $INCONV = 0 THEN '$CONV' ELSE '$PLATFORM:C' || (2 + i % 99) END,
		'$PLATFORM:u' || (i % 40), 'scale ' || i, '$STATUS', '$PAUSEKIND', CASE WHEN '$PAUSEKIND' <> '' THEN 'ok' ELSE '' END,
		'/tmp/bench/' || i, convert_to(repeat('x', 400), 'UTF8'), 'digest', '$META'::jsonb, 1, 'bench', 'token-' || i, t, t, t, t + interval '4 seconds',
		CASE WHEN $FINISHED THEN t + interval '5 seconds' END, 4
	FROM generate_series($FIRST, $LAST) i, LATERAL (SELECT '$END'::timestamptz - ($LAST - i)::bigint * $STEP * interval '1 microsecond' AS t) times`,
	`INSERT INTO run_events (run_id, seq, type, node_id, attempt, data, at)
	SELECT '$PREFIX' || lpad(i::text, 9, '0'), e.seq, e.type, e.node, CASE WHEN e.node = '' THEN 0 ELSE 1 END, e.data::jsonb,
		'$END'::timestamptz - ($LAST - i)::bigint * $STEP * interval '1 microsecond'
	FROM generate_series($FIRST, $LAST) i, (VALUES (1, 'run_created', '', '{"by":"web:u1"}'), (2, 'node_started', 'a', '{}'),
		(3, 'node_completed', 'a', '{"output":"ok"}'), (4, CASE WHEN $FINISHED THEN 'run_completed' ELSE 'gate_requested' END,
		CASE WHEN $FINISHED THEN '' ELSE 'ok' END, '{}')) AS e (seq, type, node, data)`,
}

var sqliteFill = []string{
	`WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 100)
	INSERT INTO conversations (id, platform, channel_id, created_at) SELECT '$PLATFORM:C' || n, '$PLATFORM', 'C' || n, 0 FROM c WHERE true
	ON CONFLICT (id) DO NOTHING`,
	`WITH RECURSIVE g(i) AS (SELECT $FIRST UNION ALL SELECT i + 1 FROM g WHERE i < $LAST)
	INSERT INTO runs (id, workflow, conversation_id, parent_conversation_id, user_id, user_message, status, pause_kind, pause_node,
		working_path, workflow_source, workflow_digest, meta, attempt, lease_owner, lease_token, created_at, queued_at, started_at,
		heartbeat_at, finished_at)
	SELECT printf('$PREFIX%09d', i), 'bench-three',
		CASE WHEN i % $INCONV = 0 THEN '$CONV' ELSE '$PLATFORM:C' || (2 + i % 99) END,
		CASE WHEN i % $INCONV = 0 THEN '$CONV' ELSE '$PLATFORM:C' || (2 + i % 99) END,
		'$PLATFORM:u' || (i % 40), 'scale ' || i, '$STATUS', '$PAUSEKIND', CASE WHEN '$PAUSEKIND' <> '' THEN 'ok' ELSE '' END,
		'/tmp/bench/' || i, CAST(printf('%.400c', 'x') AS BLOB), 'digest', '$META', 1, 'bench', 'token-' || i,
		$ENDMICROS - ($LAST - i) * $STEPMICROS, $ENDMICROS - ($LAST - i) * $STEPMICROS, $ENDMICROS - ($LAST - i) * $STEPMICROS,
		$ENDMICROS - ($LAST - i) * $STEPMICROS + 4000000,
		CASE WHEN '$FINISHED' = 'true' THEN $ENDMICROS - ($LAST - i) * $STEPMICROS + 5000000 END
	FROM g`,
	`WITH RECURSIVE g(i) AS (SELECT $FIRST UNION ALL SELECT i + 1 FROM g WHERE i < $LAST),
	e(seq, type, node, data) AS (VALUES (1, 'run_created', '', '{"by":"web:u1"}'), (2, 'node_started', 'a', '{}'),
		(3, 'node_completed', 'a', '{"output":"ok"}'), (4, CASE WHEN '$FINISHED' = 'true' THEN 'run_completed' ELSE 'gate_requested' END,
		CASE WHEN '$FINISHED' = 'true' THEN '' ELSE 'ok' END, '{}'))
	INSERT INTO run_events (run_id, seq, type, node_id, attempt, data, at)
	SELECT printf('$PREFIX%09d', i), e.seq, e.type, e.node, CASE WHEN e.node = '' THEN 0 ELSE 1 END, e.data,
		$ENDMICROS - ($LAST - i) * $STEPMICROS FROM g, e`,
}

// bulk runs the fills' statements on d, each fill in one transaction, then has PostgreSQL vacuum
// and analyze the tables, as autovacuum does soon after such an insert (its insert threshold).
// Analyze alone left the visibility map empty, so no index-only scan looked cheap: the generic plan
// of /workflow status's bounded count then sorted all 2,000 paused runs of its conversation
// (4.5 ms) instead of walking 201 index entries (0.5 ms; BENCHMARKS.md, issue 34, fourth session).
func bulk(ctx context.Context, d *database, now time.Time, fills ...fill) error {
	if d.engine == "postgres" {
		conn, err := pgx.Connect(ctx, d.url)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		for _, f := range fills {
			err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
				for _, s := range f.bulkSQL(d.engine, now) {
					if _, err := tx.Exec(ctx, s); err != nil {
						return fmt.Errorf("bulk insert: %w\n%s", err, s)
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		_, err = conn.Exec(ctx, "VACUUM ANALYZE")
		return err
	}
	conn, err := sql.Open("sqlite", "file:"+filepath.Join(d.home, "threadflow.db")+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)")
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	for _, f := range fills {
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		for _, s := range f.bulkSQL(d.engine, now) {
			if _, err := tx.ExecContext(ctx, s); err != nil {
				_ = tx.Rollback()
				return fmt.Errorf("bulk insert: %w\n%s", err, s)
			}
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// dbSize is the database's size in bytes: PostgreSQL's pg_database_size (the space deletions free
// is vacuumed for reuse after each prune: see pruneRates), SQLite's pages in use.
func dbSize(ctx context.Context, d *database) (int64, error) {
	var n int64
	if d.engine == "postgres" {
		conn, err := pgx.Connect(ctx, d.url)
		if err != nil {
			return 0, err
		}
		defer conn.Close(ctx)
		err = conn.QueryRow(ctx, "SELECT pg_database_size(current_database())").Scan(&n)
		return n, err
	}
	conn, err := sql.Open("sqlite", "file:"+filepath.Join(d.home, "threadflow.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return 0, err
	}
	defer func() { _ = conn.Close() }()
	// pages in use: the free pages deletions leave are reused by the next inserts
	err = conn.QueryRowContext(ctx, "SELECT (page_count - freelist_count) * page_size FROM pragma_page_count(), pragma_freelist_count(), pragma_page_size()").Scan(&n)
	return n, err
}

// deleteOld deletes the completed runs finished before cut by plain statements of up to 50 (their
// events go by the foreign key's cascade) on one connection, until none is left, and returns how
// many it deleted: the floor of retention's throughput.
func deleteOld(ctx context.Context, d *database, cut time.Time) (int64, error) {
	// ORDER BY on PostgreSQL only, as Store.Prune does (db.Dialect.ForceGenericPlan): without it the
	// cached generic plan scans the table.
	const del = "DELETE FROM runs WHERE id IN (SELECT id FROM runs WHERE status = 'completed' AND created_at < %s AND finished_at < %s%s LIMIT 50)"
	var step func() (int64, error)
	if d.engine == "postgres" {
		conn, err := pgx.Connect(ctx, d.url)
		if err != nil {
			return 0, err
		}
		defer conn.Close(ctx)
		step = func() (int64, error) {
			tag, err := conn.Exec(ctx, fmt.Sprintf(del, "$1", "$1", " ORDER BY created_at"), cut)
			return tag.RowsAffected(), err
		}
	} else {
		conn, err := sql.Open("sqlite", "file:"+filepath.Join(d.home, "threadflow.db")+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)")
		if err != nil {
			return 0, err
		}
		defer func() { _ = conn.Close() }()
		step = func() (int64, error) {
			res, err := conn.ExecContext(ctx, fmt.Sprintf(del, "?", "?", ""), cut.UnixMicro(), cut.UnixMicro())
			if err != nil {
				return 0, err
			}
			return res.RowsAffected()
		}
	}
	var total int64
	for {
		n, err := step()
		if err != nil || n == 0 {
			return total, err
		}
		total += n
	}
}
