package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"threadflow/db"
	"threadflow/orchestrator/maintenance"
)

// cliFires is how many fires of each trigger `bot workflow triggers` shows.
const cliFires = 5

// triggerJSON is one trigger in `bot workflow triggers --json` (README.md describes the fields).
type triggerJSON struct {
	Trigger  string     `json:"trigger"`
	Workflow string     `json:"workflow"`
	Name     string     `json:"name"`
	Kind     string     `json:"kind"`
	Cron     string     `json:"cron,omitempty"`
	Timezone string     `json:"timezone,omitempty"`
	Overlap  string     `json:"overlap,omitempty"`
	CatchUp  string     `json:"catch_up,omitempty"`
	Events   []string   `json:"events,omitempty"`
	Address  string     `json:"address,omitempty"`
	Secret   string     `json:"secret_env,omitempty"`
	PostTo   string     `json:"post_to"`
	NextFire *time.Time `json:"next_fire"`
	Fires    []fireJSON `json:"fires"`
}

type fireJSON struct {
	Key         string     `json:"key"`
	Event       string     `json:"event,omitempty"`
	ScheduledAt *time.Time `json:"scheduled_at,omitempty"`
	FiredAt     time.Time  `json:"fired_at"`
	Outcome     string     `json:"outcome"`
	Reason      string     `json:"reason,omitempty"`
	RunID       string     `json:"run_id,omitempty"`
	RunState    string     `json:"run_state,omitempty"`
	// Group and HolderRunID name, for a fire refused because its concurrency group was busy, the
	// group and the run holding it.
	Group       string `json:"group,omitempty"`
	HolderRunID string `json:"holder_run_id,omitempty"`
}

// triggers prints every trigger with its next and latest fires.
func (c *cliSession) triggers(ctx context.Context, w io.Writer, asJSON bool) error {
	views, err := maintenance.Overview(ctx, c.store, c.engine.Dispatcher.Catalogs.Catalog(), time.Now(), cliFires)
	if err != nil {
		return err
	}
	if asJSON {
		out := make([]triggerJSON, 0, len(views))
		for _, v := range views {
			out = append(out, toTriggerJSON(v))
		}
		return writeJSON(w, out)
	}
	if len(views) == 0 {
		fmt.Fprintln(w, "No workflow has triggers; docs/workflows.md (Triggers) shows how to add a schedule or a webhook.")
		return nil
	}
	for i, v := range views {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s: %s, posts to %s\n", v.ID, v.What(), v.Trigger.PostTo)
		if !v.Next.IsZero() {
			fmt.Fprintf(w, "  next fire  %s\n", v.Next.UTC().Format(time.DateTime+" MST"))
		}
		if len(v.Fires) == 0 {
			fmt.Fprintln(w, "  never fired")
		}
		for _, f := range v.Fires {
			fmt.Fprintf(w, "  fired      %s  %s\n", f.FiredAt.UTC().Format(time.DateTime+" MST"), fireText(f))
		}
	}
	return nil
}

// fireText says what became of a fire.
func fireText(f db.TriggerFire) string {
	s := string(f.Outcome)
	if f.Event != "" {
		s = f.Event + ": " + s
	}
	if f.Reason != "" {
		s += " (" + f.Reason + ")"
	}
	if f.Outcome == db.FireRefused {
		s += ": run " + f.Holder + " holds concurrency group " + f.Group
	}
	if f.RunID != "" {
		s += " run " + f.RunID
		if f.RunStatus != "" {
			s += " (" + string(f.RunStatus) + ")"
		}
	}
	return s
}

func toTriggerJSON(v maintenance.TriggerView) triggerJSON {
	t := v.Trigger
	j := triggerJSON{Trigger: v.ID, Workflow: v.Workflow, Name: t.Name, Kind: string(t.Kind), PostTo: t.PostTo, Events: t.Events,
		Secret: t.SecretEnv, Fires: []fireJSON{}}
	if t.Schedule != nil {
		j.Cron, j.Timezone, j.Overlap, j.CatchUp = t.Cron, t.Location.String(), string(t.Overlap), string(t.CatchUp)
		next := v.Next.UTC()
		j.NextFire = &next
	} else {
		j.Address = "/hooks/" + v.ID
	}
	for _, f := range v.Fires {
		fj := fireJSON{Key: f.Key, Event: f.Event, FiredAt: f.FiredAt.UTC(), Outcome: string(f.Outcome), Reason: f.Reason, RunID: f.RunID,
			RunState: string(f.RunStatus), Group: f.Group, HolderRunID: f.Holder}
		if !f.ScheduledAt.IsZero() {
			at := f.ScheduledAt.UTC()
			fj.ScheduledAt = &at
		}
		j.Fires = append(j.Fires, fj)
	}
	return j
}
