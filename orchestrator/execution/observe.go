package execution

import (
	"time"

	"threadflow/db"
)

// Observer receives the orchestrator's measurements. Package metrics implements it for Prometheus;
// the orchestrator itself stays free of any metrics library.
type Observer interface {
	// RunStopped counts a run reaching a status where it stops: completed, failed, paused or cancelled.
	RunStopped(workflow string, status db.Status)
	// NodeFinished records how long one node attempt took and how it ended.
	NodeFinished(workflow, state string, d time.Duration)
	// Dispatched records how long handling one inbound message took, by what it was.
	Dispatched(kind string, d time.Duration)
	// Rescued counts runs re-queued (or failed) after their lease expired.
	Rescued(n int)
	// Retried counts node attempts retried within their budget.
	Retried(workflow string)
	// SendFailed counts messages a platform did not accept.
	SendFailed(platform string)
	// OutboxFailed counts a message a run owed that was given up on (failed in the outbox), by kind.
	OutboxFailed(kind string)
	// AgentTurn counts one agent turn of a run of workflow and what it used (agent_usage).
	AgentTurn(workflow string, u db.AgentUsageData)
}

// nopObserver is used when no Observer is configured.
type nopObserver struct{}

func (nopObserver) RunStopped(string, db.Status)               {}
func (nopObserver) NodeFinished(string, string, time.Duration) {}
func (nopObserver) Dispatched(string, time.Duration)           {}
func (nopObserver) Rescued(int)                                {}
func (nopObserver) Retried(string)                             {}
func (nopObserver) SendFailed(string)                          {}
func (nopObserver) OutboxFailed(string)                        {}
func (nopObserver) AgentTurn(string, db.AgentUsageData)        {}

// ObserverOr is o, or an Observer that ignores everything when o is nil (Observer is optional
// everywhere).
func ObserverOr(o Observer) Observer {
	if o == nil {
		return nopObserver{}
	}
	return o
}
