package db

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Domain errors. Engines translate driver errors into these at their boundary; callers check them
// with errors.Is and errors.As.
var (
	// ErrNotFound: no such run, session or conversation.
	ErrNotFound = errors.New("not found")
	// ErrNoQueuedRun: ClaimRun found nothing to claim.
	ErrNoQueuedRun = errors.New("no queued run")
	// ErrLeaseLost: the worker's lease token is no longer the run's; it must stop the run at once.
	ErrLeaseLost = errors.New("lease lost")
	// ErrConflict: a write contradicts what is already recorded. Never retry it.
	ErrConflict = errors.New("conflicting write")
	// ErrInvalidTransition: the run is not in a status the transition leaves from.
	ErrInvalidTransition = errors.New("invalid transition")
	// ErrUnavailable: the database could not be reached or timed out. Retrying may help.
	ErrUnavailable = errors.New("database unavailable")
	// ErrDuplicate: an id that must be unique is already taken.
	ErrDuplicate = errors.New("duplicate")
	// ErrUnwritable: the database refuses writes (its disk is full, it is read-only, or an I/O error).
	// Retrying at once does not help; someone has to free space or fix the database.
	ErrUnwritable = errors.New("the database cannot store writes")
)

// TransitionError is returned when a compare-and-set finds the run in another status. It matches
// ErrInvalidTransition, and ErrLeaseLost when the write carried a lease.
type TransitionError struct {
	RunID string
	Op    Op
	Found Status // the status actually found; empty when the run does not exist
	Lease bool   // the write carried a lease token
}

func (e *TransitionError) Error() string {
	if e.Found == "" {
		return fmt.Sprintf("%s run %s: run not found", e.Op, e.RunID)
	}
	if e.Lease {
		return fmt.Sprintf("%s run %s: lease lost (run is %s)", e.Op, e.RunID, e.Found)
	}
	want := make([]string, 0, 4)
	for _, s := range Transitions[e.Op].From {
		want = append(want, string(s))
	}
	return fmt.Sprintf("%s run %s: run is %s, not %s", e.Op, e.RunID, e.Found, strings.Join(want, " or "))
}

// Is makes TransitionError match its sentinels.
func (e *TransitionError) Is(target error) bool {
	switch target {
	case ErrInvalidTransition:
		return true
	case ErrLeaseLost:
		return e.Lease
	case ErrNotFound:
		return e.Found == ""
	}
	return false
}

// GateResolvedError is returned when a gate was already answered; it says by whom and how.
type GateResolvedError struct {
	RunID    string
	Node     string
	Decision GateDecision
	By       string
	ByName   string // By's display name, for messages; "" when none was recorded
	At       time.Time
}

func (e *GateResolvedError) Error() string {
	return fmt.Sprintf("gate %s of run %s was already answered (%s by %s)", e.Node, e.RunID, e.Decision, e.By)
}

// Is makes GateResolvedError match ErrInvalidTransition.
func (e *GateResolvedError) Is(target error) bool { return target == ErrInvalidTransition }
