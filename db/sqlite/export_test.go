package sqlite

import "database/sql"

// ReadPoolStats are the read pool's database/sql statistics.
func ReadPoolStats(s *Store) sql.DBStats { return s.r.Stats() }
