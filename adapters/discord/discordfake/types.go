package discordfake

import "time"

// Message is the fake's view of one message after every edit, as a user of the channel sees it.
type Message struct {
	ID        string
	ChannelID string
	Content   string
	Author    string // user id; the bot's messages carry BotUserID
	Nonce     string // as the create sent it (an integer nonce in its decimal form); empty when none
	Buttons   []Button
	Edited    bool // the bot edited it after creating it
	// AllowedMentionsNone is true when the last create or edit sent allowed_mentions.parse as an
	// empty list, which is what keeps Discord from pinging anyone named in the content.
	AllowedMentionsNone bool
	// AllowedUsers and AllowedRoles are allowed_mentions.users and .roles of the last create or
	// edit: the only users and roles the message may ping (with parse empty).
	AllowedUsers, AllowedRoles []string
}

// Profile is how a user presents themselves: the unique username, the global display name, and
// a nickname in the fake's guild. Discord shows the nickname, else the global name, else the
// username; a bot must do the same. Users without a profile are "user<id>" with neither.
// Roles are the member's role ids in the guild, sent with every guild message and interaction as
// Discord sends them (member.roles).
type Profile struct {
	Username, GlobalName, Nick string
	Roles                      []string
}

// Button is one button of a message's action rows.
type Button struct {
	Label    string
	CustomID string
	Style    int // 1 primary, 2 secondary, 4 danger
}

// Thread is a thread the bot started from a message.
type Thread struct {
	ID        string
	ParentID  string
	MessageID string
	Name      string
}

// Response is one answer to an interaction: the callback (deferral, autocomplete choices, message)
// or a later webhook followup or edit of the original response.
type Response struct {
	Kind      string // see the Kind* constants
	Content   string
	Choices   []Choice
	Ephemeral bool
	Modal     *Modal // KindModal
	At        time.Time
}

// Choice is one autocomplete suggestion.
type Choice struct {
	Name  string
	Value string
}

// Response kinds.
const (
	KindDeferred       = "deferred"        // callback type 5: "thinking", answered later
	KindDeferredUpdate = "deferred_update" // callback type 6: a component click acknowledged
	KindMessage        = "message"         // callback type 4: an immediate message
	KindAutocomplete   = "autocomplete"    // callback type 8: choices
	KindOther          = "other_callback"  // any other callback type
	KindRejected       = "rejected"        // a second callback, refused as Discord does
	KindExpired        = "expired"         // a callback after CallbackDeadline, refused as Discord does
	KindFollowup       = "followup"        // POST /webhooks/{app}/{token}
	KindEditOriginal   = "edit_original"   // PATCH /webhooks/{app}/{token}/messages/@original
)

// BotUserID and AppID are the identities the fake hands to every bot that connects.
const (
	BotUserID = "900000000000000001"
	AppID     = "900000000000000002"
	GuildID   = "900000000000000003"
)
