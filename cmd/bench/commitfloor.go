package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgbenchLatency is pgbench's summary line of the mean latency of a transaction.
var pgbenchLatency = regexp.MustCompile(`latency average = ([0-9.]+) ms`)

// commitFloor is one durable one-row commit on the database of d: pgbench with one client
// updating one row for a few seconds (each statement its own transaction, synchronous_commit as
// the server has it), the floor of a node's write on PostgreSQL; how is what was measured.
// Without pgbench (apt-get install postgresql-contrib) the same loop runs here, through pgx.
func commitFloor(ctx context.Context, d *database) (floor time.Duration, how string, err error) {
	conn, err := pgx.Connect(ctx, d.url)
	if err != nil {
		return 0, "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE IF NOT EXISTS bench_commit (id int PRIMARY KEY, n bigint NOT NULL); INSERT INTO bench_commit VALUES (1, 0) ON CONFLICT DO NOTHING"); err != nil {
		return 0, "", err
	}
	const update = "UPDATE bench_commit SET n = n + 1 WHERE id = 1"
	if bin, err := exec.LookPath("pgbench"); err == nil {
		script := filepath.Join(d.home, "commit.sql")
		if err := os.WriteFile(script, []byte(update+";\n"), 0o644); err != nil {
			return 0, "", err
		}
		out, err := exec.CommandContext(ctx, bin, "-n", "-c", "1", "-T", "3", "-f", script, d.url).CombinedOutput()
		if err != nil {
			return 0, "", fmt.Errorf("pgbench: %w\n%s", err, out)
		}
		m := pgbenchLatency.FindSubmatch(out)
		if m == nil {
			return 0, "", fmt.Errorf("pgbench printed no latency average:\n%s", out)
		}
		msf, err := strconv.ParseFloat(string(m[1]), 64)
		return time.Duration(msf * float64(time.Millisecond)), "pgbench -c1", err
	}
	const n = 500
	start := time.Now()
	for range n {
		if _, err := conn.Exec(ctx, update); err != nil {
			return 0, "", err
		}
	}
	return time.Since(start) / n, "pgx, pgbench not installed", nil
}
