package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"threadflow/db"
)

func TestTranslate(t *testing.T) {
	plain := errors.New("syntax error at or near SELEKT")
	tests := []struct {
		name string
		err  error
		is   error  // the domain error the translation must match; nil means none
		says string // in the message
	}{
		{"no rows", pgx.ErrNoRows, db.ErrNotFound, "not found"},
		{"unique violation", &pgconn.PgError{Code: "23505", ConstraintName: "runs_pkey"}, db.ErrDuplicate, "duplicate"},
		{"missing conversation", &pgconn.PgError{Code: "23503", ConstraintName: "runs_conversation_id_fkey"},
			db.ErrNotFound, "conversation does not exist"},
		{"missing parent conversation", &pgconn.PgError{Code: "23503", ConstraintName: "conversations_parent_id_fkey"},
			db.ErrNotFound, "parent conversation does not exist"},
		{"unknown foreign key", &pgconn.PgError{Code: "23503", ConstraintName: "later_fkey"}, db.ErrNotFound, "does not exist"},
		{"connection exception", &pgconn.PgError{Code: "08006"}, db.ErrUnavailable, "unavailable"},
		{"server shutting down", &pgconn.PgError{Code: "57P01"}, db.ErrUnavailable, "unavailable"},
		{"too many connections", &pgconn.PgError{Code: "53300"}, db.ErrUnavailable, "unavailable"},
		{"disk full", &pgconn.PgError{Code: "53100", Message: "could not extend file"}, db.ErrUnwritable, "cannot store writes"},
		{"read-only standby", &pgconn.PgError{Code: "25006"}, db.ErrUnwritable, "cannot store writes"},
		{"deadline", fmt.Errorf("query: %w", context.DeadlineExceeded), db.ErrUnavailable, "deadline"},
		{"connection cut", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), db.ErrUnavailable, "unexpected EOF"},
		{"other server error", &pgconn.PgError{Code: "42601", Message: "syntax error"}, nil, "syntax error"},
		{"other error", plain, nil, "SELEKT"},
		{"translated twice", translate(pgx.ErrNoRows), db.ErrNotFound, "not found: no rows"},
		{"domain error passes", &db.TransitionError{RunID: "r", Op: db.OpResume, Found: db.StatusQueued}, db.ErrInvalidTransition, "run is queued"},
	}
	domain := []error{db.ErrNotFound, db.ErrDuplicate, db.ErrUnavailable, db.ErrInvalidTransition, db.ErrUnwritable}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := translate(tc.err)
			if !strings.Contains(got.Error(), tc.says) || strings.Count(got.Error(), "not found") > 1 {
				t.Fatalf("translate(%v) = %q, want it to mention %q", tc.err, got, tc.says)
			}
			for _, d := range domain {
				if want := d == tc.is; errors.Is(got, d) != want {
					t.Fatalf("translate(%v) = %v: errors.Is(%v) = %v, want %v", tc.err, got, d, !want, want)
				}
			}
		})
	}
	if translate(nil) != nil {
		t.Fatal("translate(nil) is not nil")
	}
}
