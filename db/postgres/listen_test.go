package postgres_test

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap/zaptest"

	"threadflow/db"
	"threadflow/db/dbtest"
	"threadflow/db/postgres"
	"threadflow/testkit"
)

// twoReplicas opens two stores on one fresh database, as two replicas of the bot would.
func twoReplicas(t *testing.T) (a, b *postgres.Store, url string) {
	t.Helper()
	url = dbtest.PostgresDatabase(t)
	open := func() *postgres.Store {
		s, err := postgres.Open(t.Context(), url, db.Options{}, zaptest.NewLogger(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	return open(), open(), url
}

func webMessage(id, text string) db.TranscriptMessage {
	return db.TranscriptMessage{ConversationID: "web:alice", Platform: "web", ChannelID: "alice", MessageID: id, Text: text}
}

// settle waits until b's listener is connected: a write by a wakes a reader on b.
func settle(t *testing.T, a, b *postgres.Store) {
	t.Helper()
	testkit.Eventually(t, "replica B's transcript listener to hear replica A", func() bool {
		ch := b.TranscriptChanged("web:alice")
		if _, err := a.AppendMessage(t.Context(), webMessage("warm-up", "warm-up")); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ch:
			return true
		default:
			return false
		}
	})
}

// TestTranscriptNotifiesOtherReplicas: a message replica A records wakes a reader on replica B,
// which reads it from the database.
func TestTranscriptNotifiesOtherReplicas(t *testing.T) {
	a, b, _ := twoReplicas(t)
	settle(t, a, b)
	ch := b.TranscriptChanged("web:alice")
	if _, err := a.AppendMessage(t.Context(), webMessage("m1", "run completed")); err != nil {
		t.Fatal(err)
	}
	waitWoken(t, ch, "replica B woken by replica A's message")
	msgs, err := b.Transcript(t.Context(), "web:alice", 10)
	if err != nil || len(msgs) == 0 || msgs[len(msgs)-1].Text != "run completed" {
		t.Fatalf("replica B reads %+v, %v; want A's message last", msgs, err)
	}
}

// TestTranscriptListenerReconnects: when B's listening connection is killed, B reconnects and
// wakes its readers, who catch up from the database with what A wrote meanwhile; later
// notifications arrive again.
func TestTranscriptListenerReconnects(t *testing.T) {
	a, b, url := twoReplicas(t)
	settle(t, a, b)
	ch := b.TranscriptChanged("web:alice")
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	var killed int
	if err := conn.QueryRow(t.Context(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = 'threadflow-transcript-listener' AND datname = current_database()`).Scan(&killed); err != nil || killed == 0 {
		t.Fatalf("terminated %d listener connections (%v); want B's", killed, err)
	}
	if _, err := a.AppendMessage(t.Context(), webMessage("m1", "written around the reconnect")); err != nil {
		t.Fatal(err)
	}
	waitWoken(t, ch, "replica B's reader woken after the reconnect")
	msgs, err := b.Transcript(t.Context(), "web:alice", 10)
	if err != nil || msgs[len(msgs)-1].Text != "written around the reconnect" {
		t.Fatalf("replica B reads %+v, %v; want the message written around the reconnect", msgs, err)
	}
	settle(t, a, b) // notifications flow again on the new connection
}

// waitWoken waits until ch, a TranscriptChanged channel, has woken its reader.
func waitWoken(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	testkit.Eventually(t, what, func() bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	})
}
