package postgres

// LeaseForEventSQL is leaseForEventSQL, for the plan test.
const LeaseForEventSQL = leaseForEventSQL

// MaxConns is the most connections s's pool opens at once.
func MaxConns(s *Store) int32 { return s.pool.Config().MaxConns }
