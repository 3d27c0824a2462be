package slack

import (
	"context"
	"encoding/json"
	"unicode/utf8"

	slackapi "github.com/slack-go/slack"
	"go.uber.org/zap"

	"threadflow/conversation"
)

// A run command that lacks a workflow's required inputs opens a modal (views.open with the
// command's trigger_id) instead of failing; its submission (view_submission) is checked by the
// bot's Forms, whose refusals come back in the modal itself (response_action: errors), and
// starts the run in the channel where the command was typed.

// formCallback names the modals this adapter opens.
const formCallback = actionPrefix + "run"

// formMeta travels with the modal (private_metadata): what the command said that the form does not show.
type formMeta struct {
	Workflow string `json:"w"`
	Channel  string `json:"c"`
	Force    bool   `json:"f,omitempty"`
}

// Slack's bounds on a modal.
const (
	maxModalTitle  = 24
	maxModalBlocks = 100
	maxOptionText  = 75
	maxLabel       = 2000
	maxHint        = 2000
	maxPlaceholder = 150
)

func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

func plain(s string, n int) *slackapi.TextBlockObject {
	return slackapi.NewTextBlockObject(slackapi.PlainTextType, clipRunes(s, n), false, false)
}

// modal renders a form as a Slack modal: one input block per field, named by the input.
func modal(f *conversation.Form, meta formMeta) slackapi.ModalViewRequest {
	b, err := json.Marshal(meta)
	if err != nil {
		panic("slack: encode form metadata: " + err.Error()) // strings and a bool always encode
	}
	v := slackapi.ModalViewRequest{Type: slackapi.VTModal, CallbackID: formCallback, PrivateMetadata: string(b),
		Title: plain(f.Title, maxModalTitle), Submit: plain("Run", 24), Close: plain("Cancel", 24)}
	for _, fd := range f.Fields[:min(len(f.Fields), maxModalBlocks)] {
		var el slackapi.BlockElement
		value := fd.Value
		if value == "" {
			value = fd.Default
		}
		switch fd.Kind {
		case conversation.FieldChoice, conversation.FieldBoolean:
			var opts []*slackapi.OptionBlockObject
			var initial *slackapi.OptionBlockObject
			for _, o := range fd.Options() {
				opt := slackapi.NewOptionBlockObject(o, plain(o, maxOptionText), nil)
				if o == value {
					initial = opt
				}
				opts = append(opts, opt)
			}
			sel := slackapi.NewOptionsSelectBlockElement(slackapi.OptTypeStatic, plain("Choose", maxPlaceholder), fd.Name, opts...)
			sel.InitialOption = initial
			el = sel
		default:
			in := slackapi.NewPlainTextInputBlockElement(plain(fd.Hint, maxPlaceholder), fd.Name)
			in.InitialValue = value
			el = in
		}
		block := slackapi.NewInputBlock(fd.Name, plain(fd.Label, maxLabel), plain(fd.Hint, maxHint), el)
		block.Optional = !fd.Required
		v.Blocks.BlockSet = append(v.Blocks.BlockSet, block)
	}
	return v
}

// openForm opens the form of a slash command, if the bot has one for it; it reports whether it did
// (then the command is answered by the modal, not handled as a message).
func (a *Adapter) openForm(ctx context.Context, c slackapi.SlashCommand, m conversation.Message) bool {
	if a.forms == nil || c.TriggerID == "" {
		return false
	}
	f := a.forms.FormFor(ctx, m)
	if f == nil {
		return false
	}
	if _, err := a.api.OpenViewContext(ctx, c.TriggerID, modal(f, formMeta{Workflow: f.Workflow, Channel: c.ChannelID, Force: f.Force})); err != nil {
		a.log.Warn("slack.form_open_failed", zap.String("workflow", f.Workflow), zap.Error(err))
		return false // the command is handled as text: its answer says what is missing
	}
	a.log.Info("slack.form_opened", zap.String("workflow", f.Workflow))
	return true
}

// submitForm checks a submitted modal and starts its run; what comes back is the ack's payload:
// the refused fields, shown in the modal, or nil to close it.
func (a *Adapter) submitForm(ctx context.Context, cb slackapi.InteractionCallback) any {
	var meta formMeta
	if a.forms == nil || json.Unmarshal([]byte(cb.View.PrivateMetadata), &meta) != nil || meta.Workflow == "" || meta.Channel == "" {
		a.log.Warn("slack.form_unknown", zap.String("callback_id", cb.View.CallbackID))
		return nil
	}
	values := map[string]string{}
	for block, actions := range cb.View.State.Values {
		act, ok := actions[block]
		if !ok {
			continue
		}
		values[block] = act.Value
		if act.SelectedOption.Value != "" {
			values[block] = act.SelectedOption.Value
		}
	}
	m := conversation.Message{Address: conversation.Address{Platform: Platform, ChannelID: meta.Channel},
		UserID: userID(cb.User.ID), UserName: cb.User.Name, Mentioned: true, Direct: isDirect(meta.Channel)}
	_, refused := a.forms.Submit(ctx, m, conversation.Submission{Workflow: meta.Workflow, Values: values, Force: meta.Force})
	if len(refused) == 0 {
		return nil
	}
	errs := map[string]string{}
	for field, msg := range refused {
		if _, shown := cb.View.State.Values[field]; !shown {
			field = firstBlock(cb.View) // about no field: shown on the first
		}
		if field != "" {
			errs[field] = clipRunes(msg, maxHint)
		}
	}
	return slackapi.NewErrorsViewSubmissionResponse(errs)
}

// firstBlock is the block id of the view's first input.
func firstBlock(v slackapi.View) string {
	for _, b := range v.Blocks.BlockSet {
		if in, ok := b.(*slackapi.InputBlock); ok {
			return in.BlockID
		}
	}
	return ""
}
