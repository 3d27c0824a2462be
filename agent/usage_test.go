package agent

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"threadflow/db"
)

func nanosOf(n int64) *int64 { return &n }

func resultEvent(t *testing.T, line string) *claudeEvent {
	t.Helper()
	var ev claudeEvent
	if err := json.Unmarshal([]byte(line), &ev); err != nil {
		t.Fatalf("the result event does not read: %v", err)
	}
	return &ev
}

// A resumed Claude session reports its session totals in total_cost_usd and modelUsage: only
// model_usage_since_last_result is the turn's, and without it a resumed turn is unknown.
func TestClaudeUsageIsTheTurnsOwn(t *testing.T) {
	t.Parallel()
	line := `{"type":"result","subtype":"success","num_turns":2,"total_cost_usd":0.3,
		"modelUsage":{"claude-sonnet-4-5":{"inputTokens":999,"outputTokens":999,"costUSD":0.28}},
		"model_usage_since_last_result":{"claude-sonnet-4-5":{"inputTokens":10,"outputTokens":5,"cacheReadInputTokens":7,"cacheCreationInputTokens":3,"costUSD":0.02},
		"claude-haiku-4-5":{"inputTokens":4,"outputTokens":1,"costUSD":0.0001}}}`
	got := claudeUsage(resultEvent(t, line), true)
	want := db.AgentUsageData{Model: "claude-sonnet-4-5", InputTokens: 14, OutputTokens: 6, CacheReadTokens: 7, CacheWriteTokens: 3,
		Turns: 2, CostNanos: nanosOf(20_100_000)}
	if string(db.MustJSON(got)) != string(db.MustJSON(want)) {
		t.Errorf("usage = %s\nwant    %s", db.MustJSON(got), db.MustJSON(want))
	}
	old := `{"type":"result","subtype":"success","num_turns":1,"modelUsage":{"m":{"inputTokens":3,"outputTokens":2,"costUSD":0.5}}}`
	if got := claudeUsage(resultEvent(t, old), false); got.Unknown || got.InputTokens != 3 || *got.CostNanos != 500_000_000 {
		t.Errorf("fresh session without the per-result figures = %+v, want the session's totals", got)
	}
	if got := claudeUsage(resultEvent(t, old), true); !got.Unknown {
		t.Errorf("resumed session without the per-result figures = %+v, want unknown", got)
	}
	if got := claudeUsage(resultEvent(t, `{"type":"result","subtype":"success"}`), false); !got.Unknown {
		t.Errorf("a result without usage = %+v, want unknown (never zero)", got)
	}
}

// Negative or non-numeric figures are refused and logged, and the turn is recorded as unknown.
func TestAbsurdUsageIsRefusedAndLogged(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{`"inputTokens":-5`, `"costUSD":"NaN"`, `"costUSD":1e400`, `"costUSD":"-Infinity"`, `"outputTokens":1.5`} {
		line := `{"type":"result","subtype":"success","model_usage_since_last_result":{"m":{"inputTokens":1,"outputTokens":1,"costUSD":0.1,` + bad + `}}}`
		core, logs := observer.New(zap.WarnLevel)
		c := (&Claude{Log: zap.New(core)}).cli()
		got := c.checkedUsage(claudeUsage(resultEvent(t, line), false))
		if !got.Unknown || got.CostNanos != nil || got.InputTokens != 0 || got.Refused == "" || got.Provider != NameClaude {
			t.Errorf("%s: usage = %+v, want unknown with the reason", bad, got)
		}
		if logs.FilterMessage("agent.usage_refused").Len() != 1 {
			t.Errorf("%s: agent.usage_refused logged %d times, want once", bad, logs.FilterMessage("agent.usage_refused").Len())
		}
	}
}

// Codex's turn.completed carries the session's totals: a resumed turn subtracts the totals its
// session log held before it, and takes the model from that log; tokens are priced from the table.
func TestCodexUsageSubtractsTheSessionsTotals(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	id := "01a23383-b149-7271-a463-74eea9f04744"
	dir := filepath.Join(home, "sessions", "2026", "12", "01")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	log := strings.Join([]string{
		`{"type":"session_meta","payload":{"id":"` + id + `"}}`,
		`{"type":"turn_context","payload":{"model":"gpt-5"}}`,
		`{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":1000,"cached_input_tokens":200,"output_tokens":50}}}}`,
		`{"type":"event_msg","payload":{"type":"token_count","info":null}}`,
	}, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(dir, "rollout-2026-12-01T21-29-54-"+id+".jsonl"), []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	r := Request{SessionID: id, Env: []string{"CODEX_HOME=" + home}}
	s := (&Codex{}).cli("").stream(r).(*codexStream)
	for _, line := range []string{`{"type":"thread.started","thread_id":"` + id + `"}`,
		`{"type":"item.completed","item":{"type":"agent_message","text":"ok"}}`,
		`{"type":"turn.completed","usage":{"input_tokens":3000,"cached_input_tokens":1200,"output_tokens":150}}`} {
		s.line([]byte(line))
	}
	c := (&Codex{}).cli("")
	got := c.checkedUsage(*s.verdict().usage)
	// 1000 uncached input at $1.25, 1000 cached at $0.125 and 100 output at $10 per million tokens.
	want := db.AgentUsageData{Provider: NameCodex, Model: "gpt-5", InputTokens: 1000, CacheReadTokens: 1000, OutputTokens: 100, Turns: 1,
		CostNanos: nanosOf(1_250_000 + 125_000 + 1_000_000), Estimated: true}
	if string(db.MustJSON(got)) != string(db.MustJSON(want)) {
		t.Errorf("usage = %s\nwant    %s", db.MustJSON(got), db.MustJSON(want))
	}
	r.SessionID = "01a23383-0000-0000-0000-000000000000" // no log: what came before is unknown
	s = (&Codex{}).cli("").stream(r).(*codexStream)
	s.line([]byte(`{"type":"turn.completed","usage":{"input_tokens":3000,"output_tokens":150}}`))
	if got := s.verdict().usage; !got.Unknown {
		t.Errorf("resumed turn without its session log = %+v, want unknown", got)
	}
}

func TestPricesFileReplacesModels(t *testing.T) {
	t.Parallel()
	if len(DefaultPrices().Models) == 0 || DefaultPrices().Source == "" || DefaultPrices().Date == "" {
		t.Fatal("the built-in price table has no models, source or date")
	}
	path := filepath.Join(t.TempDir(), "prices.json")
	if err := os.WriteFile(path, []byte(`{"source":"ours","date":"2026-12-01","models":{"gpt-stub":{"input":2,"output":8},"gpt-5":{"input":1,"output":1}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := LoadPrices(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := *p.estimate(db.AgentUsageData{Model: "gpt-stub", InputTokens: 10, OutputTokens: 5}); got != 60_000 {
		t.Errorf("gpt-stub 10 in 5 out = %d nanodollars, want 60000", got)
	}
	if got := *p.estimate(db.AgentUsageData{Model: "gpt-5-2025-08-07", InputTokens: 1_000_000}); got != db.NanosPerUSD {
		t.Errorf("a dated gpt-5 = %d, want the file's gpt-5 price", got)
	}
	if p.estimate(db.AgentUsageData{Model: "o3"}) == nil || p.estimate(db.AgentUsageData{Model: "unlisted"}) != nil {
		t.Error("the built-in models should stay and an unlisted model have no price")
	}
	for _, bad := range []string{`{}`, `{"models":{"m":{"input":-1}}}`, `not json`} {
		if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadPrices(path); err == nil || !strings.Contains(err.Error(), PricesFileEnv) {
			t.Errorf("LoadPrices(%s) = %v, want an error naming %s", bad, err, PricesFileEnv)
		}
	}
}

func TestClaudeGetsTheBudgetCap(t *testing.T) {
	t.Parallel()
	args := strings.Join(claudeArgs(Request{MaxBudgetNanos: 30_000_000}), " ")
	if !strings.Contains(args, "--max-budget-usd 0.03") {
		t.Errorf("claude args %q lack --max-budget-usd 0.03", args)
	}
}

func TestClaudeStoppedAtItsCapSaysSo(t *testing.T) {
	t.Parallel()
	line := `{"type":"result","subtype":"error_max_budget_usd","is_error":true,"errors":["Reached maximum budget ($0.01)"],"num_turns":1,
		"model_usage_since_last_result":{"claude-sonnet-4-5":{"inputTokens":100000,"outputTokens":5,"costUSD":0.300075}}}`
	c := (&Claude{}).cli()
	s := c.stream(Request{}).(*claudeStream)
	s.line([]byte(line))
	_, err := c.decide(Request{}, s.verdict(), exit{}, nil)
	var ae *Error
	if !errors.As(err, &ae) || !ae.BudgetStop || ae.Usage == nil || *ae.Usage.CostNanos != 300_075_000 ||
		!strings.Contains(ae.Msg, "Reached maximum budget ($0.01)") {
		t.Fatalf("decide = %v (%+v), want a budget stop with the turn's usage", err, ae)
	}
}
