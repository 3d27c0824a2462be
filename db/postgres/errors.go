package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"threadflow/db"
)

// PostgreSQL error codes the store translates.
const (
	codeUniqueViolation     = "23505"
	codeForeignKeyViolation = "23503"
	codeTooManyConnections  = "53300"
	codeAdminShutdown       = "57P01"
	codeCannotConnectNow    = "57P03"
	codeDiskFull            = "53100"
	codeIOError             = "58030"
	codeReadOnlyTransaction = "25006" // a standby, or default_transaction_read_only
	codeInvalidCatalogName  = "3D000" // the database the URL names does not exist
)

// foreignKeys says, per constraint, which referenced row was missing; PostgreSQL's default names.
var foreignKeys = map[string]string{
	"runs_conversation_id_fkey":    "the run's conversation does not exist (ensure the conversation first)",
	"conversations_parent_id_fkey": "the parent conversation does not exist (ensure the channel before its thread)",
	"run_events_run_id_fkey":       "the event's run does not exist",
}

// translate turns a driver error into a domain error of package db, keeping the driver error in the
// chain for logs. Errors that are already domain errors pass through unchanged.
func translate(err error) error {
	if err == nil {
		return nil
	}
	var pgErr *pgconn.PgError
	switch {
	case isDomain(err):
		return err
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("%w: %w", db.ErrNotFound, err)
	case errors.As(err, &pgErr):
		return translatePg(pgErr, err)
	case unavailable(err):
		return fmt.Errorf("%w: %w", db.ErrUnavailable, err)
	}
	return err
}

// translatePg maps server-reported errors by SQLSTATE.
func translatePg(pgErr *pgconn.PgError, err error) error {
	switch pgErr.Code {
	case codeUniqueViolation:
		return fmt.Errorf("%w: %w", db.ErrDuplicate, err)
	case codeForeignKeyViolation:
		what, ok := foreignKeys[pgErr.ConstraintName]
		if !ok {
			what = "a referenced record does not exist"
		}
		return fmt.Errorf("%s: %w", what, db.ErrNotFound)
	case codeTooManyConnections, codeAdminShutdown, codeCannotConnectNow:
		return fmt.Errorf("%w: %w", db.ErrUnavailable, err)
	case codeDiskFull, codeIOError, codeReadOnlyTransaction:
		return fmt.Errorf("%w: %w", db.ErrUnwritable, err)
	}
	if pgconn.SafeToRetry(err) || strings.HasPrefix(pgErr.Code, "08") { // class 08: connection exception
		return fmt.Errorf("%w: %w", db.ErrUnavailable, err)
	}
	return err
}

// isDomain reports whether err was translated already (or never came from the driver).
func isDomain(err error) bool {
	for _, d := range []error{db.ErrNotFound, db.ErrNoQueuedRun, db.ErrConflict, db.ErrInvalidTransition,
		db.ErrUnavailable, db.ErrDuplicate, db.ErrUnwritable} {
		if errors.Is(err, d) {
			return true
		}
	}
	return false
}

// unavailable reports whether err means the database could not be reached or did not answer in time.
func unavailable(err error) bool {
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	switch {
	case errors.As(err, &connectErr), errors.As(err, &netErr):
		return true
	case errors.Is(err, context.DeadlineExceeded), pgconn.Timeout(err):
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return true
	}
	return pgconn.SafeToRetry(err)
}

// isCode reports whether err carries a server error with SQLSTATE code.
func isCode(err error, code string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == code
}

// createDatabaseHint says how to create the database c names on its server, as commands to copy:
// createdb with the URL's host, port and user, or CREATE DATABASE. It never holds the password
// (createdb asks for it, or reads PGPASSWORD).
func createDatabaseHint(c *pgconn.Config) string {
	args := []string{"createdb", "-h", shellWord(c.Host), "-p", strconv.Itoa(int(c.Port))}
	if c.User != "" {
		args = append(args, "-U", shellWord(c.User))
	}
	args = append(args, shellWord(c.Database))
	name := c.Database
	if !plainIdentifier.MatchString(name) {
		name = pgx.Identifier{name}.Sanitize()
	}
	return fmt.Sprintf("create it with `%s` (or `CREATE DATABASE %s;` in psql), or name an existing database in the URL",
		strings.Join(args, " "), name)
}

// plainIdentifier is a name PostgreSQL takes unquoted without folding it.
var plainIdentifier = regexp.MustCompile(`^[a-z_][a-z0-9_$]*$`)

// shellWord quotes s for a POSIX shell when it holds anything beyond plain characters.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,/:@%+=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
