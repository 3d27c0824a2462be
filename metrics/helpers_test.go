package metrics_test

import (
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"threadflow/metrics"
)

// scrape fetches /metrics from the Handler, as Prometheus would, and returns the lines of one series.
func scrape(t *testing.T, m *metrics.Metrics, series string) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("GET /metrics = %d: %s", rec.Code, rec.Body)
	}
	var out []string
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(line, series) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// value scrapes /metrics and returns the sample of one series, such as
// `threadflow_runs_total{state="completed",workflow="ok"}` (labels in Prometheus' sorted order).
// A series not exposed yet reads as 0, like a counter nothing has incremented.
func value(t *testing.T, m *metrics.Metrics, series string) float64 {
	t.Helper()
	for _, line := range strings.Split(scrape(t, m, series), "\n") {
		name, v, ok := strings.Cut(line, " ")
		if !ok || name != series {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("series %s has a non-numeric sample %q", series, v)
		}
		return f
	}
	return 0
}
