package audit

import (
	"strings"
	"testing"
	"time"

	"threadflow/db"
)

func TestEntriesReadEveryAction(t *testing.T) {
	at := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	ev := func(run, node string, p db.Payload, sec int) db.Event {
		return db.NewEvent(run, node, 0, p, at.Add(time.Duration(sec)*time.Second))
	}
	evs := []db.Event{ // newest first, as ActionEvents lists them
		ev("r4", "", db.CancelData{By: "slack:U1", Reason: "abandoned", Via: SignedIn}, 11),
		ev("r4", "", db.ResumeRequestedData{By: "slack:U1", From: db.StatusFailed, Via: SignedIn}, 10),
		ev("r3", "", db.CancelData{By: db.TimeoutActor, Reason: "nobody answered within 1h"}, 9),
		ev("r2", "", db.CancelData{By: db.TimeoutActor, Reason: "nobody answered within 2h"}, 8), // with the timed-out rejection
		ev("r2", "ask", db.GateAnswerData{Decision: db.DecisionReject, By: db.TimeoutActor, TimedOut: true, Text: "nobody answered within 2h"}, 8),
		ev("r1", "", db.ResumeRequestedData{By: "discord:42", From: db.StatusFailed}, 7),
		ev("r1", "ask", db.GateApprovalData{By: "slack:U1", ByName: "Alice", Text: "lgtm", Via: SignedIn}, 6),
		ev("r1", "", db.RunCreatedData{User: "web:bob", Workflow: "release"}, 5),
		ev("r1", "", db.RunClaimedData{Owner: "a"}, 5), // not an action
	}
	var got []string
	for _, e := range Entries(evs) {
		got = append(got, strings.Join([]string{e.RunID, e.Action, e.By, e.Name, e.Verified, e.Node, e.Detail}, "|"))
	}
	want := []string{
		"r4|cancelled|slack:U1||signed-in||abandoned",
		"r4|resumed|slack:U1||signed-in||from failed",
		"r3|abandoned|threadflow:timeout||system||nobody answered within 1h",
		"r2|rejected|threadflow:timeout||system|ask|nobody answered within 2h",
		"r1|resumed|discord:42||platform||from failed",
		"r1|approved|slack:U1|Alice|signed-in|ask|lgtm",
		"r1|started|web:bob||unverified||release",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
