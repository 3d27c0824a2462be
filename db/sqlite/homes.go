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
		if _, err := tx.ExecContext(ctx, `DELETE FROM workspace_homes WHERE expires_at < ?`, micros(now)); err != nil {
			return fmt.Errorf("forget expired homes: %w", translate(err))
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO workspace_homes (home_token, owner, host, remote, expires_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (home_token, owner) DO UPDATE SET host = excluded.host, remote = excluded.remote, expires_at = excluded.expires_at`,
			h.Token, h.Owner, h.Host, h.Remote, micros(now.Add(ttl)))
		if err != nil {
			return fmt.Errorf("announce home of %s: %w", h.Owner, translate(err))
		}
		return nil
	})
}

// LiveHomes lists the announcements that have not expired, oldest owner first.
func (s *Store) LiveHomes(ctx context.Context) ([]db.Home, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT home_token, owner, host, remote, expires_at FROM workspace_homes
		WHERE expires_at > ? ORDER BY owner, home_token`, micros(s.clock()))
	if err != nil {
		return nil, fmt.Errorf("list homes: %w", translate(err))
	}
	defer rows.Close()
	var homes []db.Home
	for rows.Next() {
		var (
			h       db.Home
			expires int64
		)
		if err := rows.Scan(&h.Token, &h.Owner, &h.Host, &h.Remote, &expires); err != nil {
			return nil, fmt.Errorf("list homes: %w", translate(err))
		}
		h.ExpiresAt = fromMicros(expires)
		homes = append(homes, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list homes: %w", translate(err))
	}
	return homes, nil
}
