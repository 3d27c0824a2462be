package execution

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"threadflow/db"
	"threadflow/workflow"
)

// runtimeProgram is the program each script runtime runs with, and the file extension its code is
// written with (bun runs TypeScript by its extension; node reads .mjs as an ES module, so `import`
// works as it does in bun).
var runtimeProgram = map[workflow.Runtime]struct{ bin, ext string }{
	workflow.RuntimeBun:    {"bun", ".ts"},
	workflow.RuntimeNode:   {"node", ".mjs"},
	workflow.RuntimePython: {"python3", ".py"},
	workflow.RuntimeUV:     {"uv", ".py"},
}

// runtimeHints say how to install each program on the bot host.
var runtimeHints = map[string]string{
	"bun":     "install Bun on the bot host (npm install --global @oven/bun-linux-x64, or https://bun.sh) and put `bun` on the bot's PATH",
	"node":    "install Node.js on the bot host and put `node` on the bot's PATH",
	"python3": "install Python 3 on the bot host and put `python3` on the bot's PATH",
	"uv":      "install uv on the bot host (https://docs.astral.sh/uv/) and put `uv` on the bot's PATH, or declare no packages so python3 runs the script",
}

// runScript runs a script node like a bash node: its code in a file beside the run's outputs (not
// in the working directory, where it would be committed with the run's work), started in the
// working directory with the same environment and its standard output as the node's output.
func (e *execution) runScript(ctx context.Context, n *workflow.Node, v workflow.Vars) (NodeOutput, error) {
	env, err := shellEnv(n, v)
	if err != nil {
		return NodeOutput{}, err
	}
	label := attemptLabel(v.Attempt)
	code := filepath.Join(outputsDir(e.run), n.ID+"."+label+".script"+runtimeProgram[n.Script.Runtime].ext)
	argv, err := scriptCommand(n, code, e.x.lookPath)
	if err != nil {
		return NodeOutput{}, err
	}
	f, err := e.createOutput(n.ID, label)
	if err != nil {
		return NodeOutput{}, err
	}
	if err := os.WriteFile(code, []byte(n.Script.Code), 0o600); err != nil {
		// The node fails for the script file; the output file holds nothing yet.
		return NodeOutput{}, outputError(n.ID, errors.Join(err, f.Close()))
	}
	return e.finishProcess(n, f, runProcess(ctx, e.run.WorkingPath, argv, append(env, runMarker(e.run.ID)), f))
}

// scriptCommand is the command line that runs a script node's code file, with each program found
// by look. A missing program is an infrastructure failure naming it and how to install it: the run
// waits for a person (see missingRuntime). Without uv, a uv script that declares no packages runs
// with python3, which is all uv would run it with; one that declares packages needs uv.
func scriptCommand(n *workflow.Node, file string, look func(string) (string, error)) ([]string, error) {
	s := n.Script
	prog := runtimeProgram[s.Runtime].bin
	bin, err := look(prog)
	if err == nil && s.Runtime == workflow.RuntimeUV {
		argv := []string{bin, "run", "--quiet", "--no-project"}
		for _, p := range s.Packages {
			argv = append(argv, "--with", p)
		}
		return append(argv, file), nil
	}
	if err == nil {
		return []string{bin, file}, nil
	}
	if s.Runtime == workflow.RuntimeUV && !s.NeedsPackages() {
		if py, perr := look("python3"); perr == nil {
			return []string{py, file}, nil
		}
		prog = "python3"
	}
	msg := fmt.Sprintf("node %s needs `%s` (runtime: %s), which is not installed on this host", n.ID, prog, s.Runtime)
	if prog == "uv" {
		msg = fmt.Sprintf("node %s declares Python packages, which need `uv` (runtime: uv), and uv is not installed on this host", n.ID)
	}
	return nil, &nodeError{class: db.ClassInfra, msg: msg, hint: runtimeHints[prog]}
}

// missingRuntime finds the first script node still to run whose runtime is not installed, before
// any node runs: a run that needs Bun pauses saying so at once, not after an hour of work that
// precedes the script node (an infrastructure failure after progress fails the run instead).
func (e *execution) missingRuntime() (*workflow.Node, error) {
	for _, n := range e.wf.Nodes {
		if n.Script == nil || e.hist[n.ID].state == workflow.StateCompleted || e.hist[n.ID].state == workflow.StateSkipped {
			continue
		}
		if _, err := scriptCommand(n, "", e.x.lookPath); err != nil {
			return n, err
		}
	}
	return nil, nil
}

// lookPath finds a program a script runs with: Executor.LookPath, or exec.LookPath on the bot's PATH.
func (x *Executor) lookPath(file string) (string, error) {
	if x.LookPath != nil {
		return x.LookPath(file)
	}
	return exec.LookPath(file)
}

// finishProcess reads what a bash or script node's process printed to f, once it ended with runErr.
func (e *execution) finishProcess(n *workflow.Node, f *outputFile, runErr error) (NodeOutput, error) {
	out, err := f.finish()
	if runErr != nil {
		return out, runErr
	}
	if err != nil {
		return NodeOutput{}, outputError(n.ID, err)
	}
	return out, nil
}

// programName is how messages name the program of argv.
func programName(argv []string) string { return strings.TrimSuffix(filepath.Base(argv[0]), ".exe") }
