package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"threadflow/db"
)

// RecordTimeout bounds one transcript write after a message was posted, so a slow database delays
// a report by at most this much (a write normally takes a millisecond or two).
const RecordTimeout = 2 * time.Second

// TranscriptWriter records messages in conversation transcripts; db.Store satisfies it.
type TranscriptWriter interface {
	AppendMessage(ctx context.Context, m db.TranscriptMessage) (db.TranscriptMessage, error)
	AppendMessageOnce(ctx context.Context, m db.TranscriptMessage) (db.TranscriptMessage, bool, error)
	EditMessage(ctx context.Context, m db.TranscriptMessage) (db.TranscriptMessage, error)
}

// Recorded returns ob recording in w every message it posts and every edit it makes, with the
// platform's message id. Recording never fails nor undoes a post: the message is on the platform
// already, so a failed write (an unwritable database, RecordTimeout passed) is reported to failed
// and the post succeeds. failed may be nil.
//
// A keyed reply (Reply.Key) is recorded once: posting it again, which the platform answers with
// the message it already has, leaves its transcript row as it is (an edit since stays, and the
// row is not marked edited). When ob is a Finder, so is the Outbox returned.
func Recorded(ob Outbox, w TranscriptWriter, failed func(platform string, err error)) Outbox {
	if failed == nil {
		failed = func(string, error) {}
	}
	r := recorded{ob: ob, w: w, failed: failed}
	if f, ok := ob.(Finder); ok {
		return recordedFinder{recorded: r, f: f}
	}
	return r
}

// recordedFinder is a recorded Outbox whose platform can find keyed messages: the wrapper keeps
// that visible to whoever holds the Outbox. Finding records nothing (see Finder).
type recordedFinder struct {
	recorded
	f Finder
}

func (r recordedFinder) Find(ctx context.Context, to Address, key string) (Ref, bool, error) {
	return r.f.Find(ctx, to, key)
}

func (r recordedFinder) FindThread(ctx context.Context, in Address, key string) (Address, Ref, bool, error) {
	return r.f.FindThread(ctx, in, key)
}

type recorded struct {
	ob     Outbox
	w      TranscriptWriter
	failed func(platform string, err error)
}

func (r recorded) Platform() string { return r.ob.Platform() }

// Unwrap is the recorded Outbox, for what recording does not cover (MessengerOf).
func (r recorded) Unwrap() Outbox { return r.ob }

// Capabilities are the wrapped Outbox's: recording changes nothing people can do.
func (r recorded) Capabilities() Capabilities { return CapabilitiesOf(r.ob) }

func (r recorded) Post(ctx context.Context, to Address, rep Reply) (Ref, error) {
	ref, err := r.ob.Post(ctx, to, rep)
	if err == nil {
		r.record(ctx, to, ref, rep, false)
	}
	return ref, err
}

func (r recorded) Edit(ctx context.Context, ref Ref, rep Reply) error {
	err := r.ob.Edit(ctx, ref, rep)
	if err == nil {
		r.record(ctx, ref.Address, ref, rep, true)
	}
	return err
}

// StartThread records the root message in the thread it opens: it heads that transcript.
func (r recorded) StartThread(ctx context.Context, in Address, rep Reply) (Address, Ref, error) {
	thread, ref, err := r.ob.StartThread(ctx, in, rep)
	if err == nil {
		r.record(ctx, thread, ref, rep, false)
	}
	return thread, ref, err
}

// record writes one message under its own deadline, detached from the caller's cancellation: the
// message was posted, so its record should be kept even when the command that posted it ends.
func (r recorded) record(ctx context.Context, in Address, ref Ref, rep Reply, edit bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), RecordTimeout)
	defer cancel()
	m := TranscriptEntry(in, ref.MessageID, rep)
	if m.MessageID == "" { // an ephemeral reply the platform gives no id for
		m.MessageID = "local-" + db.NewToken()[:16]
	}
	var err error
	switch {
	case edit:
		_, err = r.w.EditMessage(ctx, m)
		if errors.Is(err, db.ErrNotFound) { // posted before it could be recorded: keep its latest state
			_, err = r.w.AppendMessage(ctx, m)
		}
	case rep.Key != "": // a repeated keyed post is the same message: recorded the first time only
		_, _, err = r.w.AppendMessageOnce(ctx, m)
	default:
		_, err = r.w.AppendMessage(ctx, m)
	}
	if err != nil {
		r.failed(r.ob.Platform(), err)
	}
}

// TranscriptEntry is the transcript row of a reply posted in a conversation as messageID: a
// thread is a conversation of its own, apart from its channel.
func TranscriptEntry(in Address, messageID string, rep Reply) db.TranscriptMessage {
	conv := in.ConversationID()
	m := db.TranscriptMessage{ConversationID: conv, Platform: in.Platform, ChannelID: in.ChannelID, ThreadID: in.ThreadID,
		MessageID: messageID, Text: rep.Text.String(), Body: EncodeBody(rep), RunID: rep.RunID}
	if rep.Ephemeral {
		m.ToUser = rep.ToUser
	}
	return m
}

// Body is what a transcript keeps of a Reply to render it again: its spans, kinds kept, so a
// renderer escapes untrusted text exactly as for the original post, and its buttons.
type Body struct {
	Text    Text     `json:"text"`
	Buttons []Button `json:"buttons,omitempty"`
}

// EncodeBody returns the transcript body of rep.
func EncodeBody(rep Reply) []byte {
	b, err := json.Marshal(Body{Text: rep.Text, Buttons: rep.Buttons})
	if err != nil {
		panic("conversation: encode a reply body: " + err.Error()) // spans and buttons are strings and ints
	}
	return b
}

// DecodeBody reads a transcript body; a message without one (or with a body cut by the transcript's
// bounds) renders as its plain text, untrusted.
func DecodeBody(m db.TranscriptMessage) Body {
	var b Body
	if len(m.Body) == 0 || json.Unmarshal(m.Body, &b) != nil {
		return Body{Text: T(U(m.Text))}
	}
	return b
}
