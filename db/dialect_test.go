package db_test

import (
	"strings"
	"testing"
	"time"

	"threadflow/db"
)

// positional is a dialect whose parameters are "?", taken by position: a statement must write
// exactly one "?" per argument, in order.
var positional = db.Dialect{
	Param:    func(int) string { return "?" },
	Time:     func(t time.Time) any { return t },
	NullTime: func(t time.Time) any { return t },
	In: func(q *db.SQL, expr string, vals []string) string {
		ps := make([]string, len(vals))
		for i, v := range vals {
			ps[i] = q.Arg(v)
		}
		return expr + " IN (" + strings.Join(ps, ", ") + ")"
	},
	Platform:   "platform(conversation_id)",
	Meta:       func(q *db.SQL, e db.MetaEdit) string { return "meta" },
	MessageSeq: "next_seq()",
}

// TestStatementsWriteOneParameterPerArgument: every statement package db renders writes as many
// parameters as it passes arguments, so an engine with positional parameters gets each value in
// its place. A value a statement needs twice must be passed twice.
func TestStatementsWriteOneParameterPerArgument(t *testing.T) {
	now := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	reach := db.Reach{Platforms: []string{"slack", "web"}, Conversations: []string{"console:a"}, Unattended: []string{"console"},
		Home: "home-1", Remote: "git@example.com:x"}
	msg := db.TranscriptMessage{ConversationID: "web:a", Platform: "web", ChannelID: "a", MessageID: "m1", RunID: "r1", Text: "hi"}
	update := db.RunUpdate{RunID: "r1", From: []db.Status{db.StatusRunning}, Leased: true, Token: "t",
		IfPaused: []db.PauseKind{db.PauseRecovery}, PauseNode: "review", ExpiredBefore: now, Recoveries: 1,
		Set: db.RunSet{Status: db.StatusQueued, Lease: &db.Lease{Owner: "o", Token: "t2"}, ExpiresAt: now, HeartbeatAt: now,
			StartedAt: now, Pause: &db.Pause{Kind: db.PauseApproval, Node: "review", DueAt: now}, QueuedAt: now, FinishedAt: now,
			Workspace: &db.Workspace{Path: "/w", Home: "h", Remote: "r"}}}
	d := positional
	for name, render := range map[string]func() (string, []any){
		"UpdateRun":       func() (string, []any) { return d.UpdateRun(update) },
		"NextQueued":      func() (string, []any) { return d.NextQueued(reach, now, 8) },
		"Expired":         func() (string, []any) { return d.Expired(now) },
		"NextLeaseExpiry": func() (string, []any) { return d.NextLeaseExpiry(now) },
		"DueGateTimers":   func() (string, []any) { return d.DueGateTimers(reach, now, db.MaxTimerBatch) },
		"NextGateTimer":   func() (string, []any) { return d.NextGateTimer(reach, now) },
		"LastAsk":         func() (string, []any) { return d.LastAsk("r1", "review") },
		"GateEvents":      func() (string, []any) { return d.GateEvents("r1", "review", 3) },
		"FindResumable":   func() (string, []any) { return d.FindResumable("build", "slack:C1") },
		"ListRuns": func() (string, []any) {
			return d.ListRuns(db.RunFilter{Workflow: "build", Statuses: []db.Status{db.StatusFailed}})
		},
		"FindRunsByPrefix":   func() (string, []any) { return d.FindRunsByPrefix("abc_%", 0) },
		"LiveHomes":          func() (string, []any) { return d.LiveHomes(now) },
		"AnnounceHome":       func() (string, []any) { return d.AnnounceHome(db.Home{Token: "h", Owner: "o"}, now) },
		"AttachTerminal":     func() (string, []any) { return d.AttachTerminal("console:a", "o", now) },
		"ForgetExpiredHomes": func() (string, []any) { return d.ForgetExpiredHomes(now) },
		"AppendMessage":      func() (string, []any) { return d.AppendMessage(msg, false) },
		"TrimTranscript":     func() (string, []any) { return d.TrimTranscript("web:a") },
		"EditMessage":        func() (string, []any) { return d.EditMessage(msg, now) },
		"Transcript":         func() (string, []any) { return d.Transcript("web:a", 50) },
		"InsertConversation": func() (string, []any) { return d.InsertConversation(db.Conversation{ID: "slack:C1"}, now) },
		"SetSession":         func() (string, []any) { return d.SetSession(db.Session{Provider: "claude"}, now) },
		"SetMessageRef": func() (string, []any) {
			return d.SetMessageRef(db.MessageRef{RunID: "r1", Kind: "root", MessageID: "m"})
		},
		"ForgetMessageRef": func() (string, []any) { return d.SetMessageRef(db.MessageRef{RunID: "r1", Kind: "root"}) },
		"ProbeWrite":       func() (string, []any) { return d.ProbeWrite("replica", now) },
	} {
		q, args := render()
		if n := strings.Count(q, "?"); n != len(args) {
			t.Errorf("%s writes %d parameters for %d arguments:\n%s", name, n, len(args), q)
		}
	}
}

// The lease check is one definition, whatever names the token.
func TestLeaseHeld(t *testing.T) {
	want := "r.status = 'running' AND r.lease_token = $2 AND r.lease_token <> ''"
	if got := db.LeaseHeld("r.", "$2"); got != want {
		t.Fatalf("LeaseHeld = %q, want %q", got, want)
	}
}
