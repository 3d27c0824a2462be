package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"threadflow/db"
	"threadflow/db/postgres"
	"threadflow/db/sqlite"
)

// adminTimeout bounds creating or dropping a database, so a wedged server fails the bench instead
// of hanging it.
const adminTimeout = 30 * time.Second

// database is one fresh, empty database of an engine: a SQLite file in its own directory, or a
// PostgreSQL database created for it. drop removes it.
type database struct {
	engine string
	home   string // THREADFLOW_HOME of everything using it: run directories, the SQLite file
	url    string // PostgreSQL database URL; empty for SQLite
	drop   func() error
}

// newDatabase creates a fresh database for one scenario on engine.
func (b *bench) newDatabase(ctx context.Context, engine string) (*database, error) {
	home, err := os.MkdirTemp("", "threadflow-bench-")
	if err != nil {
		return nil, fmt.Errorf("temp home: %w", err)
	}
	d := &database{engine: engine, home: home, drop: func() error { return os.RemoveAll(home) }}
	if engine == "sqlite" {
		return d, nil
	}
	name := "threadflow_bench_" + db.NewToken()[:16]
	if err := adminExec(ctx, b.opts.pgURL, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		_ = os.RemoveAll(home)
		return nil, err
	}
	u, err := url.Parse(b.opts.pgURL)
	if err != nil {
		return nil, fmt.Errorf("-postgres is not a URL: %w", err)
	}
	u.Path = "/" + name
	d.url = u.String()
	d.drop = func() error {
		// FORCE ends connections a killed bot left open, so the drop never waits on them.
		err := adminExec(context.Background(), b.opts.pgURL, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
		if rmErr := os.RemoveAll(home); err == nil {
			err = rmErr
		}
		return err
	}
	return d, nil
}

// open opens (and migrates) a store on the database, as the bot does at start.
func (d *database) open(ctx context.Context, log *zap.Logger) (db.Store, error) {
	if d.engine == "postgres" {
		st, err := postgres.Open(ctx, d.url, db.Options{}, log)
		if err != nil {
			return nil, err
		}
		return st, nil
	}
	st, err := sqlite.Open(ctx, filepath.Join(d.home, "threadflow.db"), db.Options{}, log)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// adminExec runs one statement on the server's admin database.
func adminExec(ctx context.Context, adminURL, stmt string) error {
	ctx, cancel := context.WithTimeout(ctx, adminTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("connect to PostgreSQL (set -postgres): %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, stmt); err != nil {
		return fmt.Errorf("%s: %w", stmt, err)
	}
	return nil
}
