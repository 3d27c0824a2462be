package main

import (
	"context"
	"regexp"
	"testing"
	"time"

	"go.uber.org/zap"

	"threadflow/db"
	"threadflow/testkit/botproc"
)

// `bot prune --dry-run` says how many runs and events it would delete and the bytes they hold,
// and deletes nothing; `bot prune` then deletes just that (issue 34), on both engines.
func TestPruneSaysWhatItWouldDelete(t *testing.T) {
	botproc.ForEachEngine(t, cliEnv, func(t *testing.T, env map[string]string) {
		seedRuns(t, env, time.Now().Add(-100*24*time.Hour), 2) // past the 90 days of RETENTION
		seedRuns(t, env, time.Now().Add(-10*24*time.Hour), 1)
		kept := "(completed and cancelled runs are kept 90 days after they finish, failed and paused runs 365 days after their last change)"
		would := regexp.MustCompile(`^Would delete 2 runs, (\d+) events, (\d[\d.]* k?B) ` + regexp.QuoteMeta(kept) + `; nothing deleted \(dry run\)\.\n$`)
		out, code := cli(t, env, "prune", "--dry-run")
		m := would.FindStringSubmatch(out)
		if code != 0 || m == nil || m[1] == "0" {
			t.Fatalf("prune --dry-run = exit %d:\n%s\nwant %s", code, out, would)
		}
		if again, _ := cli(t, env, "prune", "--dry-run"); again != out {
			t.Errorf("second prune --dry-run:\n%s\nwant the same as the first:\n%s", again, out)
		}
		want := "Deleted 2 runs, " + m[1] + " events, " + m[2] + " " + kept + ".\n"
		if out, code := cli(t, env, "prune"); code != 0 || out != want {
			t.Errorf("prune = exit %d:\n%s\nwant %s", code, out, want)
		}
		if out, _ := cli(t, env, "prune"); !regexp.MustCompile(`^Deleted 0 runs, 0 events, 0 B`).MatchString(out) {
			t.Errorf("prune again = %s, want nothing left to delete (the run of 10 days ago stays)", out)
		}
	})
}

// seedRuns completes n runs of the bot's database (env) as of at.
func seedRuns(t *testing.T, env map[string]string, at time.Time, n int) {
	t.Helper()
	cfg, err := loadConfig("prune", nil, func(k string) string { return env[k] }, hostInfo{})
	if err != nil {
		t.Fatal(err)
	}
	if err := prepareHome(&cfg); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := openStore(ctx, cfg, db.Options{Now: func() time.Time { return at }}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	if _, err := st.EnsureConversation(ctx, db.Conversation{ID: "console:local", Platform: "console", ChannelID: "local"}); err != nil {
		t.Fatal(err)
	}
	for range n {
		if _, err := st.CreateRun(ctx, db.NewRun{Workflow: "hello", ConversationID: "console:local", ParentConversationID: "console:local",
			UserID: "console:local", UserMessage: "world", WorkflowSource: []byte("name: hello\n")}); err != nil {
			t.Fatal(err)
		}
		r, err := st.ClaimRun(ctx, "seed", time.Minute, db.Reach{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.CompleteRun(ctx, r.Lease(), "hello world"); err != nil {
			t.Fatal(err)
		}
	}
}
