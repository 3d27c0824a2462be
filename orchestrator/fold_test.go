package orchestrator

import (
	"reflect"
	"testing"
	"time"

	"threadflow/db"
)

// One run's events, folded once, give the executor, /workflow status and the dashboard the same
// node states: a retried attempt, a gate asked and approved, a skip reopened by a resume.
func TestFoldOneHistoryForEveryReader(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	ev := func(s int, typ db.EventType, node string, attempt int, data any) db.Event {
		return db.Event{Type: typ, NodeID: node, Attempt: attempt, Data: db.MustJSON(data), At: at(s)}
	}
	ms := int64(4000)
	events := []db.Event{
		ev(0, db.EventRunCreated, "", 0, db.RunCreatedData{User: "slack:U1", Workflow: "fix"}),
		ev(1, db.EventNodeStarted, "build", 1, db.NodeData{}),
		ev(2, db.EventNodeFailed, "build", 1, db.NodeData{Error: "flaky", WillRetry: true}),
		ev(3, db.EventNodeStarted, "build", 2, db.NodeData{}),
		ev(7, db.EventNodeCompleted, "build", 2, db.NodeData{Output: "built", DurationMS: &ms}),
		ev(8, db.EventNodeSkipped, "docs", 1, db.NodeData{Reason: "when: false"}),
		ev(9, db.EventNodeStarted, "review", 1, db.NodeData{}),
		ev(10, db.EventGateRequested, "review", 0, db.Pause{Kind: db.PauseApproval, Node: "review", Message: "ship?"}),
		ev(11, db.EventGateReminded, "review", 0, db.NoData{}),
		ev(12, db.EventGateResolved, "review", 0, db.GateAnswerData{Decision: db.DecisionApprove, By: "slack:U2", Text: "go"}),
		ev(13, db.EventResumeRequested, "", 0, db.ResumeRequestedData{By: "slack:U1", From: db.StatusFailed}),
	}
	h := Fold(events)
	if !h.Resumed {
		t.Error("the run was queued by a resume, Fold says it was not")
	}
	views := RunNodes(db.Run{}, events) // no workflow source: the nodes the events name
	var ids []string
	for _, n := range views {
		ids = append(ids, n.ID)
	}
	if want := []string{"build", "docs", "review"}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("nodes %v, want %v in the order they first appeared", ids, want)
	}
	build, docs, review := views[0], views[1], views[2]
	if build.State != "completed" || build.Attempts != 2 || build.Shown != "built" || build.Error != "" ||
		build.Duration != 4*time.Second || len(build.Retries) != 0 || !build.Finished.Equal(at(7)) {
		t.Errorf("build = %+v; want completed on attempt 2 in 4s, its retry forgotten by the resume", build)
	}
	if docs.State != "pending" || docs.Shown != "when: false" {
		t.Errorf("docs = %+v; want pending again after the resume, still showing why it was skipped", docs)
	}
	g := review.Gate
	if review.State != "completed" || g == nil || g.Answer == nil || g.Answer.By != "slack:U2" || !g.Reminded.Equal(at(11)) || g.Pause.Message != "ship?" {
		t.Errorf("review = %+v, gate %+v; want let through by slack:U2 after one reminder", review, g)
	}
	if n := h.nodes["review"]; n.gate == nil || !n.justAnswered || n.state != "running" {
		t.Errorf("the executor sees review as %+v; want its running attempt to continue with the answer", n)
	}
	if len(h.Log) != 1 || h.Log[0].What != "resumed" || h.Log[0].Note != "from failed" {
		t.Errorf("log = %+v; want the one resume", h.Log)
	}
}
