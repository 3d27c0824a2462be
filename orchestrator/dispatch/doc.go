// Package dispatch handles every inbound chat message the same for every platform: the Dispatcher
// (a conversation.Handler) turns it into a command (run, resume, abandon, cancel, approve, reject,
// status, list, reset), an answer to the gate of the run waiting in that thread, or an assistant
// turn. It never executes a run itself: it creates, resumes, answers or cancels runs with one store
// compare-and-set each and wakes the workers, so the resume gate and the state machine are enforced
// in one place.
//
// Also here: FindRun (the one rule for the run a typed id or prefix names), autocomplete for
// platforms that offer it, and Auth (who may use the bot, who is an admin, and what one person may
// answer at a gate: Auth.GateOffer).
//
// It needs a Store, the workflow Catalogs, the RunWorkers to wake, and a reporting.Reporter to
// answer through.
package dispatch
