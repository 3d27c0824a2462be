// Package metrics owns Threadflow's Prometheus measurements: it implements execution.Observer
// with collectors on its own registry (never the global one, so tests and several bots in one
// process do not collide), counts inbound duplicates the adapters drop, and computes the gauges
// that describe the database (active leases, gates waiting and their age) from the store at scrape
// time, so every replica reports the same truth instead of a counter that drifts.
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"

	"threadflow/db"
	"threadflow/orchestrator/execution"
)

// namespace prefixes every series: threadflow_runs_total and so on.
const namespace = "threadflow"

// Buckets of the histograms, in seconds. Nodes range from a shell `true` to an agent working for
// an hour; dispatching a message is a few database round trips.
var (
	nodeBuckets     = []float64{0.05, 0.25, 1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600}
	dispatchBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10}
)

// Metrics holds the collectors. It is safe for concurrent use.
type Metrics struct {
	reg              *prometheus.Registry
	runs             *prometheus.CounterVec
	nodes            *prometheus.HistogramVec
	dispatch         *prometheus.HistogramVec
	rescues          prometheus.Counter
	retries          *prometheus.CounterVec
	sendFailed       *prometheus.CounterVec
	outboxFailed     *prometheus.CounterVec
	transcriptFailed *prometheus.CounterVec
	duplicates       *prometheus.CounterVec
	triggerFires     *prometheus.CounterVec
	triggerSkips     *prometheus.CounterVec
	triggerRefusals  *prometheus.CounterVec
	agent            agentCounters
}

var _ execution.Observer = (*Metrics)(nil)

// New registers every collector on a fresh registry. st backs the scrape-time gauges; now is the
// clock lease expiry and gate age are measured with (nil means time.Now).
func New(st Store, log *zap.Logger, now func() time.Time) *Metrics {
	if now == nil {
		now = time.Now
	}
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "runs_total",
			Help: "Runs that stopped, by workflow and the state they stopped in (completed, failed, paused, cancelled)."},
			[]string{"workflow", "state"}),
		nodes: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: "node_duration_seconds",
			Help: "How long one node attempt took, by workflow and how it ended.", Buckets: nodeBuckets},
			[]string{"workflow", "state"}),
		dispatch: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: "dispatch_duration_seconds",
			Help: "How long handling one inbound message took, by kind (command, gate_answer, assistant, ignored).", Buckets: dispatchBuckets},
			[]string{"kind"}),
		rescues: prometheus.NewCounter(prometheus.CounterOpts{Namespace: namespace, Name: "rescues_total",
			Help: "Runs re-queued or failed by the rescuer after their lease expired."}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "retries_total",
			Help: "Node attempts retried within their budget, by workflow."}, []string{"workflow"}),
		sendFailed: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "send_failures_total",
			Help: "Messages a chat platform did not accept, by platform."}, []string{"platform"}),
		outboxFailed: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "outbox_failed_total",
			Help: "Messages a run owed that were given up on after their bounded retries, or refused by the platform, by kind."}, []string{"kind"}),
		transcriptFailed: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "transcript_write_failures_total",
			Help: "Messages posted on a platform but not recorded in the conversation transcript, by platform."}, []string{"platform"}),
		duplicates: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "inbound_duplicates_dropped_total",
			Help: "Inbound platform events dropped because they were already handled, by platform."}, []string{"platform"}),
		triggerFires: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "trigger_fires_total",
			Help: "Fires of triggers this process recorded, by trigger (workflow/name), kind and outcome (started, skipped, waiting, refused)."},
			[]string{"trigger", "kind", "outcome"}),
		triggerSkips: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "trigger_skips_total",
			Help: "Fires of triggers that started no run, by trigger and reason (overlap, already_waiting, missed, group_busy)."},
			[]string{"trigger", "reason"}),
		triggerRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "trigger_refusals_total",
			Help: "Webhook deliveries refused before anything was written, by trigger (empty when unknown) and reason."},
			[]string{"trigger", "reason"}),
	}
	m.agent = newAgentCounters()
	m.reg.MustRegister(m.runs, m.nodes, m.dispatch, m.rescues, m.retries, m.sendFailed, m.outboxFailed, m.transcriptFailed, m.duplicates,
		m.triggerFires, m.triggerSkips, m.triggerRefusals,
		m.agent.turns, m.agent.unknown, m.agent.tokens, m.agent.cost,
		newStoreCollector(st, log, now),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry is the registry every collector is on, for tests and extra exporters.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus text format. A failing store gauge does not hide
// the other series: the scrape still answers, and the failure is logged by the collector.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// RunStopped counts a run reaching a status where it stops.
func (m *Metrics) RunStopped(workflow string, status db.Status) {
	m.runs.WithLabelValues(workflow, string(status)).Inc()
}

// NodeFinished records one node attempt's duration.
func (m *Metrics) NodeFinished(workflow, state string, d time.Duration) {
	m.nodes.WithLabelValues(workflow, state).Observe(d.Seconds())
}

// Dispatched records how long handling one inbound message took.
func (m *Metrics) Dispatched(kind string, d time.Duration) {
	m.dispatch.WithLabelValues(kind).Observe(d.Seconds())
}

// Rescued counts runs handled by the rescuer.
func (m *Metrics) Rescued(n int) { m.rescues.Add(float64(n)) }

// Retried counts a node attempt retried within its budget.
func (m *Metrics) Retried(workflow string) { m.retries.WithLabelValues(workflow).Inc() }

// SendFailed counts a message a platform did not accept.
func (m *Metrics) SendFailed(platform string) { m.sendFailed.WithLabelValues(platform).Inc() }

// OutboxFailed counts a message a run owed that was recorded as failed (docs/design-notes.md, "The
// outbox").
func (m *Metrics) OutboxFailed(kind string) { m.outboxFailed.WithLabelValues(kind).Inc() }

// TranscriptWriteFailed counts a message posted on a platform that its transcript misses.
func (m *Metrics) TranscriptWriteFailed(platform string) {
	m.transcriptFailed.WithLabelValues(platform).Inc()
}

// DuplicateDropped counts an inbound event dropped as already handled.
func (m *Metrics) DuplicateDropped(platform string) { m.duplicates.WithLabelValues(platform).Inc() }

// TriggerFired counts a fire this process recorded, and its skip when it started no run.
func (m *Metrics) TriggerFired(trigger, kind string, outcome db.FireOutcome, reason string) {
	m.triggerFires.WithLabelValues(trigger, kind, string(outcome)).Inc()
	if outcome == db.FireSkipped || outcome == db.FireRefused {
		m.triggerSkips.WithLabelValues(trigger, reason).Inc()
	}
}

// TriggerRefused counts a delivery refused before anything was written.
func (m *Metrics) TriggerRefused(trigger, reason string) {
	m.triggerRefusals.WithLabelValues(trigger, reason).Inc()
}
