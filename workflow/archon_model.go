package workflow

import "strings"

// Archon names models three ways: a literal the CLI understands, a tier (small, medium, large)
// and an @alias from .archon/config.yaml. Tiers and aliases are resolved when the file loads, so
// the frozen run names the model it uses.

// archonPreset is a tier or alias: a provider, a model and an optional effort.
type archonPreset struct {
	Provider string `yaml:"provider,omitempty"`
	Model    string `yaml:"model"`
	Effort   string `yaml:"effort,omitempty"`
}

// archonTierDefaults are Archon's tier-defaults.json for the providers Threadflow runs.
var archonTierDefaults = map[string]map[string]archonPreset{
	"claude": {"small": {Model: "haiku"}, "medium": {Model: "sonnet"}, "large": {Model: "opus"}},
	"codex": {"small": {Model: "gpt-5.5", Effort: "minimal"}, "medium": {Model: "gpt-5.5", Effort: "medium"},
		"large": {Model: "gpt-5.5", Effort: "high"}},
}

// archonDefaultProvider is Archon's default assistant.
const archonDefaultProvider = "claude"

// resolveModel turns a node's model reference into a preset for provider ("" for the default).
// ok is false for an @alias config.yaml does not define.
func (a *archonDecoder) resolveModel(provider, ref string) (archonPreset, bool) {
	p := provider
	if p == "" {
		p = archonDefaultProvider
	}
	switch {
	case ref == "inherit":
		return archonPreset{Provider: provider}, true
	case ref == "small" || ref == "medium" || ref == "large":
		if t, ok := a.bundle.Config.Tiers[ref]; ok {
			return t, true
		}
		t := archonTierDefaults[p][ref]
		t.Provider = provider
		return t, true
	case strings.HasPrefix(ref, "@"):
		t, ok := a.bundle.Config.Aliases[ref]
		return t, ok
	}
	return archonPreset{Provider: provider, Model: ref}, true
}
