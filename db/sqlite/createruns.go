package sqlite

import (
	"context"
	"time"

	"threadflow/db"
)

// createBatch bounds the runs one commit creates; createTimeout bounds that commit, which its
// callers wait for whatever their own contexts do.
const (
	createBatch   = 64
	createTimeout = 15 * time.Second
)

type createdRun struct {
	run db.Run
	err error
}

// CreateRun creates the run together with the creations waiting for the single writer at the same
// time (groupcommit, db.Machine.CreateRuns: one transaction, each run in a savepoint): under a
// burst of messages each one no longer waits behind one commit per message before it
// (BENCHMARKS.md, dispatch), and a lone one is written at once. Only this engine groups: on
// PostgreSQL concurrent transactions run side by side on the pool and the server already shares
// WAL flushes between them, and grouping them into one made a burst of 500 slower.
func (s *Store) CreateRun(ctx context.Context, n db.NewRun) (db.Run, error) {
	if err := ctx.Err(); err != nil {
		return db.Run{}, err
	}
	res := s.creates.Do(n)
	return res.run, res.err
}

func (s *Store) createAll(ns []db.NewRun) []createdRun {
	ctx, cancel := context.WithTimeout(context.Background(), createTimeout)
	defer cancel()
	runs, errs := s.Machine.CreateRuns(ctx, ns)
	out := make([]createdRun, len(ns))
	for i := range ns {
		out[i] = createdRun{run: runs[i], err: errs[i]}
	}
	return out
}
