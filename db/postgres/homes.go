package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"threadflow/db"
)

// AnnounceHome records (or renews) a process's home until ttl from now, and forgets expired ones.
func (s *Store) AnnounceHome(ctx context.Context, h db.Home, ttl time.Duration) error {
	now := s.now()
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM workspace_homes WHERE expires_at < $1`, now); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO workspace_homes (home_token, owner, host, remote, expires_at) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (home_token, owner) DO UPDATE SET host = excluded.host, remote = excluded.remote, expires_at = excluded.expires_at`,
			h.Token, h.Owner, h.Host, h.Remote, now.Add(ttl))
		return err
	})
	if err != nil {
		return fmt.Errorf("announce home of %s: %w", h.Owner, translate(err))
	}
	return nil
}

// LiveHomes lists the announcements that have not expired, oldest owner first.
func (s *Store) LiveHomes(ctx context.Context) ([]db.Home, error) {
	rows, err := s.pool.Query(ctx, `SELECT home_token, owner, host, remote, expires_at FROM workspace_homes
		WHERE expires_at > $1 ORDER BY owner, home_token`, s.now())
	if err != nil {
		return nil, fmt.Errorf("list homes: %w", translate(err))
	}
	homes, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (db.Home, error) {
		var h db.Home
		err := row.Scan(&h.Token, &h.Owner, &h.Host, &h.Remote, &h.ExpiresAt)
		h.ExpiresAt = h.ExpiresAt.UTC()
		return h, err
	})
	if err != nil {
		return nil, fmt.Errorf("list homes: %w", translate(err))
	}
	return homes, nil
}
