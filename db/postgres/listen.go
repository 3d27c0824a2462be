package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"
)

// The transcript listener's reconnect back-off, and its connection's name in pg_stat_activity.
const (
	listenRetryMin = 100 * time.Millisecond
	listenRetryMax = 5 * time.Second
	listenAppName  = "threadflow-transcript-listener"
)

// startListener runs the transcript listener until Close. It is called once, by the first
// TranscriptChanged.
func (s *Store) startListener() {
	s.listenMu.Lock()
	defer s.listenMu.Unlock()
	if s.closed {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.stopListen, s.listenDone = cancel, make(chan struct{})
	go func() {
		defer close(s.listenDone)
		s.listen(ctx)
	}()
}

// stopListener ends the listener and waits for it; later TranscriptChanged calls start none.
func (s *Store) stopListener() {
	s.listenMu.Lock()
	s.closed = true
	stop, done := s.stopListen, s.listenDone
	s.listenMu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// listen keeps a dedicated connection LISTENing to transcript changes, turning each notification
// into a wake-up of that conversation's readers in this process. A dropped connection is
// reconnected with back-off; every (re)connect wakes all readers, which re-read their transcripts
// from the database, so what was written while nobody listened is not missed.
func (s *Store) listen(ctx context.Context) {
	wait := listenRetryMin
	for {
		connected, err := s.listenConn(ctx)
		if ctx.Err() != nil {
			return
		}
		if connected {
			wait = listenRetryMin
		}
		s.log.Warn("postgres.transcript_listener_lost", zap.Error(err), zap.Duration("retry_in", wait))
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(wait*2, listenRetryMax)
	}
}

// listenConn runs one connection of the listener until it fails or ctx ends; connected reports
// whether it got as far as LISTEN.
func (s *Store) listenConn(ctx context.Context) (connected bool, err error) {
	cfg := s.connCfg.Copy()
	cfg.RuntimeParams["application_name"] = listenAppName
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return false, fmt.Errorf("connect: %w", translate(err))
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+transcriptChannel); err != nil {
		return false, fmt.Errorf("listen: %w", translate(err))
	}
	s.changes.NotifyAll() // catch up: changes made while no connection listened were not announced
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true, fmt.Errorf("wait for notification: %w", translate(err))
		}
		s.changes.Notify(n.Payload)
	}
}
