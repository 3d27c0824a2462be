package agent

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func feed(s stream, lines ...string) verdict {
	for _, l := range lines {
		s.line([]byte(l))
	}
	return s.verdict()
}

// core is the part of a verdict the table tests below compare; the structured fields are tested
// against the real CLIs' transcripts (transcript_test.go).
func core(v verdict) verdict {
	return verdict{ok: v.ok, text: v.text, sessionID: v.sessionID, failure: v.failure, staleOnResume: v.staleOnResume}
}

func TestClaudeStreamVerdict(t *testing.T) {
	const (
		initLine = `{"type":"system","subtype":"init","session_id":"s-1","tools":[]}`
		asstLine = `{"type":"assistant","session_id":"s-1","message":{"content":[{"type":"text","text":"from assistant"},{"type":"tool_use","name":"Bash"}]}}`
	)
	tests := []struct {
		name  string
		lines []string
		want  verdict
	}{
		{"success", []string{initLine, asstLine,
			`{"type":"result","subtype":"success","is_error":false,"result":"final","session_id":"s-1"}`},
			verdict{ok: true, text: "final", sessionID: "s-1"}},
		{"empty result falls back to the last assistant text", []string{initLine, asstLine,
			`{"type":"result","subtype":"success","is_error":false,"result":"","session_id":"s-1"}`},
			verdict{ok: true, text: "from assistant", sessionID: "s-1"}},
		{"error reported with success subtype", []string{initLine,
			`{"type":"result","subtype":"success","is_error":true,"result":"API Error: 529 overloaded","session_id":"s-1"}`},
			verdict{sessionID: "s-1", failure: "API Error: 529 overloaded"}},
		{"error_during_execution with error objects", []string{initLine,
			`{"type":"result","subtype":"error_during_execution","is_error":true,"session_id":"s-2","errors":[{"message":"boom"}]}`},
			verdict{sessionID: "s-2", failure: "boom", staleOnResume: true}},
		{"error without text names the subtype", []string{
			`{"type":"result","subtype":"error_max_turns","is_error":true,"session_id":"s-1"}`},
			verdict{sessionID: "s-1", failure: "error_max_turns"}},
		{"no result", []string{initLine, asstLine}, verdict{sessionID: "s-1"}},
		{"chatter and broken lines are ignored", []string{"Loading…", `{"type":`, initLine,
			`{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s-1"}`},
			verdict{ok: true, text: "ok", sessionID: "s-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := core(feed(&claudeStream{}, tt.lines...)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("verdict = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestCodexStreamVerdict(t *testing.T) {
	const started = `{"type":"thread.started","thread_id":"th-1"}`
	tests := []struct {
		name  string
		lines []string
		want  verdict
	}{
		{"success keeps the last agent message", []string{started, `{"type":"turn.started"}`,
			`{"type":"item.completed","item":{"id":"i0","type":"reasoning","text":"thinking"}}`,
			`{"type":"item.completed","item":{"id":"i1","type":"agent_message","text":"first"}}`,
			`{"type":"item.completed","item":{"id":"i2","type":"agent_message","text":"last"}}`,
			`{"type":"turn.completed","usage":{"input_tokens":1}}`},
			verdict{ok: true, text: "last", sessionID: "th-1"}},
		{"older item_type field", []string{started,
			`{"type":"item.completed","item":{"id":"i1","item_type":"assistant_message","text":"old"}}`,
			`{"type":"turn.completed"}`},
			verdict{ok: true, text: "old", sessionID: "th-1"}},
		{"recovered error notice does not fail the turn", []string{started,
			`{"type":"error","message":"Reconnecting... 1/5"}`,
			`{"type":"item.completed","item":{"type":"agent_message","text":"fine"}}`,
			`{"type":"turn.completed"}`},
			verdict{ok: true, text: "fine", sessionID: "th-1"}},
		{"turn.failed", []string{started, `{"type":"error","message":"429 Too Many Requests"}`,
			`{"type":"turn.failed","error":{"message":"exceeded retry limit"}}`},
			verdict{sessionID: "th-1", failure: "exceeded retry limit\n429 Too Many Requests"}},
		{"no events", nil, verdict{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := core(feed(&codexStream{}, tt.lines...)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("verdict = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestLooseText(t *testing.T) {
	tests := map[string]string{
		`"plain"`:                             "plain",
		`["a","b"]`:                           "a\nb",
		`[{"message":"m1"},{"other":1},"s2"]`: "m1\ns2",
		`{"message":"not a list"}`:            "",
		``:                                    "",
	}
	for in, want := range tests {
		if got := looseText([]byte(in)); got != want {
			t.Errorf("looseText(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestArgsNeverCarryThePrompt(t *testing.T) {
	r := Request{Prompt: "SECRET PROMPT", Model: "m", SessionID: "s"}
	for name, args := range map[string][]string{"claude": claudeArgs(r), "codex": codexArgs(r, "")} {
		if strings.Contains(strings.Join(args, " "), r.Prompt) {
			t.Errorf("%s args %q contain the prompt", name, args)
		}
	}
}

// An Archon node's effort, tools and hooks become each CLI's flags; each CLI gets the nearest effort
// level it has.
func TestArgsCarryEffortToolsAndSettings(t *testing.T) {
	r := Request{Effort: "minimal", Tools: []string{"Read", "Grep"}, ToolsSet: true, DeniedTools: []string{"Bash"}, Settings: `{"hooks":{}}`}
	want := "--effort low --tools Read,Grep --disallowedTools Bash --settings {\"hooks\":{}}"
	if got := strings.Join(claudeArgs(r), " "); !strings.Contains(got, want) {
		t.Errorf("claude args %q lack %q", got, want)
	}
	r = Request{Tools: nil, ToolsSet: true}
	if got := claudeArgs(r); !slices.Contains(got, "--tools") || got[slices.Index(got, "--tools")+1] != "" {
		t.Errorf("allowed_tools: [] gives claude args %q, want --tools \"\"", got)
	}
	r = Request{ToolsSet: true, OutputSchema: []byte(`{"type":"object"}`)}
	if got := claudeArgs(r); got[slices.Index(got, "--tools")+1] != "StructuredOutput" {
		t.Errorf("allowed_tools: [] with output_format gives claude args %q, want the StructuredOutput tool kept", got)
	}
	r = Request{Effort: "max"}
	if got := strings.Join(codexArgs(r, ""), " "); !strings.HasPrefix(got, "--ask-for-approval never -c model_reasoning_effort=xhigh exec ") {
		t.Errorf("codex args %q", got)
	}
}

// What each event means for the watchdogs: retry notices are not progress, and some are hopeless.
func TestLineSignals(t *testing.T) {
	const (
		network  = `{"type":"error","message":"Reconnecting... waiting for network (Connection failed: error sending request)"}`
		codex401 = `{"type":"error","message":"Reconnecting... 1/5 (unexpected status 401 Unauthorized: Incorrect API key provided)"}`
		codex500 = `{"type":"error","message":"Reconnecting... 1/5 (unexpected status 500 Internal Server Error)"}`
		working  = `{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"ls"}}`
		warning  = `{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for x not found."}}`
	)
	tests := []struct {
		name  string
		s     stream
		lines []string
		want  signal // of the last line
	}{
		{"codex: no network before any work", &codexStream{}, []string{warning, network}, hopeless},
		{"codex: no network after work is waited out", &codexStream{}, []string{working, network}, retrying},
		{"codex: 401 even after work", &codexStream{}, []string{working, codex401}, hopeless},
		{"codex: 500 is retried", &codexStream{}, []string{codex500}, retrying},
		{"codex: work", &codexStream{}, []string{working}, progress},
		{"claude: 401 retry", &claudeStream{}, []string{`{"type":"system","subtype":"api_retry","attempt":1,"error_status":401,"error":"authentication_failed"}`}, hopeless},
		{"claude: 529 retry", &claudeStream{}, []string{`{"type":"system","subtype":"api_retry","attempt":1,"error_status":529,"error":"overloaded"}`}, retrying},
		{"claude: connection retry", &claudeStream{}, []string{`{"type":"system","subtype":"api_retry","attempt":1,"error_status":null,"error":"unknown"}`}, retrying},
		{"claude: assistant text", &claudeStream{}, []string{`{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]}}`}, progress},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got signal
			for _, l := range tt.lines {
				got = tt.s.line([]byte(l))
			}
			if got != tt.want {
				t.Errorf("signal = %d, want %d", got, tt.want)
			}
		})
	}
}
