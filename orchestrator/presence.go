package orchestrator

import (
	"context"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"threadflow/db"
)

// Presence decides which runs this process executes and fires the gate timers of (its db.Reach),
// and keeps a terminal's attachments alive. The rule (docs/state-machine.md, "Who executes a run"):
//
//   - a server executes the runs of the chats it is connected to, and the runs of terminal
//     conversations no terminal is attached to any more (exited, or killed and its attachment
//     expired), so every queued run has an executor while a server is up;
//   - a terminal attaches to the conversations it talks in and executes their runs only: its own
//     runs stay with it while it is attached, and it never prints another terminal's run.
type Presence struct {
	Store Store
	Owner string        // REPLICA_ID of this process
	TTL   time.Duration // how long an attachment lasts without renewal (LEASE_TTL)
	Log   *zap.Logger

	// Terminal: this process reaches only the conversations it attached to (Attach).
	Terminal bool
	// Platforms a server is connected to; Unattended: terminal platforms whose unattended runs it
	// takes. Set before Run.
	Platforms, Unattended []string

	mu    sync.Mutex
	convs []string
}

// Reach is what this process may claim now. ok is false for a terminal attached to nothing yet,
// which must claim nothing (the zero Reach would be every run).
func (p *Presence) Reach() (r db.Reach, ok bool) {
	if p == nil {
		return db.Reach{}, true
	}
	if p.Terminal {
		p.mu.Lock()
		defer p.mu.Unlock()
		return db.Reach{Conversations: slices.Clone(p.convs)}, len(p.convs) > 0
	}
	return db.Reach{Platforms: p.Platforms, Unattended: p.Unattended}, true
}

// Attach records that this terminal talks in a conversation: from now until it exits, the runs of
// the conversation are its own. Call it before starting or answering a run there, so no server
// takes the run in between.
func (p *Presence) Attach(ctx context.Context, conversationID string) error {
	if err := p.Store.AttachTerminal(ctx, conversationID, p.Owner, p.ttl()); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !slices.Contains(p.convs, conversationID) {
		p.convs = append(p.convs, conversationID)
	}
	return nil
}

// Run renews a terminal's attachments every third of TTL until ctx ends, then ends them, so a
// server takes over the terminal's runs at once (a killed terminal's expire after TTL instead).
func (p *Presence) Run(ctx context.Context) {
	if !p.Terminal {
		return
	}
	t := time.NewTicker(p.ttl() / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := p.Store.DetachTerminal(dctx, p.Owner); err != nil {
				p.Log.Warn("orchestrator.detach_failed", zap.Error(err))
			}
			return
		case <-t.C:
			p.renew(ctx)
		}
	}
}

func (p *Presence) renew(ctx context.Context) {
	p.mu.Lock()
	convs := slices.Clone(p.convs)
	p.mu.Unlock()
	for _, c := range convs {
		if err := p.Store.AttachTerminal(ctx, c, p.Owner, p.ttl()); err != nil && ctx.Err() == nil {
			p.Log.Warn("orchestrator.attach_failed", zap.String("conversation", c), zap.Error(err))
		}
	}
}

func (p *Presence) ttl() time.Duration {
	if p.TTL <= 0 {
		return 30 * time.Second
	}
	return p.TTL
}
