package agent

import (
	"context"
	"encoding/json"
	"strings"

	"go.uber.org/zap"
)

const claudeBinEnv = "CLAUDE_BIN"

// Claude runs turns through the Claude Code CLI in print mode with stream-json output.
type Claude struct {
	Bin string // default "claude" on PATH
	Log *zap.Logger
}

// Name returns "claude".
func (c *Claude) Name() string { return NameClaude }

// Run runs one turn. The prompt goes to stdin.
func (c *Claude) Run(ctx context.Context, r Request) (Result, error) {
	return cli{
		name: NameClaude, display: "Claude Code", envVar: claudeBinEnv, bin: c.Bin, log: c.Log,
		args:   claudeArgs,
		stream: func() stream { return &claudeStream{} },
	}.run(ctx, r)
}

func claudeArgs(r Request) []string {
	args := []string{"-p", "--output-format", "stream-json", "--verbose"}
	if r.Model != "" {
		args = append(args, "--model", r.Model)
	}
	if r.SessionID != "" {
		args = append(args, "--resume", r.SessionID)
	}
	return args
}

// claudeEvent is the part of a stream-json line this package reads. Every event carries session_id;
// the final one has type "result".
type claudeEvent struct {
	Type      string          `json:"type"`
	Subtype   string          `json:"subtype"`
	SessionID string          `json:"session_id"`
	IsError   bool            `json:"is_error"`
	Result    json.RawMessage `json:"result"`
	Errors    json.RawMessage `json:"errors"`
	Message   json.RawMessage `json:"message"`
}

// claudeStream folds the events of one turn.
type claudeStream struct {
	sessionID     string
	assistantText string // the text of the last assistant message that had any
	result        *claudeEvent
}

func (s *claudeStream) line(b []byte) {
	var ev claudeEvent
	if json.Unmarshal(b, &ev) != nil {
		return // not an event: the CLI's chatter
	}
	if ev.SessionID != "" {
		s.sessionID = ev.SessionID
	}
	switch ev.Type {
	case "assistant":
		if text := claudeMessageText(ev.Message); text != "" {
			s.assistantText = text
		}
	case "result":
		s.result = &ev
	}
}

func (s *claudeStream) verdict() verdict {
	v := verdict{sessionID: s.sessionID}
	r := s.result
	if r == nil {
		return v
	}
	text := looseText(r.Result)
	if !r.IsError && r.Subtype == "success" {
		v.ok = true
		v.text = text
		if strings.TrimSpace(text) == "" {
			v.text = s.assistantText
		}
		return v
	}
	v.failure = strings.TrimSpace(strings.Join([]string{text, looseText(r.Errors)}, "\n"))
	if v.failure == "" {
		v.failure = r.Subtype
	}
	// Claude Code answers a --resume of a session it no longer has with error_during_execution.
	v.staleOnResume = r.Subtype == "error_during_execution"
	return v
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
