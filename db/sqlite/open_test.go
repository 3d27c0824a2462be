package sqlite_test

import (
	"database/sql"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pressly/goose/v3"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"threadflow/db"
	"threadflow/db/sqlite"
	"threadflow/migrations"
)

func open(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), path, db.Options{}, zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)))
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestOpenRejectsNonFile(t *testing.T) {
	for _, path := range []string{"", ":memory:"} {
		if _, err := sqlite.Open(t.Context(), path, db.Options{}, nil); err == nil || !strings.Contains(err.Error(), "file path") {
			t.Errorf("Open(%q) = %v, want an error asking for a file path", path, err)
		}
	}
}

// TestReopenKeepsRuns is the restart case: a run created before a crash is there after it, and
// opening an up-to-date database applies nothing.
func TestReopenKeepsRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tf.db")
	s := open(t, path)
	ctx := t.Context()
	if _, err := s.EnsureConversation(ctx, db.Conversation{ID: "slack:C1", Platform: "slack", ChannelID: "C1"}); err != nil {
		t.Fatal(err)
	}
	r, err := s.CreateRun(ctx, db.NewRun{Workflow: "build", ConversationID: "slack:C1", ParentConversationID: "slack:C1", WorkflowSource: []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	again := open(t, path)
	if got, err := again.GetRun(ctx, r.ID); err != nil || got.Status != db.StatusQueued {
		t.Fatalf("after reopen GetRun = %+v, %v", got, err)
	}
	if err := again.Ready(ctx); err != nil {
		t.Fatalf("Ready after reopen: %v", err)
	}
}

// TestReadyReportsPendingMigrations: the readiness probe's 503 reason says migrations are pending.
func TestReadyReportsPendingMigrations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tf.db")
	s := open(t, path)
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	fsys, _ := fs.Sub(migrations.SQLite, "sqlite")
	p, err := goose.NewProvider(goose.DialectSQLite3, raw, fsys)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(t.Context(), 0); err != nil {
		t.Fatalf("roll back migrations: %v", err)
	}
	if err := s.Ready(t.Context()); err == nil || !strings.Contains(err.Error(), "pending") {
		t.Fatalf("Ready with a rolled-back schema = %v, want an error saying migrations are pending", err)
	}
}

// Several processes opening a new database file at once (two `bot chat` in a fresh home) all
// succeed: one creates the schema, the others wait for it and find it done.
func TestConcurrentOpensOfANewFileAllSucceed(t *testing.T) {
	for round := range 5 {
		path := filepath.Join(t.TempDir(), "tf.db")
		errs := make(chan error, 4)
		for range cap(errs) {
			go func() {
				s, err := sqlite.Open(t.Context(), path, db.Options{}, nil)
				if err == nil {
					err = s.Close()
				}
				errs <- err
			}()
		}
		for range cap(errs) {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: a concurrent Open of a new file failed: %v", round, err)
			}
		}
	}
}

// A burst of reads keeps the read pool's connections open: one closed when it is returned is
// opened again by the next read, which parses the schema and prepares its statements anew.
func TestReadBurstKeepsItsConnections(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "t.db"))
	for range 5 {
		var wg sync.WaitGroup
		for range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := s.FindResumable(t.Context(), "build", "slack:C1"); !errors.Is(err, db.ErrNotFound) {
					t.Errorf("FindResumable: %v, want ErrNotFound", err)
				}
			}()
		}
		wg.Wait()
	}
	st := sqlite.ReadPoolStats(s)
	if st.MaxIdleClosed > 0 {
		t.Fatalf("read pool after 5 bursts of 64 reads: %d connections closed as surplus idle; want none", st.MaxIdleClosed)
	}
}
