package migrations

import "embed"

// Postgres holds the PostgreSQL schema migrations, applied in order by goose. Their numbering and the
// tables and columns they create match the SQLite migrations one for one.
//
//go:embed postgres/*.sql
var Postgres embed.FS
