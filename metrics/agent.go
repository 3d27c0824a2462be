package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"threadflow/db"
)

// agentCounters count agent turns and what they used, by provider, model and workflow: each replica
// counts the turns it ran, and Prometheus sums the replicas (sum by (workflow) ...).
type agentCounters struct {
	turns, unknown, tokens, cost *prometheus.CounterVec
}

var agentLabels = []string{"provider", "model", "workflow"}

func newAgentCounters() agentCounters {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: name, Help: help}, append(agentLabels, labels...))
	}
	return agentCounters{
		turns:   counter("agent_turns_total", "Agent turns (prompt node turns, loop iterations), by provider, model and workflow."),
		unknown: counter("agent_turns_cost_unknown_total", "Agent turns whose cost is not known: the CLI reported no usage, or tokens of a model the price table does not list."),
		tokens:  counter("agent_tokens_total", "Tokens of agent turns, by kind: input (not cached), output, cache_read, cache_write.", "kind"),
		cost: counter("agent_cost_usd_total", "What agent turns cost in US dollars, as the CLI reported it or estimated from the price table "+
			"(AGENT_PRICES_FILE); turns of unknown cost add nothing."),
	}
}

// AgentTurn counts one agent turn of a run of workflow and what it used.
func (m *Metrics) AgentTurn(workflow string, u db.AgentUsageData) {
	model := u.Model
	if model == "" {
		model = "unknown"
	}
	labels := prometheus.Labels{"provider": u.Provider, "model": model, "workflow": workflow}
	m.agent.turns.With(labels).Inc()
	if u.CostNanos == nil {
		m.agent.unknown.With(labels).Inc()
	} else {
		m.agent.cost.With(labels).Add(db.USD(*u.CostNanos))
	}
	for kind, n := range map[string]int64{"input": u.InputTokens, "output": u.OutputTokens, "cache_read": u.CacheReadTokens, "cache_write": u.CacheWriteTokens} {
		m.agent.tokens.MustCurryWith(labels).WithLabelValues(kind).Add(float64(n))
	}
}
