package conversation

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// MaxKeyBytes bounds a Reply's Key. Keys name a message for good (a run, what it owes, a
// sequence number), so they are short; the bound keeps them far below what any platform stores
// with a message (Slack metadata, the web transcript), and Discord gets a hash of them anyway.
const MaxKeyBytes = 200

// ErrBadKey is returned by Post and StartThread for a Reply whose Key breaks a rule of CheckKey.
var ErrBadKey = errors.New("conversation: invalid reply key")

// CheckKey is the one place that decides which keys may be posted: an unkeyed reply always may;
// a key is valid UTF-8 of at most MaxKeyBytes without control characters (it names the message
// in logs and platform metadata), and an ephemeral reply is never keyed, because no platform can
// find an ephemeral message again (it answers one person now; it is not owed by anything).
func CheckKey(r Reply) error {
	switch k := r.Key; {
	case k == "":
		return nil
	case r.Ephemeral:
		return fmt.Errorf("%w: an ephemeral reply cannot have a key", ErrBadKey)
	case len(k) > MaxKeyBytes:
		return fmt.Errorf("%w: %d bytes, more than %d", ErrBadKey, len(k), MaxKeyBytes)
	case !utf8.ValidString(k):
		return fmt.Errorf("%w: not valid UTF-8", ErrBadKey)
	default:
		for _, c := range k {
			if unicode.IsControl(c) {
				return fmt.Errorf("%w: %q has a control character", ErrBadKey, k)
			}
		}
		return nil
	}
}

// CheckFind is CheckKey for the key a Finder is asked about: the same rules, and there must be one.
func CheckFind(key string) error {
	if key == "" {
		return fmt.Errorf("%w: finding a message needs its key", ErrBadKey)
	}
	return CheckKey(Reply{Key: key})
}

// ChunkKey is the key of message i (from 0) of a keyed reply that a platform shows as several
// messages because it is long: key + "#" + i. Every message is keyed, the first too, so a repeated
// post finds each one and posts only those missing. The suffix after the last "#" is the index,
// so keys that contain "#" themselves cannot collide.
func ChunkKey(key string, i int) string { return key + "#" + strconv.Itoa(i) }

// Finder is implemented by outboxes that can tell whether a keyed Reply is already on the
// platform, without posting anything (the web chat, Slack). Discord and the terminal cannot
// (docs/design-notes.md, "Posting is idempotent by key"); a repeated Post with the same key is
// how to get the message there.
//
// Find and FindThread look only: they record nothing in the transcript. To have a message that
// was posted but never recorded (the bot stopped in between) recorded once, post it again with
// the same key through conversation.Recorded: the post finds it and posts nothing new.
type Finder interface {
	// Find reports whether every message of the reply Post(ctx, to, r) posted with r.Key == key
	// is on the platform at to, and returns the Ref Post returned: its last message's. A reply
	// of which only some messages were posted is not found; posting it again posts the rest.
	Find(ctx context.Context, to Address, key string) (Ref, bool, error)
	// FindThread does the same for StartThread(ctx, in, r): it returns the address of the thread
	// the keyed reply opened and the Ref StartThread returned.
	FindThread(ctx context.Context, in Address, key string) (Address, Ref, bool, error)
}
