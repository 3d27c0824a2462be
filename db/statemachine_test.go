package db_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"threadflow/db"
)

// stateMachineDoc is the page whose diagram and table must say what db.Transitions says.
const stateMachineDoc = "../docs/state-machine.md"

func readDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(stateMachineDoc)
	if err != nil {
		t.Fatalf("read %s: %v", stateMachineDoc, err)
	}
	return string(b)
}

// opOf names the op a table row or a diagram label starts with: "approve / answer" is approve,
// "cancel (abandon)" is cancel. ok is false for rows that are not a transition of the table
// (gate timeout is an approve/reject/cancel the timer makes).
func opOf(cell string) (db.Op, bool) {
	word := strings.FieldsFunc(cell, func(r rune) bool { return r == ' ' || r == ',' || r == '(' || r == '/' })
	if len(word) == 0 {
		return "", false
	}
	op := db.Op(word[0])
	_, ok := db.Transitions[op]
	return op, ok
}

// statusesIn lists the statuses a cell names, in order, each once.
func statusesIn(cell string) []db.Status {
	var out []db.Status
	for _, w := range regexp.MustCompile(`[a-z]+`).FindAllString(cell, -1) {
		if s := db.Status(w); s.Valid() && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func sorted(ss []db.Status) []db.Status {
	out := slices.Clone(ss)
	slices.Sort(out)
	return out
}

// TestStateMachineTableMatchesCode: every row of the docs' table is the op's row of db.Transitions
// (from, to, event, lease), and every op of the code has its row.
func TestStateMachineTableMatchesCode(t *testing.T) {
	row := regexp.MustCompile(`(?m)^\|([^|]+)\|([^|]+)\|([^|]+)\|([^|]+)\|([^|]*)\|$`)
	seen := map[db.Op]bool{}
	for _, m := range row.FindAllStringSubmatch(readDoc(t), -1) {
		op, ok := opOf(strings.TrimSpace(m[1]))
		if !ok {
			continue
		}
		seen[op] = true
		tr := db.Transitions[op]
		if got := statusesIn(m[2]); !slices.Equal(sorted(got), sorted(tr.From)) {
			t.Errorf("%s: the table says it leaves %v, db.Transitions says %v", op, got, tr.From)
		}
		if got := statusesIn(m[3]); len(got) == 0 || got[0] != tr.To {
			t.Errorf("%s: the table says it leads to %v, db.Transitions says %s", op, got, tr.To)
		}
		if ev := regexp.MustCompile("`([a-z_]+)`").FindStringSubmatch(m[4]); ev == nil || db.EventType(ev[1]) != tr.Event {
			t.Errorf("%s: the table's first event is %v, db.Transitions says %s", op, ev, tr.Event)
		}
		if lease := strings.HasPrefix(strings.TrimSpace(m[5]), "yes"); lease != tr.Lease {
			t.Errorf("%s: the table says it carries the lease token: %v (%q), db.Transitions says %v", op, lease, m[5], tr.Lease)
		}
	}
	for op := range db.Transitions {
		if !seen[op] {
			t.Errorf("db.Transitions has %s, the table in %s has no row for it", op, stateMachineDoc)
		}
	}
}

// TestStateMachineDiagramMatchesCode: the diagram draws every transition of db.Transitions, and
// every arrow it draws is one.
func TestStateMachineDiagramMatchesCode(t *testing.T) {
	edge := regexp.MustCompile(`(?m)^\s+(\[\*\]|[a-z]+) --> (\[\*\]|[a-z]+): (.+)$`)
	drawn := map[[2]string][]db.Op{}
	for _, m := range edge.FindAllStringSubmatch(readDoc(t), -1) {
		for _, part := range strings.Split(m[3], ",") {
			if op, ok := opOf(strings.TrimPrefix(strings.TrimSpace(part), "or ")); ok {
				drawn[[2]string{m[1], m[2]}] = append(drawn[[2]string{m[1], m[2]}], op)
			}
		}
	}
	for op, tr := range db.Transitions {
		from := tr.From
		if len(from) == 0 {
			from = []db.Status{"[*]"}
		}
		for _, f := range from {
			if !slices.Contains(drawn[[2]string{string(f), string(tr.To)}], op) {
				t.Errorf("the diagram has no arrow %s --> %s labelled %s", f, tr.To, op)
			}
		}
	}
	for e, ops := range drawn {
		for _, op := range ops {
			tr := db.Transitions[op]
			legal := e[1] == string(tr.To) && (slices.Contains(tr.From, db.Status(e[0])) || (e[0] == "[*]" && len(tr.From) == 0))
			// A rescue past the recovery budget fails the run instead (see db.Transitions).
			exhausted := op == db.OpRescue && e == [2]string{string(db.StatusRunning), string(db.StatusFailed)}
			if !legal && !exhausted {
				t.Errorf("the diagram draws %s --> %s as %s; db.Transitions has %s leave %v for %s", e[0], e[1], op, op, tr.From, tr.To)
			}
		}
	}
}
