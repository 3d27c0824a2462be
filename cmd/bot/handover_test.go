package main

import (
	"maps"
	"strings"
	"testing"
	"time"

	"threadflow/testkit"
	"threadflow/testkit/botproc"
)

// A run started from the terminal stays the terminal's while it is attached; once the terminal is
// gone, approving it on the dashboard of a running server is enough: the server executes it. On
// both engines.
func TestTerminalRunApprovedOnTheDashboardCompletesWithoutATerminal(t *testing.T) {
	botproc.ForEachEngine(t, cliEnv, func(t *testing.T, env map[string]string) {
		server := maps.Clone(env)
		server["HTTP_ADDR"], server["REPLICA_ID"] = "127.0.0.1:0", "server"
		srv := runBot(t, server)
		base := waitURL(t, srv.stdout, srv.done, srv.stderr)

		env["REPLICA_ID"] = "terminal"
		out, code := cli(t, env, "workflow", "run", "release", "v7.0.1")
		m := runIDPattern.FindStringSubmatch(out)
		if code != exitPaused || m == nil || !strings.Contains(out, "✓ check") {
			t.Fatalf("workflow run release = exit %d, want %d with the check done by the terminal:\n%s", code, exitPaused, out)
		}
		id := m[1] // the terminal has exited: nothing but the server is running now

		botproc.ApproveOnDashboard(t, base, id, "bob", "ship it")
		deadline := time.Now().Add(testkit.Deadline) // a failure bound: the server runs the rest under -race on a loaded machine
		var page string
		for {
			_, page = get(t, base+"runs/"+id)
			if strings.Contains(page, `id="run-state" class="state state-completed"`) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %s not completed %s after the dashboard approved it; page:\n%s\nserver log:\n%s", id, testkit.Deadline, page, srv.stderr)
			}
			time.Sleep(50 * time.Millisecond) // polling interval of the deadline above
		}
		if !strings.Contains(page, "note from the approver: ship it") {
			t.Fatalf("completed run page lacks the ship node's output:\n%s", page)
		}
		// The terminal sees the outcome when it comes back to its conversation.
		out, _ = cli(t, env, "workflow", "status", id)
		if !strings.Contains(out, "completed") || !strings.Contains(out, "✓ ship") {
			t.Fatalf("workflow status after the server finished the run:\n%s", out)
		}
	})
}

// A script running a workflow executes and prints its own run only: a run of another invocation
// that becomes queued meanwhile (approved from another terminal) is not its business.
func TestWorkflowRunDoesNotExecuteAnotherInvocationsRun(t *testing.T) {
	env := cliEnv(t)
	addWorkflow(t, env, "gated", "name: gated\nnodes:\n  - id: ok\n    approval: {message: \"go?\"}\n  - id: after\n    depends_on: [ok]\n    bash: echo run one shipped\n")
	addWorkflow(t, env, "slow", "name: slow\nnodes:\n  - id: wait\n    bash: sleep 2; echo slow done\n")
	_, id := runWorkflow(t, env, exitPaused, "gated")
	slow := runBot(t, env, "workflow", "run", "slow")
	if out, _ := cli(t, env, "chat", "--conversation", "elsewhere", "/workflow approve "+id); !strings.Contains(out, "Approved") {
		t.Fatalf("approve from another terminal:\n%s", out)
	}
	if err := slow.result(t); err != nil || !strings.Contains(slow.stdout.String(), "slow done") || strings.Contains(slow.stdout.String(), "run one shipped") {
		t.Fatalf("workflow run slow (err %v) printed:\n%s\nwant its own run only", err, slow.stdout)
	}
}
