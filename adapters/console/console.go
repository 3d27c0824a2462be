// Package console is the terminal chat adapter: it renders Replies as plain text lines on a writer
// (the `bot chat` command's stdout). Its platform name is "console". Everything it prints is
// stripped of terminal control characters, so neither a user nor a workflow's output can drive the
// terminal (move the cursor, retitle the window, hide text).
package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"threadflow/conversation"
	"threadflow/platform"
)

// Platform is the platform name of console addresses and user ids ("console:alice").
const Platform = platform.Console

// keepKeys is how many keyed replies an Outbox remembers, so that posting one again prints nothing
// (the oldest is forgotten first): far more than a terminal session's runs owe at once.
const keepKeys = 1024

// Errors returned by the Outbox.
var (
	ErrWrongPlatform  = errors.New("console: address is not a console address")
	ErrUnknownMessage = errors.New("console: no such message")
)

// Outbox prints replies to a writer. It implements conversation.Outbox and is safe for concurrent
// use: each reply is written whole, with one Write, so concurrent runs never interleave lines.
type Outbox struct {
	mu   sync.Mutex
	w    io.Writer
	last int // the id of the last message posted; ids are 1, 2, 3...
	// buttoned are the messages posted with buttons and not edited since. An edit of one only takes
	// its buttons away, and the bot says what happened in the message it posts next, so printing
	// the edit would show the same line twice.
	buttoned map[int]bool
	// keyed are the refs of the keyed replies printed, by conversation and key, the newest
	// keepKeys of them (in order). A terminal cannot look up what it printed before the process
	// started, so this is all the de-duplication there is (docs/design-notes.md).
	keyed map[string]conversation.Ref
	order []string
}

// NewOutbox returns an Outbox printing to w.
func NewOutbox(w io.Writer) *Outbox { return &Outbox{w: w} }

var _ conversation.Outbox = (*Outbox)(nil)

// Platform returns "console".
func (o *Outbox) Platform() string { return Platform }

// Capabilities: a terminal has no threads, and prints a button as the command it runs.
func (o *Outbox) Capabilities() conversation.Capabilities {
	return conversation.Capabilities{CommandsInThreads: true}
}

// Post prints r, prefixed with its thread ("[thread 3] ...") when to is a thread, and its buttons
// as the commands they run. A keyed reply this Outbox printed already is not printed again: Post
// returns its ref.
func (o *Outbox) Post(ctx context.Context, to conversation.Address, r conversation.Reply) (conversation.Ref, error) {
	if err := check(ctx, to); err != nil {
		return conversation.Ref{}, err
	}
	if err := conversation.CheckKey(r); err != nil {
		return conversation.Ref{}, fmt.Errorf("console: %w", err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	seen := to.ConversationID() + "\x00" + r.Key
	if ref, ok := o.keyed[seen]; ok && r.Key != "" {
		return ref, nil
	}
	o.last++
	ref := conversation.Ref{Address: to, MessageID: strconv.Itoa(o.last)}
	if err := o.print(to, r); err != nil {
		return conversation.Ref{}, err
	}
	if len(r.Buttons) > 0 {
		if o.buttoned == nil {
			o.buttoned = map[int]bool{}
		}
		o.buttoned[o.last] = true
	}
	if r.Key != "" {
		o.remember(seen, ref)
	}
	return ref, nil
}

// remember keeps the ref of a keyed reply, forgetting the oldest beyond keepKeys; the caller holds o.mu.
func (o *Outbox) remember(seen string, ref conversation.Ref) {
	if o.keyed == nil {
		o.keyed = map[string]conversation.Ref{}
	}
	if len(o.order) == keepKeys {
		delete(o.keyed, o.order[0])
		o.order = o.order[1:]
	}
	o.keyed[seen] = ref
	o.order = append(o.order, seen)
}

// Edit prints the new content of a message this process posted, such as a run's status as it
// changes: a terminal cannot change what it already showed. It prints nothing for the edit of a
// message with buttons (the edit only takes them away; the bot's next message tells the decision)
// or of a message an earlier process printed (a later `bot workflow approve` answering a gate
// another command showed): the terminal has nothing to update, which is not a failure.
func (o *Outbox) Edit(ctx context.Context, ref conversation.Ref, r conversation.Reply) error {
	if err := check(ctx, ref.Address); err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	n, err := strconv.Atoi(ref.MessageID)
	if err != nil || n < 1 {
		return fmt.Errorf("%w: edit of message %q", ErrUnknownMessage, ref.MessageID)
	}
	if n > o.last || o.buttoned[n] {
		delete(o.buttoned, n)
		return nil
	}
	return o.print(ref.Address, r)
}

// StartThread prints r and returns in itself: a terminal has no threads, so a run reports in the
// conversation it was started from, and answers typed there (such as "lgtm") reach its gate.
func (o *Outbox) StartThread(ctx context.Context, in conversation.Address, r conversation.Reply) (conversation.Address, conversation.Ref, error) {
	ref, err := o.Post(ctx, in, r)
	if err != nil {
		return conversation.Address{}, conversation.Ref{}, err
	}
	return in, ref, nil
}

func check(ctx context.Context, to conversation.Address) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("console: %w", err)
	}
	if to.Platform != Platform {
		return fmt.Errorf("%w: platform %q", ErrWrongPlatform, to.Platform)
	}
	return nil
}

// print writes one reply in a single Write; the caller holds o.mu.
func (o *Outbox) print(to conversation.Address, r conversation.Reply) error {
	var b strings.Builder
	if to.ThreadID != "" {
		b.WriteString("[thread " + sanitize(to.ThreadID) + "] ")
	}
	b.WriteString(Render(r.Text))
	b.WriteString("\n")
	for _, btn := range r.Buttons {
		b.WriteString("  [" + sanitize(btn.Label) + "] " + sanitize(btn.Command) + "\n")
	}
	if _, err := io.WriteString(o.w, b.String()); err != nil {
		return fmt.Errorf("console: write reply: %w", err)
	}
	return nil
}
