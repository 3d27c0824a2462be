package postgres

import (
	"github.com/jackc/pgx/v5/pgxpool"
)

// LeaseForEventSQL is leaseForEventSQL, for the plan test.
var LeaseForEventSQL = leaseForEventSQL

// MaxConns is the most connections s's pool opens at once.
func MaxConns(s *Store) int32 { return s.pool.Config().MaxConns }

// Pool is the pool every statement but lease renewals queues for.
func Pool(s *Store) *pgxpool.Pool { return s.pool }
