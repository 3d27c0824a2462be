package discord

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/bwmarrin/discordgo"

	"threadflow/conversation"
)

// maxContent stays below Discord's 2,000-character limit with room for a user prefix.
const maxContent = 1900

// threadArchiveMinutes is how long a quiet thread stays open: a day, the longest every guild has.
const threadArchiveMinutes = 1440

// Outbox errors.
var (
	ErrWrongPlatform = errors.New("discord: address is not a Discord one")
	ErrNotEditable   = errors.New("discord: message cannot be edited (ephemeral replies have no channel message)")
)

// outbox is the Adapter's conversation.Outbox.
type outbox struct{ a *Adapter }

// Outbox returns the adapter's outbound side. It uses REST only and works before Run.
func (a *Adapter) Outbox() conversation.Outbox { return outbox{a} }

func (o outbox) Platform() string { return Platform }

// Capabilities: Discord runs have threads, buttons, and application commands work inside threads.
func (o outbox) Capabilities() conversation.Capabilities {
	return conversation.Capabilities{Threads: true, Buttons: true, CommandsInThreads: true}
}

// noMentions is sent with every edit and ephemeral reply, and is what a post allows beyond the
// mentions the workflow names (allowedMentions): an empty parse list lets nothing else ping.
func noMentions() *discordgo.MessageAllowedMentions {
	return &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}}
}

func target(to conversation.Address) string {
	if to.ThreadID != "" {
		return to.ThreadID // threads are channels
	}
	return to.ChannelID
}

// Post sends r in chunks below the length limit, buttons on the last, and returns the last chunk's
// ref (the one a click refers to). An ephemeral reply is an ephemeral followup while the user's
// interaction token lives, else a normal message addressed to the user (which does not ping).
// Each message of a keyed reply carries a nonce derived from its key, which Discord enforces: the
// same post again within Discord's window returns the message it has (nonceOf).
func (o outbox) Post(ctx context.Context, to conversation.Address, r conversation.Reply) (conversation.Ref, error) {
	if to.Platform != Platform {
		return conversation.Ref{}, fmt.Errorf("%w: %q", ErrWrongPlatform, to.Platform)
	}
	if err := conversation.CheckKey(r); err != nil {
		return conversation.Ref{}, fmt.Errorf("discord: %w", err)
	}
	if r.Ephemeral {
		if tok, ok := o.a.tokens.live(to, r.ToUser, o.a.now()); ok {
			return conversation.Ref{Address: to}, o.a.followup(ctx, tok, to, r)
		}
	}
	chunks := o.a.chunks(r)
	var last *discordgo.Message
	for i, c := range chunks {
		send := &discordgo.MessageSend{Content: c, AllowedMentions: allowedMentions(r.Text)}
		if i == len(chunks)-1 {
			send.Components = o.a.components(r.Buttons)
		}
		nonce := ""
		if r.Key != "" {
			nonce = nonceOf(conversation.ChunkKey(r.Key, i))
		}
		m, err := o.a.send(ctx, target(to), send, nonce)
		if err != nil {
			return conversation.Ref{}, err
		}
		last = m
	}
	return conversation.Ref{Address: to, MessageID: last.ID}, nil
}

// chunks renders r, addressed to its user when it is an ephemeral reply sent openly, and splits
// it; there is always at least one chunk, so buttons have a message to sit on.
func (a *Adapter) chunks(r conversation.Reply) []string {
	content := Render(r.Text)
	if user, ok := strings.CutPrefix(r.ToUser, Platform+":"); ok && r.Ephemeral && isSnowflake(user) {
		content = "<@" + user + "> " + content
	}
	chunks := conversation.Split(content, maxContent)
	if len(chunks) == 0 {
		chunks = []string{""}
	}
	return chunks
}

// followup sends an ephemeral reply through the interaction's webhook.
func (a *Adapter) followup(ctx context.Context, tok interactionToken, to conversation.Address, r conversation.Reply) error {
	in := &discordgo.Interaction{AppID: tok.appID, Token: tok.token}
	for _, c := range a.chunks(conversation.Reply{Text: r.Text}) {
		params := &discordgo.WebhookParams{Content: c, Flags: discordgo.MessageFlagsEphemeral, AllowedMentions: noMentions()}
		err := a.withRetry(ctx, "followup", target(to), func() error {
			_, err := a.session.FollowupMessageCreate(in, true, params, discordgo.WithContext(ctx))
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// maxNonce is the longest nonce Discord accepts (characters); longer ones are a 400.
const maxNonce = 25

// nonceOf is the nonce of the message keyed key (a chunk's key): the first 25 characters of the
// base32 of its SHA-256, 125 bits, so every replica derives the same one and two keys never meet.
func nonceOf(key string) string {
	sum := sha256.Sum256([]byte(key))
	return strings.ToLower(base32.StdEncoding.EncodeToString(sum[:]))[:maxNonce]
}

// messageCreate is the body of Create Message: discordgo's, plus the nonce fields its MessageSend
// lacks. enforce_nonce makes Discord return the message that the same bot created with the same
// nonce in the last few minutes instead of creating another.
type messageCreate struct {
	*discordgo.MessageSend
	Nonce        string `json:"nonce,omitempty"`
	EnforceNonce bool   `json:"enforce_nonce,omitempty"`
}

// send creates a message in channelID, with nonce when it is not empty. It goes through the
// session's request method, as ChannelMessageSendComplex would (same endpoint, rate-limit bucket
// and HTTP client, so DISCORD_API_URL and discordgo's buckets apply), because only our body has
// the nonce. Retrying a message with a nonce cannot post it twice within Discord's window.
func (a *Adapter) send(ctx context.Context, channelID string, m *discordgo.MessageSend, nonce string) (*discordgo.Message, error) {
	endpoint := discordgo.EndpointChannelMessages(channelID)
	body := messageCreate{MessageSend: m, Nonce: nonce, EnforceNonce: nonce != ""}
	var out *discordgo.Message
	err := a.withRetry(ctx, "send", channelID, func() error {
		resp, err := a.session.RequestWithBucketID("POST", endpoint, body, endpoint, discordgo.WithContext(ctx))
		if err != nil {
			return err
		}
		return json.Unmarshal(resp, &out)
	})
	return out, err
}

// components lays buttons out in action rows of at most five.
func (a *Adapter) components(buttons []conversation.Button) []discordgo.MessageComponent {
	const perRow = 5
	var rows []discordgo.MessageComponent
	for start := 0; start < len(buttons); start += perRow {
		var row discordgo.ActionsRow
		for _, b := range buttons[start:min(start+perRow, len(buttons))] {
			row.Components = append(row.Components, discordgo.Button{
				Label: b.Label, Style: buttonStyle(b.Style), CustomID: a.buttons.customID(b.Command),
			})
		}
		rows = append(rows, row)
	}
	return rows
}

func buttonStyle(s conversation.ButtonStyle) discordgo.ButtonStyle {
	switch s {
	case conversation.StylePrimary:
		return discordgo.PrimaryButton
	case conversation.StyleDanger:
		return discordgo.DangerButton
	}
	return discordgo.SecondaryButton
}

// Edit replaces a posted message; buttons not in r are removed. Content past one message is cut
// at the first chunk, marked as cut.
func (o outbox) Edit(ctx context.Context, ref conversation.Ref, r conversation.Reply) error {
	if ref.Platform != Platform {
		return fmt.Errorf("%w: %q", ErrWrongPlatform, ref.Platform)
	}
	if ref.MessageID == "" {
		return ErrNotEditable
	}
	chunks := o.a.chunks(conversation.Reply{Text: r.Text})
	content := chunks[0]
	if len(chunks) > 1 {
		content += "\n…"
	}
	comps := o.a.components(r.Buttons)
	if comps == nil {
		comps = []discordgo.MessageComponent{} // an empty list clears the old buttons
	}
	edit := &discordgo.MessageEdit{
		ID: ref.MessageID, Channel: target(ref.Address), Content: &content,
		Components: &comps, AllowedMentions: noMentions(),
	}
	return o.a.withRetry(ctx, "edit", edit.Channel, func() error {
		_, err := o.a.session.ChannelMessageEditComplex(edit, discordgo.WithContext(ctx))
		return err
	})
}

// StartThread posts r in the channel of in and opens a thread on it. In a DM, where Discord has no
// threads, it posts there and returns in. A keyed reply posted again (Post returns the message it
// has) finds its thread: the thread started from a message has the message's id, and Discord
// refuses a second one with code 160004.
func (o outbox) StartThread(ctx context.Context, in conversation.Address, r conversation.Reply) (conversation.Address, conversation.Ref, error) {
	if in.Platform != Platform {
		return in, conversation.Ref{}, fmt.Errorf("%w: %q", ErrWrongPlatform, in.Platform)
	}
	info, err := o.a.channel(ctx, in.ChannelID)
	if err != nil {
		return in, conversation.Ref{}, err
	}
	ref, err := o.Post(ctx, in.Channel(), r)
	if err != nil || info.direct {
		return in, ref, err
	}
	var th *discordgo.Channel
	err = o.a.withRetry(ctx, "thread_start", in.ChannelID, func() error {
		var err error
		th, err = o.a.session.MessageThreadStartComplex(in.ChannelID, ref.MessageID,
			&discordgo.ThreadStart{Name: threadName(r.Text), AutoArchiveDuration: threadArchiveMinutes}, discordgo.WithContext(ctx))
		return err
	})
	var rest *discordgo.RESTError
	switch {
	case r.Key != "" && errors.As(err, &rest) && rest.Message != nil && rest.Message.Code == discordgo.ErrCodeThreadAlreadyCreatedForThisMessage:
		th = &discordgo.Channel{ID: ref.MessageID}
	case err != nil:
		return in, ref, err
	}
	o.a.channels.put(th.ID, channelInfo{parentID: in.ChannelID})
	return conversation.Address{Platform: Platform, ChannelID: in.ChannelID, ThreadID: th.ID}, ref, nil
}

// threadName is the first line of the text, within Discord's 100-character limit.
func threadName(t conversation.Text) string {
	name, _, _ := strings.Cut(strings.TrimSpace(t.String()), "\n")
	name = strings.TrimSpace(name)
	if r := []rune(name); len(r) > 100 {
		name = string(r[:99]) + "…"
	}
	if name == "" {
		name = "workflow run"
	}
	return name
}
