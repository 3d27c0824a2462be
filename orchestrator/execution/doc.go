// Package execution runs workflows: Workers claim queued runs under a lease and the Executor drives
// each through its frozen workflow's nodes (shell, prompt, approval, loop), recording every step as
// a run event before acting on it. It also holds what is read back from those events (Fold,
// RunNodes, OutputFiles, Artifacts) and the run's working directory (Dirs).
//
// What it promises:
//
//   - A node runs only after its node_started is durable, and a dependent only after its
//     upstream's node_completed is: a crash never loses a node that ran, and any worker continues
//     where another stopped (Fold of the events is the whole state). A shell node's process may
//     start before, but its script waits for the commit (startGate).
//   - Execute returns nil only after the run's stop (completed, failed, paused at a gate or for
//     recovery) is written and said once to the Notifier; it returns an error when the execution was
//     interrupted (lease lost, shutdown, abandon, the database failing), and then the run stays
//     running until its lease is handed back or expires.
//   - While it runs, the Notifier hears NoticeProgress at most every progressEvery and NoticeNote
//     for what a person should know (a retry, a lost session, a workspace made afresh).
//   - Workers renew every lease they hold every third of LeaseTTL, stop a run whose lease is lost at
//     once, and hand unfinished runs back at shutdown after Grace.
//
// What it needs: a Store (the run store's compare-and-sets under a lease), Providers for prompt
// nodes, a Notifier (package reporting renders notices for chat), optionally an Observer, a
// Reacher (package maintenance's Presence) saying which runs this process may claim, and Dirs and a
// DiskGuard for THREADFLOW_HOME. It writes its notices as conversation.Text but knows nothing of
// where they are posted, of commands, or of the background loops: the layer test
// (cmd/bot/layout_test.go) keeps it from importing the packages that use it.
package execution
