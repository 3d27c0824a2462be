package db

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The outbox (table run_outbox) holds every chat message a run owes, written in the same
// transaction as the state change that owes it, so a crash can delay a message but never lose it.
// A courier in each process claims the rows it can deliver, posts them with their Key (posting is
// idempotent by key) and records the outcome here (docs/design-notes.md, "The outbox").

// OwedTarget says where an owed message goes.
type OwedTarget string

// Targets.
const (
	// TargetOpen opens the run's thread in its conversation with the message (the announcement);
	// once posted, the thread becomes the run's conversation.
	TargetOpen OwedTarget = "open"
	// TargetThread posts the message in the run's conversation.
	TargetThread OwedTarget = "thread"
	// TargetLive keeps one message of the run up to date (its live status message): posted while
	// no message is recorded as Ref, edited afterwards.
	TargetLive OwedTarget = "live"
	// TargetEdit edits the run's message recorded as Ref; there is nothing to do when none is.
	TargetEdit OwedTarget = "edit"
	// TargetDirect sends the message to people directly (a DM each), not to the run's
	// conversation: its Reply is a conversation.Direct saying to whom and about what.
	TargetDirect OwedTarget = "direct"
)

// Owed is one message a transition (or a report) owes to the run's conversation.
type Owed struct {
	Kind   string     // what it is, for people and metrics: announce, status, gate, reminder, completed, ...
	Key    string     // its conversation.Reply key: unique per run, and what makes posting it idempotent
	Target OwedTarget // where it goes
	// Ref is the kind the posted message is recorded as in the run's messages (MessageRef), so any
	// replica can edit it later; for TargetLive and TargetEdit, the message edited.
	Ref string
	// Reply is the rendered conversation.Reply as JSON: every replica delivers the same thing.
	Reply json.RawMessage
	// Replace makes the latest content win: a message still owed under the same Key gets Reply
	// instead, and one already delivered is owed again with it (status edits). It moves to the end
	// of the run's messages, so it is shown in the order things happened.
	Replace bool
}

// Owing says what a transition owes, from the run as the transition leaves it. It is called inside
// the transition's transaction, only when the transition happens (not for a refusal or a replay).
type Owing func(Run) []Owed

// Owe is the Owing of messages that do not depend on the run.
func Owe(o ...Owed) Owing { return func(Run) []Owed { return o } }

// OwedKey names one message a run owes for good, from what it is about (reporting decides the
// parts): the outbox key and the conversation.Reply.Key it is posted with.
func OwedKey(runID string, parts ...string) string {
	return "tf." + runID + "." + strings.Join(parts, ".")
}

// OutboxState is where an owed message is.
type OutboxState string

// Outbox states: owed until delivered (sent) or given up on (failed).
const (
	OutboxOwed   OutboxState = "owed"
	OutboxSent   OutboxState = "sent"
	OutboxFailed OutboxState = "failed"
)

// OutboxEntry is one row of the outbox.
type OutboxEntry struct {
	Owed
	RunID    string
	ID       int64 // orders a run's messages: delivered in ID order
	State    OutboxState
	Attempts int // claims so far; a claimed entry with Attempts > 1 may have been posted already
	// Version counts Replace writes: a delivery of an older version does not mark a newer one sent.
	Version       int
	NextAttemptAt time.Time
	LastError     string
	CreatedAt     time.Time
	SentAt        time.Time // zero until sent
	MessageID     string    // the platform's id of what was posted, once sent
}

// InDoubt reports whether an earlier attempt at the entry may have reached the platform: its
// courier claimed it and never recorded the outcome, or the platform failed after receiving it.
// Such an entry is looked up (conversation.Finder) before it is posted again.
func (e OutboxEntry) InDoubt() bool { return e.Attempts > 1 }

// Delivery is the outcome of one delivered entry, recorded with DeliveredOwed.
type Delivery struct {
	RunID   string
	Key     string // the entry delivered (its ID may have moved: Owed.Replace)
	Version int
	Owner   string // the courier that claimed it
	// Message is what was posted, recorded as the run's message of kind Owed.Ref when that is set
	// (its RunID and Kind are filled in); MessageID "" records nothing.
	Message MessageRef
	// Conversations, for TargetOpen, are the thread the message opened, after its channel: they are
	// recorded (if new) in order, and the last becomes the run's conversation, in the same
	// transaction. None: the run stays where it is (a platform without threads).
	Conversations []Conversation
	// Events are recorded with the delivery, in its transaction: who a notification reached
	// (notified), so the run's history says it once it happened.
	Events []Event
}

// Retry is the outcome of an attempt that did not deliver, recorded with RetryOwed.
type Retry struct {
	RunID   string
	Key     string
	Version int
	Owner   string
	Error   string
	At      time.Time // when to try again; ignored with Fail
	Fail    bool      // give up: the entry is failed for good
}

// ErrOwedGone is returned by DeliveredOwed and RetryOwed when the entry is no longer the claim
// they record for (its claim expired and another courier took it, or a Replace made it newer).
var ErrOwedGone = errors.New("owed message claimed elsewhere or replaced")

// CheckOwed rejects owed messages the outbox could never deliver.
func CheckOwed(o []Owed) error {
	for _, x := range o {
		switch {
		case x.Kind == "" || x.Key == "":
			return fmt.Errorf("owed message needs a kind and a key (got %q, %q)", x.Kind, x.Key)
		case len(x.Reply) == 0 || !json.Valid(x.Reply):
			return fmt.Errorf("owed %s %s: its reply is not JSON", x.Kind, x.Key)
		case (x.Target == TargetLive || x.Target == TargetEdit) && x.Ref == "":
			return fmt.Errorf("owed %s %s: target %s needs the message kind it edits", x.Kind, x.Key, x.Target)
		case x.Target != TargetOpen && x.Target != TargetThread && x.Target != TargetLive && x.Target != TargetEdit && x.Target != TargetDirect:
			return fmt.Errorf("owed %s %s: unknown target %q", x.Kind, x.Key, x.Target)
		}
	}
	return nil
}

// Outbox is the store's side of the outbox, implemented by both engines.
type Outbox interface {
	// Owe records messages a run owes outside any transition (progress on its status message, a
	// remark); transitions carry theirs (NewRun.Owe, the owe arguments of the Store methods).
	Owe(ctx context.Context, runID string, owed ...Owed) error
	// ClaimOwed claims, for owner until ttl from now, up to n owed entries that are due, each the
	// first owed entry of its run, of runs in reach, oldest first. Attempts counts this claim.
	ClaimOwed(ctx context.Context, owner string, ttl time.Duration, reach Reach, n int) ([]OutboxEntry, error)
	// DeliveredOwed marks a claimed entry sent and records what it posted (Delivery), in one
	// transaction; ErrOwedGone when the claim is no longer owner's.
	DeliveredOwed(ctx context.Context, d Delivery) error
	// RetryOwed records an attempt that did not deliver: due again at r.At, or failed for good.
	RetryOwed(ctx context.Context, r Retry) error
	// NextOwed is when the next owed entry of a run in reach is due; ok is false when none is owed.
	NextOwed(ctx context.Context, reach Reach) (next time.Time, ok bool, err error)
	// Undelivered lists the run's entries not delivered (owed or failed), oldest first.
	Undelivered(ctx context.Context, runID string) ([]OutboxEntry, error)
}
