package postgres

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"threadflow/db"
)

// inTx runs fn in one transaction, committing when it returns nil, and translates the error.
func (s *Store) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return translate(pgx.BeginFunc(ctx, s.pool, fn))
}

// event builds an event of the run at time at; data is a JSON object of plain values.
func event(r db.Run, typ db.EventType, node string, at time.Time, data any) db.Event {
	return db.Event{RunID: r.ID, Type: typ, NodeID: node, Data: mustJSON(data), At: at}
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
