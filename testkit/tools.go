package testkit

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// ToolsDir is where .ci/run installs the pinned AI CLIs (claude, codex) and Bun, outside the PATH
// of a developer's shell.
const ToolsDir = "/opt/threadflow-ai/bin"

// LookPath is exec.LookPath that also finds the programs .ci/run installs in ToolsDir.
func LookPath(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err == nil {
		return p, nil
	}
	if p, err2 := exec.LookPath(filepath.Join(ToolsDir, name)); err2 == nil {
		return p, nil
	}
	return "", err
}

// Tool returns the path of a program a test runs (bun, node, python3, claude, codex), found by
// LookPath; a missing one is Missing: the test skips, or fails on CI.
func Tool(t testing.TB, name string) string {
	t.Helper()
	p, err := LookPath(name)
	if err != nil {
		Missing(t, "%s is not installed (.ci/run installs the AI CLIs and Bun under %s)", name, ToolsDir)
	}
	return p
}
