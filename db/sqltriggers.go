package db

import (
	"database/sql"
	"time"
)

// The SQL of triggers, rendered once for both engines. Times come back as microseconds
// (Dialect.Micros) so both engines scan them alike.

// lockTriggerSQL records the trigger when it is new (since = now) and takes its row until the
// transaction ends: every decision about one trigger's fires is made under this one lock, so two
// replicas never decide the same trigger at once. (PostgreSQL locks the row it upserts; SQLite's
// single writer holds everything.)
func (d Dialect) lockTriggerSQL(trigger string, now time.Time) (string, []any) {
	q := d.Query()
	s := "INSERT INTO triggers (trigger_id, since) VALUES (" + q.Arg(trigger) + ", " + q.Time(now) +
		") ON CONFLICT (trigger_id) DO UPDATE SET since = triggers.since RETURNING " + d.Micros("since")
	return s, q.Args
}

// fireColumns are a TriggerFire's columns of trigger_fires f, then its run's status (r, joined).
func (d Dialect) fireColumns() string {
	return "f.trigger_id, f.fire_key, f.kind, f.event, " + d.Micros("f.scheduled_at") + ", " + d.Micros("f.fired_at") +
		", f.outcome, f.reason, COALESCE(f.run_id, ''), COALESCE(r.status, '')"
}

// scanFire reads fireColumns.
func scanFire(scan func(dest ...any) error) (TriggerFire, error) {
	var (
		f         TriggerFire
		scheduled sql.NullInt64
		fired     int64
		outcome   string
		status    string
	)
	if err := scan(&f.Trigger, &f.Key, &f.Kind, &f.Event, &scheduled, &fired, &outcome, &f.Reason, &f.RunID, &status); err != nil {
		return TriggerFire{}, err
	}
	if scheduled.Valid {
		f.ScheduledAt = time.UnixMicro(scheduled.Int64).UTC()
	}
	f.FiredAt, f.Outcome, f.RunStatus = time.UnixMicro(fired).UTC(), FireOutcome(outcome), Status(status)
	readFire(&f)
	return f, nil
}

func (d Dialect) findFireSQL(trigger, key string) (string, []any) {
	q := d.Query()
	s := "SELECT " + d.fireColumns() + " FROM trigger_fires f LEFT JOIN runs r ON r.id = f.run_id WHERE f.trigger_id = " +
		q.Arg(trigger) + " AND f.fire_key = " + q.Arg(key)
	return s, q.Args
}

// activeRunsSQL counts (0 or 1) the runs of the trigger's fires that have not ended, and the fires
// that wait: what overlap decides by.
func (d Dialect) activeRunsSQL(trigger string) (string, []any) {
	q := d.Query()
	s := "SELECT (SELECT COUNT(*) FROM (SELECT 1 FROM trigger_fires f JOIN runs r ON r.id = f.run_id WHERE f.trigger_id = " + q.Arg(trigger) +
		" AND r.status IN (" + lits(StatusQueued, StatusRunning, StatusPaused) + ") LIMIT 1) a), " +
		"(SELECT COUNT(*) FROM (SELECT 1 FROM trigger_fires f WHERE f.trigger_id = " + q.Arg(trigger) + " AND f.outcome = " + lit(FireWaiting) + " LIMIT 1) w)"
	return s, q.Args
}

func (d Dialect) insertFireSQL(f TriggerFire, payload []byte) (string, []any) {
	q := d.Query()
	var run any
	if f.RunID != "" {
		run = f.RunID
	}
	outcome, reason := storedFire(f)
	s := "INSERT INTO trigger_fires (trigger_id, fire_key, kind, event, scheduled_at, fired_at, outcome, reason, run_id, payload) VALUES (" +
		q.Arg(f.Trigger) + ", " + q.Arg(f.Key) + ", " + q.Arg(f.Kind) + ", " + q.Arg(f.Event) + ", " + q.NullTime(f.ScheduledAt) + ", " +
		q.Time(f.FiredAt) + ", " + q.Arg(string(outcome)) + ", " + q.Arg(reason) + ", " + q.Arg(run) + ", " + q.Arg(payload) + ")"
	return s, q.Args
}

// oldestWaitingSQL is the key of the trigger's oldest waiting fire.
func (d Dialect) oldestWaitingSQL(trigger string) (string, []any) {
	q := d.Query()
	s := "SELECT fire_key FROM trigger_fires WHERE trigger_id = " + q.Arg(trigger) + " AND outcome = " + lit(FireWaiting) +
		" ORDER BY fired_at, fire_key LIMIT 1"
	return s, q.Args
}

func (d Dialect) startWaitingSQL(trigger, key, runID string) (string, []any) {
	q := d.Query()
	s := "UPDATE trigger_fires SET outcome = " + lit(FireStarted) + ", run_id = " + q.Arg(runID) + " WHERE trigger_id = " + q.Arg(trigger) +
		" AND fire_key = " + q.Arg(key) + " AND outcome = " + lit(FireWaiting)
	return s, q.Args
}

// refuseWaitingSQL records the waiting fire as refused (f: its outcome, holder and group) when the
// run it waited to start found its concurrency group busy.
func (d Dialect) refuseWaitingSQL(f TriggerFire) (string, []any) {
	q := d.Query()
	outcome, reason := storedFire(f)
	s := "UPDATE trigger_fires SET outcome = " + q.Arg(string(outcome)) + ", reason = " + q.Arg(reason) + " WHERE trigger_id = " + q.Arg(f.Trigger) +
		" AND fire_key = " + q.Arg(f.Key) + " AND outcome = " + lit(FireWaiting)
	return s, q.Args
}

// triggerStatesSQL is each known trigger's since, latest scheduled fire and whether a fire waits.
func (d Dialect) triggerStatesSQL() string {
	return "SELECT t.trigger_id, " + d.Micros("t.since") + ", (SELECT " + d.Micros("MAX(f.scheduled_at)") +
		" FROM trigger_fires f WHERE f.trigger_id = t.trigger_id AND f.scheduled_at IS NOT NULL), " +
		"(SELECT COUNT(*) FROM (SELECT 1 FROM trigger_fires f WHERE f.trigger_id = t.trigger_id AND f.outcome = " + lit(FireWaiting) + " LIMIT 1) w) FROM triggers t"
}

// listFiresSQL is the newest limit fires of the trigger with their runs' statuses.
func (d Dialect) listFiresSQL(trigger string, limit int) (string, []any) {
	q := d.Query()
	s := "SELECT " + d.fireColumns() + " FROM trigger_fires f LEFT JOIN runs r ON r.id = f.run_id WHERE f.trigger_id = " + q.Arg(trigger) +
		" ORDER BY f.fired_at DESC, f.fire_key DESC LIMIT " + q.Arg(limit)
	return s, q.Args
}

func (d Dialect) firePayloadSQL(runID string) (string, []any) {
	q := d.Query()
	return "SELECT payload FROM trigger_fires WHERE run_id = " + q.Arg(runID), q.Args
}
