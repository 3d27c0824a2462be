package execution

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"threadflow/testkit"
)

// A process that writes more to standard error than a pipe holds is not held up by it, and its
// failure quotes the last stderrTail bytes, as os/exec's copying goroutine did.
func TestProcessErrorKeepsTheTailOfALongStandardError(t *testing.T) {
	t.Parallel()
	dir, out := processOutput(t)
	script := `i=0; while [ $i -lt 3000 ]; do echo "line $i of what went wrong" >&2; i=$((i+1)); done; echo printed; echo the-last-line >&2; exit 3`
	err := runProcess(context.Background(), dir, []string{"sh", "-c", script}, nil, out)
	var ne *nodeError
	if !errors.As(err, &ne) || !ne.exited {
		t.Fatalf("runProcess = %v; want the exit status of the script", err)
	}
	if !strings.HasPrefix(ne.msg, "exit status 3: ") || !strings.HasSuffix(ne.msg, "the-last-line") {
		t.Errorf("error = %.80q…%q; want the exit status and the end of standard error", ne.msg, ne.msg[max(0, len(ne.msg)-40):])
	}
	if len(ne.msg) > stderrTail+len("exit status 3: ") {
		t.Errorf("error holds %d bytes; want at most the last %d of standard error", len(ne.msg), stderrTail)
	}
	if b, _ := os.ReadFile(out.Name()); string(b) != "printed\n" {
		t.Errorf("standard output = %q; want what the script printed", b)
	}
}

// A script stopped by a signal says which one, and is not an exit status: "exit status -1" told
// nobody what happened, and a killed until_bash check must not read as a check that said no.
func TestProcessKilledByASignalSaysWhichOne(t *testing.T) {
	t.Parallel()
	dir, out := processOutput(t)
	err := runProcess(context.Background(), dir, []string{"sh", "-c", "echo dying >&2; kill -KILL $$"}, nil, out)
	var ne *nodeError
	if !errors.As(err, &ne) || ne.exited || ne.msg != "killed by signal SIGKILL: dying" {
		t.Fatalf("runProcess = %#v; want killed by signal SIGKILL with the standard error, not an exit status", err)
	}
}

// Cancelling kills the whole process group, so the wait ends even though a child of the script
// still held standard error open.
func TestCancelledProcessEndsWithItsChildren(t *testing.T) {
	t.Parallel()
	dir, out := processOutput(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runProcess(ctx, dir, []string{"sh", "-c", "sleep 600 & echo started; wait"}, nil, out) }()
	testkit.Eventually(t, "the script to start", func() bool {
		b, _ := os.ReadFile(out.Name())
		return string(b) == "started\n"
	})
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("runProcess = %v; want the cancellation", err)
	}
}

// processOutput is a work directory and an output file in it, created directly (no spares), for a
// process the test runs; the file is closed when the test ends.
func processOutput(t *testing.T) (dir string, out *outputFile) {
	t.Helper()
	dir = t.TempDir()
	out, err := (*outputFiles)(nil).create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = out.Close() })
	return dir, out
}

// A shell node's process starts while its node_started is being written, but its script waits for
// the write (startGate): when the write fails, not a line of the script runs, the shell is gone
// when runShell returns, and the write's error is what it returns. Both shells a node can name.
func TestGatedScriptNeverRunsWhenItsStartIsNotRecorded(t *testing.T) {
	t.Parallel()
	for _, shell := range []string{"", "bash"} {
		dir, out := processOutput(t)
		started := make(chan error) // unbuffered: the refusal is taken only once the shell has started
		refused := errors.New("refused by the test")
		go func() { started <- refused }()
		err := runShell(context.Background(), dir, shell, "echo ran; touch ran", nil, out, &startGate{started: started})
		if !errors.Is(err, refused) {
			t.Errorf("%q: runShell = %v; want the write's refusal", shell, err)
		}
		if b, _ := os.ReadFile(out.Name()); len(b) != 0 {
			t.Errorf("%q: the script printed %q although its start was refused", shell, b)
		}
		if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
			t.Errorf("%q: the script ran although its start was refused", shell)
		}
	}
}

// Once the write is durable the script runs as it would without the gate: the gate's descriptor is
// closed before the first line, and the shell's messages count the script's lines as its own.
func TestGatedScriptRunsAsWritten(t *testing.T) {
	t.Parallel()
	for _, shell := range []string{"", "bash"} {
		dir, out := processOutput(t)
		started := make(chan error, 1)
		started <- nil
		script := "if [ -e /proc/self/fd/3 ]; then echo fd3-open; else echo fd3-closed; fi; echo \"args $#\"\nno_such_command_tf"
		err := runShell(context.Background(), dir, shell, script, nil, out, &startGate{started: started})
		var ne *nodeError
		if !errors.As(err, &ne) || !ne.exited || !strings.Contains(ne.msg, "2: no_such_command_tf") {
			t.Errorf("%q: runShell = %v; want the missing command reported on the script's line 2", shell, err)
		}
		if b, _ := os.ReadFile(out.Name()); string(b) != "fd3-closed\nargs 0\n" {
			t.Errorf("%q: the script printed %q; want the gate's descriptor closed and no arguments", shell, b)
		}
	}
}
