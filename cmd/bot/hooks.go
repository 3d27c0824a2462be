package main

import (
	"fmt"
	"io"
	"strings"

	"go.uber.org/zap"

	"threadflow/adapters/hooks"
	"threadflow/metrics"
	"threadflow/orchestrator"
	"threadflow/workflow"
)

// newHooks builds the handler of POST /hooks/<workflow>/<name> and reads the triggers' secrets now,
// before any run starts a process that could inherit them; each reload of the workflows reads the
// secrets new triggers name, and names the triggers left disabled (no secret) at start and whenever
// that list changes.
func newHooks(cats *catalogs, eng *orchestrator.Engine, log *zap.Logger, m *metrics.Metrics) *hooks.Handler {
	secrets := &hooks.Secrets{}
	h := &hooks.Handler{Catalogs: eng.Dispatcher.Catalogs, Fire: eng.Triggers, Secrets: secrets, Log: log}
	if m != nil {
		h.Observe = m
	}
	if cats == nil {
		return h
	}
	last := ""
	cats.loaded = func(cat *workflow.Catalog, out io.Writer, start bool) {
		disabled := secrets.Disabled(cat)
		now := strings.Join(disabled, ", ")
		changed := now != last
		last = now
		if changed {
			for _, d := range disabled {
				log.Warn("hooks.trigger_disabled", zap.String("trigger", d))
			}
		}
		if out != nil && len(disabled) > 0 && (start || changed) {
			fmt.Fprintf(out, "Triggers disabled until their secret is set in the environment (and the bot restarted): %s\n", now)
		}
	}
	cats.Catalog() // reads the secrets, before any run can start a process
	return h
}
