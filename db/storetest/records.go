package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"threadflow/db"
)

func recordTests() []test {
	return []test{
		{"EnsureConversationKeepsFirst", testEnsureConversation},
		{"Sessions", testSessions},
		{"MarkInbound", testMarkInbound},
		{"KeepInboundMany", testKeepInboundMany},
		{"KeepInboundPastOneBatch", testKeepInboundChunks},
		{"Ready", testReady},
		{"ProbeWrite", testProbeWrite},
		{"MessageRefs", testMessageRefs},
		{"CreateRunRecordsItsThreadAndMessages", testCreateRunRecordsItsThreadAndMessages},
	}
}

func testEnsureConversation(t *testing.T, e *env) {
	c := db.Conversation{ID: "discord:G1", Platform: "discord", ChannelID: "G1"}
	got, err := e.s.EnsureConversation(e.ctx, c)
	if err != nil || got.ID != c.ID || got.Platform != "discord" || got.ChannelID != "G1" || !got.CreatedAt.Equal(e.clock.Now()) {
		t.Fatalf("EnsureConversation = %+v, %v", got, err)
	}
	e.clock.Advance(time.Hour)
	again, err := e.s.EnsureConversation(e.ctx, db.Conversation{ID: c.ID, Platform: "discord", ChannelID: "changed"})
	if err != nil || again.ChannelID != "G1" || !again.CreatedAt.Equal(got.CreatedAt) {
		t.Fatalf("second EnsureConversation = %+v, %v; want the stored conversation", again, err)
	}
	derived, err := e.s.EnsureConversation(e.ctx, db.Conversation{Platform: "slack", ChannelID: "C7", ThreadID: "1.5"})
	if err != nil || derived.ID != "slack:C7:1.5" {
		t.Fatalf("EnsureConversation without an id = %+v, %v; want the key derived", derived, err)
	}
	if _, err := e.s.EnsureConversation(e.ctx, db.Conversation{ID: "x:y"}); err == nil {
		t.Fatal("EnsureConversation without platform and channel succeeded")
	}
	th := db.Conversation{ID: "discord:G1:T9", Platform: "discord", ChannelID: "G1", ThreadID: "T9", ParentID: c.ID}
	if got, err := e.s.EnsureConversation(e.ctx, th); err != nil || got.ParentID != c.ID || got.ThreadID != "T9" {
		t.Fatalf("thread conversation = %+v, %v", got, err)
	}
}

func testSessions(t *testing.T, e *env) {
	if _, err := e.s.GetSession(e.ctx, channelConv, "", ""); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("GetSession with nothing stored: %v, want ErrNotFound", err)
	}
	conv := db.Session{ConversationID: channelConv, Provider: "claude", SessionID: "s-conv"}
	node := db.Session{RunID: "aaaaaa0001", NodeID: "code", Provider: "codex", SessionID: "s-node"}
	for _, s := range []db.Session{conv, node} {
		if err := e.s.SetSession(e.ctx, s); err != nil {
			t.Fatalf("SetSession(%+v): %v", s, err)
		}
	}
	e.wantSession(t, conv)
	e.wantSession(t, node)
	if _, err := e.s.GetSession(e.ctx, "", "aaaaaa0001", "other"); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("GetSession of another node: %v, want ErrNotFound", err)
	}

	e.clock.Advance(time.Minute)
	conv.SessionID = "s-conv-2"
	if err := e.s.SetSession(e.ctx, conv); err != nil {
		t.Fatalf("SetSession (replace): %v", err)
	}
	e.wantSession(t, conv)
	conv.SessionID = "" // a stale session is cleared: the next turn starts fresh
	if err := e.s.SetSession(e.ctx, conv); err != nil {
		t.Fatalf("SetSession (clear): %v", err)
	}
	e.wantSession(t, conv)
	e.wantSession(t, node)
	anon := conv
	anon.Provider, anon.SessionID = "", "s-anon" // a session id means nothing without its provider
	if err := e.s.SetSession(e.ctx, anon); err == nil || !strings.Contains(err.Error(), "provider is required") {
		t.Fatalf("SetSession without a provider: %v, want it refused", err)
	}
	e.wantSession(t, conv)
}

// wantSession checks the stored session under want's key equals want, updated now.
func (e *env) wantSession(t *testing.T, want db.Session) {
	t.Helper()
	got, err := e.s.GetSession(e.ctx, want.ConversationID, want.RunID, want.NodeID)
	if err != nil {
		t.Fatalf("GetSession(%q, %q, %q): %v", want.ConversationID, want.RunID, want.NodeID, err)
	}
	if got.Provider != want.Provider || got.SessionID != want.SessionID || got.ConversationID != want.ConversationID ||
		got.RunID != want.RunID || got.NodeID != want.NodeID {
		t.Fatalf("GetSession = %+v, want %+v", got, want)
	}
	if got.UpdatedAt.IsZero() || got.UpdatedAt.After(e.clock.Now()) {
		t.Fatalf("session updated at %v, now is %v", got.UpdatedAt, e.clock.Now())
	}
}

func testMarkInbound(t *testing.T, e *env) {
	steps := []struct {
		platform, id string
		first        bool
	}{
		{"discord", "evt-1", true},
		{"discord", "evt-1", false},
		{"slack", "evt-1", true},
		{"discord", "evt-2", true},
		{"slack", "evt-1", false},
	}
	for _, s := range steps {
		first, err := e.s.MarkInbound(e.ctx, s.platform, s.id)
		if err != nil || first != s.first {
			t.Fatalf("MarkInbound(%s, %s) = %v, %v; want %v", s.platform, s.id, first, err, s.first)
		}
	}
}

func testKeepInboundMany(t *testing.T, e *env) {
	if first, err := e.s.KeepInbound(e.ctx, nil); err != nil || len(first) != 0 {
		t.Fatalf("KeepInbound(nil) = %v, %v; want nothing", first, err)
	}
	if _, err := e.s.MarkInbound(e.ctx, "slack", "seen-before"); err != nil {
		t.Fatal(err)
	}
	ev := func(platform, id string) db.KeptEvent { return kept(platform, id, "") }
	events := []db.KeptEvent{ev("slack", "a"), ev("slack", "seen-before"), ev("discord", "a"), ev("slack", "a"), ev("slack", "b")}
	want := []bool{true, false, true, false, true} // a repeat in the batch is new only where it first occurs
	first, err := e.s.KeepInbound(e.ctx, events)
	if err != nil || !slices.Equal(first, want) {
		t.Fatalf("KeepInbound = %v, %v; want %v", first, err, want)
	}
	again, err := e.s.KeepInbound(e.ctx, events)
	if err != nil || slices.Contains(again, true) {
		t.Fatalf("KeepInbound of recorded events = %v, %v; want none new", again, err)
	}
	if ok, err := e.s.MarkInbound(e.ctx, "discord", "a"); err != nil || ok {
		t.Fatalf("MarkInbound after the batch recorded it = %v, %v; want false", ok, err)
	}
}

// testKeepInboundChunks records more events than one group commit carries, half of them known.
func testKeepInboundChunks(t *testing.T, e *env) {
	n := 2*db.MaxInboundBatch + 7
	events := make([]db.KeptEvent, n)
	for i := range events {
		events[i] = kept("slack", fmt.Sprintf("bulk-%d", i), "")
	}
	for i := 0; i < n; i += 2 {
		if _, err := e.s.MarkInbound(e.ctx, "slack", events[i].EventID); err != nil {
			t.Fatal(err)
		}
	}
	first, err := e.s.KeepInbound(e.ctx, events)
	if err != nil || len(first) != n {
		t.Fatalf("KeepInbound of %d events: %d answers, %v", n, len(first), err)
	}
	for i, f := range first {
		if f != (i%2 == 1) {
			t.Fatalf("event %d: new = %v, want %v (even ones were recorded before)", i, f, i%2 == 1)
		}
	}
}

func testReady(t *testing.T, e *env) {
	if err := e.s.Ready(e.ctx); err != nil {
		t.Fatalf("Ready on a migrated store: %v", err)
	}
}

func testMessageRefs(t *testing.T, e *env) {
	run := e.create(t, nil)
	if refs, err := e.s.MessageRefs(e.ctx, run.ID); err != nil || len(refs) != 0 {
		t.Fatalf("MessageRefs of a new run = %v, %v; want none", refs, err)
	}
	status := db.MessageRef{RunID: run.ID, Kind: "status", Platform: "slack", ChannelID: "C1", ThreadID: "1.2", MessageID: "1.3"}
	gate := db.MessageRef{RunID: run.ID, Kind: "gate", Platform: "slack", ChannelID: "C1", ThreadID: "1.2", MessageID: "1.4"}
	for _, r := range []db.MessageRef{status, gate} {
		if err := e.s.SetMessageRef(e.ctx, r); err != nil {
			t.Fatalf("SetMessageRef(%+v): %v", r, err)
		}
	}
	status.MessageID = "1.9" // a resumed run gets a fresh status message
	if err := e.s.SetMessageRef(e.ctx, status); err != nil {
		t.Fatal(err)
	}
	gate.MessageID = "" // the gate was answered
	if err := e.s.SetMessageRef(e.ctx, gate); err != nil {
		t.Fatal(err)
	}
	refs, err := e.s.MessageRefs(e.ctx, run.ID)
	if err != nil || len(refs) != 1 || refs[0] != status {
		t.Fatalf("MessageRefs = %+v, %v; want only the replaced status message %+v", refs, err, status)
	}
	if err := e.s.SetMessageRef(e.ctx, db.MessageRef{RunID: "nosuchrun0", Kind: "status", Platform: "slack", ChannelID: "C", MessageID: "1"}); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("SetMessageRef of an unknown run: %v, want ErrNotFound", err)
	}
}

// testCreateRunRecordsItsThreadAndMessages: a run created in a thread opened for it records that
// conversation and its first messages in the same transaction.
func testCreateRunRecordsItsThreadAndMessages(t *testing.T, e *env) {
	e.conversations(t)
	thread := db.Conversation{Platform: "slack", ChannelID: "C1", ThreadID: "9.9", ParentID: channelConv}
	status := db.MessageRef{Kind: "status", Platform: "slack", ChannelID: "C1", ThreadID: "9.9", MessageID: "9.10"}
	r, err := e.s.CreateRun(e.ctx, newRun(func(n *db.NewRun) {
		n.ConversationID, n.Conversation, n.Messages = "slack:C1:9.9", &thread, []db.MessageRef{status}
	}))
	if err != nil {
		t.Fatalf("CreateRun in a new thread: %v", err)
	}
	if got, err := e.s.EnsureConversation(e.ctx, db.Conversation{ID: "slack:C1:9.9", Platform: "slack", ChannelID: "x"}); err != nil || got.ThreadID != "9.9" || got.ParentID != channelConv {
		t.Fatalf("the run's thread = %+v, %v; want it recorded with its parent", got, err)
	}
	status.RunID = r.ID
	if refs, err := e.s.MessageRefs(e.ctx, r.ID); err != nil || len(refs) != 1 || refs[0] != status {
		t.Fatalf("MessageRefs = %+v, %v; want the status message", refs, err)
	}
	// The channel and thread a run was asked for in come along, parents first: a first command in
	// a new channel records both with the run.
	asked := []db.Conversation{{Platform: "discord", ChannelID: "D1"}, {Platform: "discord", ChannelID: "D1", ThreadID: "7", ParentID: "discord:D1"}}
	own := db.Conversation{Platform: "discord", ChannelID: "D1", ThreadID: "8", ParentID: "discord:D1"}
	if _, err := e.s.CreateRun(e.ctx, newRun(func(n *db.NewRun) {
		n.ConversationID, n.ParentConversationID, n.Conversation, n.Parents = "discord:D1:8", "discord:D1:7", &own, asked
	})); err != nil {
		t.Fatalf("CreateRun asked for in a new channel's thread: %v", err)
	}
	for _, want := range append(asked, own) {
		got, err := e.s.EnsureConversation(e.ctx, db.Conversation{Platform: want.Platform, ChannelID: want.ChannelID, ThreadID: want.ThreadID})
		if err != nil || got.ParentID != want.ParentID || got.CreatedAt.IsZero() {
			t.Fatalf("conversation %s:%s:%s = %+v, %v; want it recorded with parent %q", want.Platform, want.ChannelID, want.ThreadID, got, err, want.ParentID)
		}
	}
	other := db.Conversation{Platform: "slack", ChannelID: "C1", ThreadID: "8.8"}
	if _, err := e.s.CreateRun(e.ctx, newRun(func(n *db.NewRun) { n.ConversationID, n.Conversation = "slack:C1:9.9", &other })); err == nil {
		t.Fatal("CreateRun with a conversation that is not the run's succeeded")
	}
}

// ProbeWrite is repeatable: each readiness probe rewrites the same row.
func testProbeWrite(t *testing.T, e *env) {
	for i := range 3 {
		e.clock.Advance(time.Second)
		if err := e.s.ProbeWrite(e.ctx, "replica-a"); err != nil {
			t.Fatalf("probe %d: %v", i, err)
		}
	}
	if err := e.s.ProbeWrite(e.ctx, "replica-b"); err != nil {
		t.Fatalf("probe of a second replica: %v", err)
	}
}
