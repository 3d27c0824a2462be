package conversation_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"threadflow/conversation"
	"threadflow/db"
	"threadflow/db/dbtest"
)

// platform is a stand-in chat platform: it numbers the messages it accepts, or refuses them all.
type platform struct {
	mu     sync.Mutex
	n      int
	refuse bool
}

func (p *platform) Platform() string { return "slack" }

func (p *platform) Capabilities() conversation.Capabilities {
	return conversation.Capabilities{Threads: true}
}

func (p *platform) Post(_ context.Context, to conversation.Address, r conversation.Reply) (conversation.Ref, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.refuse {
		return conversation.Ref{}, errors.New("platform down")
	}
	p.n++
	id := fmt.Sprintf("1.%d", p.n)
	if r.Ephemeral {
		id = "" // Slack gives ephemeral messages no id
	}
	return conversation.Ref{Address: to, MessageID: id}, nil
}

func (p *platform) Edit(context.Context, conversation.Ref, conversation.Reply) error { return nil }

func (p *platform) StartThread(ctx context.Context, in conversation.Address, r conversation.Reply) (conversation.Address, conversation.Ref, error) {
	ref, err := p.Post(ctx, in, r)
	in.ThreadID = ref.MessageID
	return in, ref, err
}

func text(s string) conversation.Reply {
	return conversation.Reply{Text: conversation.T(conversation.P(s))}
}

// TestRecorded: what a platform accepted is recorded with its message id and run; an edit
// rewrites the row; what the platform refused is not recorded; the platform's capabilities show.
func TestRecorded(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, open func(t testing.TB, opts db.Options) db.Store) {
		st := open(t, db.Options{})
		p := &platform{}
		var failures []string
		ob := conversation.Recorded(p, st, func(platform string, err error) { failures = append(failures, platform+": "+err.Error()) })
		if c := conversation.CapabilitiesOf(ob); c != p.Capabilities() {
			t.Errorf("capabilities = %+v, want the platform's %+v", c, p.Capabilities())
		}
		ctx := t.Context()
		ofRun := func(r conversation.Reply) conversation.Reply { r.RunID = "run0000001"; return r }
		thread, root, err := ob.StartThread(ctx, conversation.Address{Platform: "slack", ChannelID: "C1"}, ofRun(text("▶ hello")))
		if err != nil {
			t.Fatal(err)
		}
		status, err := ob.Post(ctx, thread, ofRun(text("queued")))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ob.Post(ctx, thread, conversation.Reply{Text: conversation.T(conversation.P("psst")), Ephemeral: true, ToUser: "slack:U1", RunID: "run0000001"}); err != nil {
			t.Fatal(err)
		}
		if err := ob.Edit(t.Context(), status, text("completed")); err != nil {
			t.Fatal(err)
		}
		p.refuse = true
		if _, err := ob.Post(ctx, thread, text("lost")); err == nil {
			t.Fatal("a refused post succeeded")
		}
		rows, err := st.Transcript(t.Context(), thread.ConversationID(), 10)
		if err != nil || len(rows) != 3 {
			t.Fatalf("transcript = %+v, %v; want root, status, ephemeral", rows, err)
		}
		if rows[0].MessageID != root.MessageID || rows[1].MessageID != status.MessageID || rows[1].Text != "completed" || !rows[1].Edited() ||
			rows[2].ToUser != "slack:U1" || rows[2].MessageID == "" {
			t.Errorf("transcript = %+v; want the root, the status message edited to completed, the ephemeral reply with a local id", rows)
		}
		for _, r := range rows {
			if r.RunID != "run0000001" {
				t.Errorf("message %s recorded for run %q, want run0000001", r.MessageID, r.RunID)
			}
		}
		if len(failures) != 0 {
			t.Errorf("recording failures: %v", failures)
		}
	})
}

// TestRecordedPostSurvivesAnUnwritableStore: the message is posted and the failure reported.
func TestRecordedPostSurvivesAnUnwritableStore(t *testing.T) {
	st := dbtest.SQLite(t, db.Options{})
	if err := st.Close(); err != nil { // a store that answers every write with an error
		t.Fatal(err)
	}
	var failures []string
	ob := conversation.Recorded(&platform{}, st, func(platform string, err error) { failures = append(failures, platform) })
	ref, err := ob.Post(t.Context(), conversation.Address{Platform: "slack", ChannelID: "C1"}, text("hello"))
	if err != nil || ref.MessageID == "" {
		t.Fatalf("Post = %+v, %v; want the message posted", ref, err)
	}
	if len(failures) != 1 || failures[0] != "slack" {
		t.Errorf("failures reported: %v, want one for slack", failures)
	}
}

// keyedPlatform is a stand-in platform that knows its keyed messages, as Slack does by metadata:
// a repeated keyed post returns the message it already has.
type keyedPlatform struct {
	platform
	keyed map[string]conversation.Ref
}

func (p *keyedPlatform) Post(ctx context.Context, to conversation.Address, r conversation.Reply) (conversation.Ref, error) {
	if ref, ok := p.keyed[r.Key]; ok && r.Key != "" {
		return ref, nil
	}
	ref, err := p.platform.Post(ctx, to, r)
	if err == nil && r.Key != "" {
		p.keyed[r.Key] = ref
	}
	return ref, err
}

func (p *keyedPlatform) Find(_ context.Context, _ conversation.Address, key string) (conversation.Ref, bool, error) {
	ref, ok := p.keyed[key]
	return ref, ok, nil
}

func (p *keyedPlatform) FindThread(_ context.Context, in conversation.Address, key string) (conversation.Address, conversation.Ref, bool, error) {
	ref, ok := p.keyed[key]
	in.ThreadID = ref.MessageID
	return in, ref, ok, nil
}

// TestRecordedKeyedReplyIsRecordedOnce: posting a keyed reply again (the platform answers with the
// message it has) leaves its transcript row as it was, edit included; the wrapper stays a Finder.
func TestRecordedKeyedReplyIsRecordedOnce(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, open func(t testing.TB, opts db.Options) db.Store) {
		st := open(t, db.Options{})
		p := &keyedPlatform{keyed: map[string]conversation.Ref{}}
		var failures []error
		ob := conversation.Recorded(p, st, func(_ string, err error) { failures = append(failures, err) })
		if _, ok := conversation.Recorded(&platform{}, st, nil).(conversation.Finder); ok {
			t.Error("Recorded made a Finder of a platform that cannot find")
		}
		finder, ok := ob.(conversation.Finder)
		if !ok {
			t.Fatal("Recorded hid the platform's Finder")
		}
		thread := conversation.Address{Platform: "slack", ChannelID: "C1", ThreadID: "1.0"}
		gate := text("Ship it?")
		gate.Key = "run0000001/gate@12"
		ref, err := ob.Post(t.Context(), thread, gate)
		if err != nil {
			t.Fatal(err)
		}
		if err := ob.Edit(t.Context(), ref, text("Approved by bob")); err != nil {
			t.Fatal(err)
		}
		before, err := st.Transcript(t.Context(), thread.ConversationID(), 10)
		if err != nil {
			t.Fatal(err)
		}
		if again, err := ob.Post(t.Context(), thread, gate); err != nil || again != ref {
			t.Fatalf("repeated post = %+v, %v; want %+v", again, err, ref)
		}
		rows, err := st.Transcript(t.Context(), thread.ConversationID(), 10)
		if err != nil || len(rows) != 1 || rows[0].Text != "Approved by bob" || rows[0].Seq != before[0].Seq {
			t.Fatalf("transcript = %+v, %v; want the one row as the edit left it (seq %d)", rows, err, before[0].Seq)
		}
		if found, ok, err := finder.Find(t.Context(), thread, gate.Key); err != nil || !ok || found != ref {
			t.Errorf("Find through the wrapper = %+v, %v, %v; want %+v", found, ok, err, ref)
		}
		if len(failures) != 0 {
			t.Errorf("recording failures: %v", failures)
		}
	})
}
