package execution

import (
	"reflect"
	"strings"
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
	ev := func(s int, node string, attempt int, p db.Payload) db.Event {
		return db.NewEvent("", node, attempt, p, at(s))
	}
	ms := int64(4000)
	events := []db.Event{
		ev(0, "", 0, db.RunCreatedData{User: "slack:U1", Workflow: "fix"}),
		ev(1, "build", 1, db.NodeStartedData{}),
		ev(2, "build", 1, db.NodeFailedData{Error: "flaky", WillRetry: true}),
		ev(3, "build", 2, db.NodeStartedData{}),
		ev(7, "build", 2, db.NodeCompletedData{NodeOutputData: db.NodeOutputData{Output: "built"}, DurationMS: &ms}),
		ev(8, "docs", 1, db.NodeSkippedData{Reason: "when: false"}),
		ev(9, "review", 1, db.NodeStartedData{}),
		ev(10, "review", 0, db.Pause{Kind: db.PauseApproval, Node: "review", Message: "ship?"}),
		ev(11, "review", 0, db.GateRemindedData{}),
		ev(12, "review", 0, db.GateAnswerData{Decision: db.DecisionApprove, By: "slack:U2", Text: "go"}),
		ev(13, "", 0, db.ResumeRequestedData{By: "slack:U1", From: db.StatusFailed}),
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

// A run's end closes every node it left open, by one rule every view reads: how each way a run
// stops leaves its nodes (the workflow: build, then the gate confirm, then ship).
func TestFoldClosesWhatTheRunsEndLeftOpen(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	seq := 0
	ev := func(node string, p db.Payload) db.Event {
		seq++
		return db.NewEvent("", node, 1, p, t0.Add(time.Duration(seq)*time.Second))
	}
	built := func() []db.Event {
		seq = 0
		return []db.Event{
			ev("", db.RunCreatedData{User: "slack:U1", Workflow: "release"}),
			ev("build", db.NodeStartedData{}),
			ev("build", db.NodeCompletedData{NodeOutputData: db.NodeOutputData{Output: "ok"}}),
		}
	}
	atGate := func() []db.Event {
		return append(built(), ev("confirm", db.NodeStartedData{}),
			ev("confirm", db.Pause{Kind: db.PauseApproval, Node: "confirm"}))
	}
	source := []byte("name: release\nnodes:\n  - id: build\n    bash: make\n  - id: confirm\n    depends_on: [build]\n    approval: {message: ship it}\n  - id: ship\n    depends_on: [confirm]\n    bash: ship\n")
	tests := []struct {
		name   string
		events []db.Event
		want   []string // id state reason by, per node
	}{
		{"paused at the gate", atGate(),
			[]string{"build completed  ", "confirm waiting  ", "ship pending  "}},
		{"rejected by a person",
			append(atGate(), ev("confirm", db.GateAnswerData{Decision: db.DecisionReject, By: "slack:U2", ByName: "bob", Text: "changelog missing"}),
				ev("", db.CancelData{By: "slack:U2", ByName: "bob", Reason: "changelog missing"})),
			[]string{"build completed  ", "confirm rejected rejected by bob: changelog missing slack:U2", "ship not_run not run: confirm was rejected "}},
		{"rejected by its timeout",
			append(atGate(), ev("confirm", db.GateAnswerData{Decision: db.DecisionReject, By: db.TimeoutActor, Text: "nobody answered within 1h", TimedOut: true}),
				ev("", db.CancelData{By: db.TimeoutActor, Reason: "nobody answered within 1h"})),
			[]string{"build completed  ", "confirm rejected nobody answered within 1h: rejected by its timeout threadflow:timeout",
				"ship not_run not run: confirm was rejected by its timeout "}},
		{"abandoned by its timeout",
			append(atGate(), ev("", db.CancelData{By: db.TimeoutActor, Reason: "nobody answered within 1h"})),
			[]string{"build completed  ", "confirm cancelled nobody answered within 1h: the run was abandoned by its timeout threadflow:timeout",
				"ship not_run not run: the run was abandoned by the timeout of confirm "}},
		{"abandoned at the gate",
			append(atGate(), ev("", db.CancelData{By: "slack:U1", Reason: "abandoned"})),
			[]string{"build completed  ", "confirm cancelled cancelled by slack:U1 slack:U1", "ship not_run not run: the run was cancelled "}},
		{"cancelled while a node runs",
			append(built()[:2], ev("", db.CancelData{By: "slack:U1", Reason: "abandoned"})),
			[]string{"build cancelled cancelled by slack:U1 slack:U1", "confirm not_run not run: the run was cancelled ", "ship not_run not run: the run was cancelled "}},
		{"failed when its worker was lost too often", // not final: what did not start stays pending
			append(built()[:2], ev("", db.RecoveryBudgetExhausted(3, 2))),
			[]string{"build failed stopped when the run failed: the run lost its worker 3 times in a row without completing a node (MAX_RECOVERIES is 2); fix the cause (a crash or a node that never finishes), then resume it ",
				"confirm pending  ", "ship pending  "}},
		{"paused after a failure that needs a person",
			append(built()[:2], ev("build", db.NodeFailedData{Error: "claude: not found"}),
				ev("build", db.Pause{Kind: db.PauseRecovery, Node: "build", Error: "claude: not found"})),
			[]string{"build waiting claude: not found ", "confirm pending  ", "ship pending  "}},
		{"written to after it was cancelled", // never allowed by the store: every view shows it
			append(built()[:2], ev("", db.CancelData{By: "slack:U1"}), ev("confirm", db.NodeStartedData{})),
			[]string{"build cancelled cancelled by slack:U1 slack:U1", "confirm running  ", "ship not_run not run: the run was cancelled "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, n := range RunNodes(db.Run{Workflow: "release", WorkflowSource: source}, tt.events) {
				got = append(got, n.ID+" "+n.State+" "+n.Reason+" "+n.By)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("nodes:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

// A gate's escalation and every notification are steps of the run's history, said for people.
func TestFoldLogsEscalationsAndNotifications(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	events := []db.Event{
		db.NewEvent("", "review", 0, db.Pause{Kind: db.PauseApproval, Node: "review"}, at),
		db.NewEvent("", "", 0, db.NotifiedData{About: "gate", How: db.NotifyDM, To: []string{"slack:U1"}, Skipped: []string{"slack:U2"}}, at),
		db.NewEvent("", "review", 0, db.GateEscalatedData{To: []string{"slack:group:S1"}, Admins: true}, at),
		db.NewEvent("", "", 0, db.NotifiedData{About: "escalation", How: db.NotifyMention, To: []string{"slack:group:S1"}}, at),
	}
	var got []string
	for _, e := range Fold(events).Log {
		got = append(got, e.What+" | "+e.Note)
	}
	want := []string{
		"slack:U1 sent a direct message about the gate | not reached: slack:U2 (they take no direct messages from the bot)",
		"gate review escalated | slack:group:S1 and the admins (ADMIN_USER_IDS) may answer too",
		"slack:group:S1 mentioned about the escalation | ",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("history:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
