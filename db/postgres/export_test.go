package postgres

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	"threadflow/db"
)

// LeaseForEventSQL is leaseForEventSQL, for the plan test.
var LeaseForEventSQL = leaseForEventSQL

// MaxConns is the most connections s's pool opens at once.
func MaxConns(s *Store) int32 { return s.pool.Config().MaxConns }

// Pool is the pool every statement but lease renewals queues for.
func Pool(s *Store) *pgxpool.Pool { return s.pool }

// Dialect is the engine's db.Dialect, for the plan tests.
var Dialect = dialect

// AppendAll is the driver's AppendLeasedAll (one statement); AppendEach is the statement per
// event it falls back to: the benchmark compares them.
func AppendAll(s *Store, ctx context.Context, l db.Lease, es []db.Event) ([]bool, error) {
	_, ok, err := driver{s}.AppendLeasedAll(ctx, l, es, make([]bool, len(es)))
	return ok, err
}

// AppendEach: see AppendAll.
func AppendEach(s *Store, ctx context.Context, l db.Lease, es []db.Event) ([]bool, error) {
	_, ok, err := driver{s}.appendEach(ctx, l, es, make([]bool, len(es)))
	return ok, err
}
