package execution

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
)

// startTagged starts `sleep 600` in its own process group with the marker of runID.
func startTagged(t *testing.T, runID string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	cmd.Env = []string{"PATH=/usr/bin:/bin", runMarker(runID)}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

func TestStraysKillOnlyTheRunsProcesses(t *testing.T) {
	t.Parallel()
	stray := startTagged(t, "r1stray0001")
	other := startTagged(t, "r1stray00012") // another run whose id merely starts the same way
	var s Strays
	if n := s.Kill("r1stray0001", zaptest.NewLogger(t)); n != 1 {
		t.Fatalf("Kill found %d processes, want 1", n)
	}
	if err := stray.Wait(); err == nil {
		t.Fatal("the stray exited normally; want it killed")
	}
	if err := other.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the other run's process was touched: %v", err)
	}
	if n := s.Kill("r1stray0001", zaptest.NewLogger(t)); n != 0 {
		t.Fatalf("a second Kill found %d processes, want none", n)
	}
	if n := s.Kill("r1stray00012", zaptest.NewLogger(t)); n != 1 { // served by the same scan
		t.Fatalf("Kill of the other run found %d processes, want 1", n)
	}
}

// A process id found by a scan and reused since by an untagged process is left alone.
func TestStraysRecheckTheTagBeforeKilling(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("sleep", "600")
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	s := Strays{byRun: map[string][]int{"r1reused01": {cmd.Process.Pid}}}
	s.scanned = time.Now()
	if n := s.Kill("r1reused01", zaptest.NewLogger(t)); n != 0 {
		t.Fatalf("Kill killed %d processes whose tag no longer matches", n)
	}
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the untagged process was killed: %v", err)
	}
}
