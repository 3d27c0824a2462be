package db

import "fmt"

// Op names a state-machine transition. Each is exactly one Store method.
type Op string

// The transitions of the run state machine.
const (
	OpCreate   Op = "create"
	OpClaim    Op = "claim"
	OpPause    Op = "pause"
	OpComplete Op = "complete"
	OpFail     Op = "fail"
	OpRelease  Op = "release"
	OpRescue   Op = "rescue"
	OpResume   Op = "resume"
	OpApprove  Op = "approve" // approve or answer a gate
	OpReject   Op = "reject"
	OpCancel   Op = "cancel"
)

// Transition is one row of the state-machine table.
type Transition struct {
	From  []Status
	To    Status
	Event EventType
	Lease bool // the write carries the worker's lease token
}

// Transitions is the run state machine. Engines build their compare-and-set WHERE clauses from it,
// so this table, docs/state-machine.md and the SQL cannot drift apart.
//
// Two transitions narrow From further by the pause kind: OpResume leaves paused only for a recovery
// pause, OpApprove and OpReject only for a gate pause. OpRescue also needs an expired lease, and moves
// to failed (EventRunFailed) instead of queued when the recovery budget is exhausted.
var Transitions = map[Op]Transition{
	OpCreate:   {From: nil, To: StatusQueued, Event: EventRunCreated},
	OpClaim:    {From: []Status{StatusQueued}, To: StatusRunning, Event: EventRunClaimed},
	OpPause:    {From: []Status{StatusRunning}, To: StatusPaused, Event: EventGateRequested, Lease: true},
	OpComplete: {From: []Status{StatusRunning}, To: StatusCompleted, Event: EventRunCompleted, Lease: true},
	OpFail:     {From: []Status{StatusRunning}, To: StatusFailed, Event: EventRunFailed, Lease: true},
	OpRelease:  {From: []Status{StatusRunning}, To: StatusQueued, Event: EventRunReleased, Lease: true},
	OpRescue:   {From: []Status{StatusRunning}, To: StatusQueued, Event: EventRunRescued},
	OpResume:   {From: []Status{StatusFailed, StatusPaused}, To: StatusQueued, Event: EventResumeRequested},
	OpApprove:  {From: []Status{StatusPaused}, To: StatusQueued, Event: EventGateResolved},
	OpReject:   {From: []Status{StatusPaused}, To: StatusCancelled, Event: EventGateResolved},
	OpCancel:   {From: []Status{StatusQueued, StatusRunning, StatusPaused, StatusFailed}, To: StatusCancelled, Event: EventRunCancelled},
}

// Allows reports whether op may leave status s (ignoring pause-kind and lease refinements).
func (op Op) Allows(s Status) bool {
	for _, f := range Transitions[op].From {
		if f == s {
			return true
		}
	}
	return false
}

// RecoveryBudgetExhausted is the reason recorded when a rescue finds a run past its recovery budget:
// rescues is how many times in a row it lost its worker without completing a node.
func RecoveryBudgetExhausted(rescues, limit int) RunError {
	times := fmt.Sprintf("%d times in a row", rescues)
	if rescues == 1 {
		times = "once"
	}
	return RunError{Class: ClassBudget, Message: fmt.Sprintf("the run lost its worker %s without completing a node "+
		"(MAX_RECOVERIES is %d); fix the cause (a crash or a node that never finishes), then resume it", times, limit)}
}
