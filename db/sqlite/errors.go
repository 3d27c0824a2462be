package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"threadflow/db"
)

// translate turns a driver error into the matching domain error, keeping the driver's message as
// context. Errors that are not from the driver pass through unchanged.
func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return db.ErrNotFound
	}
	// Waiting for the single writer past the caller's deadline is the database being unavailable:
	// one retryable sentinel for "could not get to the database".
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", db.ErrUnavailable, err)
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return err
	}
	switch code := se.Code(); {
	case code == sqlite3.SQLITE_CONSTRAINT_UNIQUE || code == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return fmt.Errorf("%w: %w", db.ErrDuplicate, err)
	case code == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
		return fmt.Errorf("%w: %w", db.ErrNotFound, err)
	case code&0xff == sqlite3.SQLITE_BUSY || code&0xff == sqlite3.SQLITE_LOCKED:
		return fmt.Errorf("%w: %w", db.ErrUnavailable, err)
	case code&0xff == sqlite3.SQLITE_FULL || code&0xff == sqlite3.SQLITE_IOERR || code&0xff == sqlite3.SQLITE_READONLY:
		return fmt.Errorf("%w: %w", db.ErrUnwritable, err)
	}
	return err
}

func isNotFound(err error) bool { return errors.Is(err, db.ErrNotFound) }
