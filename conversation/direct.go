package conversation

import (
	"context"
	"errors"
)

// Direct is what an owed direct message (db.TargetDirect) says: Reply, sent to each of To in a
// direct message, with a link to the run's message recorded as Link appended. The courier
// expands groups into their members (at most MaxDirectRecipients) and records the delivery as a
// `notified` event about About.
type Direct struct {
	To     []string `json:"to"`             // platform-qualified ids and groups of the run's platform
	About  string   `json:"about"`          // gate, reminder, escalation, decision, end
	Link   string   `json:"link,omitempty"` // the kind of the run's recorded message to link to (db.MessageRef.Kind)
	Reply  Reply    `json:"reply"`
	Reason string   `json:"reason,omitempty"` // said in the event: why these people were told
}

// MaxDirectRecipients bounds how many people one direct notification reaches: a group larger than
// this is told in the thread by mention instead, and the event says so.
const MaxDirectRecipients = 50

// ErrNoDM is matched by a Messenger error for one person who cannot get a direct message from the
// bot (they turned DMs off, left the workspace, are a bot): they are skipped and named, the others
// still told.
var ErrNoDM = errors.New("the person does not take direct messages from the bot")

// Messenger is implemented by outboxes of platforms where the bot can reach people directly.
type Messenger interface {
	// Members lists the platform-qualified ids of a group's members (a `slack:group:S…`, a
	// `discord:role:…` of the guild of in), at most limit; more reports that there were more.
	Members(ctx context.Context, in Address, group string, limit int) (ids []string, more bool, err error)
	// PostDirect sends r to the person user (platform-qualified) in a direct message.
	PostDirect(ctx context.Context, user string, r Reply) (Ref, error)
	// Link is a URL that opens the posted message ref.
	Link(ctx context.Context, ref Ref) (string, error)
}

// MessengerOf is ob's Messenger, looking through wrappers (Recorded): direct messages are not the
// conversation's, so no transcript records them.
func MessengerOf(ob Outbox) (Messenger, bool) {
	for ob != nil {
		if m, ok := ob.(Messenger); ok {
			return m, true
		}
		u, ok := ob.(interface{ Unwrap() Outbox })
		if !ok {
			return nil, false
		}
		ob = u.Unwrap()
	}
	return nil, false
}
