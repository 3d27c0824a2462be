package workflow

import (
	"cmp"
	"fmt"
)

// NodeState is what the orchestrator knows about a node in one run.
type NodeState string

// Node states. Completed, failed and skipped are finished; pending and running are not.
const (
	StatePending   NodeState = "pending"
	StateRunning   NodeState = "running"
	StateCompleted NodeState = "completed"
	StateFailed    NodeState = "failed"
	StateSkipped   NodeState = "skipped"
)

// Verdict is what Decide says to do with a node now.
type Verdict int

// Verdicts. Wait is the zero value: nothing can be decided yet.
const (
	Wait Verdict = iota
	Run
	Skip
)

func (v Verdict) String() string {
	switch v {
	case Run:
		return "run"
	case Skip:
		return "skip"
	}
	return "wait"
}

// depTally counts dependency states, remembering the first dependency in each bad state so the
// reason names it.
type depTally struct {
	completed, unfinished     int
	firstFailed, firstSkipped string
}

func (n *Node) tally(deps map[string]NodeState) depTally {
	var t depTally
	for _, id := range n.DependsOn {
		switch deps[id] {
		case StateCompleted:
			t.completed++
		case StateFailed:
			t.firstFailed = cmp.Or(t.firstFailed, id)
		case StateSkipped:
			t.firstSkipped = cmp.Or(t.firstSkipped, id)
		default: // pending, running, or missing from the map
			t.unfinished++
		}
	}
	return t
}

// Decide applies the node's trigger rule to its dependencies' states (a missing entry is pending).
// The orchestrator evaluates `when` only after Decide says Run. The reason explains a Skip.
func (n *Node) Decide(deps map[string]NodeState) (v Verdict, reason string) {
	if len(n.DependsOn) == 0 {
		return Run, ""
	}
	t := n.tally(deps)
	allDone := t.unfinished == 0
	switch n.TriggerRule {
	case OneSuccess:
		if t.completed > 0 {
			return Run, ""
		}
		if allDone {
			return Skip, "no dependency completed (one_success)"
		}
	case NoneFailedMinOneSuccess:
		// A failure can never be undone, so there is no point waiting for the other dependencies.
		if t.firstFailed != "" {
			return Skip, fmt.Sprintf("dependency %s failed", t.firstFailed)
		}
		if allDone && t.completed > 0 {
			return Run, ""
		}
		if allDone {
			return Skip, "every dependency was skipped (none_failed_min_one_success)"
		}
	case AllDone:
		if allDone {
			return Run, ""
		}
	default: // AllSuccess, and the zero value of a Node built by hand
		if t.firstFailed != "" {
			return Skip, fmt.Sprintf("dependency %s failed", t.firstFailed)
		}
		if t.firstSkipped != "" {
			return Skip, fmt.Sprintf("dependency %s was skipped", t.firstSkipped)
		}
		if allDone {
			return Run, ""
		}
	}
	return Wait, ""
}
