package db

// Reach is which runs a process can report on, and so which queued runs it claims and whose gate
// timers it fires (docs/state-machine.md, "Who executes a run"). A run is in reach when it matches
// any of the three lists. The zero Reach is every run.
type Reach struct {
	// Platforms: runs whose conversation is on one of these platforms. A server passes the chats it
	// is connected to (slack, discord, web).
	Platforms []string
	// Conversations: runs of these conversations. A terminal passes the conversations it is attached
	// to (AttachTerminal), so it executes its own runs and no one else's.
	Conversations []string
	// Unattended: runs on one of these platforms whose conversation no terminal is attached to now
	// (no live AttachTerminal). A server passes the terminal's platform, so a run started from a
	// terminal that is gone still has an executor.
	Unattended []string

	// Home and Remote say which workspaces the process reaches; they narrow claims only (not gate
	// timers). A queued run is claimed only when its workspace is not made yet, lives in Home, can
	// be recreated from Remote (the run's workspace_remote equals it), or lives in a home that no
	// live process announces any more (the run then learns its workspace is lost). An empty Home
	// claims regardless of workspaces.
	Home   string
	Remote string
}

// Every reports whether r is the zero Reach: every run.
func (r Reach) Every() bool {
	return len(r.Platforms) == 0 && len(r.Conversations) == 0 && len(r.Unattended) == 0
}
