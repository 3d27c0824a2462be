package main

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The --json output is an interface scripts depend on: these are the keys README.md documents
// ("Output for scripts"). A new key must be documented there and added here.
var (
	runKeys      = []string{"args", "concurrency_group", "created_at", "finished_at", "id", "inputs", "state", "usage", "user", "workflow"}
	statusKeys   = append(slices.Clone(runKeys), "last_error", "nodes", "resumes", "undelivered", "waiting_at", "waiting_for_group")
	nodeKeys     = []string{"attempts", "depends_on", "duration_ms", "id", "output_bytes", "state"} // and reason, by, usage when set
	usageKeys    = []string{"cache_read_tokens", "cache_write_tokens", "cost_usd", "estimated", "input_tokens", "output_tokens", "turns", "unknown_turns", "unpriced_turns"}
	workflowKeys = []string{"description", "name", "origin"}
)

func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestWorkflowJSONMatchesTheDocumentedSchema(t *testing.T) {
	env := cliEnv(t)
	_, id := runWorkflow(t, env, exitPaused, "release", "v1")

	out, code := cli(t, env, "workflow", "list", "--json")
	var wfs []map[string]any
	if err := json.Unmarshal([]byte(out), &wfs); code != 0 || err != nil || len(wfs) == 0 {
		t.Fatalf("list --json = exit %d, %v:\n%s", code, err, out)
	}
	if got := keysOf(wfs[0]); !slices.Equal(got, workflowKeys) {
		t.Errorf("list --json keys = %v, want %v", got, workflowKeys)
	}

	out, code = cli(t, env, "workflow", "runs", "--json", "--state", "paused")
	var runs []map[string]any
	if err := json.Unmarshal([]byte(out), &runs); code != 0 || err != nil || len(runs) != 1 {
		t.Fatalf("runs --json = exit %d, %v:\n%s", code, err, out)
	}
	if got := keysOf(runs[0]); !slices.Equal(got, runKeys) || runs[0]["id"] != id || runs[0]["state"] != "paused" || runs[0]["finished_at"] != nil {
		t.Errorf("runs --json = %v; want keys %v, the paused run, finished_at null", runs[0], runKeys)
	}
	// A run without agent turns cost nothing, and says so: cost 0, known.
	if u, _ := runs[0]["usage"].(map[string]any); !slices.Equal(keysOf(u), usageKeys) || u["cost_usd"] != 0.0 || u["turns"] != 0.0 {
		t.Errorf("runs --json usage = %v, want keys %v, cost_usd 0 and no turns", u, usageKeys)
	}

	out, code = cli(t, env, "workflow", "status", id, "--json")
	var st map[string]any
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil {
		t.Fatalf("status --json = exit %d, %v:\n%s", code, err, out)
	}
	if got, want := keysOf(st), sortedCopy(statusKeys); !slices.Equal(got, want) {
		t.Errorf("status --json keys = %v, want %v", got, want)
	}
	nodes, _ := st["nodes"].([]any)
	var states []string
	for _, n := range nodes {
		node := n.(map[string]any)
		if got := keysOf(node); !slices.Equal(got, nodeKeys) {
			t.Errorf("node keys = %v, want %v", got, nodeKeys)
		}
		states = append(states, node["id"].(string)+"="+node["state"].(string))
	}
	// Every node of the workflow, the ones not reached yet included.
	if got := strings.Join(states, " "); got != "check=completed confirm=waiting ship=pending" {
		t.Errorf("nodes = %s", got)
	}
	if w, _ := st["waiting_at"].(map[string]any); w["node"] != "confirm" {
		t.Errorf("waiting_at = %v, want the confirm gate", st["waiting_at"])
	}

	b := runBot(t, env, "workflow", "runs", "--state", "sleeping")
	if err := b.result(t); exitCode(err) != 2 || !strings.Contains(b.stderr.String(), `--state "sleeping": use one of queued, running, paused, completed, failed, cancelled`) {
		t.Errorf("runs --state sleeping = exit %d, stderr %q", exitCode(err), b.stderr)
	}
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	sort.Strings(c)
	return c
}
