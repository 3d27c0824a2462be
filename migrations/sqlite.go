// Package migrations owns the embedded SQL migrations of both database engines. The sqlite/ and
// postgres/ directories use the same numbering, so version N means the same schema on both; the
// stores apply them at start with goose's Provider API.
package migrations

import "embed"

// SQLite holds sqlite/*.sql. Use fs.Sub(SQLite, "sqlite") as the goose provider's file system.
//
//go:embed sqlite/*.sql
var SQLite embed.FS
