package discordfake

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// Modals: an interaction answered with callback type 9 shows a modal, checked against Discord's
// bounds; SubmitModal sends its submission back as an interaction of type 5. The modal's inputs
// are Label components (type 18) holding a text input (4) or a string select (3), the layout of
// Discord's newer modals, which the fake decodes from the raw callback.

const (
	callbackModal         = 9
	interactionModal      = 5
	componentLabel        = 18
	componentTextInput    = 4
	componentStringSelect = 3
)

// KindModal is a callback of type 9: a modal shown to the person.
const KindModal = "modal"

// Modal is a modal the bot answered an interaction with.
type Modal struct {
	CustomID, Title string
	Fields          []ModalField
}

// ModalField is one labelled input of a modal.
type ModalField struct {
	Label, Description string
	CustomID           string
	Select             bool // a string select; else a text input
	Required           bool
	Value              string   // a text input's prefilled value, or the select's default option
	Options            []string // a select's option values
}

type rawComponent struct {
	Type        int           `json:"type"`
	Label       string        `json:"label"`
	Description string        `json:"description"`
	Component   *rawComponent `json:"component"`
	CustomID    string        `json:"custom_id"`
	Style       int           `json:"style"`
	Required    *bool         `json:"required"`
	Value       string        `json:"value"`
	Options     []struct {
		Label   string `json:"label"`
		Value   string `json:"value"`
		Default bool   `json:"default"`
	} `json:"options"`
}

// modalOf decodes and checks the modal of a type 9 callback, as Discord would refuse it.
func modalOf(raw json.RawMessage) (*Modal, error) {
	var body struct {
		Data struct {
			CustomID   string         `json:"custom_id"`
			Title      string         `json:"title"`
			Components []rawComponent `json:"components"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return nil, err
	}
	d := body.Data
	switch {
	case d.CustomID == "" || len(d.CustomID) > 100:
		return nil, fmt.Errorf("custom_id must be 1 to 100 characters")
	case d.Title == "" || utf8.RuneCountInString(d.Title) > 45:
		return nil, fmt.Errorf("title must be 1 to 45 characters")
	case len(d.Components) == 0 || len(d.Components) > 5:
		return nil, fmt.Errorf("a modal holds 1 to 5 components")
	}
	m := &Modal{CustomID: d.CustomID, Title: d.Title}
	for _, c := range d.Components {
		if c.Type != componentLabel || c.Component == nil || c.Label == "" || utf8.RuneCountInString(c.Label) > 45 || utf8.RuneCountInString(c.Description) > 100 {
			return nil, fmt.Errorf("each component must be a label (type 18) of 1 to 45 characters holding one input")
		}
		in := c.Component
		f := ModalField{Label: c.Label, Description: c.Description, CustomID: in.CustomID, Required: in.Required == nil || *in.Required}
		if in.CustomID == "" || len(in.CustomID) > 100 {
			return nil, fmt.Errorf("an input's custom_id must be 1 to 100 characters")
		}
		switch in.Type {
		case componentTextInput:
			if in.Style != 1 && in.Style != 2 {
				return nil, fmt.Errorf("a text input's style must be 1 or 2")
			}
			f.Value = in.Value
		case componentStringSelect:
			if len(in.Options) == 0 || len(in.Options) > 25 {
				return nil, fmt.Errorf("a select holds 1 to 25 options")
			}
			f.Select = true
			for _, o := range in.Options {
				f.Options = append(f.Options, o.Value)
				if o.Default {
					f.Value = o.Value
				}
			}
		default:
			return nil, fmt.Errorf("a label holds a text input (4) or a string select (3), not type %d", in.Type)
		}
		m.Fields = append(m.Fields, f)
	}
	return m, nil
}

// SubmitModal submits m as user in channel with values by input custom id (a field not in values
// keeps its prefilled value) and returns the submission's interaction id.
func (s *Server) SubmitModal(user, channel string, m Modal, values map[string]string) string {
	var comps []map[string]any
	for i, f := range m.Fields {
		v, ok := values[f.CustomID]
		if !ok {
			v = f.Value
		}
		in := map[string]any{"type": componentTextInput, "id": 2*i + 2, "custom_id": f.CustomID, "value": v}
		if f.Select {
			vals := []string{}
			if v != "" {
				vals = append(vals, v)
			}
			in = map[string]any{"type": componentStringSelect, "id": 2*i + 2, "custom_id": f.CustomID, "values": vals}
		}
		comps = append(comps, map[string]any{"type": componentLabel, "id": 2*i + 1, "component": in})
	}
	return s.interact(interactionModal, user, channel, map[string]any{"custom_id": m.CustomID, "components": comps}, nil)
}
