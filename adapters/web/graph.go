package web

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"threadflow/db"
	"threadflow/orchestrator/execution"
)

// liveTail is how much of an unfinished attempt's output the run page shows: its latest bytes.
const liveTail = 8 << 10

// Graph geometry, in SVG user units.
const (
	boxW, boxH = 170, 46
	gapX, gapY = 56, 18
	pad        = 8
)

// nodeNote is what the run page adds to a node beyond its events: why it has not run (pending,
// skipped, not run) or why it was cancelled, and the latest output of an attempt that has not
// ended: one that runs (live), or one the run's stop left unfinished (Stopped).
type nodeNote struct {
	Reason    string
	Live      string
	LiveBytes int64
	Stopped   bool   // the attempt will not print more: the run stopped it
	Partial   string // why Live is only part of the attempt's output (execution.OutputRef.Partial)
}

// graphView is the workflow drawn as its DAG: each node a box in the column of its depth, coloured
// by its state, with an edge from each dependency.
type graphView struct {
	Width, Height int
	Boxes         []graphBox
	Edges         []graphEdge
}

type graphBox struct {
	ID, State string
	X, Y      int
}

type graphEdge struct{ Path string }

// planNodes completes v with what the events do not say: why pending nodes have not run yet, and
// the latest output of running nodes and of cancelled ones. It returns the notes and the graph.
func planNodes(v *runView) (map[string]nodeNote, *graphView) {
	state := map[string]string{}
	for _, n := range v.Nodes {
		state[n.ID] = n.State
	}
	notes := map[string]nodeNote{}
	for _, n := range v.Nodes {
		var note nodeNote
		switch n.State {
		case "pending":
			note.Reason = pendingReason(v.Run, n.DependsOn, state)
		case "skipped", execution.NodeCancelled, execution.NodeNotRun: // a rejected gate's answer is on its gate line
			note.Reason = n.Reason
		}
		if f := n.Full; f != nil && f.Partial != "" {
			note.Live, note.LiveBytes = tail(f.File)
			note.Partial, note.Stopped = f.Partial, n.State != "running"
		}
		notes[n.ID] = note
	}
	if v.Run.Status == db.StatusQueued || v.Run.Status == db.StatusRunning {
		v.Actions = append([]string{"cancel"}, slices.DeleteFunc(v.Actions, func(a string) bool { return a == "cancel" })...)
	}
	return notes, layout(v.Nodes)
}

// pendingReason says why a node has not started yet: the dependencies it waits for, or the run
// waiting for a person. A run that ended for good has no pending node: the fold says why each did
// not run.
func pendingReason(r db.Run, deps []string, state map[string]string) string {
	var waiting []string
	for _, d := range deps {
		if st := state[d]; st != "completed" && st != "skipped" && st != "failed" {
			waiting = append(waiting, d)
		}
	}
	switch {
	case r.Status == db.StatusFailed:
		return "waits until the failed run is resumed"
	case len(waiting) > 0:
		return "waits for " + strings.Join(waiting, ", ")
	case r.Status == db.StatusPaused:
		return "waits until the run is resumed"
	}
	return "about to start"
}

// tail reads the last liveTail bytes of a growing output file, as valid UTF-8.
func tail(path string) (string, int64) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0 // not opened yet: nothing printed
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", 0
	}
	off := max(0, st.Size()-liveTail)
	b, err := io.ReadAll(io.NewSectionReader(f, off, st.Size()-off))
	if err != nil {
		return "", 0
	}
	for off > 0 && len(b) > 0 && !utf8.RuneStart(b[0]) { // do not start inside a character
		b = b[1:]
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), st.Size()
}

// layout places each node in the column of its depth (the longest chain of dependencies before
// it), rows in file order, and draws an edge from each dependency.
func layout(nodes []*nodeView) *graphView {
	if len(nodes) == 0 {
		return nil
	}
	depth := map[string]int{}
	var depthOf func(id string, seen int) int
	deps := map[string][]string{}
	for _, n := range nodes {
		deps[n.ID] = n.DependsOn
	}
	depthOf = func(id string, seen int) int {
		if d, ok := depth[id]; ok {
			return d
		}
		d := 0
		if seen < len(nodes) { // validation forbids cycles; the bound only guards a damaged source
			for _, p := range deps[id] {
				d = max(d, depthOf(p, seen+1)+1)
			}
		}
		depth[id] = d
		return d
	}
	g := &graphView{}
	rows := map[int]int{}
	pos := map[string][2]int{}
	for _, n := range nodes {
		col := depthOf(n.ID, 0)
		x, y := pad+col*(boxW+gapX), pad+rows[col]*(boxH+gapY)
		rows[col]++
		pos[n.ID] = [2]int{x, y}
		g.Boxes = append(g.Boxes, graphBox{ID: n.ID, State: n.State, X: x, Y: y})
		g.Width, g.Height = max(g.Width, x+boxW+pad), max(g.Height, y+boxH+pad)
	}
	for _, n := range nodes {
		to := pos[n.ID]
		for _, d := range n.DependsOn {
			from, ok := pos[d]
			if !ok {
				continue
			}
			x1, y1, x2, y2 := from[0]+boxW, from[1]+boxH/2, to[0], to[1]+boxH/2
			g.Edges = append(g.Edges, graphEdge{Path: fmt.Sprintf("M%d %d C%d %d, %d %d, %d %d", x1, y1, x1+gapX/2, y1, x2-gapX/2, y2, x2, y2)})
		}
	}
	return g
}
