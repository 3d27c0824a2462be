package orchestrator_test

import (
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	"threadflow/db"
	"threadflow/testkit"
)

// scripts runs one script per runtime with real bun, node and python3 processes, reading an
// upstream JSON output's fields, its file and the arguments from the environment.
const scripts = `name: scripts
nodes:
  - id: judge
    bash: |
      echo '{"verdict": "approve", "n": 3}'
  - id: js
    depends_on: [judge]
    runtime: bun
    script: |
      const verdict: string = process.env.TF_FIELD_JUDGE_VERDICT ?? "";
      console.log(` + "`bun ${verdict} ${process.env.ARGUMENTS}`" + `);
  - id: nd
    depends_on: [judge]
    runtime: node
    script: |
      import { readFileSync } from "node:fs";
      console.log("node", process.env.TF_FIELD_JUDGE_N, readFileSync(process.env.TF_OUTPUT_JUDGE_FILE, "utf8").trim());
  - id: py
    depends_on: [judge]
    runtime: python
    script: |
      import json, os
      print(json.dumps({"from": "python", "db": os.environ.get("DATABASE_URL", "none"), "args": os.environ["ARGUMENTS"]}))
  - id: uvpy
    runtime: uv
    script: print("uv without packages runs with python3")
  - id: last
    depends_on: [py]
    when: $py.output.from == 'python'
    bash: |
      echo "python saw $py.output.args and the database $py.output.db"
`

// TestScriptNodesRunWithTheirRuntimes: script nodes run as processes like bash nodes, with the same
// environment (and none of the bot's secrets), and their JSON output has fields like an agent's
// structured answer.
func TestScriptNodesRunWithTheirRuntimes(t *testing.T) {
	for _, tool := range []string{"bun", "node", "python3"} {
		testkit.Tool(t, tool)
	}
	eachEngineSerial(t, func(t *testing.T, h *harness) {
		t.Setenv("DATABASE_URL", "postgres://bot:secret@db/threadflow") // the bot's own: never a child's
		h.cfg.LookPath = testkit.LookPath
		h.restart()
		h.writeWorkflow("scripts", scripts)
		args := "a;$(rm -rf /);`id`" // data for the scripts, never code
		run := h.waitCompleted(h.startRun("scripts", args).ID)
		want := map[string]string{
			"js":   "bun approve " + args,
			"nd":   `node 3 {"verdict": "approve", "n": 3}`,
			"py":   `{"from": "python", "db": "none", "args": "` + args + `"}`,
			"uvpy": "uv without packages runs with python3",
			"last": "python saw " + args + " and the database none",
		}
		got := completedOutputs(h.events(run.ID))
		for node, w := range want {
			if got[node] != w {
				t.Errorf("node %s printed %q, want %q", node, got[node], w)
			}
		}
	})
}

// TestMissingRuntimePausesTheRunNamingIt: a run whose script needs a program the host lacks pauses
// before any node runs, saying which program and how to install it; once installed, a resume
// completes it.
func TestMissingRuntimePausesTheRunNamingIt(t *testing.T) {
	testkit.Tool(t, "bun")
	eachEngine(t, func(t *testing.T, h *harness) {
		var installed atomic.Bool
		h.cfg.LookPath = func(name string) (string, error) {
			if name == "bun" && !installed.Load() {
				return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
			}
			return testkit.LookPath(name)
		}
		h.restart()
		h.writeWorkflow("needsbun", "name: needsbun\nnodes:\n  - id: first\n    bash: echo first\n"+
			"  - id: js\n    depends_on: [first]\n    runtime: bun\n    script: console.log('ran with bun')\n")
		run := h.waitStatus(h.startRun("needsbun", "").ID, db.StatusPaused)
		if run.Meta.Pause == nil || !strings.Contains(run.Meta.Pause.Error, "node js needs `bun` (runtime: bun), which is not installed") ||
			!strings.Contains(run.Meta.Pause.ResumeHint, "install Bun on the bot host") {
			t.Fatalf("pause = %+v, want one naming bun and how to install it", run.Meta.Pause)
		}
		if got := completedOutputs(h.events(run.ID)); len(got) > 0 {
			t.Errorf("nodes ran before the missing runtime was found: %v", got)
		}
		installed.Store(true)
		h.say(admin, "", "/workflow resume "+run.ID)
		run = h.waitCompleted(run.ID)
		if got := completedOutputs(h.events(run.ID))["js"]; got != "ran with bun" {
			t.Errorf("js printed %q after the resume", got)
		}
	})
}

// completedOutputs is each completed node's inline output.
func completedOutputs(events []db.Event) map[string]string {
	out := map[string]string{}
	for _, e := range events {
		if e.Type == db.EventNodeCompleted {
			out[e.NodeID] = db.Decode[db.NodeCompletedData](e).Output
		}
	}
	return out
}
