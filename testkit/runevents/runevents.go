// Package runevents counts a run's recorded events, the check of many tests (orchestrator, web
// adapter, end-to-end) that something happened exactly so many times. It is apart from testkit,
// which does not know the database. It is imported by tests only.
package runevents

import (
	"context"
	"testing"

	"threadflow/db"
)

// Count counts the events of type typ in evs, at node, or at any node when node is "".
func Count(evs []db.Event, typ db.EventType, node string) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ && (node == "" || e.NodeID == node) {
			n++
		}
	}
	return n
}

// InRun reads the events of run id from st and counts those of type typ, at any node.
func InRun(t testing.TB, st db.Store, id string, typ db.EventType) int {
	t.Helper()
	evs, err := st.Events(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return Count(evs, typ, "")
}
