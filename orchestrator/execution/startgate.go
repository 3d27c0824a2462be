package execution

import (
	"os"

	"threadflow/db"
)

// startGate is an attempt's node_started on its way to the database (commitGroup: it commits with
// the completion that let the node start). Nothing of the attempt runs before it is durable: a
// crash never loses a node that ran. A shell node's process is nevertheless started while the
// write is in flight, its script held back by the gate: the shell first waits for one line on a
// pipe (gatedScript), which it gets only once the write committed; when the write fails it gets
// end of file and exits without running a line of the script. Starting a shell (fork, exec, the
// dynamic loader) took as long as the commit, and they now overlap instead of following each
// other: a chain of shell nodes pays for the longer of the two per node, not their sum
// (BENCHMARKS.md, issue 34, sixth session).
type startGate struct {
	started <-chan error
	waited  bool
	err     error
}

// wait returns the write's result, waiting for it the first time. Only the attempt's goroutine
// calls it.
func (g *startGate) wait() error {
	if !g.waited {
		g.err, g.waited = <-g.started, true
	}
	return g.err
}

// gateFD is the descriptor on which a gated shell reads the go-ahead: the first after standard
// error (os/exec's ExtraFiles).
const gateFD = "3"

// gatedScript is script behind the gate: the shell reads one line from gateFD, exits on end of
// file, closes the descriptor and runs the script, unchanged. It is one line with the script's
// first, so line numbers in the shell's messages ("sh: 1: ...") stay the script's own.
func gatedScript(script string) string {
	return "read -r _ <&" + gateFD + " || exit 125; exec " + gateFD + "<&-; " + script
}

// open passes the go-ahead (one line) or, when the write failed, end of file, and closes the
// pipe. A shell that already exited (the script's first line did not parse) leaves the line unread
// in the pipe, whose read end this process still holds; its exit is reported as it is.
func (g *startGate) open(w *os.File) error {
	defer w.Close()
	if err := g.wait(); err != nil {
		return err
	}
	if _, err := w.Write([]byte{'\n'}); err != nil { // the shell would read end of file and exit 125
		return &nodeError{class: db.ClassInfra, msg: "cannot let the script start: " + err.Error(), hint: "check the bot's open file limit and memory, then resume the run"}
	}
	return nil
}
