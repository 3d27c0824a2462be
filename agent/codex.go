package agent

import (
	"context"
	"encoding/json"
	"strings"

	"go.uber.org/zap"
)

const codexBinEnv = "CODEX_BIN"

// Codex runs turns through the Codex CLI's non-interactive exec mode with JSONL output.
type Codex struct {
	Bin string // default "codex" on PATH
	Log *zap.Logger
}

// Name returns "codex".
func (c *Codex) Name() string { return NameCodex }

// Run runs one turn. The prompt goes to stdin (the "-" argument).
func (c *Codex) Run(ctx context.Context, r Request) (Result, error) {
	return cli{
		name: NameCodex, display: "Codex", envVar: codexBinEnv, bin: c.Bin, log: c.Log,
		args:   codexArgs,
		stream: func() stream { return &codexStream{} },
	}.run(ctx, r)
}

func codexArgs(r Request) []string {
	args := []string{"exec", "--json", "--skip-git-repo-check"}
	if r.Model != "" {
		args = append(args, "--model", r.Model)
	}
	if r.SessionID != "" {
		args = append(args, "resume", r.SessionID)
	}
	return append(args, "-")
}

// codexEvent is the part of an exec --json line this package reads.
type codexEvent struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Message  string `json:"message"` // type "error"
	Error    *struct {
		Message string `json:"message"`
	} `json:"error"` // type "turn.failed"
	Item *struct {
		Type     string `json:"type"`
		ItemType string `json:"item_type"` // older CLI versions
		Text     string `json:"text"`
	} `json:"item"`
}

// codexStream folds the events of one turn.
type codexStream struct {
	threadID  string
	text      string // the last agent message
	completed bool
	failed    bool
	errors    []string
}

func (s *codexStream) line(b []byte) {
	var ev codexEvent
	if json.Unmarshal(b, &ev) != nil {
		return
	}
	switch ev.Type {
	case "thread.started":
		s.threadID = ev.ThreadID
	case "item.completed":
		if it := ev.Item; it != nil && (it.Type == "agent_message" || it.ItemType == "assistant_message") {
			s.text = it.Text
		}
	case "turn.completed":
		s.completed = true
	case "turn.failed":
		s.failed = true
		if ev.Error != nil {
			s.errors = append(s.errors, ev.Error.Message)
		}
	case "error":
		// Also used for notices the CLI recovers from (reconnecting); it only matters if the turn fails.
		s.errors = append(s.errors, ev.Message)
	}
}

func (s *codexStream) verdict() verdict {
	if s.completed && !s.failed {
		return verdict{ok: true, text: s.text, sessionID: s.threadID}
	}
	return verdict{sessionID: s.threadID, failure: strings.TrimSpace(strings.Join(s.errors, "\n"))}
}
