package main

import (
	"os/exec"
	"strings"
	"testing"
)

// layers is the README's dependency rule ("Layout"), as data: a package may import only packages of
// a lower layer, so dependencies point inward, to db. Packages of one layer never import each
// other (adapters never import each other; metrics and the adapters are siblings).
var layers = map[string]int{
	"threadflow/proctag":     0,
	"threadflow/groupcommit": 0,
	"threadflow/platform":    0,
	"threadflow/childenv":    1, // the environment of every child process: the bot's minus its secrets
	"threadflow/db":          1,
	"threadflow/migrations":  1,

	"threadflow/workflow":     2, // a gate's rules decode into db.GatePolicy
	"threadflow/db/postgres":  2,
	"threadflow/db/sqlite":    2,
	"threadflow/commands":     2,
	"threadflow/conversation": 2,
	"threadflow/agent":        2,
	// The orchestrator's rooms (README, Layout): execution knows nothing of chat messages or loops;
	// reporting tells chat about runs; the loops and the dispatcher use both; orchestrator wires.
	"threadflow/orchestrator/execution":   3,
	"threadflow/audit":                    3, // who did what, read from run events (bot audit, /audit)
	"threadflow/adapters/web/signin":      7, // the dashboard's sign-in: below the web adapter, imports none of ours
	"threadflow/orchestrator/reporting":   4,
	"threadflow/orchestrator/newrun":      5, // the one rule for making a run, below both ways a run starts
	"threadflow/orchestrator/maintenance": 6,
	"threadflow/orchestrator/dispatch":    6,
	"threadflow/orchestrator":             7,
	"threadflow/metrics":                  8,
	"threadflow/adapters/":                8, // every adapter
	"threadflow/cmd/":                     9, // every command: the only packages that wire engines and adapters
	"threadflow/test":                     -1,
	"threadflow/testkit":                  -1,
	"threadflow/orchestratortest":         -1,
	"threadflow/test/":                    -1, // test support: never imported by a package above
	"threadflow/db/dbtest":                -1,
	"threadflow/db/storetest":             -1,
	"threadflow/db/drivertest":            -1,
	"threadflow/db/sim":                   -1,
	"threadflow/agent/agenttest":          -1,
	"threadflow/agent/agenttest/":         -1,

	// Each platform's fake lives next to its adapter, but is test support like the above.
	"threadflow/adapters/slack/slackfake":       -1,
	"threadflow/adapters/discord/discordfake":   -1,
	"threadflow/adapters/web/signin/signinfake": -1, // the fakes' sign-in endpoints
	"threadflow/testkit/botproc":                -1,
	"threadflow/testkit/runevents":              -1,
	"threadflow/testkit/posthold":               -1, // the held post of the Slack and Discord fakes
}

// engines are the database engines: only cmd/ picks one, everything else sees db.Store.
var engines = map[string]bool{"threadflow/db/postgres": true, "threadflow/db/sqlite": true}

// layerOf is the layer of a package: its own entry, or the entry of the folder it is in.
func layerOf(pkg string) (int, bool) {
	if l, ok := layers[pkg]; ok {
		return l, true
	}
	for prefix, l := range layers {
		if strings.HasSuffix(prefix, "/") && strings.HasPrefix(pkg, prefix) {
			return l, true
		}
	}
	return 0, false
}

// TestDependenciesPointInward checks every package's imports (not its tests') against layers.
func TestDependenciesPointInward(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "threadflow/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, imports := fields[0], fields[1:]
		from, ok := layerOf(pkg)
		if !ok {
			t.Errorf("package %s has no layer: add it to layers in this test and to README's Layout", pkg)
			continue
		}
		if from < 0 {
			continue // test support may import what it tests
		}
		for _, imp := range imports {
			if !strings.HasPrefix(imp, "threadflow/") {
				continue
			}
			to, ok := layerOf(imp)
			switch {
			case !ok:
				continue // reported as a package of its own
			case to < 0:
				t.Errorf("%s imports the test support package %s", pkg, imp)
			case engines[imp] && !strings.HasPrefix(pkg, "threadflow/cmd/"):
				t.Errorf("%s imports the database engine %s: only cmd/ picks an engine; use db.Store", pkg, imp)
			case to >= from:
				t.Errorf("%s (layer %d) imports %s (layer %d): dependencies must point inward (README, Layout)", pkg, from, imp, to)
			}
		}
	}
}
