package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator"
	"threadflow/orchestrator/dispatch"
	"threadflow/orchestrator/execution"
	"threadflow/workflow"
)

// benchPlatform is the platform name of the bench's outbox and messages.
const benchPlatform = "web" // the bot binary of the recovery scenario claims only runs it can report on

// rig is the bot's orchestrator wired as cmd/bot wires it (same defaults: 8 workers, 4 parallel
// nodes, 30s lease), on one database, with a recording outbox in place of a chat platform.
type rig struct {
	db     *database
	store  db.Store
	engine *orchestrator.Engine
	out    *outbox
	notes  *notices
	log    *zap.Logger
	cat    *workflow.Catalog
	stop   context.CancelFunc
	done   chan struct{}
}

// newRig opens the database and wires an engine whose catalog holds the bundled workflows and
// workflows (name -> YAML). The workers are not started: see start.
func newRig(ctx context.Context, d *database, workflows map[string]string) (*rig, error) {
	log := benchLogger()
	st, err := d.open(ctx, log)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(d.home, "workflows")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for name, src := range workflows {
		if err := os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(src), 0o644); err != nil {
			return nil, err
		}
	}
	cat, errs := workflow.Discover(d.home, nil)
	if len(errs) > 0 {
		_ = st.Close()
		return nil, fmt.Errorf("bench workflows: %w", errs)
	}
	r := &rig{db: d, store: st, out: newOutbox(), notes: newNotices(), log: log, cat: cat}
	r.engine = orchestrator.New(orchestrator.Config{
		Store:     st,
		Catalogs:  r,
		Providers: noProviders{},
		Outboxes:  map[string]conversation.Outbox{benchPlatform: r.out},
		Auth:      dispatch.NewAuth(nil, nil),
		Dirs:      execution.Dirs{Home: d.home},
		Log:       log,
		Owner:     "bench",
		Notifier:  r.notes,
	})
	return r, nil
}

// benchLogger logs as the bot does in production (JSON, info level) but to nowhere: the cost of
// encoding log lines is part of what is measured, the terminal is not.
func benchLogger() *zap.Logger {
	enc := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	return zap.New(zapcore.NewCore(enc, zapcore.AddSync(io.Discard), zapcore.InfoLevel))
}

// Catalog implements dispatch.Catalogs with the catalog discovered once, as the bot's cached
// catalog is between reloads.
func (r *rig) Catalog() *workflow.Catalog { return r.cat }

// start runs the workers and the rescuer until close.
func (r *rig) start() {
	ctx, cancel := context.WithCancel(context.Background())
	r.stop, r.done = cancel, make(chan struct{})
	go func() { defer close(r.done); r.engine.Run(ctx) }()
}

// close stops the engine (if started) and the store.
func (r *rig) close() {
	if r.stop != nil {
		r.stop()
		<-r.done
	}
	if err := r.store.Close(); err != nil { // after the figures were taken: worth a line, not a failure
		r.log.Warn("bench.store_close_failed", zap.Error(err))
	}
}

// queue creates n queued runs of a workflow of the catalog without posting anything.
func (r *rig) queue(ctx context.Context, name string, n int) ([]string, error) {
	wf, ok := r.cat.Get(name)
	if !ok {
		return nil, fmt.Errorf("no workflow %q", name)
	}
	return queueRuns(ctx, r.store, r.db.home, wf, n)
}

// queueRuns creates n queued runs of wf as StartRun does (a fresh working directory each, the source
// frozen in) and returns their ids.
func queueRuns(ctx context.Context, st db.Store, home string, wf *workflow.Workflow, n int) ([]string, error) {
	conv, err := st.EnsureConversation(ctx, db.Conversation{ID: benchPlatform + ":queue", Platform: benchPlatform, ChannelID: "queue"})
	if err != nil {
		return nil, err
	}
	dirs := execution.Dirs{Home: home}
	ids := make([]string, n)
	for i := range ids {
		id := db.NewRunID()
		work := dirs.WorkPath(id) // the executor creates it on the first claim
		if _, err := st.CreateRun(ctx, db.NewRun{ID: id, Workflow: wf.Name, ConversationID: conv.ID, ParentConversationID: conv.ID,
			UserID: benchPlatform + ":user", WorkingPath: work, WorkflowSource: wf.Source}); err != nil {
			return nil, err
		}
		ids[i] = id
	}
	return ids, nil
}

// noProviders refuses every AI provider: the bench workflows are shell and approval nodes only.
type noProviders struct{}

var errNoProvider = errors.New("the bench runs no AI provider")

func (noProviders) Provider(string) (execution.Provider, error) { return nil, errNoProvider }

// notices counts the run notices of each kind and wakes waiters, so scenarios wait for "n runs
// completed" without polling the database.
type notices struct {
	mu     sync.Mutex
	counts map[execution.NoticeKind]int
	change chan struct{} // closed and replaced on every counted notice
}

func newNotices() *notices {
	return &notices{counts: map[execution.NoticeKind]int{}, change: make(chan struct{})}
}

func (n *notices) Notify(_ context.Context, x execution.Notice) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.counts[x.Kind]++
	close(n.change)
	n.change = make(chan struct{})
}

// wait blocks until at least want notices of kind were seen, failing on any failed run or when
// ctx or the deadline ends.
func (n *notices) wait(ctx context.Context, kind execution.NoticeKind, want int, deadline time.Duration) error {
	t := time.NewTimer(deadline)
	defer t.Stop()
	for {
		n.mu.Lock()
		got, failed, ch := n.counts[kind], n.counts[execution.NoticeFailed], n.change
		n.mu.Unlock()
		switch {
		case failed > 0:
			return fmt.Errorf("%d runs failed while waiting for %d %s notices", failed, want, kind)
		case got >= want:
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return fmt.Errorf("only %d of %d %s notices within %s", got, want, kind, deadline)
		}
	}
}
