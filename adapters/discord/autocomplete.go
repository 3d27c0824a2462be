package discord

import (
	"context"
	"fmt"
	"time"

	"github.com/bwmarrin/discordgo"
	"go.uber.org/zap"
)

// Discord's limits on autocomplete answers.
const (
	maxChoices     = 25
	maxChoiceChars = 100
)

// autocompleteBudget leaves room in Discord's 3 s window for the answer to travel.
const autocompleteBudget = 2 * time.Second

// onAutocomplete answers suggestions for the focused option: workflow names for run's name, run
// ids of this conversation for every id.
func (a *Adapter) onAutocomplete(ctx context.Context, in *discordgo.Interaction) {
	focused := focusedOption(in.ApplicationCommandData())
	var values []string
	if focused != nil {
		prefix, _ := focused.Value.(string)
		cctx, cancel := context.WithTimeout(ctx, autocompleteBudget)
		values = a.suggest(cctx, in, focused.Name, prefix)
		cancel()
	}
	a.respond(ctx, in, &discordgo.InteractionResponse{
		Type: discordgo.InteractionApplicationCommandAutocompleteResult,
		Data: &discordgo.InteractionResponseData{Choices: choices(values)},
	})
}

func (a *Adapter) suggest(ctx context.Context, in *discordgo.Interaction, option, prefix string) []string {
	switch option {
	case "name":
		return a.ac.WorkflowNames(ctx, prefix)
	case "id":
		addr, err := a.resolve(ctx, in.ChannelID, in.GuildID == "")
		if err != nil {
			a.log.Warn("discord.channel_lookup_failed", zap.String("channel", in.ChannelID), errField(err))
			return nil
		}
		return a.ac.RunIDs(ctx, addr, prefix)
	}
	return nil
}

func focusedOption(data discordgo.ApplicationCommandInteractionData) *discordgo.ApplicationCommandInteractionDataOption {
	for _, s := range data.Options {
		for _, o := range s.Options {
			if o.Focused {
				return o
			}
		}
	}
	return nil
}

// choices keeps the values Discord accepts: at most 25, each at most 100 characters (a longer
// value could not be sent back, so it is dropped rather than cut).
func choices(values []string) []*discordgo.ApplicationCommandOptionChoice {
	out := make([]*discordgo.ApplicationCommandOptionChoice, 0, min(len(values), maxChoices))
	for _, v := range values {
		if len(out) == maxChoices {
			break
		}
		if v == "" || len([]rune(v)) > maxChoiceChars {
			continue
		}
		out = append(out, &discordgo.ApplicationCommandOptionChoice{Name: v, Value: v})
	}
	return out
}

// registerCommands overwrites the application's commands with /workflow: per guild when guilds are
// configured (visible at once), else globally (Discord may take up to an hour to show it).
func (a *Adapter) registerCommands(ctx context.Context) error {
	cmds := []*discordgo.ApplicationCommand{workflowCommand()}
	guilds := a.cfg.GuildIDs
	if len(guilds) == 0 {
		guilds = []string{""}
	}
	for _, g := range guilds {
		if _, err := a.session.ApplicationCommandBulkOverwrite(a.cfg.AppID, g, cmds, discordgo.WithContext(ctx)); err != nil {
			return fmt.Errorf("discord: register /%s (guild %q; is the bot invited with the applications.commands scope?): %w", commandName, g, redact(err))
		}
	}
	return nil
}
