// Package postgres is the PostgreSQL engine of db.Store. It owns the pgx connection pool, applies the
// embedded migrations at Open under a session advisory lock (so replicas starting together migrate
// once), and implements every run transition as one compare-and-set UPDATE with its event appended in
// the same transaction. Driver errors are translated into the domain errors of package db here.
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"go.uber.org/zap"

	"threadflow/db"
)

// Store is a db.Store on PostgreSQL. It is safe for concurrent use, also by several processes
// sharing one database.
type Store struct {
	*db.Machine // the state-machine methods: the transition core on this engine's driver

	pool     *pgxpool.Pool
	leases   *pgxpool.Pool // lease renewals only: see openLeasePool
	sqlDB    *sql.DB       // database/sql view of pool, for goose only
	migrator *goose.Provider
	clock    func() time.Time
	log      *zap.Logger
	connCfg  *pgx.ConnConfig // for the transcript listener's own connection

	changes    db.TranscriptChanges // wakes this process's transcript readers (see listen.go)
	listenOnce sync.Once
	listenMu   sync.Mutex
	closed     bool
	stopListen context.CancelFunc
	listenDone chan struct{}
}

var _ db.Store = (*Store)(nil)

// defaultMaxConns is the pool size when the URL does not choose one.
const defaultMaxConns = 24

// Open connects to the database at url, applies pending migrations and returns the store. log may be
// nil. The url is a PostgreSQL connection string, for example
// postgres://user:password@host:5432/threadflow?sslmode=disable.
//
// The pool keeps up to opts.Connections connections (defaultMaxConns when 0) unless the URL sets
// pool_max_conns.
func Open(ctx context.Context, url string, opts db.Options, log *zap.Logger) (*Store, error) {
	if log == nil {
		log = zap.NewNop()
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: invalid database URL (want postgres://user:password@host:5432/dbname?sslmode=disable): %w", err)
	}
	if !strings.Contains(url, "pool_max_conns") {
		// pgxpool's default (4 on this machine) starves a bot: inbox workers, run workers and their
		// heartbeats all write at once. The URL's pool_max_conns still wins when given.
		cfg.MaxConns = defaultMaxConns
		if opts.Connections > 0 {
			cfg.MaxConns = opts.Connections
		}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: create pool: %w", err)
	}
	leases, err := openLeasePool(ctx, cfg, pool, opts)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s := &Store{pool: pool, leases: leases, sqlDB: stdlib.OpenDBFromPool(pool), clock: opts.Clock(), log: log, connCfg: cfg.ConnConfig}
	s.Machine = &db.Machine{Driver: driver{s}, Dialect: dialect, Now: s.now, Moved: func(op db.Op, r db.Run) {
		log.Debug("postgres.run_transitioned", zap.String("run", r.ID), zap.String("op", string(op)), zap.String("status", string(r.Status)))
	}}
	if err := s.start(ctx, cfg); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	return s, nil
}

// openLeasePool opens the one connection lease renewals use, apart from the pool every other
// statement queues for: behind a replica's own burst of work (a thousand runs taken over at once,
// each writing its events) a renewal waited for a connection until the replica's leases expired
// under it and its rescuer took its own runs for crashed (BENCHMARKS.md, recovery). pgxpool has no
// priorities, hence a pool of its own; it connects on the first renewal. A local command
// (opts.Connections set) drives one conversation's runs and shares its small pool instead.
func openLeasePool(ctx context.Context, cfg *pgxpool.Config, main *pgxpool.Pool, opts db.Options) (*pgxpool.Pool, error) {
	if opts.Connections > 0 {
		return main, nil
	}
	lc := cfg.Copy()
	lc.MaxConns, lc.MinConns = 1, 0
	p, err := pgxpool.NewWithConfig(ctx, lc)
	if err != nil {
		return nil, fmt.Errorf("postgres: create lease pool: %w", err)
	}
	return p, nil
}

// start checks the database answers and brings its schema up to date.
func (s *Store) start(ctx context.Context, cfg *pgxpool.Config) error {
	if err := s.pool.Ping(ctx); err != nil {
		c := cfg.ConnConfig
		err = fmt.Errorf("postgres: connect to %s:%d/%s: %w", c.Host, c.Port, c.Database, translate(err))
		if isCode(err, codeInvalidCatalogName) {
			return fmt.Errorf("%w; %s", err, createDatabaseHint(&c.Config))
		}
		return err
	}
	m, err := newMigrator(s.sqlDB)
	if err != nil {
		return err
	}
	s.migrator = m
	return s.migrate(ctx)
}

// Ready reports nil when the database answers and every migration is applied.
func (s *Store) Ready(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("postgres: ping: %w", translate(err))
	}
	pending, err := s.migrator.HasPending(ctx)
	if err != nil {
		return fmt.Errorf("postgres: check migrations: %w", translate(err))
	}
	if pending {
		return ErrPendingMigrations
	}
	return nil
}

// ProbeWrite rewrites the replica's row in write_probes.
func (s *Store) ProbeWrite(ctx context.Context, replica string) error {
	q, args := dialect.ProbeWrite(replica, s.now())
	if _, err := s.pool.Exec(ctx, q, args...); err != nil {
		return fmt.Errorf("postgres: write probe: %w", translate(err))
	}
	return nil
}

// Close releases the pool. It is safe to call once.
func (s *Store) Close() error {
	s.stopListener()
	var err error
	if s.migrator != nil {
		err = s.migrator.Close() // closes sqlDB
	} else {
		err = s.sqlDB.Close()
	}
	if s.leases != s.pool {
		s.leases.Close()
	}
	s.pool.Close()
	return err
}

// now is the injected clock, in UTC and truncated to the microseconds PostgreSQL stores, so a
// returned run compares equal to the same run read back.
func (s *Store) now() time.Time {
	return s.clock().UTC().Truncate(time.Microsecond)
}
