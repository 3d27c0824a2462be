package web

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"threadflow/db"
	"threadflow/db/dbtest"
	"threadflow/testkit"
)

// TestLiveViewsLeaveNothingRunning opens several live views, disconnects them, and checks the
// shared poller and the stream slots are released: a closed tab costs nothing.
func TestLiveViewsLeaveNothingRunning(t *testing.T) {
	st := dbtest.SQLite(t, db.Options{})
	s, err := New(Config{Store: st, Handler: nil, Log: zaptest.NewLogger(t), Poll: 10 * time.Millisecond, Streams: 3})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)

	var cancels []context.CancelFunc
	for _, path := range []string{"/live/runs", "/live/runs?state=paused", "/live/runs/abcdefghjk"} {
		ctx, cancel := context.WithCancel(context.Background())
		cancels = append(cancels, cancel)
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+path, nil)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s = %d", path, resp.StatusCode)
		}
	}
	testkit.Eventually(t, "three subscriptions and a running poller", func() bool { running, n := s.watch.active(); return running && n == 3 })
	resp, err := srv.Client().Get(srv.URL + "/live/runs")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a fourth live view with Streams=3 got %d, want 503", resp.StatusCode)
	}

	for _, cancel := range cancels {
		cancel()
	}
	testkit.Eventually(t, "the poller to stop and the slots to be free", func() bool {
		running, n := s.watch.active()
		return !running && n == 0 && len(s.slots) == 0
	})
}

func TestCloseEndsLiveViews(t *testing.T) {
	s, err := New(Config{Store: dbtest.SQLite(t, db.Options{}), Log: zaptest.NewLogger(t), Poll: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	resp, err := srv.Client().Get(srv.URL + "/live/chat")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	s.Close()
	done := make(chan struct{})
	go func() { defer close(done); _, _ = io.Copy(io.Discard, resp.Body) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the live view stayed open after Close")
	}
}
