package orchestratortest

import (
	"testing"

	"threadflow/conversation"
)

// TestOutboxPostsAKeyedReplyOnce: as every adapter, a keyed reply posted again to the same place
// is the first message; elsewhere, or unkeyed, it is a new one.
func TestOutboxPostsAKeyedReplyOnce(t *testing.T) {
	o := &Outbox{Name: "slack"}
	thread := conversation.Address{Platform: "slack", ChannelID: "C1", ThreadID: "m0"}
	gate := conversation.Reply{Text: conversation.T(conversation.P("Ship it?")), Key: "r1/gate@3"}
	first, err := o.Post(t.Context(), thread, gate)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := o.Post(t.Context(), thread, gate); err != nil || again != first || o.Count() != 1 {
		t.Fatalf("repeat = %+v, %v, %d messages; want %+v and one message", again, err, o.Count(), first)
	}
	if _, err := o.Post(t.Context(), thread.Channel(), gate); err != nil || o.Count() != 2 {
		t.Errorf("the key in another conversation: %v, %d messages; want a second message", err, o.Count())
	}
	if _, err := o.Post(t.Context(), thread, conversation.Reply{Text: gate.Text}); err != nil || o.Count() != 3 {
		t.Errorf("unkeyed: %v, %d messages; want a third message", err, o.Count())
	}
	if m := o.ByID(first.MessageID); m.Key != gate.Key {
		t.Errorf("the message records key %q, want %q", m.Key, gate.Key)
	}
}
