// Package reporting tells chat about runs. The Reporter is the execution.Notifier every platform
// shares: each run gets a root message that opens its thread, one live status message in it
// (edited, debounced), and a message for each gate, failure and completion, sent through the
// conversation.Outbox of the run's platform. Which messages to edit is recorded with the run
// (db.MessageRef), so any replica, also after a restart, edits the same ones.
//
// It also holds the texts that describe runs and gates, so chat, the terminal and the dashboard
// say the same thing: a run's timeline (RunTimeline), its state for people (DisplayState), gate
// questions, decisions, reminders and refusals (gatetext.go), and what one person may answer at a
// gate (GateOffer).
//
// It needs a Store (the run's events and message refs) and the Outboxes; it imports execution for
// the notices and node states it renders, and nothing of dispatch or the background loops.
package reporting
