package sqlite

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/pressly/goose/v3"
	"go.uber.org/zap"

	"threadflow/migrations"
)

// migrateLocked migrates while holding an exclusive lock on the file path+".migrate-lock". SQLite
// has no advisory lock like the one goose takes on PostgreSQL, and two processes opening a new
// database at once (two `bot chat` commands, say) would otherwise both create the first tables
// and one would fail with "table ... already exists".
func (s *Store) migrateLocked(ctx context.Context, path string) error {
	f, err := os.OpenFile(path+".migrate-lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("migration lock: %w", err)
	}
	defer f.Close() // closing the file releases the lock
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("migration lock %s: %w", f.Name(), err)
	}
	return s.migrate(ctx)
}

// migrate applies the embedded migrations that the database does not have yet.
func (s *Store) migrate(ctx context.Context) error {
	fsys, err := fs.Sub(migrations.SQLite, "sqlite")
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, s.w, fsys)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	s.migrator = p
	res, err := p.Up(ctx)
	if err != nil {
		return fmt.Errorf("apply migrations: %w", translate(err))
	}
	for _, r := range res {
		s.log.Debug("sqlite.migration_applied", zap.Int64("version", r.Source.Version), zap.Duration("took", r.Duration))
	}
	return nil
}
