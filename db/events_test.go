package db

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// The JSON of every event payload, pinned: run_events rows written by earlier versions must still
// read, so a change here is a change of the stored format and needs a migration of old rows.
func TestEventPayloadJSON(t *testing.T) {
	t.Parallel()
	ms, cost := int64(1500), int64(1_637_500)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	golden := map[EventType]struct {
		data any
		want string
	}{
		EventRunCreated:      {RunCreatedData{User: "slack:U1", Workflow: "fix"}, `{"user":"slack:U1","workflow":"fix"}`},
		EventRunClaimed:      {RunClaimedData{Owner: "w1"}, `{"owner":"w1"}`},
		EventRunReleased:     {RunReleasedData{Owner: "w1"}, `{"owner":"w1"}`},
		EventRunRescued:      {RunRescuedData{PrevOwner: "w1", Recoveries: 2}, `{"prev_owner":"w1","recoveries":2}`},
		EventRunPaused:       {Pause{Kind: PauseRecovery, Node: "build", Error: "disk full", ResumeHint: "free space"}, `{"kind":"recovery","node":"build","error":"disk full","resume_hint":"free space"}`},
		EventResumeRequested: {ResumeRequestedData{By: "slack:U2", From: StatusFailed, FreshWorkspace: true}, `{"by":"slack:U2","from":"failed","fresh_workspace":true}`},
		EventResumeFailed:    {ResumeFailedData{Error: "no such file", Class: ClassInfra}, `{"error":"no such file","class":"infrastructure"}`},
		EventRunCompleted:    {RunCompletedData{}, `{}`},
		EventRunFailed:       {RunError{Node: "test", Class: ClassPermanent, Message: "exit 1"}, `{"node":"test","class":"permanent","message":"exit 1"}`},
		EventRunCancelled:    {CancelData{By: "slack:U1", Reason: "wrong branch"}, `{"by":"slack:U1","reason":"wrong branch"}`},
		EventNodeStarted:     {NodeStartedData{}, `{}`},
		EventNodeCompleted:   {NodeCompletedData{NodeOutputData: NodeOutputData{Output: "ok", OutputBytes: 2, OutputPath: "/o/build-1"}, DurationMS: &ms}, `{"output":"ok","output_bytes":2,"output_path":"/o/build-1","duration_ms":1500}`},
		EventNodeFailed:      {NodeFailedData{Error: "timeout", Class: ClassTransient, WillRetry: true}, `{"error":"timeout","class":"transient","will_retry":true}`},
		EventNodeSkipped:     {NodeSkippedData{Reason: "when: false"}, `{"reason":"when: false"}`},
		EventLoopIteration:   {LoopIterationData{NodeOutputData: NodeOutputData{Output: "draft"}, SessionID: "s1"}, `{"output":"draft","session_id":"s1"}`},
		EventGateRequested:   {Pause{Kind: PauseApproval, Node: "review", Message: "ok?", Gate: &GatePolicy{Approvers: []string{"slack:U9"}, AllowSelfApproval: true, Required: 2}, OnTimeout: TimeoutReject, DueAt: at}, `{"kind":"approval","node":"review","message":"ok?","gate":{"approvers":["slack:U9"],"required":2},"due_at":"2026-03-01T12:00:00Z","on_timeout":"reject"}`},
		EventGateResolved:    {GateAnswerData{Decision: DecisionApprove, By: "slack:U9", Text: "lgtm", Approvals: []GateApproval{{By: "slack:U9", At: at}}}, `{"decision":"approve","by":"slack:U9","text":"lgtm","approvals":[{"by":"slack:U9","at":"2026-03-01T12:00:00Z"}]}`},
		EventSessionReset:    {SessionResetData{Provider: "claude", Reason: "stale session"}, `{"provider":"claude","reason":"stale session"}`},
		EventGateApproval:    {GateApprovalData{By: "slack:U9", Text: "fine"}, `{"by":"slack:U9","text":"fine"}`},
		EventGateRefused:     {GateRefusedData{By: "slack:U3", Decision: DecisionApprove, Reason: RefusedNotApprover}, `{"by":"slack:U3","decision":"approve","reason":"not_an_approver"}`},
		EventGateReply:       {GateReplyData{By: "slack:U9", Text: "maybe"}, `{"by":"slack:U9","text":"maybe"}`},
		EventGateReminded:    {GateRemindedData{}, `{}`},
		EventGateEscalated:   {GateEscalatedData{To: []string{"slack:group:S1"}, Admins: true}, `{"to":["slack:group:S1"],"admins":true}`},
		EventNotified: {NotifiedData{About: "gate", How: "dm", To: []string{"slack:U1"}, Skipped: []string{"slack:U2"}},
			`{"about":"gate","how":"dm","to":["slack:U1"],"skipped":["slack:U2"]}`},
		EventWorkspace: {Workspace{Home: "h1", Host: "a", Path: "/h/runs/r1/work", Branch: "threadflow/r1", Remote: "file:///srv/ws.git", Recreated: true},
			`{"home":"h1","host":"a","path":"/h/runs/r1/work","branch":"threadflow/r1","remote":"file:///srv/ws.git","recreated":true}`},
		EventAgentUsage: {AgentUsageData{Provider: "codex", Model: "gpt-5", InputTokens: 900, OutputTokens: 50, CacheReadTokens: 100, Turns: 1, CostNanos: &cost, Estimated: true},
			`{"provider":"codex","model":"gpt-5","input_tokens":900,"output_tokens":50,"cache_read_tokens":100,"turns":1,"cost_nanos":1637500,"estimated":true}`},
		EventBudgetChanged: {BudgetChangedData{By: "slack:U1", RunNanos: &cost, Nodes: map[string]int64{"loop": 50_000_000}},
			`{"by":"slack:U1","run_nanos":1637500,"nodes":{"loop":50000000}}`},
	}
	for _, typ := range EventTypes {
		g, ok := golden[typ]
		if !ok {
			t.Errorf("%s has no golden JSON in this test", typ)
			continue
		}
		if got := string(MustJSON(g.data)); got != g.want {
			t.Errorf("%s data:\n got %s\nwant %s", typ, got, g.want)
		}
		if p, ok := g.data.(Payload); !ok || p.EventType() != typ {
			t.Errorf("%T is the data of %s but does not name it", g.data, typ)
		}
		p := typ.NewPayload()
		if p == nil {
			t.Errorf("%s has no payload type", typ)
			continue
		}
		if reflect.TypeOf(p).Elem() != reflect.TypeOf(g.data) {
			t.Errorf("%s decodes into %T, the test encodes %T", typ, p, g.data)
		}
		if err := json.Unmarshal([]byte(g.want), p); err != nil || !reflect.DeepEqual(reflect.ValueOf(p).Elem().Interface(), g.data) {
			t.Errorf("%s: %s does not read back as %+v (got %+v, %v)", typ, g.want, g.data, p, err)
		}
	}
	if len(golden) != len(EventTypes) {
		t.Errorf("golden JSON for %d event types, EventTypes lists %d", len(golden), len(EventTypes))
	}
}

// The payloads that replaced map literals write the bytes those maps wrote (encoding/json sorts map
// keys), so rows written before and after compare equal where the stores compare data.
func TestEventPayloadsMatchTheMapsTheyReplaced(t *testing.T) {
	t.Parallel()
	cases := []struct {
		typed any
		old   any
	}{
		{RunCreatedData{User: "u", Workflow: "w"}, map[string]string{"workflow": "w", "user": "u"}},
		{RunClaimedData{Owner: "o"}, map[string]string{"owner": "o"}},
		{RunReleasedData{Owner: ""}, map[string]string{"owner": ""}},
		{RunRescuedData{PrevOwner: "o", Recoveries: 3}, map[string]any{"prev_owner": "o", "recoveries": 3}},
		{ResumeRequestedData{By: "b", From: StatusPaused}, map[string]string{"by": "b", "from": "paused"}},
		{SessionResetData{Provider: "codex", Reason: "stale session"}, map[string]string{"provider": "codex", "reason": "stale session"}},
		{RunCompletedData{}, struct{}{}},
		{GateRemindedData{}, struct{}{}},
		{NodeStartedData{}, struct{}{}},
	}
	for _, c := range cases {
		if got, want := string(MustJSON(c.typed)), string(MustJSON(c.old)); got != want {
			t.Errorf("%T writes %s, the map it replaced wrote %s", c.typed, got, want)
		}
	}
}

// A payload that does not decode reads as the zero value rather than failing the reader.
func TestDecodeBadPayload(t *testing.T) {
	t.Parallel()
	if d := Decode[CancelData](Event{Data: json.RawMessage(`{"by":1}`)}); d != (CancelData{}) {
		t.Errorf("bad payload decoded as %+v, want the zero value", d)
	}
	if d := Decode[CancelData](Event{}); d != (CancelData{}) {
		t.Errorf("empty payload decoded as %+v", d)
	}
}

// Display names were added to the payloads that name who answered a gate: written only when known,
// so rows without them keep their bytes and still read (with no name; messages show the id).
func TestEventPayloadDisplayNames(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		data any
		want string
	}{
		{GateAnswerData{Decision: DecisionApprove, By: "discord:9", ByName: "Ann", Text: "ok", Approvals: []GateApproval{{By: "discord:9", Name: "Ann", At: at}}},
			`{"decision":"approve","by":"discord:9","by_name":"Ann","text":"ok","approvals":[{"by":"discord:9","name":"Ann","at":"2026-03-01T12:00:00Z"}]}`},
		{GateApprovalData{By: "discord:9", ByName: "Ann", Text: "fine"}, `{"by":"discord:9","by_name":"Ann","text":"fine"}`},
		{CancelData{By: "discord:9", ByName: "Ann", Reason: "no"}, `{"by":"discord:9","by_name":"Ann","reason":"no"}`},
	}
	for _, c := range cases {
		if got := string(MustJSON(c.data)); got != c.want {
			t.Errorf("%T:\n got %s\nwant %s", c.data, got, c.want)
		}
	}
	old := Event{Data: json.RawMessage(`{"decision":"reject","by":"discord:9","text":"no"}`)}
	if d := Decode[GateAnswerData](old); d.By != "discord:9" || d.ByName != "" {
		t.Errorf("a gate_resolved written before names reads as %+v", d)
	}
}

// allow_self_approval is one name in YAML, Go and JSON. A gate that allows it (most) stores no key,
// so its bytes are unchanged; one that refuses it also stores the key earlier releases wrote and
// read (no_self_approval), so they keep refusing it during a rolling update. Rows with only the old
// key still read.
func TestGatePolicySelfApprovalJSON(t *testing.T) {
	t.Parallel()
	writes := []struct {
		p    GatePolicy
		want string
	}{
		{GatePolicy{AllowSelfApproval: true}, `{}`},
		{GatePolicy{Approvers: []string{"slack:U9"}, AllowSelfApproval: false, Required: 2}, `{"approvers":["slack:U9"],"required":2,"allow_self_approval":false,"no_self_approval":true}`},
	}
	for _, w := range writes {
		if got := string(MustJSON(w.p)); got != w.want {
			t.Errorf("%+v writes %s, want %s", w.p, got, w.want)
		}
	}
	reads := []struct {
		stored string
		allow  bool
	}{
		{`{}`, true},
		{`{"approvers":["slack:U9"]}`, true},
		{`{"no_self_approval":true}`, false}, // written by earlier releases
		{`{"allow_self_approval":false,"no_self_approval":true}`, false},
		{`{"allow_self_approval":true}`, true},
	}
	for _, r := range reads {
		var p GatePolicy
		if err := json.Unmarshal([]byte(r.stored), &p); err != nil || p.AllowSelfApproval != r.allow {
			t.Errorf("%s reads as AllowSelfApproval %v (%v), want %v", r.stored, p.AllowSelfApproval, err, r.allow)
		}
	}
	var none *GatePolicy
	if !none.AllowsSelfApproval() {
		t.Error("a gate without a policy refuses self approval")
	}
}

// nodeData is the one payload the node events and resume_failed shared before each got its own, as
// it was: its bytes are what run_events rows of those types hold.
type nodeData struct {
	Output      string     `json:"output,omitempty"`
	OutputBytes int64      `json:"output_bytes,omitempty"`
	OutputPath  string     `json:"output_path,omitempty"`
	Error       string     `json:"error,omitempty"`
	Class       ErrorClass `json:"class,omitempty"`
	Reason      string     `json:"reason,omitempty"`
	SessionID   string     `json:"session_id,omitempty"`
	DurationMS  *int64     `json:"duration_ms,omitempty"`
	WillRetry   bool       `json:"will_retry,omitempty"`
}

// Each node event's payload writes, with every field it has set, the bytes the shared payload wrote
// with the same fields, and reads those bytes back whole.
func TestNodePayloadsWriteTheSharedPayloadsBytes(t *testing.T) {
	t.Parallel()
	ms := int64(7)
	out := NodeOutputData{Output: "o", OutputBytes: 1, OutputPath: "/o/n-1"}
	cases := []struct {
		typed Payload
		old   nodeData
	}{
		{NodeStartedData{}, nodeData{}},
		{NodeCompletedData{NodeOutputData: out, DurationMS: &ms}, nodeData{Output: "o", OutputBytes: 1, OutputPath: "/o/n-1", DurationMS: &ms}},
		{NodeFailedData{NodeOutputData: out, Error: "e", Class: ClassTransient, DurationMS: &ms, WillRetry: true},
			nodeData{Output: "o", OutputBytes: 1, OutputPath: "/o/n-1", Error: "e", Class: ClassTransient, DurationMS: &ms, WillRetry: true}},
		{NodeSkippedData{Reason: "r"}, nodeData{Reason: "r"}},
		{LoopIterationData{NodeOutputData: out, SessionID: "s"}, nodeData{Output: "o", OutputBytes: 1, OutputPath: "/o/n-1", SessionID: "s"}},
		{ResumeFailedData{Error: "e", Class: ClassInfra}, nodeData{Error: "e", Class: ClassInfra}},
	}
	for _, c := range cases {
		got, want := string(MustJSON(c.typed)), string(MustJSON(c.old))
		if got != want {
			t.Errorf("%T writes %s, the shared payload wrote %s", c.typed, got, want)
		}
		back := c.typed.EventType().NewPayload()
		if err := json.Unmarshal([]byte(want), back); err != nil || !reflect.DeepEqual(reflect.ValueOf(back).Elem().Interface(), c.typed) {
			t.Errorf("%s does not read back as %+v (got %+v, %v)", want, c.typed, back, err)
		}
	}
}
