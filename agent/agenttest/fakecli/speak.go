package main

import (
	"encoding/json"
	"fmt"
	"io"
)

// speaker writes a turn in one CLI's event format.
type speaker interface {
	started(session string)
	replied(session, text, cost string) // cost: raw JSON of the turn's cost; "" reports no usage
	failed(session, kind string)        // rate_limit or not_logged_in
	// expired answers a resume of a stale session the way the real CLI does.
	expired(resumed, fresh string)
}

func newSpeaker(flavor string, stdout, stderr io.Writer) speaker {
	if flavor == "codex" {
		return codex{stdout, stderr}
	}
	return claude{stdout}
}

type event map[string]any

func emit(w io.Writer, ev event) {
	b, err := json.Marshal(ev)
	if err != nil {
		panic(err) // the events are built here from strings; they always marshal
	}
	fmt.Fprintf(w, "%s\n", b)
}

type claude struct{ w io.Writer }

func (c claude) started(session string) {
	emit(c.w, event{"type": "system", "subtype": "init", "session_id": session, "tools": []string{}})
}

func (c claude) replied(session, text, cost string) {
	emit(c.w, event{"type": "assistant", "session_id": session, "message": event{
		"role": "assistant", "content": []event{{"type": "text", "text": text}}}})
	result := event{"type": "result", "subtype": "success", "is_error": false, "result": text,
		"session_id": session, "num_turns": 1}
	if cost != "" { // the usage of this turn alone, as Claude Code reports it since 2.1
		result["model_usage_since_last_result"] = event{FakeModel: event{"inputTokens": 10, "outputTokens": 5,
			"cacheReadInputTokens": 0, "cacheCreationInputTokens": 0, "costUSD": json.RawMessage(cost)}}
	}
	emit(c.w, result)
}

// FakeModel is the model the fake reports its usage for.
const FakeModel = "claude-fake-1"

var claudeFailures = map[string]string{
	"rate_limit":    `API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization"}}`,
	"not_logged_in": "Invalid API key · Please run /login",
}

func (c claude) failed(session, kind string) {
	emit(c.w, event{"type": "result", "subtype": "success", "is_error": true, "result": claudeFailures[kind],
		"session_id": session})
}

// expired mirrors Claude Code: it starts a new session, then fails it with error_during_execution.
// That new id is the trap: persisting it makes every later turn fail the same way.
func (c claude) expired(resumed, fresh string) {
	c.started(fresh)
	emit(c.w, event{"type": "result", "subtype": "error_during_execution", "is_error": true,
		"session_id": fresh, "errors": []string{"No conversation found with session ID: " + resumed}})
}

type codex struct{ w, stderr io.Writer }

func (c codex) started(session string) {
	emit(c.w, event{"type": "thread.started", "thread_id": session})
	emit(c.w, event{"type": "turn.started"})
}

func (c codex) replied(_, text, _ string) {
	emit(c.w, event{"type": "item.completed", "item": event{"id": "item_0", "type": "agent_message", "text": text}})
	emit(c.w, event{"type": "turn.completed", "usage": event{"input_tokens": 1, "output_tokens": 1}})
}

var codexFailures = map[string]string{
	"rate_limit":    "exceeded retry limit, last status: 429 Too Many Requests",
	"not_logged_in": "unexpected status 401 Unauthorized: Missing bearer or basic authentication in header",
}

func (c codex) failed(_, kind string) {
	emit(c.w, event{"type": "error", "message": codexFailures[kind]})
	emit(c.w, event{"type": "turn.failed", "error": event{"message": codexFailures[kind]}})
}

// expired mirrors codex exec resume of a thread whose rollout is gone: an error on stderr, exit 1.
func (c codex) expired(resumed, _ string) {
	fmt.Fprintf(c.stderr, "Error: thread/resume: thread/resume failed: no rollout found for thread id %s (code -32600)\n", resumed)
}
