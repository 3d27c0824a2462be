package agent

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"threadflow/db"
)

// What a turn used, read from what each CLI reports (see docs/design-notes.md, "What AI work
// costs"): Claude Code's result event carries the usage of the models since the previous result
// (model_usage_since_last_result) with their cost; Codex's turn.completed carries tokens only, and
// they are the session's running total, so a resumed turn subtracts what the session's log under
// CODEX_HOME had counted before it. Figures that are negative or not numbers are refused, logged
// (agent.usage_refused) and recorded as unknown, never as zero.

// maxTokens bounds a token count read from a CLI: more is a corrupt figure, not a turn.
const maxTokens = 1e15

// figures reads a CLI's usage numbers, remembering the first one it had to refuse.
type figures struct{ refused string }

func (f *figures) refuse(name string, raw json.RawMessage) {
	if f.refused == "" {
		f.refused = fmt.Sprintf("%s is %.40s", name, raw)
	}
}

// number reads a JSON number, or a string holding one (so "NaN" and "Infinity" are read, then
// refused); ok is false when the field is absent or null.
func number(raw json.RawMessage) (v float64, ok bool, err error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return 0, false, nil
	}
	if unq, uerr := strconv.Unquote(s); uerr == nil {
		s = unq
	}
	v, err = strconv.ParseFloat(s, 64)
	return v, true, err
}

// count reads a token count; absent is 0.
func (f *figures) count(name string, raw json.RawMessage) int64 {
	v, ok, err := number(raw)
	switch {
	case !ok:
		return 0
	case err != nil || v < 0 || v > maxTokens || v != math.Trunc(v):
		f.refuse(name, raw)
		return 0
	}
	return int64(v)
}

// usd reads an amount in dollars as nanodollars; nil when absent or refused.
func (f *figures) usd(name string, raw json.RawMessage) *int64 {
	v, ok, err := number(raw)
	if !ok {
		return nil
	}
	n, cerr := db.USDNanos(v)
	if err != nil || cerr != nil {
		f.refuse(name, raw)
		return nil
	}
	return &n
}

// done is u, or an unknown usage when a figure was refused.
func (f *figures) done(u db.AgentUsageData) db.AgentUsageData {
	if f.refused != "" {
		return db.AgentUsageData{Model: u.Model, Unknown: true, Refused: f.refused}
	}
	return u
}

// unknownUsage is the usage of a turn whose CLI reported none.
var unknownUsage = db.AgentUsageData{Unknown: true}

// claudeModelUsage is one model's entry of a result's modelUsage maps.
type claudeModelUsage map[string]json.RawMessage

// claudeUsage reads a result event: the usage since the previous result. An older CLI without
// model_usage_since_last_result reports only session totals (modelUsage, total_cost_usd), which are
// the turn's own only when the session is fresh.
func claudeUsage(r *claudeEvent, resumed bool) db.AgentUsageData {
	if r == nil {
		return unknownUsage
	}
	raw := r.ModelUsageSince
	if len(raw) == 0 || string(raw) == "null" {
		if resumed {
			return unknownUsage
		}
		raw = r.ModelUsage
	}
	var models map[string]claudeModelUsage
	if json.Unmarshal(raw, &models) != nil || len(models) == 0 {
		return unknownUsage
	}
	var f figures
	u := db.AgentUsageData{Turns: f.count("num_turns", r.NumTurns)}
	var cost int64
	priced, topCost := true, int64(-1)
	for _, name := range sortedKeys(models) {
		m := models[name]
		u.InputTokens += f.count(name+" inputTokens", m["inputTokens"])
		u.OutputTokens += f.count(name+" outputTokens", m["outputTokens"])
		u.CacheReadTokens += f.count(name+" cacheReadInputTokens", m["cacheReadInputTokens"])
		u.CacheWriteTokens += f.count(name+" cacheCreationInputTokens", m["cacheCreationInputTokens"])
		c := f.usd(name+" costUSD", m["costUSD"])
		if c == nil {
			priced = false
			continue
		}
		cost += *c
		if *c > topCost { // the turn is named after the model that cost the most
			u.Model, topCost = name, *c
		}
	}
	if u.Model == "" {
		u.Model = sortedKeys(models)[0]
	}
	if priced {
		u.CostNanos = &cost
	}
	return f.done(u)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// codexTokens is a Codex token usage: turn.completed's usage, and total_token_usage in the
// session log's token_count events.
type codexTokens struct {
	Input, Cached, CacheWrite, Output int64
}

func (f *figures) codexTokens(raw json.RawMessage) codexTokens {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		f.refuse("usage", raw)
		return codexTokens{}
	}
	return codexTokens{Input: f.count("input_tokens", m["input_tokens"]), Cached: f.count("cached_input_tokens", m["cached_input_tokens"]),
		CacheWrite: f.count("cache_write_input_tokens", m["cache_write_input_tokens"]), Output: f.count("output_tokens", m["output_tokens"])}
}

// codexUsage is the turn's usage: turn.completed's session totals less those before the turn.
// OpenAI counts cached input inside input_tokens; it is reported apart here, as Claude's is.
func codexUsage(completed json.RawMessage, before *codexTokens, model string) db.AgentUsageData {
	if len(completed) == 0 || before == nil {
		return db.AgentUsageData{Model: model, Unknown: true}
	}
	var f figures
	t := f.codexTokens(completed)
	u := db.AgentUsageData{Model: model, Turns: 1,
		InputTokens: t.Input - before.Input - (t.Cached - before.Cached), CacheReadTokens: t.Cached - before.Cached,
		CacheWriteTokens: t.CacheWrite - before.CacheWrite, OutputTokens: t.Output - before.Output}
	for _, v := range []int64{u.InputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.OutputTokens} {
		if v < 0 && f.refused == "" {
			f.refused = fmt.Sprintf("the session's token totals went down (%+v before the turn, %+v after)", *before, t)
		}
	}
	return f.done(u)
}

// codexHome is the CODEX_HOME a turn's CLI uses: the request's, the bot's, or ~/.codex.
func codexHome(env []string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], "CODEX_HOME="); ok {
			return v
		}
	}
	if v := os.Getenv("CODEX_HOME"); v != "" {
		return v
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".codex")
}

// codexSessionFile finds the log of a session: Codex writes it to
// sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl under its home.
func codexSessionFile(home, id string) string {
	if home == "" || !validArg(sessionIDPattern, id) {
		return ""
	}
	// The pattern is matched under the home, which may hold characters a pattern would read; the id
	// cannot (sessionIDPattern).
	sessions := filepath.Join(home, "sessions")
	matches, err := fs.Glob(os.DirFS(sessions), "*/*/*/rollout-*-"+id+".jsonl")
	if err != nil || len(matches) == 0 {
		return ""
	}
	sort.Strings(matches)
	return filepath.Join(sessions, filepath.FromSlash(matches[len(matches)-1]))
}

// codexLog is what a session log says: the session's token totals so far and its latest model.
type codexLog struct {
	totals *codexTokens
	model  string
}

// readCodexLog reads a session log line by line, decoding only the lines that can matter (a log
// holds whole prompts and replies).
func readCodexLog(path string) (codexLog, error) {
	var out codexLog
	if path == "" {
		return out, os.ErrNotExist
	}
	file, err := os.Open(path)
	if err != nil {
		return out, err
	}
	defer file.Close()
	r := bufio.NewReader(file)
	for {
		line, err := r.ReadBytes('\n')
		out.read(line)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

func (l *codexLog) read(line []byte) {
	switch {
	case bytes.Contains(line, []byte(`"token_count"`)):
		var ev struct {
			Payload struct {
				Info *struct {
					Total json.RawMessage `json:"total_token_usage"`
				} `json:"info"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &ev) == nil && ev.Payload.Info != nil && len(ev.Payload.Info.Total) > 0 {
			var f figures
			t := f.codexTokens(ev.Payload.Info.Total)
			if f.refused == "" {
				l.totals = &t
			}
		}
	case bytes.Contains(line, []byte(`"turn_context"`)):
		var ev struct {
			Type    string `json:"type"`
			Payload struct {
				Model string `json:"model"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &ev) == nil && ev.Type == "turn_context" && ev.Payload.Model != "" {
			l.model = ev.Payload.Model
		}
	}
}

// codexBefore is the session's token totals before a turn: zero for a fresh session, the log's
// for a resumed one, nil when its log cannot be read (the turn's usage is then unknown).
func codexBefore(r Request) *codexTokens {
	if r.SessionID == "" {
		return &codexTokens{}
	}
	l, err := readCodexLog(codexSessionFile(codexHome(r.Env), r.SessionID))
	if err != nil {
		return nil
	}
	return cmp.Or(l.totals, &codexTokens{})
}

// checkedUsage is the usage a turn records: refused figures logged, the provider named, and
// tokens the CLI did not price priced from the table (estimated).
func (c cli) checkedUsage(u db.AgentUsageData) db.AgentUsageData {
	u.Provider = c.name
	if u.Refused != "" {
		c.logger().Warn("agent.usage_refused", zap.String("provider", c.name), zap.String("model", u.Model),
			zap.String("reason", u.Refused))
	}
	if u.Unknown || u.CostNanos != nil {
		return u
	}
	if u.CostNanos = c.cfg.prices().estimate(u); u.CostNanos != nil {
		u.Estimated = true
	}
	return u
}
