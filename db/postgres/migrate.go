package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"go.uber.org/zap"

	"threadflow/migrations"
)

// ErrPendingMigrations is reported by Ready when the schema is older than this binary.
var ErrPendingMigrations = errors.New("postgres: database schema has pending migrations; restart the bot (or run its migrate subcommand) to apply them")

// Lock probing: replicas that lose the race for the migration lock retry every second for up to five
// minutes, which covers any migration this project ships.
const (
	lockRetrySeconds = 1
	lockRetries      = 300
)

// newMigrator builds the goose provider for the embedded migrations. The session locker takes a
// PostgreSQL advisory lock (scoped to the database) around Up, so concurrent Opens apply each
// migration once and the losers find nothing pending.
func newMigrator(sqlDB *sql.DB) (*goose.Provider, error) {
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(lockRetrySeconds, lockRetries))
	if err != nil {
		return nil, fmt.Errorf("postgres: migration lock: %w", err)
	}
	fsys, err := fs.Sub(migrations.Postgres, "postgres")
	if err != nil {
		return nil, fmt.Errorf("postgres: embedded migrations: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, fsys,
		goose.WithSessionLocker(locker),
		goose.WithDisableGlobalRegistry(true), // no Go migrations; ignore goose's package-level registry
		goose.WithLogger(goose.NopLogger()),   // results are logged below, through zap
	)
	if err != nil {
		return nil, fmt.Errorf("postgres: migrations: %w", err)
	}
	return p, nil
}

// migrate applies pending migrations and logs each one.
func (s *Store) migrate(ctx context.Context) error {
	results, err := s.migrator.Up(ctx)
	if err != nil {
		return fmt.Errorf("postgres: apply migrations: %w", translate(err))
	}
	for _, r := range results {
		s.log.Info("postgres.migration_applied",
			zap.Int64("version", r.Source.Version),
			zap.String("file", r.Source.Path),
			zap.Duration("took", r.Duration))
	}
	return nil
}
