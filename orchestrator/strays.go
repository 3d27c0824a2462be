package orchestrator

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"
)

// runMarkerEnv tags every process a node starts with its run. A shell node's sh dies with the bot
// (Pdeathsig), but what the script started does not: after a crash, `npm test` or `sleep 600` run on
// as orphans while a new attempt of the same node starts. The marker lets the worker that takes the
// run over find them in /proc and stop them first. Only processes on this host can be found; a
// replica on another host cannot reach them (docs/design-notes.md).
const runMarkerEnv = "THREADFLOW_RUN_ID"

// runMarker is the environment entry tagging a run's processes.
func runMarker(runID string) string { return runMarkerEnv + "=" + runID }

// strayScanTTL is how long one scan of /proc serves the takeovers that follow it. After a crash
// with 1,000 runs in flight, one scan (tens of milliseconds with 2,000 processes) serves them all
// instead of one scan each, which took recovery from 3 s to 37 s (BENCHMARKS.md). Strays exist
// from before the takeover, so a scan made since the restart holds them.
const strayScanTTL = time.Second

// Strays finds and stops the processes a run's earlier attempts left on this host. It is safe for
// concurrent use; the zero value is ready.
type Strays struct {
	mu      sync.Mutex
	scanned time.Time
	byRun   map[string][]int // run id -> processes tagged with it, as of scanned
}

// Kill kills the processes on this host tagged with runID, and their process groups, and returns
// how many it killed. Call it before a node that had started runs again, while no process of the
// run belongs to this worker. Each candidate's tag is read again just before the kill, so a process
// id reused since the scan is never hit.
func (s *Strays) Kill(runID string, log *zap.Logger) int {
	marker := []byte(runMarker(runID))
	killed := 0
	for _, pid := range s.take(runID) {
		if !tagged(pid, marker) {
			continue
		}
		if pgid, err := syscall.Getpgid(pid); err == nil && pgid > 1 && pgid != syscall.Getpgrp() {
			_ = syscall.Kill(-pgid, syscall.SIGKILL) // what the stray started in its group
		}
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed++
			log.Warn("orchestrator.stray_process_killed", zap.Int("pid", pid))
		}
	}
	return killed
}

// take returns the processes tagged with runID, scanning /proc when the last scan is too old,
// and forgets them: they are being killed.
func (s *Strays) take(runID string) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byRun == nil || time.Since(s.scanned) > strayScanTTL {
		s.byRun, s.scanned = scanTagged(), time.Now()
	}
	pids := s.byRun[runID]
	delete(s.byRun, runID)
	return pids
}

// scanTagged maps run ids to the live processes (other than this one) tagged with them.
func scanTagged() map[string][]int {
	byRun := map[string][]int{}
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return byRun
	}
	self := os.Getpid()
	prefix := []byte(runMarkerEnv + "=")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
		if err != nil { // gone, or another user's
			continue
		}
		if run, ok := envValue(env, prefix); ok && !zombie(pid) {
			byRun[run] = append(byRun[run], pid)
		}
	}
	return byRun
}

// tagged reports whether pid is alive and its environment holds exactly marker.
func tagged(pid int, marker []byte) bool {
	env, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	if err != nil || zombie(pid) {
		return false
	}
	for entry := range bytes.SplitSeq(env, []byte{0}) {
		if bytes.Equal(entry, marker) {
			return true
		}
	}
	return false
}

// envValue returns the value of the entry that starts with prefix ("NAME=") in the NUL-separated
// environment block env.
func envValue(env, prefix []byte) (string, bool) {
	for entry := range bytes.SplitSeq(env, []byte{0}) {
		if v, ok := bytes.CutPrefix(entry, prefix); ok {
			return string(v), true
		}
	}
	return "", false
}

// zombie reports whether the process is gone or has exited and only awaits reaping (state Z or X in
// /proc/PID/stat).
func zombie(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	// The state follows the command name, which is in parentheses and may itself contain ") ".
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return true
	}
	return stat[i+2] == 'Z' || stat[i+2] == 'X'
}
