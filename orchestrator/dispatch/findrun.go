package dispatch

import (
	"context"
	"fmt"
	"strings"

	"threadflow/conversation"
	"threadflow/db"
)

// runCandidates is how many runs an ambiguous prefix lists.
const runCandidates = 6

// RunLookupError is a typed run id that names no run, or more than one: chat and the CLI tell
// people the same sentence, each with its own hint on where to see the ids.
type RunLookupError struct {
	Typed   string
	Invalid string   // why Typed cannot stand for a run (db.RunIDProblem); "" when it can
	Matches []db.Run // the runs whose id starts with it: none, or the first few of several
}

// Error is the sentence on one line, the candidates in parentheses.
func (e *RunLookupError) Error() string {
	switch {
	case e.Invalid != "":
		return fmt.Sprintf("the run id %q %s", e.Typed, e.Invalid)
	case len(e.Matches) == 0:
		return fmt.Sprintf("no run has an id starting with %q", e.Typed)
	}
	var c []string
	for _, r := range e.Matches {
		c = append(c, fmt.Sprintf("%s (%s, %s)", r.ID, r.Workflow, r.Status))
	}
	return fmt.Sprintf("more than one run starts with %q; type more of the id: %s", e.Typed, strings.Join(c, ", "))
}

// Text is the sentence for chat, the candidates one a line, then the hint.
func (e *RunLookupError) Text(hint conversation.Text) conversation.Text {
	var t conversation.Text
	switch {
	case e.Invalid != "":
		t = conversation.T(conversation.P("The run id "), conversation.U(e.Typed), conversation.P(" "+e.Invalid+"."))
	case len(e.Matches) == 0:
		t = conversation.T(conversation.P("No run has an id starting with "), conversation.C(e.Typed), conversation.P("."))
	default:
		t = conversation.T(conversation.P("More than one run starts with "), conversation.C(e.Typed), conversation.P("; type more of the id:"))
		for _, r := range e.Matches {
			t = t.Append(conversation.P("\n• "), conversation.C(r.ID), conversation.P(" "+r.Workflow+" ("+string(r.Status)+")"))
		}
		return t
	}
	if len(hint) > 0 {
		t = append(t.Append(conversation.P(" ")), hint...)
	}
	return t
}

// RunFinder is the part of the store FindRun reads.
type RunFinder interface {
	FindRunsByPrefix(ctx context.Context, prefix string, limit int) ([]db.Run, error)
}

// FindRun is the one rule for the run a person means by what they typed, in chat and in the CLI:
// a full run id, or a prefix of at least db.MinPrefix characters that no other run's id starts
// with, in any case. Anything else is a *RunLookupError.
func FindRun(ctx context.Context, st RunFinder, typed string) (db.Run, error) {
	id := strings.ToLower(strings.TrimSpace(typed))
	if why := db.RunIDProblem(id); why != "" {
		return db.Run{}, &RunLookupError{Typed: typed, Invalid: why}
	}
	runs, err := st.FindRunsByPrefix(ctx, id, runCandidates)
	if err != nil {
		return db.Run{}, err
	}
	if len(runs) != 1 {
		return db.Run{}, &RunLookupError{Typed: id, Matches: runs}
	}
	return runs[0], nil
}
