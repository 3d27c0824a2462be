// Package orchestrator wires the orchestrator's rooms into one Engine (New, Engine.Run): chat comes
// in through dispatch, runs execute in execution, reporting tells chat about them, and the
// background loops of maintenance rescue expired leases, fire gate timers and keep this process's
// presence. Each room is a package of its own, with its contract in its doc.go; this package holds
// only what joins them (Config, Store, Engine). Every state change is one compare-and-set of the
// db.Store, so two replicas never both win a transition.
package orchestrator
