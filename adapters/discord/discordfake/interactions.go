package discordfake

import (
	"encoding/json"
	"time"
)

// Interaction callback types (Discord's numbering).
const (
	callbackMessage        = 4
	callbackDeferred       = 5
	callbackDeferredUpdate = 6
	callbackAutocomplete   = 8
	flagEphemeral          = 64
)

type callbackBody struct {
	Type int `json:"type"`
	Data *struct {
		messageBody
		Choices []struct {
			Name  string `json:"name"`
			Value any    `json:"value"`
		} `json:"choices"`
	} `json:"data"`
	raw json.RawMessage // the whole body: a modal's components are read from it (modalOf)
}

func (b *callbackBody) UnmarshalJSON(raw []byte) error {
	type plain callbackBody // without this method
	if err := json.Unmarshal(raw, (*plain)(b)); err != nil {
		return err
	}
	b.raw = append(json.RawMessage(nil), raw...)
	return nil
}

func (s *Server) postCallback(args []string, b callbackBody) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.interactions[args[0]]
	if !ok || in.Token != args[1] {
		return 404, apiError("10062: Unknown interaction")
	}
	if time.Since(in.Sent) > s.callbackDeadline {
		// Discord forgets an interaction not answered in time; record the late answer for tests.
		s.responses[in.ID] = append(s.responses[in.ID], Response{Kind: KindExpired, At: time.Now()})
		return 404, apiError("10062: Unknown interaction")
	}
	if len(s.responses[in.ID]) > 0 {
		// Recorded so a test sees a second answer instead of a silently refused one.
		s.responses[in.ID] = append(s.responses[in.ID], Response{Kind: KindRejected, At: time.Now()})
		return 400, apiError("40060: Interaction has already been acknowledged")
	}
	r := b.response()
	if b.Type == callbackModal {
		m, err := modalOf(b.raw)
		if err != nil {
			return 400, apiError("50035: Invalid Form Body: " + err.Error())
		}
		r.Kind, r.Modal = KindModal, m
	}
	s.responses[in.ID] = append(s.responses[in.ID], r)
	return 204, nil
}

func (b callbackBody) response() Response {
	r := Response{Kind: KindOther, At: time.Now()}
	switch b.Type {
	case callbackDeferred:
		r.Kind = KindDeferred
	case callbackDeferredUpdate:
		r.Kind = KindDeferredUpdate
	case callbackMessage:
		r.Kind = KindMessage
	case callbackAutocomplete:
		r.Kind = KindAutocomplete
	}
	if b.Data == nil {
		return r
	}
	if b.Data.Content != nil {
		r.Content = *b.Data.Content
	}
	r.Ephemeral = b.Data.Flags&flagEphemeral != 0
	for _, c := range b.Data.Choices {
		v, _ := c.Value.(string)
		r.Choices = append(r.Choices, Choice{Name: c.Name, Value: v})
	}
	return r
}

// byTokenLocked finds the interaction a webhook token belongs to. Callers hold s.mu.
func (s *Server) byTokenLocked(token string) (interaction, bool) {
	for _, in := range s.interactions {
		if in.Token == token {
			return in, true
		}
	}
	return interaction{}, false
}

// webhookLocked answers a call on an interaction's webhook (/webhooks/{app}/{token}/...): an
// unknown app or token is a 404; otherwise answer is called with s.mu held.
func (s *Server) webhookLocked(args []string, answer func(interaction) (int, any)) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.byTokenLocked(args[1])
	if !ok || args[0] != AppID {
		return 404, apiError("10015: Unknown Webhook")
	}
	return answer(in)
}

func (s *Server) postFollowup(args []string, b messageBody) (int, any) {
	return s.webhookLocked(args, func(in interaction) (int, any) {
		r := Response{Kind: KindFollowup, Ephemeral: b.Flags&flagEphemeral != 0, At: time.Now()}
		m := &Message{ID: s.id(), ChannelID: in.ChannelID, Author: BotUserID}
		b.apply(m)
		r.Content = m.Content
		s.responses[in.ID] = append(s.responses[in.ID], r)
		if !r.Ephemeral {
			s.messages[in.ChannelID] = append(s.messages[in.ChannelID], m)
		}
		return 200, messageJSON(m)
	})
}

func (s *Server) patchOriginal(args []string, b messageBody) (int, any) {
	return s.webhookLocked(args, func(in interaction) (int, any) {
		r := Response{Kind: KindEditOriginal, At: time.Now()}
		if b.Content != nil {
			r.Content = *b.Content
		}
		s.responses[in.ID] = append(s.responses[in.ID], r)
		return 200, map[string]any{"id": s.id(), "channel_id": in.ChannelID, "content": r.Content}
	})
}
