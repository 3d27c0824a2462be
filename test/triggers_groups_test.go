package test

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"threadflow/db"
	"threadflow/db/dbtest"
	"threadflow/testkit"
	"threadflow/testkit/botproc"
)

const nightlySecret = "nightly-hook-secret-value"

// handRelease is a release started by hand in the Slack channel, in concurrency group "release". It
// logs when it starts and ends and holds until the test creates go-<run id>, so the test decides
// when the holder ends.
const handRelease = `name: release
description: A release started by hand.
concurrency: {group: release, when_busy: queue}
nodes:
  - id: ship
    bash: |
      echo "start $RUN_ID" >> "$COUNTERS/log"
      while [ ! -e "$COUNTERS/go-$RUN_ID" ]; do sleep 0.05; done
      echo "end $RUN_ID" >> "$COUNTERS/log"
`

// nightlyCheck is the nightly release check in the same group, with when_busy busy: a schedule of
// every second (overlap: skip) and a webhook, both posting into the Slack fake's channel.
func nightlyCheck(busy string) string {
	return `name: nightly
description: The nightly release check; never beside a release.
concurrency: {group: release, when_busy: ` + busy + `}
triggers:
  - schedule: {cron: "* * * * * *", post_to: "slack:` + channel + `", overlap: skip}
  - webhook: {name: hook, secret_env: NIGHTLY_HOOK_SECRET, post_to: "slack:` + channel + `"}
nodes:
  - id: check
    bash: echo "nightly $RUN_ID" >> "$COUNTERS/log"
`
}

// startHeldRelease starts a Slack bot with the hand release only, types `/workflow run release`
// and waits until that run executes (it holds group release); then adds the nightly check with
// when_busy busy to the workflow files, which the bot reads at its next reload.
func startHeldRelease(t *testing.T, env map[string]string, busy string) (s *slackBot, holder run, counters string) {
	t.Helper()
	counters = t.TempDir()
	dir := workflowDir(t, map[string]string{"release.yaml": handRelease})
	s = startTriggerBot(t, env, map[string]string{"WORKFLOWS_DIR": dir, "COUNTERS": counters, "NIGHTLY_HOOK_SECRET": nightlySecret})
	holder = s.start(t, "release", "")
	testkit.Eventually(t, "the hand release to run", func() bool { return slices.Contains(logEntries(t, counters), "start "+holder.id) })
	if err := os.WriteFile(filepath.Join(dir, "nightly.yaml"), []byte(nightlyCheck(busy)), 0o644); err != nil {
		t.Fatal(err)
	}
	return s, holder, counters
}

// logEntries are the lines of the counters log.
func logEntries(t *testing.T, counters string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(counters, "log"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.FieldsFunc(string(b), func(r rune) bool { return r == '\n' })
}

// fireListing is a trigger's fires as `bot workflow triggers --json` prints them.
type fireListing struct {
	Trigger string `json:"trigger"`
	Fires   []struct {
		Outcome string `json:"outcome"`
		Reason  string `json:"reason"`
		RunID   string `json:"run_id"`
		Group   string `json:"group"`
		Holder  string `json:"holder_run_id"`
	} `json:"fires"`
}

func listTriggers(t *testing.T, env map[string]string) map[string]fireListing {
	t.Helper()
	out, err := botproc.CommandContext(t.Context(), t, env, "workflow", "triggers", "--json").Output()
	if err != nil {
		t.Fatalf("bot workflow triggers --json: %v", err)
	}
	var listed []fireListing
	if err := json.Unmarshal(out, &listed); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	byID := map[string]fireListing{}
	for _, l := range listed {
		byID[l.Trigger] = l
	}
	return byID
}

// TestScheduledRunWaitsForTheGroupHolder: a schedule fires while a release typed by hand holds the
// group: the fired run is created and announced in the channel, its thread says it waits behind
// the holder, 1st in line; the fires after it are skipped (overlap: skip, its run is active); when
// the holder completes the group is the fired run's (its note says so) and it runs and completes,
// after the holder ended.
func TestScheduledRunWaitsForTheGroupHolder(t *testing.T) {
	t.Parallel()
	botproc.ForEachEngine(t, botproc.Env, func(t *testing.T, env map[string]string) {
		s, holder, counters := startHeldRelease(t, env, "queue")
		st := openStore(t, env)
		r := s.waitRoot(t, "nightly", 1)
		if !strings.Contains(r.root.Text, "by trigger:nightly/schedule") {
			t.Errorf("announcement %q does not name the trigger", r.root.Text)
		}
		note := s.waitInThread(t, r, "its place in line", containsText("Waiting for concurrency group `release`"))
		if !strings.Contains(note.Text, "run `"+holder.id+"` holds it, and this run is 1st in line") {
			t.Errorf("the fired run's thread says %q; want it 1st in line behind %s", note.Text, holder.id)
		}
		if got, err := st.GetRun(t.Context(), r.id); err != nil || got.Status != db.StatusQueued || got.Group != "release" {
			t.Fatalf("fired run %+v, %v; want queued in group release", got, err)
		}
		testkit.Eventually(t, "a later fire skipped while the fired run waits", func() bool {
			fires, err := st.TriggerFires(t.Context(), "nightly/schedule", 0)
			if err != nil {
				t.Fatal(err)
			}
			started, skipped := 0, 0
			for _, f := range fires {
				switch {
				case f.Outcome == db.FireStarted:
					started++
				case f.Outcome == db.FireSkipped && f.Reason == db.ReasonOverlap:
					skipped++
				}
			}
			if started != 1 {
				t.Fatalf("%d fires started a run while the group was held, want 1: %+v", started, fires)
			}
			return skipped > 0
		})
		letGo(t, counters, holder.id)
		s.waitStatus(t, holder, "completed")
		s.waitInThread(t, r, "the group handed over", containsText("Concurrency group `release` is this run's now: it starts."))
		s.waitStatus(t, r, "completed")
		log := logEntries(t, counters)
		if end, ran := slices.Index(log, "end "+holder.id), slices.Index(log, "nightly "+r.id); end < 0 || ran < end {
			t.Errorf("log %q: the fired run ran before the holder ended", log)
		}
	})
}

// TestScheduledAndWebhookFiresRefusedByTheGroupHolder: with when_busy refuse, schedule fires while
// the hand release holds the group start nothing and are recorded as refused, naming the holder
// (bot workflow triggers --json, the dashboard's /triggers, the log); a webhook delivery is
// answered 409 with a JSON body naming the group and the holder, and again 409 when redelivered.
// Once the holder completed, the next fire starts a run that completes.
func TestScheduledAndWebhookFiresRefusedByTheGroupHolder(t *testing.T) {
	t.Parallel()
	botproc.ForEachEngine(t, botproc.Env, func(t *testing.T, env map[string]string) {
		s, holder, counters := startHeldRelease(t, env, "refuse")
		st := openStore(t, env)
		s.bot.WaitLog("orchestrator.trigger_fired", map[string]string{"trigger": "nightly/schedule", "outcome": "refused",
			"reason": "group_busy", "group": "release", "holder": holder.id})

		body := []byte(`{"ref":"main"}`)
		for i, dup := range []bool{false, true} {
			status, out := post(t, s, "nightly/hook", body, signed(nightlySecret, time.Now(), body, "n-1"))
			var answer struct {
				Duplicate bool   `json:"duplicate"`
				Outcome   string `json:"outcome"`
				Reason    string `json:"reason"`
				Group     string `json:"group"`
				Holder    string `json:"holder_run_id"`
				Error     string `json:"error"`
			}
			if err := json.Unmarshal([]byte(out), &answer); err != nil {
				t.Fatalf("delivery %d: %d %s: %v", i, status, out, err)
			}
			if status != http.StatusConflict || answer.Outcome != "refused" || answer.Reason != "group_busy" || answer.Group != "release" ||
				answer.Holder != holder.id || answer.Duplicate != dup || !strings.Contains(answer.Error, holder.id) {
				t.Errorf("delivery %d (duplicate %v): %d %s; want 409 naming %s", i, dup, status, out, holder.id)
			}
		}
		if runs, err := st.ListRuns(t.Context(), db.RunFilter{Workflow: "nightly"}); err != nil || len(runs) != 0 {
			t.Fatalf("nightly runs while the group is held: %d, %v; want none", len(runs), err)
		}
		if roots := s.roots(); len(roots) != 1 {
			t.Errorf("the channel has %d run announcements, want only the hand release's", len(roots))
		}

		listed := listTriggers(t, env)
		for _, id := range []string{"nightly/schedule", "nightly/hook"} {
			fires := listed[id].Fires
			if len(fires) == 0 {
				t.Fatalf("bot workflow triggers --json lists no fire of %s", id)
			}
			for _, f := range fires {
				if f.Outcome != "refused" || f.Reason != "group_busy" || f.Group != "release" || f.Holder != holder.id || f.RunID != "" {
					t.Errorf("%s: fire %+v; want refused naming %s", id, f, holder.id)
				}
			}
		}
		resp, err := http.Get(strings.TrimSuffix(s.bot.URL(), "/") + "/triggers")
		if err != nil {
			t.Fatal(err)
		}
		page, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if want := `refused (group_busy): run <a href="/runs/` + holder.id + `"`; err != nil || !strings.Contains(string(page), want) {
			t.Errorf("the triggers page lacks %q: %v\n%s", want, err, page)
		}

		letGo(t, counters, holder.id)
		s.waitStatus(t, holder, "completed")
		r := s.waitRoot(t, "nightly", 1)
		s.waitStatus(t, r, "completed")
	})
}

// TestReplicasFiringAtOnceGiveOneHolder: two replicas on one PostgreSQL fire two per-second
// schedules of one group (when_busy: refuse) at once, every second: exactly one run is created and
// holds the group, every other fire is refused naming it, and each scheduled second of each
// trigger is fired once.
func TestReplicasFiringAtOnceGiveOneHolder(t *testing.T) {
	t.Parallel()
	env := botproc.Env(t)
	env["DATABASE_URL"] = dbtest.PostgresDatabase(t)
	counters := t.TempDir()
	env["COUNTERS"] = counters
	env["WORKFLOWS_DIR"] = workflowDir(t, map[string]string{"nightly.yaml": `name: nightly
description: Two schedules of one group.
concurrency: {group: release, when_busy: refuse}
triggers:
  - schedule: {name: a, cron: "* * * * * *", post_to: web, overlap: allow}
  - schedule: {name: b, cron: "* * * * * *", post_to: web, overlap: allow}
nodes:
  - id: hold
    bash: |
      while [ ! -e "$COUNTERS/go-$RUN_ID" ]; do sleep 0.05; done
`})
	st := openStore(t, env)
	for r := range 2 {
		renv := maps.Clone(env)
		renv["REPLICA_ID"], renv["HOME"] = fmt.Sprintf("replica-%d", r), t.TempDir()
		botproc.Start(t, renv)
	}
	fires := func(trigger string) []db.TriggerFire {
		fs, err := st.TriggerFires(t.Context(), trigger, 1000)
		if err != nil {
			t.Fatal(err)
		}
		return fs
	}
	testkit.Eventually(t, "five seconds of fires of both schedules", func() bool { return len(fires("nightly/a")) >= 5 && len(fires("nightly/b")) >= 5 })
	runs, err := st.ListRuns(t.Context(), db.RunFilter{Workflow: "nightly"})
	if err != nil || len(runs) != 1 {
		t.Fatalf("%d nightly runs, %v; want exactly one, the holder", len(runs), err)
	}
	holder := runs[0].ID
	for _, trigger := range []string{"nightly/a", "nightly/b"} {
		seen := map[time.Time]bool{}
		for _, f := range fires(trigger) {
			if seen[f.ScheduledAt] {
				t.Errorf("%s fired twice for %s", trigger, f.ScheduledAt)
			}
			seen[f.ScheduledAt] = true
			switch f.Outcome {
			case db.FireStarted:
				if f.RunID != holder {
					t.Errorf("%s: a fire started run %s beside the holder %s", trigger, f.RunID, holder)
				}
			case db.FireRefused:
				if f.Holder != holder || f.Group != "release" {
					t.Errorf("%s: fire refused naming %s of %q, want %s", trigger, f.Holder, f.Group, holder)
				}
			default:
				t.Errorf("%s: fire %+v", trigger, f)
			}
		}
	}
	if p, err := st.GroupPlace(t.Context(), holder); err != nil || p.Waiting() || p.Group != "release" {
		t.Errorf("the holder stands %+v, %v", p, err)
	}
	letGo(t, counters, holder)
}
