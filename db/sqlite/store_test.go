package sqlite_test

import (
	"path/filepath"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"threadflow/db"
	"threadflow/db/sqlite"
	"threadflow/db/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, opts db.Options) db.Store {
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "threadflow.db"), opts, zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)))
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}
