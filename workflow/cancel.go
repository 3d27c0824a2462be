package workflow

// KindCancel ends the run as cancelled, with CancelReason as the reason shown in its thread and
// status (Archon's `cancel: "reason"` node): an intended stop, not a failure. Nodes still running
// are stopped, and child runs are cancelled with it. It comes from Archon's files (docs/archon.md).
const KindCancel Kind = "cancel"
