package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"go.uber.org/zap"

	"threadflow/db"
	"threadflow/db/postgres"
	"threadflow/db/sqlite"
	"threadflow/orchestrator/execution"
)

// storeOpenTimeout bounds connecting and migrating at start-up, so an unreachable database host
// fails the start with a message instead of hanging. Replicas waiting for another one's migration
// lock wait within it too.
const storeOpenTimeout = 2 * time.Minute

// prepareHome creates THREADFLOW_HOME, private to the bot's user: it holds the database and
// worktrees. It reads (or writes) the home's marker, whose token tells replicas that share the
// home from those that do not (docs/deploy.md, "Workspaces").
func prepareHome(c *Config) error {
	if err := os.MkdirAll(c.Home, 0o700); err != nil {
		return homeError("cannot be created", c.Home, err)
	}
	// Probe with a file of our own: otherwise an unwritable directory surfaces later as SQLite's
	// "unable to open database file (14)", which names neither the setting nor the permission.
	f, err := os.CreateTemp(c.Home, ".write-probe-*")
	if err != nil {
		return homeError("is not writable", c.Home, err)
	}
	name := f.Name()
	if err := errors.Join(f.Close(), os.Remove(name)); err != nil {
		return err
	}
	token, err := execution.HomeToken(c.Home)
	if err != nil {
		return homeError("has no usable marker", c.Home, err)
	}
	c.HomeToken = token
	return nil
}

// homeError names THREADFLOW_HOME, what the file system said and what to do about it.
func homeError(what, home string, err error) error {
	fix := "set THREADFLOW_HOME (or -home) to a directory this user can write"
	if errors.Is(err, fs.ErrPermission) {
		fix = fmt.Sprintf("the user running the bot (uid %d) lacks write permission there: give it write permission (chown or chmod u+w), or %s", os.Getuid(), fix)
	}
	return fmt.Errorf("THREADFLOW_HOME=%s %s: %w; %s", home, what, err, fix)
}

// openStore opens the configured engine, applying pending migrations. The error names the
// database (without its password) so the operator knows which one could not be reached.
func openStore(ctx context.Context, c Config, opts db.Options, log *zap.Logger) (db.Store, error) {
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
		st, err = openPostgres(ctx, c, opts, log)
	default:
		st, err = openSQLite(ctx, c, opts, log)
	}
	if err != nil {
		// The error is returned and printed once as the command's answer; this line is for the
		// server's log (info), so a terminal at its default warn level shows the error only once.
		log.Info("db.open_failed", zap.String("error", scrub(err.Error(), c.secrets())))
		return nil, fmt.Errorf("open %s database %s: %w", c.Engine, c.redactedDatabase(), err)
	}
	log.Info("db.open_completed")
	return st, nil
}

// openPostgres and openSQLite return the interface only when Open succeeded, so a failed open never
// yields a non-nil interface holding a nil pointer.
func openPostgres(ctx context.Context, c Config, opts db.Options, log *zap.Logger) (db.Store, error) {
	st, err := postgres.Open(ctx, c.DatabaseURL, opts, log)
	if err != nil {
		return nil, err
	}
	return st, nil
}

func openSQLite(ctx context.Context, c Config, opts db.Options, log *zap.Logger) (db.Store, error) {
	st, err := sqlite.Open(ctx, c.SQLitePath(), opts, log)
	if err != nil {
		return nil, err
	}
	return st, nil
}
