// Package orchestrator turns chat into runs and runs into results. Its Dispatcher handles every
// inbound message the same for every platform (commands, the resume gate, gate answers, assistant
// turns); its workers claim queued runs and the executor drives each through its workflow's nodes,
// recording every step as a run event; the rescuer requeues runs whose worker stopped; the Reporter
// keeps each run's live status message and gate questions up to date. Every state change is one
// compare-and-set of the db.Store, so two replicas never both win a transition.
package orchestrator
