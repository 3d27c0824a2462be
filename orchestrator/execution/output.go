package execution

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/dustin/go-humanize"

	"threadflow/db"
	"threadflow/workflow"
)

// InlineLimit is how much of a node's output is kept inline. A node's output is streamed to a file
// (its artifact, never held in memory) and the inline value, defined by inlineText, is what the
// node_completed event keeps, what chat and the dashboard show, and what later nodes get as
// $node.output and TF_OUTPUT_<NODE>. Because the inline value is recorded and read back from the
// event, a node sees exactly the same upstream outputs before and after a resume.
const InlineLimit = 16 << 10

// envOutputBudget bounds the upstream outputs passed in one shell node's environment. Linux refuses
// to start a process whose arguments and environment exceed a quarter of the stack limit (2 MiB by
// default) with "argument list too long"; a node would only reach this with more than 64 upstream
// nodes printing InlineLimit each, and is then refused with a message instead.
const envOutputBudget = 1 << 20

// NodeOutput is a node's output: its inline value and the file that holds all of it.
type NodeOutput struct {
	Text  string // inline value (inlineText)
	Bytes int64  // size of the full output
	File  string // path of the full output; empty for events recorded before outputs were files
}

// data is o as node events record it.
func (o NodeOutput) data() db.NodeOutputData {
	return db.NodeOutputData{Output: o.Text, OutputBytes: o.Bytes, OutputPath: o.File}
}

// Truncated reports whether Text holds only the beginning of the output.
func (o NodeOutput) Truncated() bool { return o.Bytes > InlineLimit }

// inlineText is the one definition of a node's inline value: the output's first InlineLimit bytes,
// not ending inside a character, as valid UTF-8 without NUL bytes (neither fits an environment
// variable or a PostgreSQL JSON value), with trailing newlines removed as the shell's $(...) does.
func inlineText(head []byte, truncated bool) string {
	if truncated {
		head = cutPartialRune(head)
	}
	s := strings.ToValidUTF8(string(head), "\uFFFD")
	s = strings.ReplaceAll(s, "\x00", "")
	return strings.TrimRight(s, "\r\n")
}

// cutPartialRune drops an incomplete character at the end of b, cut there by InlineLimit.
func cutPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// finish names and closes an attempt's output file once its writer is done, and summarizes it:
// its size and inline value, read through the open descriptor (no second open). It reads at most
// InlineLimit bytes, however large the file.
func (f *outputFile) finish() (NodeOutput, error) {
	st, err := f.Stat()
	var head []byte
	if err == nil {
		head = make([]byte, min(st.Size(), InlineLimit))
		if _, rerr := f.ReadAt(head, 0); rerr != nil && !errors.Is(rerr, io.EOF) {
			err = rerr
		}
	}
	if err := errors.Join(err, f.Close()); err != nil {
		return NodeOutput{}, err
	}
	return NodeOutput{Text: inlineText(head, st.Size() > InlineLimit), Bytes: st.Size(), File: f.Name()}, nil
}

// outputsDir is where a run keeps the output files of its nodes, beside its work directory. It is
// not $ARTIFACTS_DIR, so a node cannot overwrite another node's recorded output by accident.
func outputsDir(run db.Run) string {
	return filepath.Join(filepath.Dir(run.WorkingPath), "outputs")
}

// outputPath is the file of one attempt (or loop iteration) of a node. Node ids are safe file
// names ([a-z0-9][a-z0-9-_]*).
func outputPath(run db.Run, node, label string) string {
	return filepath.Join(outputsDir(run), node+"."+label+".out")
}

// createOutput creates (or truncates) the output file of a node's attempt.
func (e *execution) createOutput(node, label string) (*outputFile, error) {
	f, err := e.outputs.create(outputPath(e.run, node, label))
	if err != nil {
		return nil, outputError(node, err)
	}
	return f, nil
}

// saveOutput writes a node's output that is already in memory (an agent's reply, a gate's note)
// to its file, so every node's output is a file read the same way.
func (e *execution) saveOutput(node, label, text string) (NodeOutput, error) {
	f, err := e.createOutput(node, label)
	if err != nil {
		return NodeOutput{}, err
	}
	_, werr := f.WriteString(text)
	out, err := f.finish()
	if err := errors.Join(werr, err); err != nil {
		return NodeOutput{}, outputError(node, err)
	}
	return out, nil
}

// outputError is a failure to keep a node's output: the disk, not the node, is at fault.
func outputError(node string, err error) *nodeError {
	return &nodeError{class: db.ClassInfra, msg: fmt.Sprintf("cannot keep the output of node %s: %v", node, err),
		hint: "free disk space under THREADFLOW_HOME"}
}

// truncationNote tells a person reading an inline value that it is only the beginning.
func truncationNote(runID, node string, o NodeOutput) string {
	return fmt.Sprintf("… (the first %s of %s; the full output: `bot workflow logs %s %s`, or the run's dashboard page)",
		humanize.IBytes(InlineLimit), humanize.IBytes(uint64(o.Bytes)), runID, node)
}

// OutputRef is where the output of one node's latest attempt is kept.
type OutputRef struct {
	Node    string
	Attempt int
	State   string // completed, failed, or running for a loop between iterations; "" when Partial
	File    string
	Bytes   int64 // as recorded; for a partial output, the file's size when it was looked at
	// Partial says why the file holds only part of what the attempt would have printed ("the node
	// is still running", "the run was cancelled while it ran"); empty for an attempt that ended.
	Partial string
}

// ErrNoOutput is matched by the errors of NodeOutputFile for a node with no output (yet), and for
// a node the run does not have.
var ErrNoOutput = errors.New("no output file")

// OutputFiles returns the output of each node's latest attempt that has one, in the order the nodes
// first appear in the run's events. It is the one answer to "where is a node's output" for the CLI
// and the dashboard: the file an ended attempt recorded in its event, or, for an attempt that never
// recorded its end (it still runs, or the run was cancelled or its worker died while it ran), the
// file it writes as it goes, marked Partial, as far as it got. An attempt that has not opened its
// file yet (agent nodes write theirs when they finish) leaves the node's previous output, if any.
// Only files inside the run's outputs directory are listed: the dashboard serves them, and an event
// must not make it serve anything else.
func OutputFiles(run db.Run, events []db.Event) []OutputRef {
	type latest struct {
		ended *OutputRef // the latest attempt (or loop iteration) that recorded its output
		open  int        // the attempt started after it and not ended; 0 if none
	}
	var order []string
	nodes := map[string]*latest{}
	for _, e := range events {
		if e.NodeID == "" {
			continue
		}
		n := nodes[e.NodeID]
		if n == nil {
			n = &latest{}
			nodes[e.NodeID] = n
			order = append(order, e.NodeID)
		}
		switch e.Type {
		case db.EventNodeStarted:
			n.open = e.Attempt
		case db.EventNodeSkipped:
			n.open = 0
		case db.EventNodeCompleted, db.EventNodeFailed, db.EventLoopIteration:
			if e.Type != db.EventLoopIteration { // an iteration is recorded while its attempt goes on
				n.open = 0
			}
			if ref, ok := recordedOutput(run, e); ok {
				n.ended = &ref
			}
		}
	}
	var refs []OutputRef
	for _, id := range order {
		n := nodes[id]
		if ref, ok := partialOutput(run, id, n.open); ok {
			refs = append(refs, ref)
		} else if n.ended != nil {
			refs = append(refs, *n.ended)
		}
	}
	return refs
}

// recordedOutput is the output an ended attempt or a loop iteration recorded in its event.
func recordedOutput(run db.Run, e db.Event) (OutputRef, bool) {
	var d db.NodeOutputData // node_completed, node_failed and loop_iteration_completed all carry it
	if json.Unmarshal(e.Data, &d) != nil || d.OutputPath == "" || filepath.Dir(d.OutputPath) != outputsDir(run) {
		return OutputRef{}, false
	}
	state := map[db.EventType]string{db.EventNodeCompleted: "completed", db.EventNodeFailed: "failed", db.EventLoopIteration: "running"}[e.Type]
	return OutputRef{Node: e.NodeID, Attempt: e.Attempt, State: state, File: d.OutputPath, Bytes: d.OutputBytes}, true
}

// partialOutput is the file of an attempt that has not recorded its end, if it opened one.
func partialOutput(run db.Run, node string, attempt int) (OutputRef, bool) {
	if attempt == 0 {
		return OutputRef{}, false
	}
	path := outputPath(run, node, attemptLabel(attempt))
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() || filepath.Dir(path) != outputsDir(run) {
		return OutputRef{}, false
	}
	return OutputRef{Node: node, Attempt: attempt, File: path, Bytes: st.Size(), Partial: partialReason(run)}, true
}

// partialReason says, from the run's status, why an attempt that never recorded its end holds
// only part of its output.
func partialReason(run db.Run) string {
	switch run.Status {
	case db.StatusRunning:
		return "the node is still running"
	case db.StatusCancelled:
		return "the run was cancelled while it ran"
	case db.StatusQueued:
		return "the attempt was interrupted; the node runs again when the run continues"
	}
	return "the attempt stopped before it ended (the run is " + string(run.Status) + ")"
}

// OutputMissingError is why NodeOutputFile has no output to give: the run has no node of that
// name, or the node has printed nothing yet. It matches ErrNoOutput.
type OutputMissingError struct {
	RunID   string
	Node    string
	Unknown bool               // the run has no node named Node
	Nodes   []string           // the run's nodes, in file order
	State   workflow.NodeState // the node's state, when the run has it
	Reason  string             // why a node that did not run did not (the fold's reason)
}

func (e *OutputMissingError) Error() string {
	if e.Unknown {
		return fmt.Sprintf("run %s has no node %q; its nodes are %s", e.RunID, e.Node, strings.Join(e.Nodes, ", "))
	}
	if e.State == NodeNotRun {
		return fmt.Sprintf("node %s of run %s has no output: %s", e.Node, e.RunID, e.Reason)
	}
	return fmt.Sprintf("node %s of run %s has no output yet (it is %s)", e.Node, e.RunID, e.State)
}

// Is makes OutputMissingError match ErrNoOutput.
func (e *OutputMissingError) Is(target error) bool { return target == ErrNoOutput }

// NodeOutputFile returns the output of a node's latest attempt (OutputFiles), or an
// *OutputMissingError saying whether the run has no such node or the node no output yet.
func NodeOutputFile(run db.Run, events []db.Event, node string) (OutputRef, error) {
	for _, ref := range OutputFiles(run, events) {
		if ref.Node == node {
			return ref, nil
		}
	}
	missing := &OutputMissingError{RunID: run.ID, Node: node, Unknown: true}
	for _, s := range RunNodes(run, events) {
		missing.Nodes = append(missing.Nodes, s.ID)
		if s.ID == node {
			missing.Unknown, missing.State, missing.Reason = false, workflow.NodeState(s.State), s.Reason
		}
	}
	return OutputRef{}, missing
}
