package slackfake

import "encoding/json"

type rawText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type rawElement struct {
	Type     string   `json:"type"`
	ActionID string   `json:"action_id"`
	Value    string   `json:"value"`
	Style    string   `json:"style"`
	Text     *rawText `json:"text"`
}

type rawBlock struct {
	Type     string       `json:"type"`
	Text     *rawText     `json:"text"`
	Elements []rawElement `json:"elements"`
}

// parseBlocks decodes a message's Block Kit JSON, extracts its buttons and checks the limits Slack
// rejects with invalid_blocks: section text length, button label and value length, duplicate
// action ids. hasContent reports whether any block would show something.
func parseBlocks(js string) (buttons []Button, hasContent, ok bool) {
	if js == "" {
		return nil, false, true
	}
	var blocks []rawBlock
	if err := json.Unmarshal([]byte(js), &blocks); err != nil {
		return nil, false, false
	}
	seen := map[string]bool{}
	for _, b := range blocks {
		hasContent = true
		switch b.Type {
		case "section":
			if b.Text == nil || b.Text.Text == "" || len([]rune(b.Text.Text)) > maxSectionTextLen {
				return nil, false, false
			}
		case "actions":
			for _, e := range b.Elements {
				btn, valid := parseButton(e, seen)
				if !valid {
					return nil, false, false
				}
				buttons = append(buttons, btn)
			}
		}
	}
	return buttons, hasContent, true
}

func parseButton(e rawElement, seen map[string]bool) (Button, bool) {
	if e.Type != "button" || e.Text == nil || e.ActionID == "" || seen[e.ActionID] {
		return Button{}, false
	}
	seen[e.ActionID] = true
	if len([]rune(e.Text.Text)) > maxButtonLabelLen || len(e.Value) > maxButtonValueLen {
		return Button{}, false
	}
	switch e.Style {
	case "", "primary", "danger":
	default:
		return Button{}, false
	}
	return Button{Label: e.Text.Text, Value: e.Value, ActionID: e.ActionID, Style: e.Style}, true
}
