package main

import (
	"encoding/json"
	"strings"
	"testing"

	"threadflow/audit"
	"threadflow/testkit/botproc"
)

// `bot audit` lists who started, approved, rejected and cancelled which run, with how they were
// known, on both engines; a rejection is listed once, and a refused answer is listed too.
func TestAuditListsWhoDidWhat(t *testing.T) {
	botproc.ForEachEngine(t, cliEnv, func(t *testing.T, env map[string]string) {
		_, approved := runWorkflow(t, env, exitPaused, "release", "v9")
		cli(t, env, "workflow", "approve", approved) // the requester: refused, release forbids self-approval
		if out, code := cli(t, env, "workflow", "approve", "--user", "bob", approved, "ship it"); code != 0 {
			t.Fatalf("approve = exit %d:\n%s", code, out)
		}
		_, rejected := runWorkflow(t, env, exitPaused, "release", "v10")
		if out, code := cli(t, env, "workflow", "reject", "--user", "bob", rejected, "changelog missing"); code != 0 {
			t.Fatalf("reject = exit %d:\n%s", code, out)
		}
		_, cancelled := runWorkflow(t, env, exitPaused, "release", "v11")
		if out, code := cli(t, env, "workflow", "cancel", cancelled); code != 0 {
			t.Fatalf("cancel = exit %d:\n%s", code, out)
		}

		out, code := cli(t, env, "audit", "--json")
		if code != 0 {
			t.Fatalf("audit --json = exit %d:\n%s", code, out)
		}
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var e audit.Entry
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("audit --json line %q: %v", line, err)
			}
			if e.At.IsZero() {
				t.Errorf("entry without a time: %s", line)
			}
			got = append(got, strings.Join([]string{e.RunID, e.Action, e.By, e.Verified, e.Node, e.Detail}, "|"))
		}
		want := []string{ // newest first
			cancelled + "|cancelled|console:local|terminal||cancelled",
			cancelled + "|started|console:local|terminal||release",
			rejected + "|rejected|console:bob|terminal|confirm|changelog missing",
			rejected + "|started|console:local|terminal||release",
			approved + "|approved|console:bob|terminal|confirm|ship it",
			approved + "|refused|console:local|terminal|confirm|approve refused: self_approval",
			approved + "|started|console:local|terminal||release",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("audit --json:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
		}

		out, code = cli(t, env, "audit")
		if code != 0 || !strings.Contains(out, "WHEN") || !strings.Contains(out, "VERIFIED") ||
			!strings.Contains(out, "at confirm: changelog missing") {
			t.Errorf("audit = exit %d:\n%s", code, out)
		}
		if out, code = cli(t, env, "audit", "--since", "2099-01-01"); code != 0 || !strings.Contains(out, "Nobody did anything to a run since 2099-01-01") {
			t.Errorf("audit --since 2099-01-01 = exit %d:\n%s", code, out)
		}
		if b := runBot(t, env, "audit", "--since", "last week"); exitCode(b.result(t)) != 2 || !strings.Contains(b.stderr.String(), `--since "last week"`) {
			t.Errorf("audit --since 'last week' = exit %d:\n%s", exitCode(b.result(t)), b.stderr)
		}
	})
}
