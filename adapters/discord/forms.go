package discord

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"
	"go.uber.org/zap"

	"threadflow/conversation"
)

// A /workflow run that lacks a workflow's required inputs is answered with a modal (interaction
// response type 9) instead of being deferred. Its inputs are Label components (type 18) holding a
// text input or, for a choice or a yes/no input, a string select: Discord's newer modal layout,
// which discordgo v0.29 can neither build nor decode, so this file writes and reads that JSON
// itself. A submission (interaction type 5) goes through the bot's Forms; a modal cannot show an
// error on a field, so refused values are answered with an ephemeral message naming them.

// formPrefix starts a run modal's custom_id: "tfrun:<force 0|1>:<workflow>".
const formPrefix = "tfrun:"

// Discord's bounds on a modal.
const (
	maxModalInputs  = 5
	maxModalOptions = 25
	maxModalTitle   = 45
	maxModalLabel   = 45
	maxModalDesc    = 100
	maxOptionLabel  = 100
	maxInputValue   = 4000
)

// componentLabel is the Label component (type 18) discordgo v0.29 lacks.
const componentLabel discordgo.ComponentType = 18

// labelComponent is a Label holding one input, marshalled as Discord expects.
type labelComponent struct {
	Label, Description string
	Input              map[string]any
}

func (labelComponent) Type() discordgo.ComponentType { return componentLabel }

func (l labelComponent) MarshalJSON() ([]byte, error) {
	v := map[string]any{"type": componentLabel, "label": l.Label, "component": l.Input}
	if l.Description != "" {
		v["description"] = l.Description
	}
	return json.Marshal(v)
}

func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// fits reports whether a form can be a Discord modal.
func fits(f *conversation.Form) bool {
	if len(f.Fields) == 0 || len(f.Fields) > maxModalInputs || len(formPrefix)+2+len(f.Workflow) > 100 {
		return false
	}
	for _, fd := range f.Fields {
		if len(fd.Options()) > maxModalOptions || len(fd.Name) > 100 {
			return false
		}
	}
	return true
}

// modalResponse renders a form as a modal.
func modalResponse(f *conversation.Form) *discordgo.InteractionResponse {
	force := "0"
	if f.Force {
		force = "1"
	}
	var comps []discordgo.MessageComponent
	for _, fd := range f.Fields {
		value := fd.Value
		if value == "" {
			value = fd.Default
		}
		var input map[string]any
		switch fd.Kind {
		case conversation.FieldChoice, conversation.FieldBoolean:
			var opts []map[string]any
			for _, o := range fd.Options() {
				opts = append(opts, map[string]any{"label": clipRunes(o, maxOptionLabel), "value": o, "default": o == value})
			}
			input = map[string]any{"type": discordgo.SelectMenuComponent, "custom_id": fd.Name, "options": opts, "required": fd.Required}
		default:
			input = map[string]any{"type": discordgo.TextInputComponent, "custom_id": fd.Name, "style": discordgo.TextInputShort,
				"required": fd.Required, "max_length": maxInputValue}
			if value != "" {
				input["value"] = clipRunes(value, maxInputValue)
			}
		}
		comps = append(comps, labelComponent{Label: clipRunes(fd.Label, maxModalLabel), Description: clipRunes(fd.Hint, maxModalDesc), Input: input})
	}
	return &discordgo.InteractionResponse{Type: discordgo.InteractionResponseModal, Data: &discordgo.InteractionResponseData{
		CustomID: formPrefix + force + ":" + f.Workflow, Title: clipRunes(f.Title, maxModalTitle), Components: comps}}
}

// openForm answers a run command with its form when the bot has one for it that fits a modal; it
// reports whether it did.
func (a *Adapter) openForm(ctx context.Context, in *discordgo.Interaction, m conversation.Message) bool {
	if a.forms == nil || !strings.HasPrefix(m.Text, "/workflow run") {
		return false
	}
	f := a.forms.FormFor(ctx, m)
	if f == nil || !fits(f) {
		return false // handled as text: the answer says what is missing and how to give it
	}
	if !a.claim(ctx, in.ID) { // another replica answers it
		return true
	}
	if !a.respond(ctx, in, modalResponse(f)) {
		return true // answered or not, the interaction's one callback is spent
	}
	a.log.Info("discord.form_opened", zap.String("workflow", f.Workflow))
	return true
}

// modalSubmit is the part of a modal submission interaction the adapter reads itself.
type modalSubmit struct {
	Type int `json:"type"`
	Data struct {
		CustomID   string           `json:"custom_id"`
		Components []submittedField `json:"components"`
	} `json:"data"`
}

// submittedField is a submitted component: a Label (18) or an action row (1) around an input, or
// the input itself (a text input's value, a select's values).
type submittedField struct {
	Type       int              `json:"type"`
	Component  *submittedField  `json:"component"`
	Components []submittedField `json:"components"`
	CustomID   string           `json:"custom_id"`
	Value      string           `json:"value"`
	Values     []string         `json:"values"`
}

func (f submittedField) collect(out map[string]string) {
	if f.Component != nil {
		f.Component.collect(out)
	}
	for _, c := range f.Components {
		c.collect(out)
	}
	switch {
	case f.CustomID == "":
	case len(f.Values) > 0:
		out[f.CustomID] = f.Values[0]
	case f.Type == int(discordgo.TextInputComponent) || f.Type == int(discordgo.SelectMenuComponent):
		out[f.CustomID] = f.Value
	}
}

// onRawEvent reads modal submissions from the gateway's raw event: discordgo fails to decode
// their components, and hands the typed handler an interaction without its data.
func (a *Adapter) onRawEvent(ctx context.Context, e *discordgo.Event) {
	if e.Type != "INTERACTION_CREATE" {
		return
	}
	var sub modalSubmit
	if json.Unmarshal(e.RawData, &sub) != nil || sub.Type != int(discordgo.InteractionModalSubmit) || !strings.HasPrefix(sub.Data.CustomID, formPrefix) {
		return
	}
	var in discordgo.Interaction
	if err := json.Unmarshal(e.RawData, &in); in.ID == "" || in.Token == "" {
		a.log.Warn("discord.form_submission_unreadable", errField(err))
		return
	}
	if a.claim(ctx, in.ID) {
		a.submitForm(ctx, &in, sub)
	}
}

// submitForm checks a submitted modal and starts its run, answering the submitter alone.
func (a *Adapter) submitForm(ctx context.Context, in *discordgo.Interaction, sub modalSubmit) {
	force, workflowName, ok := strings.Cut(strings.TrimPrefix(sub.Data.CustomID, formPrefix), ":")
	if !ok || a.forms == nil {
		a.respond(ctx, in, ephemeral("This form has expired. Type the command again."))
		return
	}
	values := map[string]string{}
	for _, c := range sub.Data.Components {
		c.collect(values)
	}
	addr, err := a.resolve(ctx, in.ChannelID, in.GuildID == "")
	if err != nil {
		a.log.Warn("discord.channel_lookup_failed", zap.String("channel", in.ChannelID), errField(err))
		a.respond(ctx, in, ephemeral("Sorry, I could not read this channel; check my View Channels permission."))
		return
	}
	userID, name := interactionUser(in)
	m := conversation.Message{Address: addr, UserID: Platform + ":" + userID, UserName: name, UserRoles: roles(in.Member),
		EventID: in.ID, Mentioned: true, Direct: in.GuildID == ""}
	runID, refused := a.forms.Submit(ctx, m, conversation.Submission{Workflow: workflowName, Values: values, Force: force == "1"})
	if len(refused) > 0 {
		msgs := make([]string, 0, len(refused))
		for _, msg := range refused {
			msgs = append(msgs, msg)
		}
		sort.Strings(msgs)
		a.respond(ctx, in, ephemeral(clipRunes("Nothing was started: "+strings.Join(msgs, "; ")+". Type the command again to fix it.", 2000)))
		return
	}
	a.respond(ctx, in, ephemeral(Render(conversation.T(conversation.P("Started run "), conversation.C(runID), conversation.P(" of "), conversation.C(workflowName), conversation.P(".")))))
}
