package main

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"threadflow/testkit"
)

// How a run's end closes its nodes (issue 26), one test per way a run stops, each read through the
// three views people use: `bot workflow status --json`, the text status, and the run page of the
// dashboard served by a running `bot serve` on the same home.

// endWorkflows are the workflows the tests stop in each way.
var endWorkflows = map[string]string{
	// timed's gate rejects itself when nobody answers within a second.
	"timed.yaml": `name: timed
nodes:
  - id: confirm
    approval: {message: "Ship it?", timeout: 1s}
  - id: ship
    depends_on: [confirm]
    bash: echo shipped
`,
	// slow's build prints a line, then sleeps far longer than any test waits.
	"slow.yaml": `name: slow
nodes:
  - id: build
    bash: |
      echo compiling
      sleep 120
  - id: publish
    depends_on: [build]
    bash: echo published
`,
	// ci's build fails; its clean-up runs all the same.
	"ci.yaml": `name: ci
nodes:
  - id: build
    bash: exit 3
  - id: test
    depends_on: [build]
    bash: echo tested
  - id: cleanup
    depends_on: [test]
    trigger_rule: all_done
    bash: echo cleaned up
`,
}

// endRig is a bot serving the dashboard on a home, next to which the tests run `bot workflow` and
// `bot chat` as a person at a terminal would.
type endRig struct {
	t    *testing.T
	env  map[string]string
	base string // the dashboard's URL
}

func newEndRig(t *testing.T) *endRig {
	t.Helper()
	env := cliEnv(t)
	dir := t.TempDir()
	for name, src := range endWorkflows {
		writeFile(t, filepath.Join(dir, name), src)
	}
	env["WORKFLOWS_DIR"] = dir
	server := maps.Clone(env)
	server["HTTP_ADDR"], server["REPLICA_ID"] = "127.0.0.1:0", "server"
	srv := runBot(t, server)
	return &endRig{t: t, env: env, base: waitURL(t, srv.stdout, srv.done, srv.stderr)}
}

// start runs a workflow from the terminal until it pauses, and returns the run's id.
func (r *endRig) start(args ...string) string {
	r.t.Helper()
	_, id := runWorkflow(r.t, r.env, exitPaused, args...)
	return id
}

// endStatus is what the tests read of `bot workflow status --json`.
type endStatus struct {
	State string `json:"state"`
	Nodes []struct {
		ID          string `json:"id"`
		State       string `json:"state"`
		Reason      string `json:"reason"`
		By          string `json:"by"`
		OutputBytes int64  `json:"output_bytes"`
	} `json:"nodes"`
}

func (r *endRig) status(id string) endStatus {
	r.t.Helper()
	out, code := cli(r.t, r.env, "workflow", "status", "--json", id)
	var st endStatus
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil {
		r.t.Fatalf("status --json %s = exit %d, %v:\n%s", id, code, err, out)
	}
	return st
}

// waitState waits until the run is in state.
func (r *endRig) waitState(id, state string) {
	r.t.Helper()
	testkit.Eventually(r.t, "run "+id+" to be "+state, func() bool { return r.status(id).State == state })
}

// nodeEnd is what every view must show of one node once the run stopped.
type nodeEnd struct {
	id, state string
	reason    *regexp.Regexp // nil: the node shows no reason
	by        string
}

// marks are the text status's marks of node states, each its own.
var marks = map[string]string{
	"completed": "✓", "failed": "✗", "skipped": "–", "rejected": "🛑", "cancelled": "⏹", "not_run": "○",
}

// assertNodes checks the run's state and its nodes in the three views.
func (r *endRig) assertNodes(id, runState string, want []nodeEnd) {
	r.t.Helper()
	st := r.status(id)
	if st.State != runState || len(st.Nodes) != len(want) {
		r.t.Fatalf("status --json: run %s with %d nodes, want %s with %d:\n%+v", st.State, len(st.Nodes), runState, len(want), st)
	}
	text, code := cli(r.t, r.env, "workflow", "status", id)
	if code != 0 {
		r.t.Fatalf("workflow status %s = exit %d:\n%s", id, code, text)
	}
	_, page := get(r.t, r.base+"runs/"+id)
	if !strings.Contains(page, `id="run-state" class="state state-`+runState+`"`) {
		r.t.Errorf("the run page does not show the run %s:\n%s", runState, page)
	}
	for i, w := range want {
		n := st.Nodes[i]
		if n.ID != w.id || n.State != w.state || n.By != w.by || (w.reason == nil) != (n.Reason == "") ||
			(w.reason != nil && !w.reason.MatchString(n.Reason)) {
			r.t.Errorf("status --json: node %s is %s (reason %q, by %q); want %s is %s (reason %v, by %q)",
				n.ID, n.State, n.Reason, n.By, w.id, w.state, w.reason, w.by)
		}
		// The text shows why a node was cancelled or did not run on its line; a rejected gate's
		// answer is on the gate's own line, a failure's error under "Last error".
		line := regexp.MustCompile(`(?m)^• ` + regexp.QuoteMeta(marks[w.state]+" "+w.id) + `\b.*$`).FindString(text)
		_, why, _ := strings.Cut(line, " - ")
		if line == "" || ((w.state == "cancelled" || w.state == "not_run") && !w.reason.MatchString(strings.TrimSuffix(why, "; its output so far (10 B) is kept"))) {
			r.t.Errorf("the text status lacks node %s as %s %s (with its reason %v):\n%s", w.id, marks[w.state], w.state, w.reason, text)
		}
		for _, html := range []string{
			`class="gnode gnode-` + w.state + `" id="gnode-` + w.id + `"`,
			`<li class="node node-` + w.state + `"><div class="node-head"><code>` + w.id + `</code>`,
		} {
			if !strings.Contains(page, html) {
				r.t.Errorf("the run page lacks %s:\n%s", html, page)
			}
		}
		// The page shows why a node was skipped, cancelled or did not run under it; a rejected
		// gate's answer (who, why, or its timeout) is on the gate's line, a failure's error below.
		if w.state == "skipped" || w.state == "cancelled" || w.state == "not_run" {
			m := regexp.MustCompile(`id="reason-` + w.id + `">([^<]*)</p>`).FindStringSubmatch(page)
			if m == nil || !w.reason.MatchString(m[1]) {
				r.t.Errorf("the run page shows node %s's reason as %v, want %v", w.id, m, w.reason)
			}
		}
		if w.state == "rejected" && !regexp.MustCompile(`<strong>(reject</strong> by|timed out</strong>)`).MatchString(page) {
			r.t.Errorf("the run page does not say who or what rejected %s:\n%s", w.id, page)
		}
	}
	for _, open := range []string{"gnode-running", "gnode-waiting", "gnode-pending", "live output ("} {
		if strings.Contains(page, open) {
			r.t.Errorf("the run page of a %s run still shows %q:\n%s", runState, open, page)
		}
	}
}

func TestRejectedGateIsRejectedAndTheRestNotRun(t *testing.T) {
	r := newEndRig(t)
	id := r.start("release", "v1.0")
	if out, code := cli(t, r.env, "workflow", "reject", "--user", "bob", id, "changelog missing"); code != 0 || !strings.Contains(out, "Rejected by console:bob") {
		t.Fatalf("workflow reject = exit %d:\n%s", code, out)
	}
	r.assertNodes(id, "cancelled", []nodeEnd{
		{id: "check", state: "completed"},
		{id: "confirm", state: "rejected", reason: regexp.MustCompile(`^rejected by \S*bob: changelog missing$`), by: "console:bob"},
		{id: "ship", state: "not_run", reason: regexp.MustCompile(`^not run: confirm was rejected$`)},
	})
	if text, _ := cli(t, r.env, "workflow", "status", id); !regexp.MustCompile("• gate `confirm`: 🛑 rejected by \\S*bob .*: changelog missing").MatchString(text) {
		t.Errorf("the text status does not say who rejected the gate, and why:\n%s", text)
	}
}

func TestGateRejectedByItsTimeoutSaysSo(t *testing.T) {
	r := newEndRig(t)
	id := r.start("timed")
	r.waitState(id, "cancelled") // the server fires the gate's timeout
	r.assertNodes(id, "cancelled", []nodeEnd{
		{id: "confirm", state: "rejected", reason: regexp.MustCompile(`^nobody answered within 1s: rejected by its timeout$`), by: "threadflow:timeout"},
		{id: "ship", state: "not_run", reason: regexp.MustCompile(`^not run: confirm was rejected by its timeout$`)},
	})
}

func TestNodeRunningWhenTheRunIsCancelledIsCancelledWithItsOutput(t *testing.T) {
	r := newEndRig(t)
	term := runBot(t, r.env, "workflow", "run", "slow")
	var id string
	testkit.Eventually(t, "the run's id", func() bool {
		m := runIDPattern.FindStringSubmatch(term.stdout.String())
		if m != nil {
			id = m[1]
		}
		return m != nil
	})
	testkit.Eventually(t, "build's first line on the run page", func() bool {
		_, page := get(t, r.base+"runs/"+id)
		return strings.Contains(page, `id="live-build">compiling`)
	})
	if out, code := cli(t, r.env, "chat", "--conversation", "elsewhere", "/workflow cancel "+id); code != 0 || !strings.Contains(out, id) {
		t.Fatalf("/workflow cancel = exit %d:\n%s", code, out)
	}
	_ = term.result(t) // the terminal stops the sleep and returns; how it says so is not this test's
	r.assertNodes(id, "cancelled", []nodeEnd{
		{id: "build", state: "cancelled", reason: regexp.MustCompile(`^cancelled by \S*local$`), by: "console:local"},
		{id: "publish", state: "not_run", reason: regexp.MustCompile(`^not run: the run was cancelled$`)},
	})
	// What build printed before it was stopped is kept, and every view says so.
	if st := r.status(id); st.Nodes[0].OutputBytes != int64(len("compiling\n")) {
		t.Errorf("status --json: build's output_bytes = %d, want the %d bytes it printed", st.Nodes[0].OutputBytes, len("compiling\n"))
	}
	if text, _ := cli(t, r.env, "workflow", "status", id); !strings.Contains(text, "its output so far (10 B) is kept") {
		t.Errorf("the text status does not mention build's output:\n%s", text)
	}
	if _, page := get(t, r.base+"runs/"+id); !strings.Contains(page, `id="partial-build">compiling`) {
		t.Errorf("the run page does not show what build printed:\n%s", page)
	}
}

func TestRunAbandonedAtAGateCancelsTheGate(t *testing.T) {
	r := newEndRig(t)
	id := r.start("release", "v2.0")
	if out, code := cli(t, r.env, "workflow", "abandon", id); code != 0 {
		t.Fatalf("workflow abandon = exit %d:\n%s", code, out)
	}
	r.assertNodes(id, "cancelled", []nodeEnd{
		{id: "check", state: "completed"},
		{id: "confirm", state: "cancelled", reason: regexp.MustCompile(`^cancelled by \S*local$`), by: "console:local"},
		{id: "ship", state: "not_run", reason: regexp.MustCompile(`^not run: the run was cancelled$`)},
	})
}

// A failed run is not over (it can be resumed): its nodes show what happened, the clean-up that ran
// included, and abandoning it changes none of that.
func TestFailedNodeBehindACleanUpShowsWhatRan(t *testing.T) {
	r := newEndRig(t)
	_, id := runWorkflow(t, r.env, exitFailed, "ci")
	nodes := []nodeEnd{
		{id: "build", state: "failed", reason: regexp.MustCompile(`^exit status 3$`)},
		{id: "test", state: "skipped", reason: regexp.MustCompile(`^dependency build failed$`)},
		{id: "cleanup", state: "completed"},
	}
	r.assertNodes(id, "failed", nodes)
	if out, code := cli(t, r.env, "workflow", "abandon", id); code != 0 {
		t.Fatalf("workflow abandon = exit %d:\n%s", code, out)
	}
	r.assertNodes(id, "cancelled", nodes)
}
