package test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite" // the "sqlite" driver, for the test's own connection

	"threadflow/db"
	"threadflow/testkit"
	"threadflow/testkit/botproc"
)

// Issue 27, Deliver 1: a request the bot accepted (recorded, and acknowledged to the platform) and
// died with before its run's creation committed is answered after the restart: one run, one
// announcement. The creation is held in the database itself: on PostgreSQL by a lock the runs
// insert waits for (the bot is killed; then the insert dies with it, or commits after it), on
// SQLite by a trigger refusing the insert (the bot is killed while it tells the person so, before
// that message reaches the platform). A request handled before the kill is not handled again.
func TestARequestKilledBeforeItsRunIsCreatedIsAnsweredOnce(t *testing.T) {
	t.Parallel()
	for _, p := range crashPlatforms() {
		for _, commits := range []bool{false, true} {
			name := p.name + map[bool]string{false: "/the insert dies with the bot", true: "/the insert commits after the bot died"}[commits]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				botproc.ForEachEngine(t, botproc.Env, func(t *testing.T, env map[string]string) {
					if commits && env["DATABASE_URL"] == "" {
						return // a SQLite transaction ends with its process: only PostgreSQL can commit it afterwards
					}
					killedBeforeCreation(t, env, p.start, commits)
				})
			})
		}
	}
}

func killedBeforeCreation(t *testing.T, env map[string]string, start func(*testing.T, map[string]string) crashChat, commits bool) {
	env["LEASE_TTL"] = "1s" // claims on kept requests last 5 s (conversation.MinClaim)
	env["CLAUDE_BIN"] = filepath.Join(env["HOME"], "no-such-claude")
	chat := start(t, env)
	st := openStore(t, env)
	raw := openRaw(t, env)

	// Handled before the kill: its run exists and its event is kept no longer.
	chat.command("run needsai")
	first := chat.waitRun(t, "needsai")
	testkit.Eventually(t, "the first request to be handled and its messages delivered", func() bool {
		u, err := st.Undelivered(context.Background(), first)
		return err == nil && len(u) == 0 && raw.kept(t) == 0
	})

	release := raw.holdRunInsert(t)
	if env["DATABASE_URL"] == "" {
		arrived, let := chat.holdPost("while trying to start the run", false)
		chat.command("run gated v1")
		waitClosed(t, arrived, "the bot to say the run could not start")
		chat.kill()
		let()
	} else {
		chat.command("run gated v1")
		testkit.Eventually(t, "the run's insert to wait for the lock", raw.insertWaits(t))
		chat.kill()
		if !commits {
			raw.endOtherSessions(t)
		}
	}
	if n := raw.kept(t); n != 1 {
		t.Fatalf("%d requests kept after the kill, want the one whose run was being created", n)
	}
	release()
	chat.restart(t)

	id := chat.waitRun(t, "gated")
	chat.waitInRun(t, "the gate question", func(text string) bool { return strings.Contains(text, "is waiting at `gate`") })
	testkit.Eventually(t, "every owed message delivered and the request handled", func() bool {
		u, err := st.Undelivered(context.Background(), id)
		return err == nil && len(u) == 0 && raw.kept(t) == 0
	})
	for _, wf := range []string{"gated", "needsai"} {
		runs, err := st.ListRuns(context.Background(), db.RunFilter{Workflow: wf})
		if err != nil || len(runs) != 1 {
			t.Errorf("%d runs of %s (%v), want one", len(runs), wf, err)
		}
		if n := chat.count("▶ `" + wf + "` - run `"); n != 1 {
			t.Errorf("%d announcements of %s, want one:\n%s", n, wf, chat.dump())
		}
	}
	if n := chat.count("went wrong"); n != 0 {
		t.Errorf("the person was told it failed, then it ran:\n%s", chat.dump())
	}
}

func waitClosed(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-t.Context().Done():
		t.Fatalf("the test ended before %s", what)
	}
}

// rawDB is the test's own connection to a bot's database, for what no store method does: holding
// the runs insert, and reading the kept requests.
type rawDB struct {
	pg  *pgx.Conn // PostgreSQL
	sql *sql.DB   // SQLite
}

func openRaw(t *testing.T, env map[string]string) rawDB {
	t.Helper()
	if url := env["DATABASE_URL"]; url != "" {
		conn, err := pgx.Connect(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close(context.Background()) })
		return rawDB{pg: conn}
	}
	path := filepath.Join(env["THREADFLOW_HOME"], "threadflow.db")
	d, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	d.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = d.Close() })
	return rawDB{sql: d}
}

func (r rawDB) exec(t *testing.T, q string) {
	t.Helper()
	var err error
	if r.pg != nil {
		_, err = r.pg.Exec(context.Background(), q)
	} else {
		_, err = r.sql.Exec(q)
	}
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func (r rawDB) count(t *testing.T, q string) int {
	t.Helper()
	var n int
	var err error
	if r.pg != nil {
		err = r.pg.QueryRow(context.Background(), q).Scan(&n)
	} else {
		err = r.sql.QueryRow(q).Scan(&n)
	}
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// kept counts the requests kept until they are handled.
func (r rawDB) kept(t *testing.T) int {
	return r.count(t, `SELECT count(*) FROM inbound_events WHERE message IS NOT NULL`)
}

// holdRunInsert makes the next creation of a run wait (PostgreSQL: a trigger waits for a lock the
// test holds, so nothing else waits) or fail (SQLite: a trigger), until release.
func (r rawDB) holdRunInsert(t *testing.T) (release func()) {
	t.Helper()
	if r.pg != nil {
		r.exec(t, `CREATE FUNCTION test_hold_runs() RETURNS trigger LANGUAGE plpgsql AS
			$$ BEGIN PERFORM pg_advisory_xact_lock_shared(27); RETURN NEW; END $$`)
		r.exec(t, `CREATE TRIGGER test_hold_runs BEFORE INSERT ON runs FOR EACH ROW EXECUTE FUNCTION test_hold_runs()`)
		r.exec(t, `SELECT pg_advisory_lock(27)`)
		return func() { r.exec(t, `SELECT pg_advisory_unlock(27)`) }
	}
	r.exec(t, `CREATE TRIGGER test_hold_runs BEFORE INSERT ON runs BEGIN SELECT RAISE(ABORT, 'held by the test'); END`)
	return func() { r.exec(t, `DROP TRIGGER test_hold_runs`) }
}

// insertWaits reports whether a run's insert waits for the test's lock (PostgreSQL).
func (r rawDB) insertWaits(t *testing.T) func() bool {
	return func() bool {
		return r.count(t, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
			AND wait_event_type = 'Lock' AND wait_event = 'advisory'`) > 0
	}
}

// endOtherSessions ends the sessions a killed bot left on the database, so its waiting insert dies
// with it (PostgreSQL notices a vanished client only when it next talks to it).
func (r rawDB) endOtherSessions(t *testing.T) {
	r.count(t, `SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()) AS ended`)
}
