package agent

import (
	"context"
	"errors"
	"io/fs"
	"os/exec"

	"threadflow/db"
)

// Error is a failed agent turn, classified where it happened.
type Error struct {
	Class db.ErrorClass
	// Msg is a short sentence safe to show in chat: what went wrong and what to do about it.
	Msg string
	// SessionID is the session the failing turn ran in, when the CLI reported one and it is still
	// usable. It is always empty for db.ClassStaleSession.
	SessionID string
	// Hint says what a person can do about it, when something can be done (log in, allow a
	// permission, fix the network); shown with recovery pauses.
	Hint string
	// LastError is the CLI's last error, quoted, for a turn stopped before it finished.
	LastError string
	// Err carries the details for logs: exit status, the CLI's error text, the tail of stderr.
	Err error
	// Usage is what the failed turn used, when the CLI reported it (a failed result still costs).
	Usage *db.AgentUsageData
	// BudgetStop: the CLI stopped the turn at the cap it was given (Request.MaxBudgetNanos).
	BudgetStop bool
}

func (e *Error) Error() string {
	if e.Err == nil {
		return e.Msg
	}
	return e.Msg + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// ClassOf returns the class of err: the class an *Error carries, or a best guess for other errors
// (a missing binary or directory is infrastructure, a deadline is transient). It returns "" for nil.
func ClassOf(err error) db.ErrorClass {
	if err == nil {
		return ""
	}
	var ae *Error
	if errors.As(err, &ae) {
		return ae.Class
	}
	switch {
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission):
		return db.ClassInfra
	case errors.Is(err, context.DeadlineExceeded):
		return db.ClassTransient
	}
	return db.ClassPermanent
}
