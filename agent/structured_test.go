package agent

import (
	"encoding/json"
	"testing"
)

// Codex's strict mode refuses object schemas without additionalProperties: false; values inside
// enum or const are data and stay as written.
func TestClosedSchemaClosesEveryObject(t *testing.T) {
	in := `{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"string"}}},` +
		`"c":{"type":"array","items":{"type":"object","properties":{"d":{"type":"integer"}}}},` +
		`"e":{"type":"object","additionalProperties":true},"f":{"enum":[{"type":"object"}]}}}`
	out, err := closedSchema(json.RawMessage(in))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		AP    *bool `json:"additionalProperties"`
		Props map[string]struct {
			AP    *bool `json:"additionalProperties"`
			Items *struct {
				AP *bool `json:"additionalProperties"`
			} `json:"items"`
			Enum []map[string]any `json:"enum"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	closed := func(p *bool) bool { return p != nil && !*p }
	if !closed(v.AP) || !closed(v.Props["a"].AP) || !closed(v.Props["c"].Items.AP) {
		t.Errorf("an object schema was left open: %s", out)
	}
	if ap := v.Props["e"].AP; ap == nil || !*ap {
		t.Errorf("additionalProperties: true was overwritten: %s", out)
	}
	if _, touched := v.Props["f"].Enum[0]["additionalProperties"]; touched {
		t.Errorf("a value inside enum was changed: %s", out)
	}
}
