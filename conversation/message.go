// Package conversation owns the platform-neutral chat model: inbound Message, outbound Reply with
// Buttons and a Text made of trusted and untrusted spans, Addresses and Refs of posted messages, the
// Outbox every adapter implements, per-conversation ordered processing with a bounded worker pool, and
// de-duplication of inbound events. It knows no platform and no database driver.
package conversation

import (
	"context"
	"errors"

	"threadflow/db"
)

// Address is a place messages can be posted to: a channel, or a thread in it.
type Address struct {
	Platform  string
	ChannelID string
	ThreadID  string // empty for the channel itself
}

// ConversationID is the stable database key of the address.
func (a Address) ConversationID() string {
	return db.ConversationKey(a.Platform, a.ChannelID, a.ThreadID)
}

// Channel returns the address of the channel that holds a.
func (a Address) Channel() Address { return Address{Platform: a.Platform, ChannelID: a.ChannelID} }

// Ref identifies one posted message so it can be edited later (status messages, gate prompts).
type Ref struct {
	Address
	MessageID string
}

// Message is one inbound chat event, already translated from the platform's shape.
type Message struct {
	Address
	UserID    string   // platform-qualified: "slack:U123", "discord:4567", "console:alice"
	UserName  string   // display name as the platform gave it, "" if none; for messages only, never authorization
	UserRoles []string // the sender's roles as the platform sent them with the message (Discord), for Person.Roles
	Text      string
	EventID   string // platform event id; messages with the same id are handled once
	Mentioned bool   // the bot was addressed by mention
	Direct    bool   // a direct message to the bot
	Action    *Action
	Via       string // how the adapter knows who UserID is, if not from the platform itself (ViaSignIn)
	// Recovered says the message was taken over from a process that died before it was handled
	// (Inbox.Keep): it may have been acted on in part, so what it asks must be asked idempotently.
	Recovered bool `json:"-"`
}

// Sender is the person who sent the message.
func (m Message) Sender() Person {
	return Person{ID: m.UserID, Name: m.UserName, Roles: m.UserRoles, Via: m.Via}
}

// Action is set when the message is a button click rather than typed text.
type Action struct {
	Ref Ref // the message that holds the button; edited to show the decision
}

// Addressed reports whether the message was meant for the bot: a mention, a DM, a click, or a
// platform (terminal, web) where everything is.
func (m Message) Addressed() bool { return m.Mentioned || m.Direct || m.Action != nil }

// Reply is one outbound message.
type Reply struct {
	Text      Text
	Buttons   []Button
	Ephemeral bool   // shown only to ToUser where the platform supports it
	ToUser    string // platform-qualified user id for ephemeral replies
	// Key, when set, makes posting idempotent: Post and StartThread mark what they post with it,
	// and posting the same key again to the same place returns what the first post made instead
	// of posting it twice, within each platform's window (docs/design-notes.md, "Posting is
	// idempotent by key"; the rules are in key.go). Empty: every Post posts.
	Key string
	// FirstAttempt says the caller knows no earlier attempt can have posted this keyed reply (the
	// outbox's first try of a message): a platform that looks for a keyed reply before posting it
	// (Slack, whose reads are rate limited to about 50 a minute) posts it without looking.
	FirstAttempt bool
	// RunID is the run the message is about, recorded with it in the transcript; "" for none.
	RunID string
}

// ButtonStyle hints at a button's colour.
type ButtonStyle string

// Button styles.
const (
	StyleDefault ButtonStyle = ""
	StylePrimary ButtonStyle = "primary"
	StyleDanger  ButtonStyle = "danger"
)

// Button runs Command, a text command such as "/workflow approve 7k2m9x4q1c", as the clicking user,
// through the same path as typing it.
type Button struct {
	Label   string
	Command string
	Style   ButtonStyle
}

// Outbox is implemented by every adapter: it renders Replies for its platform and sends them.
type Outbox interface {
	Platform() string
	// Post sends r to the address (a thread when ThreadID is set) and returns a ref for edits.
	Post(ctx context.Context, to Address, r Reply) (Ref, error)
	// Edit replaces the content of a posted message (buttons included).
	Edit(ctx context.Context, ref Ref, r Reply) error
	// StartThread posts r as a root message in the channel of in and returns the address of the
	// thread it opens. Platforms without threads return in itself.
	StartThread(ctx context.Context, in Address, r Reply) (Address, Ref, error)
}

// Accepter is a Handler that says when it could not take a message (its Inbox could not record
// it: the database is down): an adapter whose platform redelivers what it does not acknowledge
// (Slack) then leaves the message unacknowledged, so it comes again instead of being lost.
type Accepter interface {
	Accept(ctx context.Context, m Message) error
}

// Handler handles one inbound message; the orchestrator implements it and posts through Outboxes.
type Handler interface {
	Handle(ctx context.Context, m Message)
}

// Capabilities says what people can do on a platform, so that the bot suggests only what works
// there. An Outbox declares them by implementing Capable; DefaultCapabilities applies otherwise.
type Capabilities struct {
	Threads           bool // a run reports in a thread of its own, and replies there reach it
	Buttons           bool // people click buttons (a terminal prints the command a button runs)
	CommandsInThreads bool // a slash command typed inside a run's thread reaches the bot (Slack: no)
}

// Capable is implemented by outboxes that declare their platform's Capabilities.
type Capable interface {
	Capabilities() Capabilities
}

// DefaultCapabilities are assumed of an Outbox that does not declare its own.
var DefaultCapabilities = Capabilities{Threads: true, Buttons: true, CommandsInThreads: true}

// CapabilitiesOf returns what the platform of ob lets people do.
func CapabilitiesOf(ob Outbox) Capabilities {
	if c, ok := ob.(Capable); ok {
		return c.Capabilities()
	}
	return DefaultCapabilities
}

// ErrRefused is matched (errors.Is) by a Post, Edit or StartThread error that sending again cannot
// fix: the platform refused the message itself (channel_not_found, not_in_channel, missing
// permissions, a 4xx other than a rate limit), after the adapter's own retries of what can pass.
// Whoever owes the message records it as failed with the platform's words instead of retrying.
var ErrRefused = errors.New("the platform refused the message")
