package orchestrator

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

// readOutput summarizes the output file at path: its size and inline value. It reads at most
// InlineLimit bytes, however large the file.
func readOutput(path string) (NodeOutput, error) {
	f, err := os.Open(path)
	if err != nil {
		return NodeOutput{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return NodeOutput{}, err
	}
	head := make([]byte, min(st.Size(), InlineLimit))
	if _, err := io.ReadFull(f, head); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return NodeOutput{}, err
	}
	return NodeOutput{Text: inlineText(head, st.Size() > InlineLimit), Bytes: st.Size(), File: path}, nil
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
func (e *execution) createOutput(node, label string) (*os.File, error) {
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
	if err := errors.Join(werr, f.Close()); err != nil {
		return NodeOutput{}, outputError(node, err)
	}
	out, err := readOutput(f.Name())
	if err != nil {
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
	State   string // completed, failed, or running for a loop between iterations
	File    string
	Bytes   int64
}

// ErrNoOutput is returned by NodeOutputFile for a node with no output file (yet).
var ErrNoOutput = errors.New("no output file")

// OutputFiles returns the output file of each node's latest attempt that has one, in the order
// the nodes first appear in the run's events. Only files inside the run's outputs directory are
// listed: the dashboard serves them, and an event must not make it serve anything else.
func OutputFiles(run db.Run, events []db.Event) []OutputRef {
	var refs []OutputRef
	at := map[string]int{}
	for _, e := range events {
		state := ""
		switch e.Type {
		case db.EventNodeCompleted:
			state = "completed"
		case db.EventNodeFailed:
			state = "failed"
		case db.EventLoopIteration:
			state = "running"
		default:
			continue
		}
		var d db.NodeData
		if json.Unmarshal(e.Data, &d) != nil || d.OutputPath == "" || filepath.Dir(d.OutputPath) != outputsDir(run) {
			continue
		}
		ref := OutputRef{Node: e.NodeID, Attempt: e.Attempt, State: state, File: d.OutputPath, Bytes: d.OutputBytes}
		if i, ok := at[e.NodeID]; ok {
			refs[i] = ref
			continue
		}
		at[e.NodeID] = len(refs)
		refs = append(refs, ref)
	}
	return refs
}

// NodeOutputFile returns the output file of a node's latest attempt, or ErrNoOutput.
func NodeOutputFile(run db.Run, events []db.Event, node string) (OutputRef, error) {
	for _, ref := range OutputFiles(run, events) {
		if ref.Node == node {
			return ref, nil
		}
	}
	return OutputRef{}, fmt.Errorf("node %s of run %s: %w", node, run.ID, ErrNoOutput)
}
