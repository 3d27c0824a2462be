package db

import (
	"context"
	"errors"
	"fmt"
	"time"

	"threadflow/groupcommit"
)

// createTimeout bounds one group commit of creations (MaxCreateBatch runs at most), which its
// callers wait for whatever their own contexts do (a creation the commit may yet write must not be
// reported as failed).
const createTimeout = 15 * time.Second

// RunCreation is everything creating one run writes, decided by the core: the conversations that
// come along (each inserted unless it exists, in order), the queued run, its run_created event (its
// first, seq 1), the messages posted for it before it existed and the messages it owes.
type RunCreation struct {
	Run           NewRun
	Digest        string
	Conversations []Conversation
	Created       Event
	Messages      []MessageRef
	Owe           []Owed
	At            time.Time
}

type createdRun struct {
	run Run
	err error
}

// CreateRun inserts a queued run with its workflow source frozen, and its run_created event, in one
// transaction with the conversation and messages it brings along. The run's conversation must exist
// or come with it (an unknown one is ErrNotFound).
//
// Creations that arrive while another is being written are written together by the next commit
// (groupcommit, CreateRuns): under a burst of messages each no longer waits behind one commit per
// message before it (BENCHMARKS.md, dispatch), and a lone one is written at once.
func (m *Machine) CreateRun(ctx context.Context, n NewRun) (Run, error) {
	if err := ctx.Err(); err != nil {
		return Run{}, err
	}
	m.createsOnce.Do(func() {
		m.creates = &groupcommit.Batcher[NewRun, createdRun]{Max: MaxCreateBatch, Write: m.createAll}
	})
	res := m.creates.Do(n)
	return res.run, res.err
}

func (m *Machine) createAll(ns []NewRun) []createdRun {
	ctx, cancel := context.WithTimeout(context.Background(), createTimeout)
	defer cancel()
	runs, errs := m.CreateRuns(ctx, ns)
	out := make([]createdRun, len(ns))
	for i := range ns {
		out[i] = createdRun{run: runs[i], err: errs[i]}
	}
	return out
}

// CreateRuns is CreateRun for each of ns, in one transaction: one commit for a burst of runs. When
// the database refuses the batch (an unknown conversation, a taken id), each run is written again
// in a transaction of its own, so the refused one gets the error it would get alone and the others
// are created. When the database itself fails, every run gets that error and none is created.
func (m *Machine) CreateRuns(ctx context.Context, ns []NewRun) ([]Run, []error) {
	runs, errs := make([]Run, len(ns)), make([]error, len(ns))
	var (
		cs  []RunCreation
		idx []int // cs[k] is ns[idx[k]]
	)
	now := m.Now()
	for i := range ns {
		c, err := m.creation(ns[i], now)
		if err != nil {
			errs[i] = fmt.Errorf("create run: %w", err)
			continue
		}
		if c.Run.Group != "" { // rare, and decided by what is read in its transaction: one at a time
			if runs[i], err = m.createGrouped(ctx, c); err != nil {
				errs[i] = createError(c.Run, err)
			}
			continue
		}
		cs, idx = append(cs, c), append(idx, i)
	}
	if len(cs) == 0 {
		return runs, errs
	}
	created, err := m.Driver.InsertRuns(ctx, cs)
	switch {
	case err == nil:
		for k, i := range idx {
			runs[i] = created[k]
		}
	case len(cs) == 1 || !refusedRow(err):
		for k, i := range idx {
			errs[i] = createError(cs[k].Run, err)
		}
	default:
		for k, i := range idx {
			one, err := m.Driver.InsertRuns(ctx, cs[k:k+1])
			if err != nil {
				errs[i] = createError(cs[k].Run, err)
				continue
			}
			runs[i] = one[0]
		}
	}
	return runs, errs
}

// refusedRow tells a batch the database refused because of what one of its rows holds from a
// failure of the database itself, after which writing the runs one by one would only fail again.
func refusedRow(err error) bool {
	return !errors.Is(err, ErrUnavailable) && !errors.Is(err, ErrUnwritable) &&
		!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

func createError(n NewRun, err error) error {
	return fmt.Errorf("create run %s in conversation %s: %w", n.ID, n.ConversationID, err)
}

// creation checks n, fills what it may leave out and decides what creating it writes at now.
func (m *Machine) creation(n NewRun, now time.Time) (RunCreation, error) {
	if n.Workflow == "" || n.ConversationID == "" {
		return RunCreation{}, errors.New("a run needs a workflow name and a conversation")
	}
	if n.ID == "" {
		n.ID = NewRunID()
	}
	if n.WorkflowSource == nil {
		n.WorkflowSource = []byte{} // the column is NOT NULL; an empty source is still a source
	}
	if n.Group != "" && n.WhenBusy != GroupQueue && n.WhenBusy != GroupRefuse {
		return RunCreation{}, fmt.Errorf("concurrency group %q: when busy %q is neither %s nor %s", n.Group, n.WhenBusy, GroupQueue, GroupRefuse)
	}
	if err := CheckOwed(n.Owe); err != nil {
		return RunCreation{}, err
	}
	convs, err := n.CheckedConversations()
	if err != nil {
		return RunCreation{}, err
	}
	msgs := make([]MessageRef, len(n.Messages))
	for i, msg := range n.Messages {
		msg.RunID = n.ID
		msgs[i] = msg
	}
	created := NewEvent(n.ID, "", 0, RunCreatedData{User: n.UserID, Workflow: n.Workflow, Via: n.UserVia}, now)
	return RunCreation{Run: n, Digest: Digest(n.WorkflowSource), Conversations: convs, Created: created, Messages: msgs, Owe: n.Owe, At: now}, nil
}
