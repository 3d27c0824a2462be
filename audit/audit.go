// Package audit reads who did what to runs out of their events: who started, approved, rejected,
// resumed, cancelled or abandoned which run, when, and how the bot knew who they were. `bot audit`
// and the dashboard's /audit page both list what Read returns.
package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"threadflow/conversation"
	"threadflow/db"
	"threadflow/platform"
)

// The actions an Entry records.
const (
	Started   = "started"
	Approved  = "approved"
	Rejected  = "rejected"
	Refused   = "refused" // an answer the gate's rules turned down
	Resumed   = "resumed"
	Cancelled = "cancelled"
	Abandoned = "abandoned" // by a gate's on_timeout: abandon
)

// How an identity was verified.
const (
	ByPlatform = "platform"             // a Slack or Discord id: the platform said who sent it
	Unverified = "unverified"           // a name typed on the web chat without sign-in
	ByTerminal = "terminal"             // a console: name, someone with a shell on the bot's host
	BySystem   = "system"               // the bot itself (a gate's timeout)
	SignedIn   = conversation.ViaSignIn // signed in to the dashboard with the platform of the id
)

// Entry is one thing a person (or the bot) did to a run.
type Entry struct {
	At       time.Time `json:"at"`
	RunID    string    `json:"run_id"`
	Node     string    `json:"node,omitempty"` // the gate, for gate answers
	Action   string    `json:"action"`
	By       string    `json:"by"`             // the platform-qualified user id
	Name     string    `json:"name,omitempty"` // the display name recorded with it
	Verified string    `json:"verified"`       // how the bot knew who By is
	Detail   string    `json:"detail,omitempty"`
}

// Verification is how the bot knew the actor id is who it says, for an event that recorded no
// "via" (a dashboard sign-in records SignedIn). An id names its platform, and each platform vouches
// in its own way: Slack and Discord sign what they deliver, a terminal user has the host, a web name
// is typed.
func Verification(id string) string {
	if id == db.TimeoutActor || id == db.WorkflowActor {
		return BySystem
	}
	name, _, _ := platform.SplitUserID(id)
	switch name {
	case platform.Slack, platform.Discord:
		return ByPlatform
	case platform.Console:
		return ByTerminal
	}
	return Unverified
}

// Source is where the audit reads; db.Store satisfies it.
type Source interface {
	ActionEvents(ctx context.Context, since time.Time, limit int) ([]db.Event, error)
}

// Read lists what was done since a time, newest first, at most limit entries.
func Read(ctx context.Context, src Source, since time.Time, limit int) ([]Entry, error) {
	evs, err := src.ActionEvents(ctx, since, limit)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	return Entries(evs), nil
}

// Entries turns action events into entries, in the events' order. A rejection records the gate's
// answer and the run's cancellation together; it is listed once, as the rejection.
func Entries(evs []db.Event) []Entry {
	type key struct {
		run string
		at  time.Time
	}
	rejected := map[key]bool{}
	for _, e := range evs {
		if d, ok := decode[db.GateAnswerData](e); e.Type == db.EventGateResolved && ok && d.Decision == db.DecisionReject {
			rejected[key{e.RunID, e.At}] = true
		}
	}
	out := make([]Entry, 0, len(evs))
	for _, e := range evs {
		if e.Type == db.EventRunCancelled && rejected[key{e.RunID, e.At}] {
			continue
		}
		if en, ok := entry(e); ok {
			en.At, en.RunID = e.At, e.RunID
			if en.Verified == "" { // recorded only where the platform's own word is not the proof
				en.Verified = Verification(en.By)
			}
			out = append(out, en)
		}
	}
	return out
}

// entry reads one event; ok is false for an event that records no action or does not read.
func entry(e db.Event) (Entry, bool) {
	switch e.Type {
	case db.EventRunCreated:
		d, ok := decode[db.RunCreatedData](e)
		return Entry{Action: Started, By: d.User, Detail: d.Workflow, Verified: d.Via}, ok
	case db.EventGateApproval:
		d, ok := decode[db.GateApprovalData](e)
		return Entry{Node: e.NodeID, Action: Approved, By: d.By, Name: d.ByName, Detail: d.Text, Verified: d.Via}, ok
	case db.EventGateResolved:
		d, ok := decode[db.GateAnswerData](e)
		act := Approved
		if d.Decision == db.DecisionReject {
			act = Rejected
		}
		return Entry{Node: e.NodeID, Action: act, By: d.By, Name: d.ByName, Detail: d.Text, Verified: d.Via}, ok
	case db.EventGateRefused:
		d, ok := decode[db.GateRefusedData](e)
		return Entry{Node: e.NodeID, Action: Refused, By: d.By, Detail: string(d.Decision) + " refused: " + string(d.Reason), Verified: d.Via}, ok
	case db.EventResumeRequested:
		d, ok := decode[db.ResumeRequestedData](e)
		return Entry{Action: Resumed, By: d.By, Detail: "from " + string(d.From), Verified: d.Via}, ok
	case db.EventRunCancelled:
		d, ok := decode[db.CancelData](e)
		act := Cancelled
		if d.By == db.TimeoutActor {
			act = Abandoned
		}
		return Entry{Action: act, By: d.By, Name: d.ByName, Detail: d.Reason, Verified: d.Via}, ok
	}
	return Entry{}, false
}

func decode[T any](e db.Event) (T, bool) {
	var d T
	return d, json.Unmarshal(e.Data, &d) == nil
}
