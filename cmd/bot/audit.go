package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"threadflow/audit"
)

// auditUsage is `bot audit`'s help.
const auditUsage = `usage: bot audit [--since DURATION|TIME] [--limit N] [--json]

Lists who started, approved, rejected, resumed, cancelled or abandoned which run and when, newest
first, with how the bot knew who they were: platform (a Slack or Discord id, said by that platform),
signed-in (signed in to the dashboard with the id's platform), terminal (a console: name), unverified (a name typed on the web chat
without sign-in) or system (a gate's timeout). Refused gate answers are listed too.

  --since  how far back: a duration (24h, 90m) or a time (2026-11-25, 2026-11-25T14:00:00Z); default 24h
  --limit  at most this many entries (default 500)
  --json   one JSON object per entry and line: at, run_id, node, action, by, name, verified, detail
`

// auditCmd is `bot audit`.
func auditCmd(ctx context.Context, inv invocation, args []string) error {
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	since := fs.String("since", "24h", "")
	limit := fs.Int("limit", 500, "")
	asJSON := fs.Bool("json", false, "")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 || *limit < 1 {
		if err == flag.ErrHelp {
			fmt.Fprint(inv.stdout, auditUsage)
			return nil
		}
		return &usageError{"bot audit takes --since DURATION|TIME, --limit N (at least 1) and --json; bot audit --help says more"}
	}
	from, err := parseSince(*since, time.Now())
	if err != nil {
		return &usageError{err.Error()}
	}
	_, log, st, err := openLocal(ctx, inv, "audit", nil)
	if err != nil {
		return err
	}
	defer func() { _ = st.Close(); _ = log.Sync() }()
	entries, err := audit.Read(ctx, st, from, *limit)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(inv.stdout)
		for _, e := range entries {
			if err := enc.Encode(e); err != nil {
				return err
			}
		}
		return nil
	}
	return printAudit(inv.stdout, entries, from)
}

// parseSince reads --since: a duration back from now, or a date or time.
func parseSince(v string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, v, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--since %q is neither a duration (24h, 90m) nor a time (2026-11-25 or 2026-11-25T14:00:00Z)", v)
}

func printAudit(w io.Writer, entries []audit.Entry, from time.Time) error {
	if len(entries) == 0 {
		_, err := fmt.Fprintf(w, "Nobody did anything to a run since %s.\n", from.Local().Format("2006-01-02 15:04:05"))
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WHEN\tRUN\tACTION\tBY\tVERIFIED\tDETAIL")
	for _, e := range entries {
		detail := e.Detail
		if e.Node != "" {
			detail = strings.TrimSpace("at " + e.Node + ": " + detail)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", e.At.Local().Format("2006-01-02 15:04:05"), e.RunID, e.Action, e.By,
			e.Verified, oneLine(detail, 80))
	}
	return tw.Flush()
}

// oneLine keeps a detail (a note, a reason: user text) on one line of at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
