package metrics

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"threadflow/db"
)

// Store is what the scrape-time gauges read; db.Store satisfies it.
type Store interface {
	ListRuns(ctx context.Context, f db.RunFilter) ([]db.Run, error)
}

// scrapeTimeout bounds the store queries of one scrape. Prometheus' Collector interface carries no
// context, so the collector makes its own, short enough to answer before a default scrape timeout.
const scrapeTimeout = 5 * time.Second

// scanLimit bounds how many running or paused runs one scrape reads. A deployment with more gates
// waiting than this has a problem the gauge already shows.
const scanLimit = 1000

// storeCollector computes gauges from the database at scrape time.
type storeCollector struct {
	st  Store
	log *zap.Logger
	now func() time.Time

	leases, gates, gateAge *prometheus.Desc
}

func newStoreCollector(st Store, log *zap.Logger, now func() time.Time) *storeCollector {
	return &storeCollector{st: st, log: log, now: now,
		leases: prometheus.NewDesc(namespace+"_active_leases",
			"Running runs whose worker holds an unexpired lease.", nil, nil),
		gates: prometheus.NewDesc(namespace+"_gates_waiting",
			"Runs paused at an approval or loop gate, waiting for a person.", nil, nil),
		gateAge: prometheus.NewDesc(namespace+"_gate_oldest_age_seconds",
			"How long the oldest waiting gate has waited; 0 when none waits.", nil, nil),
	}
}

// Describe sends the gauges' descriptions.
func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.leases
	ch <- c.gates
	ch <- c.gateAge
}

// Collect queries the store. A failed query is reported as an invalid metric (the scrape shows
// the error) and logged, rather than as a misleading zero.
func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	now := c.now()
	leases, err := c.activeLeases(ctx, now)
	c.send(ch, c.leases, float64(leases), err)
	n, oldest, err := c.gatesWaiting(ctx, now)
	c.send(ch, c.gates, float64(n), err)
	c.send(ch, c.gateAge, oldest.Seconds(), err)
}

func (c *storeCollector) send(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, err error) {
	if err != nil {
		c.log.Warn("metrics.collect_failed", zap.String("metric", d.String()), zap.Error(err))
		ch <- prometheus.NewInvalidMetric(d, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
}

// activeLeases counts running runs whose lease has not expired: a running run past its lease is
// interrupted (its worker died), not active.
func (c *storeCollector) activeLeases(ctx context.Context, now time.Time) (int, error) {
	runs, err := c.st.ListRuns(ctx, db.RunFilter{Statuses: []db.Status{db.StatusRunning}, Limit: scanLimit, WithoutSource: true})
	if err != nil {
		return 0, fmt.Errorf("metrics: list running runs: %w", err)
	}
	n := 0
	for _, r := range runs {
		if r.LeaseExpiresAt.After(now) {
			n++
		}
	}
	return n, nil
}

// gatesWaiting counts runs paused at a gate and measures the oldest wait from the time the run
// paused, which the pause context records: one query per scrape, however many gates wait.
func (c *storeCollector) gatesWaiting(ctx context.Context, now time.Time) (int, time.Duration, error) {
	runs, err := c.st.ListRuns(ctx, db.RunFilter{Statuses: []db.Status{db.StatusPaused}, Limit: scanLimit, WithoutSource: true})
	if err != nil {
		return 0, 0, fmt.Errorf("metrics: list paused runs: %w", err)
	}
	n, oldest := 0, time.Duration(0)
	for _, r := range runs {
		if p := r.Meta.Pause; p != nil && p.Kind.IsGate() {
			n++
			if !p.Since.IsZero() {
				oldest = max(oldest, now.Sub(p.Since))
			}
		}
	}
	return n, oldest, nil
}
