package slackfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"
	"unicode/utf8"
)

// Modals: views.open with a trigger_id a slash command handed out (each usable once, as with
// Slack), and view_submission envelopes whose ack may carry `response_action: errors`.

// View is a modal the bot opened.
type View struct {
	ID, TriggerID   string
	CallbackID      string
	PrivateMetadata string
	Title           string
	Inputs          []ViewInput
}

// ViewInput is one input block of a modal.
type ViewInput struct {
	BlockID, ActionID string
	Label, Hint       string
	Optional          bool
	Element           string   // plain_text_input or static_select
	Options           []string // static_select's option values
	Initial           string   // initial_value or initial_option's value
}

type textObject struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type viewRequest struct {
	TriggerID string `json:"trigger_id"`
	View      struct {
		Type            string      `json:"type"`
		CallbackID      string      `json:"callback_id"`
		PrivateMetadata string      `json:"private_metadata"`
		Title           *textObject `json:"title"`
		Blocks          []struct {
			Type     string      `json:"type"`
			BlockID  string      `json:"block_id"`
			Label    *textObject `json:"label"`
			Hint     *textObject `json:"hint"`
			Optional bool        `json:"optional"`
			Element  struct {
				Type          string `json:"type"`
				ActionID      string `json:"action_id"`
				InitialValue  string `json:"initial_value"`
				InitialOption *struct {
					Value string `json:"value"`
				} `json:"initial_option"`
				Options []struct {
					Value string      `json:"value"`
					Text  *textObject `json:"text"`
				} `json:"options"`
			} `json:"element"`
		} `json:"blocks"`
	} `json:"view"`
}

// viewsOpen checks a views.open request as Slack does (a fresh trigger, a modal within Slack's
// bounds) and records the view.
func (s *Server) viewsOpen(r *http.Request) apiResult {
	var req viewRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		return apiResult{"error": "invalid_json"}
	}
	v := req.View
	switch {
	case req.TriggerID == "":
		return apiResult{"error": "invalid_arguments"}
	case v.Type != "modal" || v.Title == nil || v.Title.Type != "plain_text":
		return apiResult{"error": "invalid_arguments"}
	case utf8.RuneCountInString(v.Title.Text) > 24 || len(v.Blocks) > 100 || len(v.PrivateMetadata) > 3000:
		return apiResult{"error": "invalid_arguments"}
	}
	view := View{TriggerID: req.TriggerID, CallbackID: v.CallbackID, PrivateMetadata: v.PrivateMetadata, Title: v.Title.Text}
	for _, b := range v.Blocks {
		if b.Type != "input" || b.BlockID == "" || b.Label == nil || b.Element.ActionID == "" {
			return apiResult{"error": "invalid_arguments"}
		}
		in := ViewInput{BlockID: b.BlockID, ActionID: b.Element.ActionID, Label: b.Label.Text, Optional: b.Optional,
			Element: b.Element.Type, Initial: b.Element.InitialValue}
		if b.Hint != nil {
			in.Hint = b.Hint.Text
		}
		switch b.Element.Type {
		case "plain_text_input":
		case "static_select":
			if len(b.Element.Options) == 0 || len(b.Element.Options) > 100 {
				return apiResult{"error": "invalid_arguments"}
			}
			for _, o := range b.Element.Options {
				in.Options = append(in.Options, o.Value)
			}
			if b.Element.InitialOption != nil {
				in.Initial = b.Element.InitialOption.Value
			}
		default:
			return apiResult{"error": "invalid_arguments"}
		}
		view.Inputs = append(view.Inputs, in)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.triggers[req.TriggerID] {
		return apiResult{"error": "invalid_trigger_id"} // unknown, or used already
	}
	s.triggers[req.TriggerID] = false
	view.ID = fmt.Sprintf("V%06d", s.nextLocked())
	s.views = append(s.views, view)
	s.notifyLocked()
	return apiResult{"ok": true, "view": map[string]any{"id": view.ID, "type": "modal", "callback_id": view.CallbackID}}
}

// Views returns the modals opened so far, oldest first.
func (s *Server) Views() []View {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]View(nil), s.views...)
}

// WaitView waits for the nth modal (from 1) and returns it.
func (s *Server) WaitView(t testing.TB, n int, timeout time.Duration) View {
	t.Helper()
	s.WaitFor(t, timeout, func(s *Server) bool { return len(s.Views()) >= n })
	return s.Views()[n-1]
}

// SubmitView submits view as user with values by block id (an option's value for a select), as
// a view_submission envelope, waits for its ack and returns the ack's payload: nil when the bot
// closed the modal, else its response (`{"response_action":"errors","errors":{...}}`).
func (s *Server) SubmitView(t testing.TB, user string, v View, values map[string]string, timeout time.Duration) json.RawMessage {
	t.Helper()
	state := map[string]map[string]any{}
	for _, in := range v.Inputs {
		val, ok := values[in.BlockID]
		if !ok {
			val = in.Initial
		}
		act := map[string]any{"type": in.Element}
		if in.Element == "static_select" {
			if val != "" {
				act["selected_option"] = map[string]any{"value": val, "text": map[string]any{"type": "plain_text", "text": val}}
			}
		} else {
			act["value"] = val
		}
		state[in.BlockID] = map[string]any{in.ActionID: act}
	}
	id := s.push("interactive", map[string]any{
		"type": "view_submission", "team": map[string]any{"id": TeamID}, "api_app_id": AppID,
		"user": map[string]any{"id": user, "name": "user-" + user, "team_id": TeamID},
		"view": map[string]any{"id": v.ID, "type": "modal", "callback_id": v.CallbackID, "private_metadata": v.PrivateMetadata,
			"state": map[string]any{"values": state}},
	})
	s.WaitFor(t, timeout, func(s *Server) bool { return s.Acked(id) })
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ackPayloads[id]
}
