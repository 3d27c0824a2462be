package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"threadflow/db"
)

const claudeBinEnv = "CLAUDE_BIN"

// Claude runs turns through the Claude Code CLI in print mode with stream-json output.
type Claude struct {
	Bin    string // default "claude" on PATH
	Log    *zap.Logger
	Config Config
}

// Name returns "claude".
func (c *Claude) Name() string { return NameClaude }

// Run runs one turn. The prompt goes to stdin.
func (c *Claude) Run(ctx context.Context, r Request) (Result, error) {
	return c.cli().run(ctx, r)
}

// cli is what a Claude Code turn needs.
func (c *Claude) cli() cli {
	return cli{
		name: NameClaude, display: "Claude Code", envVar: claudeBinEnv, bin: c.Bin, log: c.Log, cfg: c.Config,
		loginHint: "run `claude /login` on the bot host as the bot's user, or set ANTHROPIC_API_KEY", connectHint: "ANTHROPIC_BASE_URL",
		args:   claudeArgs,
		stream: func(r Request) stream { return &claudeStream{resumed: r.SessionID != ""} },
	}
}

func claudeArgs(r Request) []string {
	args := []string{"-p", "--output-format", "stream-json", "--verbose"}
	args = append(args, claudePermissionArgs(r.Permissions)...)
	if r.Model != "" {
		args = append(args, "--model", r.Model)
	}
	if r.Effort != "" {
		args = append(args, "--effort", claudeEffort(r.Effort))
	}
	if r.ToolsSet {
		tools := r.Tools
		if len(r.OutputSchema) > 0 { // the structured answer comes through the CLI's own tool
			tools = append(slices.Clone(tools), claudeStructuredTool)
		}
		args = append(args, "--tools", strings.Join(tools, ","))
	}
	if len(r.DeniedTools) > 0 {
		args = append(args, "--disallowedTools", strings.Join(r.DeniedTools, ","))
	}
	if r.Settings != "" {
		args = append(args, "--settings", r.Settings)
	}
	if r.SessionID != "" {
		args = append(args, "--resume", r.SessionID)
	}
	if r.MaxBudgetNanos > 0 {
		args = append(args, "--max-budget-usd", strconv.FormatFloat(db.USD(r.MaxBudgetNanos), 'f', -1, 64))
	}
	if len(r.OutputSchema) > 0 {
		// The CLI offers the model a StructuredOutput tool with this schema and reports its input
		// as the result event's structured_output.
		args = append(args, "--json-schema", string(r.OutputSchema))
	}
	return args
}

// claudeEffort is the nearest level Claude Code has (low, medium, high, xhigh, max).
func claudeEffort(e string) string {
	if e == "minimal" {
		return "low"
	}
	return e
}

// claudeEvent is the part of a stream-json line this package reads. Every event carries session_id;
// the final one has type "result".
type claudeEvent struct {
	Type      string          `json:"type"`
	Subtype   string          `json:"subtype"`
	SessionID string          `json:"session_id"`
	IsError   bool            `json:"is_error"`
	Result    json.RawMessage `json:"result"`
	// StructuredOutput is the answer under --json-schema (result events).
	StructuredOutput json.RawMessage `json:"structured_output"`
	Errors           json.RawMessage `json:"errors"`
	Message          json.RawMessage `json:"message"`
	// Error is the kind of an API failure: on an assistant message the CLI synthesised from it
	// (authentication_failed, server_error, ...) and on system/api_retry notices.
	Error string `json:"error"`
	// ErrorStatus is the HTTP status of a system/api_retry notice (null without an answer).
	ErrorStatus *int `json:"error_status"`
	// APIErrorStatus is the HTTP status behind a failed result.
	APIErrorStatus *int `json:"api_error_status"`
	// PermissionDenials lists the tool uses the permission mode refused (result events).
	PermissionDenials []struct {
		ToolName string `json:"tool_name"`
	} `json:"permission_denials"`
	ToolName string `json:"tool_name"` // system/permission_denied
	// The usage of result events, read apart (claudeUsage) so that an absurd figure cannot make the
	// whole result unreadable.
	NumTurns        json.RawMessage `json:"num_turns"`
	ModelUsage      json.RawMessage `json:"modelUsage"`
	ModelUsageSince json.RawMessage `json:"model_usage_since_last_result"`
}

// claudeStream folds the events of one turn.
type claudeStream struct {
	sessionID     string
	assistantText string // the text of the last assistant message that had any
	errorKind     string // the last API error kind reported
	errorStatus   int    // the last HTTP status reported
	lastError     string // the last API error, for a turn that is stopped before its result
	denied        []string
	result        *claudeEvent
	resumed       bool // total figures span the whole session, not this turn
	// structuredCalls are the ids of the model's StructuredOutput tool calls (--json-schema), and
	// refusal is the CLI's last refusal of one (the answer did not match the schema): the failure
	// names it when the turn ends without a structured answer.
	structuredCalls []string
	refusal         string
}

func (s *claudeStream) line(b []byte) signal {
	var ev claudeEvent
	if json.Unmarshal(b, &ev) != nil {
		return progress // not an event, but the CLI's chatter shows it is alive
	}
	if ev.SessionID != "" {
		s.sessionID = ev.SessionID
	}
	switch ev.Type {
	case "assistant":
		s.structuredCalls = append(s.structuredCalls, claudeToolUses(ev.Message, claudeStructuredTool)...)
		text := claudeMessageText(ev.Message)
		if ev.Error != "" {
			s.errorKind, s.lastError = ev.Error, text
		} else if text != "" {
			s.assistantText = text
		}
	case "user":
		if r := claudeToolErrors(ev.Message, s.structuredCalls); r != "" {
			s.refusal = r
		}
	case "system":
		return s.system(ev)
	case "result":
		s.result = &ev
	}
	return progress
}

// system reads retry and permission notices. A retry whose error proves the turn cannot succeed
// (the credentials were refused) is hopeless: Claude Code would retry it for minutes.
func (s *claudeStream) system(ev claudeEvent) signal {
	switch ev.Subtype {
	case "api_retry":
		s.errorKind, s.errorStatus = ev.Error, deref(ev.ErrorStatus)
		s.lastError = retryText(ev.Error, s.errorStatus)
		if fatalRetry(signals{status: s.errorStatus, kind: ev.Error}) {
			return hopeless
		}
		return retrying
	case "permission_denied":
		s.denied = appendNew(s.denied, ev.ToolName)
	}
	return progress
}

func retryText(kind string, status int) string {
	if status != 0 {
		return fmt.Sprintf("API error %d %s", status, kind)
	}
	return "API request failed without an answer (" + kind + ")"
}

func (s *claudeStream) verdict() verdict {
	v := verdict{sessionID: s.sessionID, lastError: s.lastError, denied: s.denied,
		signals: signals{status: s.errorStatus, kind: s.errorKind}}
	r := s.result
	if r == nil {
		v.failure = s.lastError
		return v
	}
	u := claudeUsage(r, s.resumed)
	v.usage = &u
	for _, d := range r.PermissionDenials {
		v.denied = appendNew(v.denied, d.ToolName)
	}
	text := looseText(r.Result)
	if !r.IsError && r.Subtype == "success" {
		v.ok = true
		v.text = text
		v.structured, v.refusal = r.StructuredOutput, s.refusal
		if strings.TrimSpace(text) == "" {
			v.text = s.assistantText
		}
		return v
	}
	if st := deref(r.APIErrorStatus); st != 0 {
		v.signals.status = st
	} else if s.errorKind != "" {
		// The final attempt got no HTTP answer: the status of an earlier retry does not apply.
		v.signals.status = 0
		v.signals.noResponse = s.errorKind == "server_error" || s.errorKind == "unknown"
	}
	v.failure = strings.TrimSpace(strings.Join([]string{text, looseText(r.Errors)}, "\n"))
	if v.failure == "" {
		v.failure = r.Subtype
	}
	// Claude Code answers a --resume of a session it no longer has with error_during_execution.
	v.staleOnResume = r.Subtype == "error_during_execution"
	v.budgetStop = r.Subtype == "error_max_budget_usd" // it reached --max-budget-usd
	if v.budgetStop {
		v.staleOnResume = false
	}
	return v
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// appendNew appends s to list unless it is empty or already there.
func appendNew(list []string, s string) []string {
	if s == "" || slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// claudeMessageText joins the text blocks of an assistant message.
func claudeMessageText(raw json.RawMessage) string {
	var m struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	var parts []string
	for _, c := range m.Content {
		if c.Type == "text" && c.Text != "" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// looseText renders a field whose shape varies between CLI versions: a string, a list of strings,
// or a list of objects with a message.
func looseText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return ""
	}
	var parts []string
	for _, item := range list {
		var obj struct {
			Message string `json:"message"`
		}
		switch {
		case json.Unmarshal(item, &s) == nil:
			parts = append(parts, s)
		case json.Unmarshal(item, &obj) == nil && obj.Message != "":
			parts = append(parts, obj.Message)
		}
	}
	return strings.Join(parts, "\n")
}

// claudeStructuredTool is the tool Claude Code offers the model under --json-schema.
const claudeStructuredTool = "StructuredOutput"

// claudeToolUses returns the ids of an assistant message's calls of the tool name.
func claudeToolUses(raw json.RawMessage, name string) []string {
	var m struct {
		Content []struct {
			Type, ID, Name string
		} `json:"content"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	var ids []string
	for _, c := range m.Content {
		if c.Type == "tool_use" && c.Name == name {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

// claudeToolErrors returns the text of the last error result, in a user message, of one of the
// tool calls ids.
func claudeToolErrors(raw json.RawMessage, ids []string) string {
	var m struct {
		Content []struct {
			Type      string          `json:"type"`
			ToolUseID string          `json:"tool_use_id"`
			IsError   bool            `json:"is_error"`
			Content   json.RawMessage `json:"content"`
		} `json:"content"`
	}
	if len(ids) == 0 || json.Unmarshal(raw, &m) != nil {
		return ""
	}
	last := ""
	for _, c := range m.Content {
		if c.Type == "tool_result" && c.IsError && slices.Contains(ids, c.ToolUseID) {
			last = cmp.Or(looseText(c.Content), claudeMessageText(raw), "refused")
		}
	}
	return last
}
