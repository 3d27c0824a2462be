package maintenance

import (
	"context"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"threadflow/db"
	"threadflow/orchestrator/execution"
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
	// Home is the THREADFLOW_HOME this process announces while it runs (Token "" announces none):
	// the runs whose workspaces it holds stay with it while it is alive.
	Home db.Home

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
		return db.Reach{Conversations: slices.Clone(p.convs), Home: p.Home.Token, Remote: p.Home.Remote}, len(p.convs) > 0
	}
	return db.Reach{Platforms: p.Platforms, Unattended: p.Unattended, Home: p.Home.Token, Remote: p.Home.Remote}, true
}

// homeTTL is how long a home stays alive without renewal: twice the lease, so a replica that
// restarts keeps its runs, and one that is gone for good hands them over soon after its leases.
func (p *Presence) homeTTL() time.Duration { return 2 * p.ttl() }

// CheckHome announces this process's home and says what is wrong with the deployment's homes
// (HomeProblem): "" when every live replica sees the same THREADFLOW_HOME, or workspaces follow
// their runs through WORKSPACE_REMOTE.
func (p *Presence) CheckHome(ctx context.Context) (string, error) {
	if p.Home.Token == "" {
		return "", nil
	}
	if err := p.Store.AnnounceHome(ctx, p.Home, p.homeTTL()); err != nil {
		return "", err
	}
	live, err := p.Store.LiveHomes(ctx)
	if err != nil {
		return "", err
	}
	return execution.HomeProblem(p.Home, live), nil
}

func (p *Presence) announce(ctx context.Context) {
	if p.Home.Token == "" {
		return
	}
	if err := p.Store.AnnounceHome(ctx, p.Home, p.homeTTL()); err != nil && ctx.Err() == nil {
		p.Log.Warn("orchestrator.home_announce_failed", zap.Error(err))
	}
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

// Run renews the home and a terminal's attachments every third of TTL until ctx ends, then ends
// the attachments, so a server takes over the terminal's runs at once (a killed terminal's expire
// after TTL instead). The home is left to expire: a replica that restarts keeps its workspaces.
func (p *Presence) Run(ctx context.Context) {
	p.announce(ctx)
	t := time.NewTicker(p.ttl() / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			if !p.Terminal {
				return
			}
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
	p.announce(ctx)
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
