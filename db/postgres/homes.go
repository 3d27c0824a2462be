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
	forget, forgetArgs := dialect.ForgetExpiredHomes(now)
	announce, announceArgs := dialect.AnnounceHome(h, now.Add(ttl))
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, forget, forgetArgs...); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, announce, announceArgs...)
		return err
	})
	if err != nil {
		return fmt.Errorf("announce home of %s: %w", h.Owner, translate(err))
	}
	return nil
}

// LiveHomes lists the announcements that have not expired, oldest owner first.
func (s *Store) LiveHomes(ctx context.Context) ([]db.Home, error) {
	q, args := dialect.LiveHomes(s.now())
	rows, err := s.pool.Query(ctx, q, args...)
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
