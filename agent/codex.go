package agent

import (
	"context"
	"encoding/json"
	"strings"

	"go.uber.org/zap"

	"threadflow/db"
)

const codexBinEnv = "CODEX_BIN"

// Codex runs turns through the Codex CLI's non-interactive exec mode with JSONL output.
type Codex struct {
	Bin    string // default "codex" on PATH
	Log    *zap.Logger
	Config Config
}

// Name returns "codex".
func (c *Codex) Name() string { return NameCodex }

// Run runs one turn. The prompt goes to stdin (the "-" argument). An OutputSchema is written to a
// temporary file for --output-schema, removed when the turn ends.
func (c *Codex) Run(ctx context.Context, r Request) (Result, error) {
	schema := ""
	if len(r.OutputSchema) > 0 {
		path, remove, err := schemaFile(r.OutputSchema)
		if err != nil {
			return Result{}, err
		}
		defer remove()
		schema = path
	}
	return c.cli(schema).run(ctx, r)
}

// cli is what a Codex turn needs; schema is the --output-schema file, if any.
func (c *Codex) cli(schema string) cli {
	return cli{
		name: NameCodex, display: "Codex", envVar: codexBinEnv, bin: c.Bin, log: c.Log, cfg: c.Config,
		loginHint: "run `codex login` on the bot host as the bot's user, or set OPENAI_API_KEY", connectHint: "the model provider's base_url in CODEX_HOME/config.toml",
		args: func(r Request) []string { return codexArgs(r, schema) },
		stream: func(r Request) stream {
			return &codexStream{home: codexHome(r.Env), before: codexBefore(r), model: r.Model}
		},
	}
}

// codexEffort is the nearest level Codex has (minimal, low, medium, high, xhigh).
func codexEffort(e string) string {
	if e == "max" {
		return "xhigh"
	}
	return e
}

func codexArgs(r Request, schema string) []string {
	global, exec := codexPermissionArgs(r.Permissions)
	if r.Effort != "" {
		global = append(global, "-c", "model_reasoning_effort="+codexEffort(r.Effort))
	}
	args := append(global, "exec", "--json", "--skip-git-repo-check")
	args = append(args, exec...)
	if r.Model != "" {
		args = append(args, "--model", r.Model)
	}
	if schema != "" {
		// Codex asks the model for a final message in this shape; it does not check the answer.
		args = append(args, "--output-schema", schema)
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
	Usage json.RawMessage `json:"usage"` // turn.completed: the session's token totals
	Item  *struct {
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
	working   bool     // the turn did work: items other than warnings
	final     string   // the turn.failed message: the turn's own verdict
	errors    []string // error events, including recovered ones, last few kept
	lastError string
	// Usage: the session's log directory, its token totals before the turn (nil: unknown), the
	// model asked for, and turn.completed's totals.
	home   string
	before *codexTokens
	model  string
	totals json.RawMessage
}

// maxCodexErrors bounds the error notices kept: Codex may print "Reconnecting..." for ever.
const maxCodexErrors = 5

// reconnecting marks the notices Codex prints while it retries on its own.
const reconnecting = "Reconnecting..."

func (s *codexStream) line(b []byte) signal {
	var ev codexEvent
	if json.Unmarshal(b, &ev) != nil {
		return progress // not an event, but the CLI's chatter shows it is alive
	}
	switch ev.Type {
	case "thread.started":
		s.threadID = ev.ThreadID
	case "item.started", "item.updated":
		s.working = true
	case "item.completed":
		it := ev.Item
		if it != nil && (it.Type == "agent_message" || it.ItemType == "assistant_message") {
			s.text = it.Text
		}
		if it != nil && it.Type != "error" { // an "error" item is a warning, such as unknown model metadata
			s.working = true
		}
	case "turn.completed":
		s.completed = true
		s.totals = ev.Usage
	case "turn.failed":
		s.failed = true
		if ev.Error != nil {
			s.final = ev.Error.Message
			s.lastError = ev.Error.Message
		}
	case "error":
		// Also used for notices the CLI recovers from (reconnecting); they matter only if the turn
		// fails, or when they already prove it cannot succeed.
		s.lastError = ev.Message
		s.errors = append(s.errors, ev.Message)
		if len(s.errors) > maxCodexErrors {
			s.errors = s.errors[1:]
		}
		return s.retry(ev.Message)
	}
	return progress
}

// retry judges an error notice. Reconnecting notices are retries, not progress. One is hopeless
// when the credentials were refused, or when the API could not be reached before the turn did any
// work: Codex then waits for a network for ever, while the cause is a wrong base URL, a proxy or a
// firewall. Once the turn has done work, a lost network is waited out up to AGENT_IDLE_TIMEOUT.
func (s *codexStream) retry(msg string) signal {
	if !strings.HasPrefix(msg, reconnecting) {
		return progress
	}
	sig := signals{text: msg}
	c, r := classify(sig, false, false)
	if fatalRetry(sig) || (!s.working && c == db.ClassInfra && r == reasonConnection) {
		return hopeless
	}
	return retrying
}

func (s *codexStream) verdict() verdict {
	if s.completed && !s.failed {
		return verdict{ok: true, text: s.text, sessionID: s.threadID, structured: jsonText(s.text), usage: s.usage()}
	}
	// The turn's own verdict comes first: it is buried under the retry notices otherwise.
	failure := s.final
	if failure == "" {
		failure = strings.Join(s.errors, "\n")
	} else if len(s.errors) > 0 && s.errors[len(s.errors)-1] != s.final {
		failure += "\n" + strings.Join(s.errors, "\n")
	}
	return verdict{sessionID: s.threadID, failure: strings.TrimSpace(failure), lastError: s.lastError,
		signals: signals{status: statusIn(failure)}}
}

// usage is the turn's usage; the model is the one the session's log names (Codex does not say it
// on stdout), else the one asked for.
func (s *codexStream) usage() *db.AgentUsageData {
	model := s.model
	if l, err := readCodexLog(codexSessionFile(s.home, s.threadID)); err == nil && l.model != "" {
		model = l.model
	}
	u := codexUsage(s.totals, s.before, model)
	return &u
}
