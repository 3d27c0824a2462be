package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"threadflow/db"
)

// TestLockedDatabaseIsUnavailable: when another process holds the write lock past the caller's
// deadline, the store answers ErrUnavailable (retryable), not a driver error.
func TestLockedDatabaseIsUnavailable(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the 10s busy timeout")
	}
	path := filepath.Join(t.TempDir(), "tf.db")
	s := open(t, path)
	other, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatalf("take the write lock: %v", err)
	}
	defer func() { _ = tx.Rollback() }()

	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, err = s.MarkInbound(ctx, "discord", "evt-1")
	if !errors.Is(err, db.ErrUnavailable) {
		t.Fatalf("write while another process holds the lock: %v, want ErrUnavailable", err)
	}
}
