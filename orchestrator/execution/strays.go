package execution

import (
	"sync"
	"time"

	"go.uber.org/zap"

	"threadflow/proctag"
)

// runMarkerEnv tags every process a node starts with its run (package proctag). A shell node's sh
// dies with the bot (Pdeathsig), but what the script started does not: after a crash, `npm test`
// or `sleep 600` run on as orphans while a new attempt of the same node starts. The marker lets the
// worker that takes the run over find them in /proc and stop them first. Only processes on this
// host can be found; a replica on another host cannot reach them (docs/design-notes.md).
const runMarkerEnv = proctag.RunEnv

// runMarker is the environment entry tagging a run's processes.
func runMarker(runID string) string { return proctag.Entry(runMarkerEnv, runID) }

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
	killed := proctag.Kill(s.take(runID), runMarker(runID))
	for _, pid := range killed {
		log.Warn("orchestrator.stray_process_killed", zap.Int("pid", pid))
	}
	return len(killed)
}

// take returns the processes tagged with runID, scanning /proc when the last scan is too old,
// and forgets them: they are being killed.
func (s *Strays) take(runID string) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byRun == nil || time.Since(s.scanned) > strayScanTTL {
		s.byRun, s.scanned = proctag.Scan(runMarkerEnv), time.Now()
	}
	pids := s.byRun[runID]
	delete(s.byRun, runID)
	return pids
}
