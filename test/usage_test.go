package test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"threadflow/agent/agenttest/stubapi"
	"threadflow/db"
	"threadflow/db/dbtest"
	"threadflow/testkit"
	"threadflow/testkit/botproc"
)

// usageCase is what one CLI's turns should record against the stub's token counts.
type usageCase struct {
	model string
	turn  int64 // nanodollars per turn
	est   bool  // priced from the price table
	text  string
}

// stubUsage is the token count every stub answer reports: distinct numbers, so a figure taken from
// the wrong field (or a session's running total) cannot pass.
var stubUsage = stubapi.Usage{Input: 1234, Output: 56}

var usageCases = map[string]usageCase{
	// Claude Code prices claude-sonnet-4-5 itself at $3 and $15 per million tokens: 1234*3 + 56*15
	// = 4542 millionths of a dollar per turn, reported in its result event.
	"claude": {model: "claude-sonnet-4-5", turn: 4_542_000, text: "AI usage: $0.0091 over 2 agent turns (2,468 input, 112 output tokens)"},
	// Codex reports tokens only: priced from AGENT_PRICES_FILE at $2 and $8 per million tokens,
	// 1234*2 + 56*8 = 2916 millionths of a dollar per turn, estimated.
	"codex": {model: "gpt-stub", turn: 2_916_000, est: true,
		text: "AI usage: $0.0058 (estimated from the price table) over 2 agent turns (2,468 input, 112 output tokens)"},
}

// TestRealCLIUsageRecorded runs two prompt nodes sharing one session (the second resumes it, where
// both CLIs report session totals) through a real bot server and each real CLI against the stub
// API, and checks that the events, /workflow status, status --json, the dashboard and /metrics all
// show each turn's own figures.
func TestRealCLIUsageRecorded(t *testing.T) {
	t.Parallel()
	forEachCLI(t, func(t *testing.T, b *aiBot) {
		want := usageCases[b.name]
		b.api.SetUsage(stubUsage)
		dir := b.env["WORKFLOWS_DIR"]
		src := fmt.Sprintf("name: usage\nnodes:\n  - id: first\n    prompt: Say hello.\n    model: %[1]s\n    context: shared\n"+
			"  - id: second\n    depends_on: [first]\n    prompt: Say hello again.\n    model: %[1]s\n    context: shared\n", want.model)
		if err := os.WriteFile(filepath.Join(dir, "usage.yaml"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		prices := filepath.Join(b.tmp, "prices.json")
		if err := os.WriteFile(prices, []byte(`{"source":"test","date":"2026-12-01","models":{"gpt-stub":{"input":2,"cached_input":0.5,"output":8}}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		b.env["AGENT_PRICES_FILE"] = prices
		server := botproc.Start(t, b.env)
		chatClient{t, server.URL(), "alice"}.say("/workflow run usage")

		store := dbtest.SQLiteAt(t, filepath.Join(b.env["THREADFLOW_HOME"], "threadflow.db"), db.Options{})
		var run db.Run
		testkit.EventuallyWithin(t, realCLIDeadline, "the usage run to stop", func() bool { // two real-CLI turns
			runs, err := store.ListRuns(t.Context(), db.RunFilter{Workflow: "usage"})
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) == 1 && (runs[0].Status == db.StatusCompleted || runs[0].Status == db.StatusFailed || runs[0].Status == db.StatusPaused) {
				run = runs[0]
				return true
			}
			return false
		})
		if run.Status != db.StatusCompleted {
			t.Fatalf("the run is %s: %+v %+v\n%s", run.Status, run.Meta.LastError, run.Meta.Pause, server.Stderr())
		}

		// The events: one agent_usage per turn, each the turn's own.
		events, err := store.Events(t.Context(), run.ID)
		if err != nil {
			t.Fatal(err)
		}
		var turns []db.AgentUsageData
		for _, e := range events {
			if e.Type == db.EventAgentUsage {
				turns = append(turns, db.Decode[db.AgentUsageData](e))
			}
		}
		if len(turns) != 2 {
			t.Fatalf("%d agent_usage events, want 2", len(turns))
		}
		for i, u := range turns {
			if u.Provider != b.name || u.Model != want.model || u.Unknown || u.InputTokens != 1234 || u.OutputTokens != 56 ||
				u.CostNanos == nil || *u.CostNanos != want.turn || u.Estimated != want.est {
				t.Errorf("turn %d: %s, want %s %s 1234 in, 56 out, %d nanodollars, estimated %v", i+1, db.MustJSON(u), b.name, want.model, want.turn, want.est)
			}
		}

		// /workflow status and status --json.
		if out, _ := b.run("workflow", "status", run.ID); !strings.Contains(out, want.text) {
			t.Errorf("bot workflow status lacks %q:\n%s", want.text, out)
		}
		out, _ := b.run("workflow", "status", "--json", run.ID)
		var st struct {
			Usage struct {
				CostUSD      *float64 `json:"cost_usd"`
				Estimated    bool     `json:"estimated"`
				Turns        int64    `json:"turns"`
				InputTokens  int64    `json:"input_tokens"`
				OutputTokens int64    `json:"output_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatalf("status --json: %v\n%s", err, out)
		}
		total := db.USD(2 * want.turn)
		if u := st.Usage; u.CostUSD == nil || *u.CostUSD != total || u.Estimated != want.est || u.Turns != 2 || u.InputTokens != 2468 || u.OutputTokens != 112 {
			t.Errorf("status --json usage = %+v, want $%v over 2 turns, 2468 input and 112 output tokens", u, total)
		}

		// The dashboard: the run page (the run's and each node's), the usage page (the workflow's 30 days).
		page := httpGet(t, server.URL()+"runs/"+run.ID)
		for _, want := range []string{strings.TrimPrefix(want.text, "AI usage: "), `id="usage-first"`, `id="usage-second"`} {
			if !strings.Contains(page, want) {
				t.Errorf("the run page lacks %q", want)
			}
		}
		if list := httpGet(t, server.URL()); !strings.Contains(list, `<a href="/usage">Usage</a>`) {
			t.Errorf("the runs page does not link the usage page:\n%s", list)
		}
		if usage := httpGet(t, server.URL()+"usage"); !strings.Contains(usage, `id="usage-usage"`) || !strings.Contains(usage, strings.TrimPrefix(want.text, "AI usage: ")) {
			t.Errorf("the usage page lacks the workflow's usage over 30 days:\n%s", usage)
		}

		// The metrics, by provider, model and workflow.
		metrics := httpGet(t, server.URL()+"metrics")
		labels := fmt.Sprintf(`model=%q,provider=%q,workflow="usage"`, want.model, b.name)
		for _, line := range []string{
			"threadflow_agent_turns_total{" + labels + "} 2",
			fmt.Sprintf("threadflow_agent_cost_usd_total{%s} %v", labels, total),
			`threadflow_agent_tokens_total{kind="input",` + labels + "} 2468",
			`threadflow_agent_tokens_total{kind="output",` + labels + "} 112",
		} {
			if !strings.Contains(metrics, line+"\n") {
				t.Errorf("/metrics lacks %s", line)
			}
		}
	})
}

// httpGet returns the body of a GET that must answer 200.
func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d, %v", url, resp.StatusCode, err)
	}
	return string(body)
}

// Claude Code is given what is left of the node's budget as --max-budget-usd and stops there by
// itself (result error_max_budget_usd): the turn's usage is recorded all the same, and the run
// pauses naming the budget, resumable, rather than failing.
func TestRealClaudeStopsAtItsBudgetCap(t *testing.T) {
	t.Parallel()
	b := newAIBot(t, "claude")
	b.api.SetUsage(stubapi.Usage{Input: 5000, Output: 5}) // $0.015075 at claude-sonnet-4-5's prices
	src := "name: cap\nnodes:\n  - id: big\n    prompt: Say hello.\n    model: claude-sonnet-4-5\n    max_cost_usd: 0.01\n"
	if err := os.WriteFile(filepath.Join(b.env["WORKFLOWS_DIR"], "cap.yaml"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	id, out := b.start("cap")
	out += b.say("/workflow status " + id)
	for _, want := range []string{"paused", "The budget of node big is reached: max_cost_usd of node big is $0.0100 and its agent turns have spent $0.0151.",
		"Claude Code stopped at the spending cap it was given", "AI usage: $0.0151 over 1 agent turn (5,000 input, 5 output tokens)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the terminal lacks %q:\n%s", want, out)
		}
	}
}
