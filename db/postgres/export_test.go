package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"threadflow/db"
)

// LeaseForEventSQL is leaseForEventSQL, for the plan test.
var LeaseForEventSQL = leaseForEventSQL

// MaxConns is the most connections s's pool opens at once.
func MaxConns(s *Store) int32 { return s.pool.Config().MaxConns }

// Pool is the pool every statement but lease renewals queues for.
func Pool(s *Store) *pgxpool.Pool { return s.pool }

// TransitAll runs dtx.TransitAll in a transaction of its own.
func TransitAll(ctx context.Context, s *Store, ts []db.Transit) (runs []db.Run, ok []bool, err error) {
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		runs, ok, err = dtx{tx}.TransitAll(ctx, ts)
		return err
	})
	return runs, ok, err
}
