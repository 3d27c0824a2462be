package test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"threadflow/adapters/slack/slackfake"
	"threadflow/db"
	"threadflow/db/dbtest"
	"threadflow/testkit/botproc"
)

// The crash soak of issue 27: runs with gates on three replicas sharing one PostgreSQL database,
// connected to one Slack app (each replica a Socket Mode connection), while replicas are killed
// with SIGKILL one at a time and started again. Afterwards every request Slack saw acknowledged is
// a run, and every run's thread has its announcement, its gate question and its final message
// exactly once. Skipped unless SOAK_CRASH=1; SOAK_CRASH_RUNS overrides the 200 runs.

// soakKills is how many SIGKILLs the crash soak deals.
const soakKills = 24

var (
	soakGateRE  = regexp.MustCompile("^⏸ Run `([^`]+)` is waiting at `gate`.\nShip v([0-9]+)\\?")
	soakFinalRE = regexp.MustCompile("^✅ Run `([^`]+)` of `gated` completed.")
)

func TestOutboxSoakWithKills(t *testing.T) {
	if os.Getenv("SOAK_CRASH") != "1" {
		t.Skip("the crash soak runs with SOAK_CRASH=1 (and TEST_DATABASE_URL)")
	}
	runs := 200
	if n, err := strconv.Atoi(os.Getenv("SOAK_CRASH_RUNS")); err == nil && n > 0 {
		runs = n
	}
	fake := slackfake.New(t)
	fake.Replicas()
	base := botproc.Env(t)
	base["DATABASE_URL"] = dbtest.PostgresDatabase(t)
	base["SLACK_BOT_TOKEN"], base["SLACK_APP_TOKEN"], base["SLACK_API_URL"] = slackfake.BotToken, slackfake.AppToken, fake.URL()
	base["WORKFLOWS_DIR"], base["LEASE_TTL"], base["LOG_LEVEL"] = writeWorkflows(t), "2s", "info"
	envs := make([]map[string]string, 3)
	bots := make([]*botproc.Process, 3)
	for i := range envs {
		envs[i] = maps.Clone(base) // one THREADFLOW_HOME: the replicas share a host
		envs[i]["REPLICA_ID"] = fmt.Sprintf("replica-%d", i+1)
		bots[i] = botproc.Start(t, envs[i])
	}
	start := time.Now()

	var (
		mu        sync.Mutex
		envelopes = map[int]string{} // request number -> its envelope
		kills     int
		done      = make(chan struct{})
	)
	go func() { // the chaos: one replica killed at a time, started again at once, soakKills times
		rng := rand.New(rand.NewPCG(27, 1))
		for range soakKills {
			select {
			case <-done:
				return
			case <-time.After(time.Duration(1500+rng.IntN(3000)) * time.Millisecond): // how long a replica lives, not a wait for work
			}
			i := rng.IntN(len(bots))
			mu.Lock()
			bots[i].Kill()
			bots[i] = botproc.Start(t, envs[i])
			kills++
			mu.Unlock()
		}
	}()
	for i := 1; i <= runs; i++ {
		// --force: each request is a run of its own, not a prompt about the one waiting at its gate.
		env := fake.SlashCommand(fmt.Sprintf("UUSER%05d", i%16), channel, fmt.Sprintf("run --force gated v%d", i))
		mu.Lock()
		envelopes[i] = env
		mu.Unlock()
		time.Sleep(20 * time.Millisecond) // the pace people type at, not a wait for work
	}

	// A person approves every gate question, and asks again when a click was lost with its replica.
	clicked := map[string]time.Time{}
	deadline := time.Now().Add(6 * time.Minute)
	for {
		finals := 0
		for _, m := range fake.Messages(channel) {
			if soakFinalRE.MatchString(m.Text) {
				finals++
			}
			if g := soakGateRE.FindStringSubmatch(m.Text); g != nil && len(m.Buttons) > 0 && time.Since(clicked[g[1]]) > 10*time.Second {
				clicked[g[1]] = time.Now()
				fake.Click(bob, m, "Approve")
			}
		}
		mu.Lock()
		k := kills
		mu.Unlock()
		if finals >= runs && k >= soakKills {
			break
		}
		if time.Now().After(deadline) {
			close(done)
			t.Fatalf("after %s: %d of %d runs completed, %d kills:\n%s", time.Since(start), finals, runs, k, soakSummary(fake))
		}
		time.Sleep(200 * time.Millisecond) // the person's pace of looking at the channel, not a wait for work
	}
	close(done)
	elapsed := time.Since(start)
	st := openStore(t, base)
	// Everything owed is out before counting.
	fake.WaitFor(t, 2*time.Minute, func(*slackfake.Server) bool {
		all, err := st.ListRuns(context.Background(), db.RunFilter{Limit: runs * 2})
		if err != nil {
			return false
		}
		for _, r := range all {
			if u, err := st.Undelivered(context.Background(), r.ID); err != nil || len(u) > 0 {
				return false
			}
		}
		return true
	})
	report := soakCheck(t, fake, st, runs, envelopes)
	t.Logf("crash soak: %d runs with gates on 3 PostgreSQL replicas, %d SIGKILLs, %s; %s", runs, kills, elapsed.Round(time.Second), report)
}

// soakCheck asserts every request Slack saw acknowledged is a run whose thread has its
// announcement, gate question and final message once, and returns the figures.
func soakCheck(t *testing.T, fake *slackfake.Server, st db.Store, runs int, envelopes map[int]string) string {
	t.Helper()
	roots, gates, finals := map[string]int{}, map[string]int{}, map[string]int{}
	request := map[int]string{} // request number -> run
	for _, m := range fake.Messages(channel) {
		if r := rootRE.FindStringSubmatch(m.Text); r != nil && m.ThreadTS == "" {
			roots[r[2]]++
		}
		if g := soakGateRE.FindStringSubmatch(m.Text); g != nil {
			gates[g[1]]++
			n, _ := strconv.Atoi(g[2])
			if prev, ok := request[n]; ok && prev != g[1] {
				t.Errorf("request v%d became two runs: %s and %s", n, prev, g[1])
			}
			request[n] = g[1]
		}
		if f := soakFinalRE.FindStringSubmatch(m.Text); f != nil {
			finals[f[1]]++
		}
	}
	acked := 0
	for i := 1; i <= runs; i++ {
		if fake.Acked(envelopes[i]) {
			acked++
			if request[i] == "" {
				t.Errorf("request v%d was acknowledged but is no run", i)
			}
		}
	}
	all, err := st.ListRuns(context.Background(), db.RunFilter{Limit: runs * 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		for what, seen := range map[string]map[string]int{"announcement": roots, "gate question": gates, "final message": finals} {
			if seen[r.ID] != 1 {
				t.Errorf("run %s (%s) has its %s %d times, want once", r.ID, r.Status, what, seen[r.ID])
			}
		}
	}
	return fmt.Sprintf("%d of %d requests acknowledged, %d runs, %d announcements, %d gate questions, %d final messages",
		acked, runs, len(all), sum(roots), sum(gates), sum(finals))
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// soakSummary is what a failed soak shows: the runs without a final message.
func soakSummary(fake *slackfake.Server) string {
	gates, finals := map[string]string{}, map[string]bool{}
	for _, m := range fake.Messages(channel) {
		if g := soakGateRE.FindStringSubmatch(m.Text); g != nil {
			gates[g[1]] = g[2]
		}
		if f := soakFinalRE.FindStringSubmatch(m.Text); f != nil {
			finals[f[1]] = true
		}
	}
	var open []string
	for id, n := range gates {
		if !finals[id] {
			open = append(open, "v"+n+"="+id)
		}
	}
	sort.Strings(open)
	return fmt.Sprintf("%d gate questions, %d final messages; waiting: %s", len(gates), len(finals), strings.Join(open, " "))
}
