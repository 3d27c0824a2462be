package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"go.uber.org/zap"

	"threadflow/db"
	"threadflow/db/postgres"
	"threadflow/db/sqlite"
)

// storeOpenTimeout bounds connecting and migrating at start-up, so an unreachable database host
// fails the start with a message instead of hanging. Replicas waiting for another one's migration
// lock wait within it too.
const storeOpenTimeout = 2 * time.Minute

// prepareHome creates THREADFLOW_HOME, private to the bot's user: it holds the database and
// worktrees.
func prepareHome(c Config) error {
	if err := os.MkdirAll(c.Home, 0o700); err != nil {
		return fmt.Errorf("create THREADFLOW_HOME %s: %w", c.Home, err)
	}
	return nil
}

// openStore opens the configured engine, applying pending migrations. The error names the
// database (without its password) so the operator knows which one could not be reached.
func openStore(ctx context.Context, c Config, log *zap.Logger) (db.Store, error) {
	ctx, cancel := context.WithTimeout(ctx, storeOpenTimeout)
	defer cancel()
	log = log.With(zap.String("engine", string(c.Engine)), zap.String("database", c.redactedDatabase()))
	log.Info("db.open_started")
	var (
		st  db.Store
		err error
	)
	switch c.Engine {
	case EnginePostgres:
		st, err = openPostgres(ctx, c, log)
	default:
		st, err = openSQLite(ctx, c, log)
	}
	if err != nil {
		log.Error("db.open_failed", zap.String("error", scrub(err.Error(), c.secrets())))
		return nil, fmt.Errorf("open %s database %s: %w", c.Engine, c.redactedDatabase(), err)
	}
	log.Info("db.open_completed")
	return st, nil
}

// openPostgres and openSQLite return the interface only when Open succeeded, so a failed open never
// yields a non-nil interface holding a nil pointer.
func openPostgres(ctx context.Context, c Config, log *zap.Logger) (db.Store, error) {
	st, err := postgres.Open(ctx, c.DatabaseURL, db.Options{}, log)
	if err != nil {
		return nil, err
	}
	return st, nil
}

func openSQLite(ctx context.Context, c Config, log *zap.Logger) (db.Store, error) {
	st, err := sqlite.Open(ctx, c.SQLitePath(), db.Options{}, log)
	if err != nil {
		return nil, err
	}
	return st, nil
}
