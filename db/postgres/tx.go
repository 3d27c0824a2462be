package postgres

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"
)

// inTx runs fn in one transaction, committing when it returns nil, and translates the error.
func (s *Store) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return translate(pgx.BeginFunc(ctx, s.pool, fn))
}

// mustJSON encodes values the store builds itself (maps of strings and numbers, db.RunError,
// db.Pause), which always encode.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("postgres: encode event data: " + err.Error())
	}
	return b
}
