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

// commitUpdate is the floor's transaction: one row updated, committed on its own.
const commitUpdate = "UPDATE bench_commit SET n = n + 1 WHERE id = 1"

// commitBench times one durable one-row commit on a PostgreSQL database, the floor of a node's write:
// pgbench with one client (each statement its own transaction, synchronous_commit as the server
// has it). Without pgbench (apt-get install postgresql-contrib) the same loop runs here, through pgx.
// It is timed beside each chain run rather than once: a commit's latency on a shared machine's
// disk moves by several times within minutes (0.14 to 1.47 ms between sessions), and the figure it
// is set against must have seen the same minutes.
type commitBench struct {
	url     string
	pgbench string // pgbench's path; empty without it
	script  string // pgbench's script file: commitUpdate
	how     string // what measured it, for the report
}

// newCommitBench prepares the floor's table on d and finds pgbench.
func newCommitBench(ctx context.Context, d *database) (*commitBench, error) {
	conn, err := pgx.Connect(ctx, d.url)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE IF NOT EXISTS bench_commit (id int PRIMARY KEY, n bigint NOT NULL); INSERT INTO bench_commit VALUES (1, 0) ON CONFLICT DO NOTHING"); err != nil {
		return nil, err
	}
	c := &commitBench{url: d.url, how: "pgx, pgbench not installed"}
	if bin, err := exec.LookPath("pgbench"); err == nil {
		c.script = filepath.Join(d.home, "commit.sql")
		if err := os.WriteFile(c.script, []byte(commitUpdate+";\n"), 0o644); err != nil {
			return nil, err
		}
		c.pgbench, c.how = bin, "pgbench -c1"
	}
	return c, nil
}

// latency is the mean time of n commits in a row.
func (c *commitBench) latency(ctx context.Context, n int) (time.Duration, error) {
	if c.pgbench != "" {
		out, err := exec.CommandContext(ctx, c.pgbench, "-n", "-c", "1", "-t", strconv.Itoa(n), "-f", c.script, c.url).CombinedOutput()
		if err != nil {
			return 0, fmt.Errorf("pgbench: %w\n%s", err, out)
		}
		m := pgbenchLatency.FindSubmatch(out)
		if m == nil {
			return 0, fmt.Errorf("pgbench printed no latency average:\n%s", out)
		}
		msf, err := strconv.ParseFloat(string(m[1]), 64)
		return time.Duration(msf * float64(time.Millisecond)), err
	}
	conn, err := pgx.Connect(ctx, c.url)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	start := time.Now()
	for range n {
		if _, err := conn.Exec(ctx, commitUpdate); err != nil {
			return 0, err
		}
	}
	return time.Since(start) / time.Duration(n), nil
}
