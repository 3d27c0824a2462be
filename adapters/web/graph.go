package web

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"threadflow/db"
	"threadflow/orchestrator"
)

// liveTail is how much of an unfinished attempt's output the run page shows: its latest bytes.
const liveTail = 8 << 10

// Graph geometry, in SVG user units.
const (
	boxW, boxH = 170, 46
	gapX, gapY = 56, 18
	pad        = 8
)

// nodeNote is what the run page adds to a node beyond its events: why it has not run (pending or
// skipped), and the latest output of an attempt that has not ended (it runs, or the run stopped it).
type nodeNote struct {
	Reason    string
	Live      string
	LiveBytes int64
	Partial   string // why Live is only part of the attempt's output (orchestrator.OutputRef.Partial)
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

// planNodes completes v with what the events do not say: every node of the workflow the run froze,
// in file order (pending ones included), why pending and skipped nodes have not run, and the live
// output of running nodes. It returns the notes and the graph.
func planNodes(v *runView, events []db.Event) (map[string]nodeNote, *graphView) {
	sums := orchestrator.NodeSummaries(v.Run, events)
	byID := map[string]*nodeView{}
	for _, n := range v.Nodes {
		byID[n.ID] = n
	}
	ordered := make([]*nodeView, 0, len(sums))
	for _, s := range sums {
		n := byID[s.ID]
		if n == nil {
			n = &nodeView{ID: s.ID, State: "pending"}
		}
		ordered = append(ordered, n)
	}
	v.Nodes = ordered
	state := map[string]string{}
	for _, n := range ordered {
		state[n.ID] = n.State
	}
	notes := map[string]nodeNote{}
	for i, s := range sums {
		n := ordered[i]
		var note nodeNote
		switch n.State {
		case "pending":
			note.Reason = pendingReason(v.Run, s.DependsOn, state)
		case "skipped":
			note.Reason = s.Reason
		}
		if f := n.Full; f != nil && f.Partial != "" {
			note.Live, note.LiveBytes = tail(f.File)
			note.Partial = f.Partial
		}
		notes[n.ID] = note
	}
	if v.Run.Status == db.StatusQueued || v.Run.Status == db.StatusRunning {
		v.Actions = append([]string{"cancel"}, slices.DeleteFunc(v.Actions, func(a string) bool { return a == "cancel" })...)
	}
	return notes, layout(sums, state)
}

// pendingReason says why a node has not started: the dependencies it waits for, or the run
// having stopped before reaching it.
func pendingReason(r db.Run, deps []string, state map[string]string) string {
	var waiting []string
	for _, d := range deps {
		if st := state[d]; st != "completed" && st != "skipped" && st != "failed" {
			waiting = append(waiting, d)
		}
	}
	if !orchestrator.Active(r) {
		return "not run: the run is " + string(r.Status)
	}
	if len(waiting) > 0 {
		return "waits for " + strings.Join(waiting, ", ")
	}
	if r.Status == db.StatusPaused {
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
func layout(sums []orchestrator.NodeSummary, state map[string]string) *graphView {
	if len(sums) == 0 {
		return nil
	}
	depth := map[string]int{}
	var depthOf func(id string, seen int) int
	deps := map[string][]string{}
	for _, s := range sums {
		deps[s.ID] = s.DependsOn
	}
	depthOf = func(id string, seen int) int {
		if d, ok := depth[id]; ok {
			return d
		}
		d := 0
		if seen < len(sums) { // validation forbids cycles; the bound only guards a damaged source
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
	for _, s := range sums {
		col := depthOf(s.ID, 0)
		x, y := pad+col*(boxW+gapX), pad+rows[col]*(boxH+gapY)
		rows[col]++
		pos[s.ID] = [2]int{x, y}
		g.Boxes = append(g.Boxes, graphBox{ID: s.ID, State: state[s.ID], X: x, Y: y})
		g.Width, g.Height = max(g.Width, x+boxW+pad), max(g.Height, y+boxH+pad)
	}
	for _, s := range sums {
		to := pos[s.ID]
		for _, d := range s.DependsOn {
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
