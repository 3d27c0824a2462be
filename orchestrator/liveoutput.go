package orchestrator

import "threadflow/db"

// RunningOutputFile is the file the given attempt of a node writes its output to while it runs,
// for live views: a bash node streams into it, so it grows as the node prints. It may not exist
// yet (the attempt has not opened it) or ever (agent nodes write theirs when they finish).
func RunningOutputFile(run db.Run, node string, attempt int) string {
	return outputPath(run, node, attemptLabel(attempt))
}
