package sqlite

import (
	"context"
	"fmt"
	"time"

	"threadflow/db"
)

// AnnounceHome records (or renews) a process's home until ttl from now, and forgets expired ones.
func (s *Store) AnnounceHome(ctx context.Context, h db.Home, ttl time.Duration) error {
	now := s.clock()
	return s.write(ctx, func(tx *wtx) error {
		q, args := dialect.ForgetExpiredHomes(now)
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("forget expired homes: %w", translate(err))
		}
		q, args = dialect.AnnounceHome(h, now.Add(ttl))
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("announce home of %s: %w", h.Owner, translate(err))
		}
		return nil
	})
}

// LiveHomes lists the announcements that have not expired, oldest owner first.
func (s *Store) LiveHomes(ctx context.Context) ([]db.Home, error) {
	q, args := dialect.LiveHomes(s.clock())
	homes, err := queryAll(ctx, s.r, q, args, func(row scanner) (db.Home, error) {
		var (
			h       db.Home
			expires int64
		)
		err := row.Scan(&h.Token, &h.Owner, &h.Host, &h.Remote, &expires)
		h.ExpiresAt = fromMicros(expires)
		return h, translate(err)
	})
	if err != nil {
		return nil, fmt.Errorf("list homes: %w", err)
	}
	return homes, nil
}
