// Package sqlite is the SQLite engine of db.Store, on modernc.org/sqlite (pure Go, no cgo). It is
// the single-node deployment: one database file, one writer.
//
// Every state transition is one compare-and-set UPDATE inside a BEGIN IMMEDIATE transaction,
// together with the event it appends. Writes go through a pool of exactly one connection, so
// concurrent writers in this process queue in database/sql instead of failing with SQLITE_BUSY;
// reads use a separate pool that WAL lets run beside the writer.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/pressly/goose/v3"
	"go.uber.org/zap"
	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"threadflow/db"
)

var _ db.Store = (*Store)(nil)

// busyTimeout is how long a statement waits for another process's lock before failing with
// SQLITE_BUSY, which the store reports as db.ErrUnavailable.
const busyTimeout = 10 * time.Second

// readConns bounds the read pool; SQLite reads are cheap and the machine is small.
const readConns = 4

// Store is a db.Store on one SQLite database file.
type Store struct {
	*db.Machine // the state-machine methods: the transition core on this engine's driver

	w        *sql.DB    // the only writer: MaxOpenConns 1, BEGIN IMMEDIATE
	turn     turn       // the order writers get w in
	ws       *stmtCache // statements prepared on w (see wtx)
	r        reader     // read-only pool, with cached statements
	migrator *goose.Provider
	now      func() time.Time
	log      *zap.Logger
	changes  db.TranscriptChanges // wakes this process's transcript readers after its own writes
}

// Open opens (creating if needed) the database file at path, applies pending migrations and returns
// the store. path must be a file: the read and write pools are separate connections, so an
// in-memory database would give each its own empty database.
func Open(ctx context.Context, path string, opts db.Options, log *zap.Logger) (*Store, error) {
	if path == "" || path == ":memory:" {
		return nil, fmt.Errorf("open sqlite: path %q is not a database file; give a file path such as ./threadflow.db", path)
	}
	if log == nil {
		log = zap.NewNop()
	}
	w, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	s := &Store{w: w, ws: newStmtCache(w), now: opts.Clock(), log: log}
	s.Machine = &db.Machine{Driver: driver{s}, Dialect: dialect, Now: s.clock, Moved: func(op db.Op, r db.Run) {
		log.Debug("sqlite.run_transitioned", zap.String("run", r.ID), zap.String("op", string(op)), zap.String("status", string(r.Status)))
	}}
	if err := s.migrateLocked(ctx, path); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	r, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	r.SetMaxOpenConns(readConns)
	// database/sql keeps 2 idle connections by default: under a burst of reads the other two were
	// closed as soon as they were returned and opened again by the next read, each open parsing the
	// schema and preparing its statements anew (BENCHMARKS.md, dispatch).
	r.SetMaxIdleConns(readConns)
	s.r = newReader(r)
	return s, nil
}

// dsn builds the connection string. foreign_keys is per connection in SQLite, so it is a DSN pragma
// and not part of the migration.
func dsn(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	// Reads through a memory map of the file rather than a read system call per page: with 100,000
	// runs (145 MB) the dashboard's page no longer fits SQLite's 2 MB page cache, and it grew 1.5x
	// from 1,000 runs without the map, flat with it (BENCHMARKS.md, issue 34). The map is address
	// space, backed by the kernel's page cache that every connection shares; 256 MiB covers a
	// database kept at the default retention. (A disk error while reading a mapped page ends the
	// process with SIGBUS instead of returning an error: the bot stops, and its runs are rescued.)
	q.Add("_pragma", "mmap_size(268435456)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Set("_txlock", "immediate")
	}
	return "file:" + path + "?" + q.Encode()
}

// Ready reports nil when both pools answer and no migration is pending.
func (s *Store) Ready(ctx context.Context) error {
	for _, p := range []*sql.DB{s.w, s.r.DB} {
		if err := p.PingContext(ctx); err != nil {
			return fmt.Errorf("sqlite ping: %w", translate(err))
		}
	}
	pending, err := s.migrator.HasPending(ctx)
	if err != nil {
		return fmt.Errorf("sqlite migrations: %w", translate(err))
	}
	if pending {
		return errors.New("sqlite: database migrations are pending; restart the bot or run `threadflow migrate`")
	}
	return nil
}

// ProbeWrite rewrites the replica's row in write_probes.
func (s *Store) ProbeWrite(ctx context.Context, replica string) error {
	return s.write(ctx, func(tx *wtx) error {
		q, args := dialect.ProbeWrite(replica, s.clock())
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("sqlite write probe: %w", translate(err))
		}
		return nil
	})
}

// Close closes both pools.
func (s *Store) Close() error {
	return errors.Join(s.r.stmts.close(), s.r.Close(), s.ws.close(), s.w.Close())
}

// clock returns the injected time, in UTC.
func (s *Store) clock() time.Time { return s.now().UTC() }
