package workflow

import (
	"encoding/json"

	"gopkg.in/yaml.v3"
)

// Archon's hooks are static responses the Claude SDK returns when a tool event matches. Claude
// Code's own hooks are commands whose standard output is the response, so each becomes a command
// that prints it. Responses that add context or deny a tool are translated; one that allows a tool
// (permissionDecision allow or ask), stops the agent or changes a tool's input would act past the
// node's permissions level, and is refused.
var (
	archonHookEvents   = []string{"PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "SessionStart"}
	archonHookTop      = []string{"systemMessage", "suppressOutput", "hookSpecificOutput"}
	archonHookSpecific = []string{"hookEventName", "additionalContext", "permissionDecision", "permissionDecisionReason"}
)

// claudeHook is one entry of Claude Code's settings `hooks`.
type claudeHook struct {
	Matcher string              `json:"matcher,omitempty"`
	Hooks   []claudeHookCommand `json:"hooks"`
}

type claudeHookCommand struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout,omitempty"` // seconds
}

// hooks translates a node's hooks into Claude Code settings JSON, or refuses them.
func (a *archonDecoder) hooks(f field, node *Node) string {
	if node.Provider == "codex" {
		a.refuse(f.key, "hooks")
		return ""
	}
	if f.val.Kind != yaml.MappingNode {
		a.errorf(f.val, "`hooks` must be a mapping of hook events, found %s", describe(f.val))
		return ""
	}
	out := map[string][]claudeHook{}
	for i := 0; i+1 < len(f.val.Content); i += 2 {
		event, list := f.val.Content[i], f.val.Content[i+1]
		if !contains(archonHookEvents, event.Value) || list.Kind != yaml.SequenceNode {
			a.refuse(event, "hooks")
			return ""
		}
		for _, m := range list.Content {
			h, ok := a.hook(m)
			if !ok {
				a.refuse(m, "hooks")
				return ""
			}
			out[event.Value] = append(out[event.Value], h)
		}
	}
	b, err := json.Marshal(map[string]any{"hooks": out})
	if err != nil {
		a.errorf(f.val, "cannot write these hooks as Claude settings: %v", err)
		return ""
	}
	return string(b)
}

// hook translates one {matcher, response, timeout}; ok is false for a response it must refuse.
func (a *archonDecoder) hook(m *yaml.Node) (claudeHook, bool) {
	var raw struct {
		Matcher  string         `yaml:"matcher"`
		Response map[string]any `yaml:"response"`
		Timeout  float64        `yaml:"timeout"`
	}
	if m.Kind != yaml.MappingNode || m.Decode(&raw) != nil || len(raw.Response) == 0 {
		return claudeHook{}, false
	}
	for k, v := range raw.Response {
		if !contains(archonHookTop, k) {
			return claudeHook{}, false
		}
		if k == "hookSpecificOutput" {
			spec, ok := v.(map[string]any)
			if !ok {
				return claudeHook{}, false
			}
			for sk, sv := range spec {
				if !contains(archonHookSpecific, sk) || sk == "permissionDecision" && sv != "deny" {
					return claudeHook{}, false
				}
			}
		}
	}
	resp, err := json.Marshal(raw.Response)
	if err != nil {
		return claudeHook{}, false
	}
	cmd := claudeHookCommand{Type: "command", Command: "printf '%s\\n' " + shellQuote(string(resp))}
	if raw.Timeout > 0 {
		cmd.Timeout = max(1, int(raw.Timeout))
	}
	return claudeHook{Matcher: raw.Matcher, Hooks: []claudeHookCommand{cmd}}, true
}
