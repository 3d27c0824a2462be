// Package maintenance holds the orchestrator's background loops, each safe to run on every replica
// at once because the store decides each change with one compare-and-set:
//
//   - the Rescuer re-queues runs whose lease expired (their worker died), failing a run once it
//     used up MAX_RECOVERIES;
//   - GateTimers fires the timeouts and reminders of approval gates and says so in the run's thread;
//   - Presence decides which runs this process executes and fires the timers of (db.Reach: the
//     chats it is connected to, the terminal conversations it attached to), keeps a terminal's
//     attachments alive, and announces the THREADFLOW_HOME it holds workspaces in.
//
// It needs a Store, an execution.Notifier and a reporting.Reporter to tell chat what it did.
package maintenance
