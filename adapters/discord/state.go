package discord

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"

	"threadflow/conversation"
)

// tracker counts running event handlers so shutdown can wait for them, and refuses new ones once
// shutdown began (an Add racing a Wait at zero would be a WaitGroup misuse).
type tracker struct {
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

func (t *tracker) do(f func()) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.wg.Add(1)
	t.mu.Unlock()
	defer t.wg.Done()
	f()
}

func (t *tracker) closeAndWait() {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	t.wg.Wait()
}

// maxCached bounds the in-memory maps; past it they are emptied and refilled on demand.
const maxCached = 10000

// channelInfo is what the adapter needs to know of a channel: whether it is a thread and of what.
type channelInfo struct {
	parentID string // set for threads
	direct   bool   // a DM channel
	guildID  string // the server's id, once read (guildOf)
}

// channelCache remembers channel kinds; a channel never changes kind or parent, so entries never
// go stale.
type channelCache struct {
	mu sync.Mutex
	m  map[string]channelInfo
}

func newChannelCache() *channelCache { return &channelCache{m: map[string]channelInfo{}} }

func (c *channelCache) get(id string) (channelInfo, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	info, ok := c.m[id]
	return info, ok
}

func (c *channelCache) put(id string, info channelInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxCached {
		c.m = map[string]channelInfo{}
	}
	c.m[id] = info
}

// tokenLifetime is how long Discord accepts an interaction token, less a margin for the request.
const tokenLifetime = 15*time.Minute - 30*time.Second

// interactionToken is what a followup to an interaction needs.
type interactionToken struct {
	appID, token string
	at           time.Time
}

// interactionTokens keeps the latest interaction of each user in each conversation, so an
// ephemeral reply to that user can be sent as an ephemeral followup while the token lives.
type interactionTokens struct {
	mu sync.Mutex
	m  map[string]interactionToken
}

func newInteractionTokens() *interactionTokens {
	return &interactionTokens{m: map[string]interactionToken{}}
}

func tokenKey(to conversation.Address, user string) string {
	return to.ConversationID() + "\x00" + user
}

func (t *interactionTokens) remember(to conversation.Address, user string, tok interactionToken) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.m) >= maxCached {
		t.m = map[string]interactionToken{}
	}
	t.m[tokenKey(to, user)] = tok
}

func (t *interactionTokens) live(to conversation.Address, user string, now time.Time) (interactionToken, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tok, ok := t.m[tokenKey(to, user)]
	if !ok || now.Sub(tok.at) > tokenLifetime {
		return interactionToken{}, false
	}
	return tok, true
}

// maxCustomID is Discord's limit on a component's custom_id.
const maxCustomID = 100

// keyPrefix marks a custom_id that is a key for a command too long to carry. Commands start with
// "/", so a key can never be mistaken for one.
const keyPrefix = "k:"

// buttonKeys maps short keys to commands longer than a custom_id may be. The map lives in this
// process only: after a restart, or on another replica, such a button answers that it expired and
// the user types the command shown in the message instead.
type buttonKeys struct {
	mu sync.Mutex
	m  map[string]string
}

func newButtonKeys() *buttonKeys { return &buttonKeys{m: map[string]string{}} }

// customID returns the custom_id for a button that runs command.
func (b *buttonKeys) customID(command string) string {
	if len(command) <= maxCustomID {
		return command
	}
	sum := sha256.Sum256([]byte(command))
	key := keyPrefix + hex.EncodeToString(sum[:16])
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.m) >= maxCached {
		b.m = map[string]string{}
	}
	b.m[key] = command
	return key
}

// command returns the command a clicked custom_id stands for.
func (b *buttonKeys) command(customID string) (string, bool) {
	if len(customID) > 0 && customID[0] == '/' {
		return customID, true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	cmd, ok := b.m[customID]
	return cmd, ok
}
