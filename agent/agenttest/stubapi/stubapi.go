// Package stubapi is a loopback model API for running the real Claude Code and Codex CLIs in
// tests, where the real APIs are unreachable. It speaks just enough of the Anthropic Messages API
// (ANTHROPIC_BASE_URL) and the OpenAI Responses API (a Codex model provider's base_url) to make the
// CLIs answer, fail with 401 or 529, or wait forever, as the test sets with SetMode.
//
//	api := stubapi.Start(t)
//	api.SetMode(stubapi.Unauthorized)
//	cmd.Env = append(cmd.Env, api.ClaudeEnv()...)
package stubapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Mode is how the stub answers model requests.
type Mode string

// Modes.
const (
	Normal       Mode = "normal"       // a reply; with ToolFile set, first a tool call that writes it
	Unauthorized Mode = "unauthorized" // 401 with the provider's authentication error body
	Overloaded   Mode = "overloaded"   // 529 (Anthropic) or 503 (OpenAI) overloaded
	Hang         Mode = "hang"         // accept the request and never answer
)

// Reply is the text of a normal answer.
const Reply = "stub reply: done"

// API is a running stub.
type API struct {
	srv *httptest.Server

	mu       sync.Mutex
	mode     Mode
	toolFile string // normal mode: ask the CLI to write this file (relative to its cwd) first
	answer   string // normal mode: the structured answer given when the CLI asks for one
	requests int
	bodies   [][]byte      // every model request, for Saw
	hung     chan struct{} // closed when the test ends, releasing hung handlers
	usage    Usage         // the tokens each answer reports
}

// Usage is the token counts each normal answer reports, as both APIs count them: Input excludes
// nothing here (no prompt cache), Output is the reply's.
type Usage struct{ Input, Output int }

// DefaultUsage is what answers report unless SetUsage changed it.
var DefaultUsage = Usage{Input: 10, Output: 5}

// SetUsage sets the token counts the following answers report.
func (a *API) SetUsage(u Usage) { setLocked(&a.mu, &a.usage, u) }

// Start starts a stub on a loopback port, stopped when the test ends.
func Start(t testing.TB) *API {
	t.Helper()
	a := &API{mode: Normal, hung: make(chan struct{}), usage: DefaultUsage}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(func() {
		close(a.hung)
		a.srv.CloseClientConnections()
		a.srv.Close()
	})
	return a
}

// URL is the stub's base URL, http://127.0.0.1:PORT.
func (a *API) URL() string { return a.srv.URL }

// SetMode changes how the following requests are answered.
func (a *API) SetMode(m Mode) { setLocked(&a.mu, &a.mode, m) }

// SetToolFile makes a normal answer start with a tool call that writes name (relative to the
// CLI's working directory) with ToolFileText; "" turns it off.
func (a *API) SetToolFile(name string) { setLocked(&a.mu, &a.toolFile, name) }

// SetStructuredAnswer sets the JSON a normal answer gives when the CLI asks for structured output
// (claude --json-schema offers a StructuredOutput tool: the stub calls it with this input; codex
// --output-schema asks for a JSON text: the stub answers this text). "" answers in prose.
func (a *API) SetStructuredAnswer(json string) { setLocked(&a.mu, &a.answer, json) }

// Requests returns how many model requests the stub has seen.
func (a *API) Requests() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.requests
}

// Saw reports whether any model request so far contained text (as the request's JSON has it).
func (a *API) Saw(text string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, b := range a.bodies {
		if bytes.Contains(b, []byte(text)) {
			return true
		}
	}
	return false
}

// ToolFileText is what the tool call writes.
const ToolFileText = "written by the stub tool call\n"

// ClaudeEnv returns the environment that points Claude Code at the stub with an API key.
func (a *API) ClaudeEnv() []string {
	return []string{"ANTHROPIC_BASE_URL=" + a.URL(), "ANTHROPIC_API_KEY=sk-ant-stub-key",
		"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}
}

// CodexHome writes a CODEX_HOME under dir whose config selects a model provider at the stub, and
// returns the environment that uses it.
func (a *API) CodexHome(t testing.TB, dir string) []string {
	t.Helper()
	return CodexHomeAt(t, dir, a.URL())
}

// CodexHomeAt is CodexHome for any base URL, such as a port nothing listens on.
func CodexHomeAt(t testing.TB, dir, baseURL string) []string {
	t.Helper()
	home := filepath.Join(dir, "codex-home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf(`model = "gpt-stub"
model_provider = "stub"

[model_providers.stub]
name = "stub"
base_url = "%s/v1"
env_key = "STUB_OPENAI_KEY"
wire_api = "responses"
request_max_retries = 1
stream_max_retries = 1
stream_idle_timeout_ms = 600000
`, baseURL)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"CODEX_HOME=" + home, "STUB_OPENAI_KEY=sk-stub-key"}
}

// ClosedURL returns the URL of a loopback port nothing listens on: connections are refused.
func ClosedURL(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()
	return url
}

func (a *API) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	openAI := strings.HasSuffix(r.URL.Path, "/responses")
	if !openAI && !strings.HasSuffix(r.URL.Path, "/messages") {
		// count_tokens and other side endpoints: not needed for a turn.
		http.NotFound(w, r)
		return
	}
	a.mu.Lock()
	a.requests++
	a.bodies = append(a.bodies, body)
	mode, toolFile, answer, usage := a.mode, a.toolFile, a.answer, a.usage
	a.mu.Unlock()
	switch mode {
	case Hang:
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-a.hung:
		}
		return
	case Unauthorized:
		if openAI {
			writeJSON(w, http.StatusUnauthorized, `{"error":{"message":"Incorrect API key provided: sk-stub***. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`)
		} else {
			writeJSON(w, http.StatusUnauthorized, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
		}
		return
	case Overloaded:
		if openAI {
			writeJSON(w, http.StatusServiceUnavailable, `{"error":{"message":"The server is overloaded, please try again later.","type":"server_error","param":null,"code":"server_is_overloaded"}}`)
		} else {
			writeJSON(w, 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
		}
		return
	}
	if openAI {
		a.openAIReply(w, body, toolFile, answer, usage)
	} else {
		a.anthropicReply(w, body, toolFile, answer, usage)
	}
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// sse writes server-sent events and flushes each.
type sse struct{ w http.ResponseWriter }

func newSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return sse{w}
}

func (s sse) event(name string, data any) {
	b, _ := json.Marshal(data)
	fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, b)
	s.w.(http.Flusher).Flush()
}

type obj = map[string]any

// anthropicRequest is the part of a Messages request the stub reads.
type anthropicRequest struct {
	Model  string `json:"model"`
	Stream bool   `json:"stream"`
	Tools  []struct {
		Name string `json:"name"`
	} `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// lastIsToolResult reports whether the conversation's last message answers a tool call. Messages
// in the system role (Claude Code's context notes, a hook's additional context) do not count.
func (r anthropicRequest) lastIsToolResult() bool {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role != "system" {
			return strings.Contains(string(r.Messages[i].Content), `"tool_result"`)
		}
	}
	return false
}

func (r anthropicRequest) hasTool(name string) bool {
	for _, t := range r.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

func (a *API) anthropicReply(w http.ResponseWriter, body []byte, toolFile, answer string, usage Usage) {
	var req anthropicRequest
	_ = json.Unmarshal(body, &req)
	var content []obj
	stop := "end_turn"
	if answer != "" && req.hasTool(structuredTool) && !req.lastIsToolResult() {
		var input any
		if err := json.Unmarshal([]byte(answer), &input); err != nil {
			input = answer // not JSON: the CLI gets what the test set, to refuse it
		}
		content = []obj{{"type": "tool_use", "id": "toolu_stub_so", "name": structuredTool, "input": input}}
		stop = "tool_use"
	} else if toolFile != "" && req.hasTool("Write") && !req.lastIsToolResult() {
		abs := toolFile // Claude's Write wants an absolute path; the CLI's cwd is in the system prompt
		if cwd := cwdFromSystem(body); cwd != "" && !filepath.IsAbs(toolFile) {
			abs = filepath.Join(cwd, toolFile)
		}
		content = []obj{{"type": "tool_use", "id": "toolu_stub_1", "name": "Write",
			"input": obj{"file_path": abs, "content": ToolFileText}}}
		stop = "tool_use"
	} else {
		content = []obj{{"type": "text", "text": Reply}}
	}
	msg := obj{"id": "msg_stub", "type": "message", "role": "assistant", "model": req.Model,
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": obj{"input_tokens": usage.Input, "output_tokens": usage.Output}}
	if !req.Stream {
		b, _ := json.Marshal(msg)
		writeJSON(w, http.StatusOK, string(b))
		return
	}
	s := newSSE(w)
	start := obj{}
	for k, v := range msg {
		start[k] = v
	}
	start["content"], start["stop_reason"] = []obj{}, nil
	s.event("message_start", obj{"type": "message_start", "message": start})
	for i, c := range content {
		switch c["type"] {
		case "text":
			s.event("content_block_start", obj{"type": "content_block_start", "index": i, "content_block": obj{"type": "text", "text": ""}})
			s.event("content_block_delta", obj{"type": "content_block_delta", "index": i, "delta": obj{"type": "text_delta", "text": c["text"]}})
		case "tool_use":
			input, _ := json.Marshal(c["input"])
			s.event("content_block_start", obj{"type": "content_block_start", "index": i,
				"content_block": obj{"type": "tool_use", "id": c["id"], "name": c["name"], "input": obj{}}})
			s.event("content_block_delta", obj{"type": "content_block_delta", "index": i,
				"delta": obj{"type": "input_json_delta", "partial_json": string(input)}})
		}
		s.event("content_block_stop", obj{"type": "content_block_stop", "index": i})
	}
	s.event("message_delta", obj{"type": "message_delta", "delta": obj{"stop_reason": stop, "stop_sequence": nil},
		"usage": obj{"output_tokens": usage.Output}})
	s.event("message_stop", obj{"type": "message_stop"})
}

// structuredTool is the tool Claude Code offers under --json-schema; its input is the answer.
const structuredTool = "StructuredOutput"

// cwdFromSystem finds the working directory Claude Code states in its system prompt.
func cwdFromSystem(body []byte) string {
	const marker = "Primary working directory: "
	s := string(body)
	i := strings.Index(s, marker)
	if i < 0 {
		return ""
	}
	rest := s[i+len(marker):]
	end := strings.IndexAny(rest, `\"`)
	if end < 0 {
		return ""
	}
	return rest[:end]
}

// openAIRequest is the part of a Responses request the stub reads.
type openAIRequest struct {
	Model string `json:"model"`
	Tools []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
	Input []struct {
		Type string `json:"type"`
	} `json:"input"`
	Text struct {
		Format struct {
			Type string `json:"type"`
		} `json:"format"`
	} `json:"text"`
}

func (r openAIRequest) lastIsToolOutput() bool {
	return len(r.Input) > 0 && strings.HasSuffix(r.Input[len(r.Input)-1].Type, "_output")
}

// shellTool returns the name of the shell tool Codex offered, and whether it takes a string.
func (r openAIRequest) shellTool() (string, bool) {
	for _, t := range r.Tools {
		switch t.Name {
		case "shell_command", "exec_command":
			return t.Name, true
		case "shell":
			return t.Name, false
		}
	}
	return "", false
}

func (a *API) openAIReply(w http.ResponseWriter, body []byte, toolFile, answer string, usage Usage) {
	var req openAIRequest
	_ = json.Unmarshal(body, &req)
	s := newSSE(w)
	s.event("response.created", obj{"type": "response.created", "response": obj{"id": "resp_stub"}})
	tool, stringArg := req.shellTool()
	if toolFile != "" && tool != "" && !req.lastIsToolOutput() {
		script := fmt.Sprintf("echo '%s' > '%s'", strings.TrimSpace(ToolFileText), toolFile)
		var args obj
		switch {
		case tool == "exec_command":
			args = obj{"cmd": script}
		case stringArg:
			args = obj{"command": script}
		default:
			args = obj{"command": []string{"bash", "-lc", script}}
		}
		argText, _ := json.Marshal(args)
		item := obj{"type": "function_call", "id": "fc_stub", "call_id": "call_stub_1", "name": tool, "arguments": string(argText)}
		s.event("response.output_item.done", obj{"type": "response.output_item.done", "item": item})
	} else {
		text := Reply
		if answer != "" && req.Text.Format.Type == "json_schema" { // codex --output-schema
			text = answer
		}
		item := obj{"type": "message", "role": "assistant", "id": "msg_stub",
			"content": []obj{{"type": "output_text", "text": text}}}
		s.event("response.output_item.done", obj{"type": "response.output_item.done", "item": item})
	}
	s.event("response.completed", obj{"type": "response.completed", "response": obj{"id": "resp_stub",
		"usage": obj{"input_tokens": usage.Input, "input_tokens_details": nil, "output_tokens": usage.Output,
			"output_tokens_details": nil, "total_tokens": usage.Input + usage.Output}}})
}

// setLocked stores v in *field while holding mu: what the setters of the fake's behaviour do.
func setLocked[T any](mu *sync.Mutex, field *T, v T) {
	mu.Lock()
	defer mu.Unlock()
	*field = v
}
