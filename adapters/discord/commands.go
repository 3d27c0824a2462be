package discord

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bwmarrin/discordgo"

	"threadflow/commands"
)

// commandName is the one application command the adapter registers.
const commandName = "workflow"

// ErrBadCommand is wrapped when an interaction's data does not match the registered command,
// which happens when an old registration lingers in Discord's cache.
var ErrBadCommand = errors.New("discord: unexpected command data")

func strOpt(name, desc string, required, autocomplete bool) *discordgo.ApplicationCommandOption {
	return &discordgo.ApplicationCommandOption{
		Type: discordgo.ApplicationCommandOptionString, Name: name, Description: desc,
		Required: required, Autocomplete: autocomplete,
	}
}

func sub(name, desc string, opts ...*discordgo.ApplicationCommandOption) *discordgo.ApplicationCommandOption {
	return &discordgo.ApplicationCommandOption{
		Type: discordgo.ApplicationCommandOptionSubCommand, Name: name, Description: desc, Options: opts,
	}
}

func runID(required bool) *discordgo.ApplicationCommandOption {
	return strOpt("id", "Run id (suggestions come from this channel)", required, true)
}

// workflowCommand mirrors the text commands, so each invocation can be turned back into one.
func workflowCommand() *discordgo.ApplicationCommand {
	return &discordgo.ApplicationCommand{
		Name: commandName, Description: "Run and manage workflows",
		Options: []*discordgo.ApplicationCommandOption{
			sub("run", "Start a workflow",
				strOpt("name", "Workflow name", true, true),
				strOpt("arguments", "What to do, passed to the workflow", false, false),
				&discordgo.ApplicationCommandOption{Type: discordgo.ApplicationCommandOptionBoolean, Name: "force",
					Description: "Start fresh even if an earlier run of this workflow is paused or failed"}),
			sub("resume", "Continue a paused or failed run where it stopped", runID(true),
				&discordgo.ApplicationCommandOption{Type: discordgo.ApplicationCommandOptionBoolean, Name: "fresh-workspace",
					Description: "Run it again from its first node: only for a run whose workspace cannot be recreated"}),
			sub("abandon", "Discard a paused or failed run", runID(true)),
			sub("approve", "Approve a run waiting at a gate", runID(true), strOpt("comment", "Optional comment", false, false)),
			sub("reject", "Reject a run waiting at a gate", runID(true), strOpt("reason", "Why", false, false)),
			sub("status", "Show a run, or the runs of this channel", runID(false)),
			sub("list", "List the available workflows"),
			sub("cancel", "Cancel a run", runID(false)),
		},
	}
}

// commandText turns a /workflow interaction into the equivalent text command, for example
// `/workflow run hello world --force`. Names and ids are quoted when they hold spaces or quotes;
// free text (arguments, comment, reason) is kept as the user typed it, quotes included, except
// where arguments would not read back as typed (see freeText).
func commandText(data discordgo.ApplicationCommandInteractionData) (string, error) {
	if data.Name != commandName || len(data.Options) != 1 {
		return "", fmt.Errorf("%w: expected /%s with a subcommand; try again in a minute", ErrBadCommand, commandName)
	}
	s := data.Options[0]
	opts := map[string]any{}
	for _, o := range s.Options {
		opts[o.Name] = o.Value
	}
	parts := []string{"/" + commandName, s.Name}
	switch s.Name {
	case "run":
		parts = appendArgs(parts, quote(str(opts, "name")), freeText(str(opts, "arguments")))
		if b, _ := opts["force"].(bool); b {
			parts = append(parts, "--force")
		}
	case "resume", "abandon", "status", "cancel":
		parts = appendArgs(parts, quoteNonEmpty(str(opts, "id")))
		if b, _ := opts["fresh-workspace"].(bool); b {
			parts = append(parts, "--fresh-workspace") // resume's only option; the parser refuses it elsewhere
		}
	case "approve":
		parts = appendArgs(parts, quote(str(opts, "id")), str(opts, "comment"))
	case "reject":
		parts = appendArgs(parts, quote(str(opts, "id")), str(opts, "reason"))
	case "list":
	default:
		return "", fmt.Errorf("%w: unknown subcommand %q", ErrBadCommand, s.Name)
	}
	return strings.Join(parts, " "), nil
}

// freeText is the arguments option as words of a text command. Quotes typed in pairs group words
// as in a typed command, so the text is kept as is when it parses. An unpaired quote (the
// apostrophe of "the user's login", straight or as phones type it) or a backslash (C:\work) is
// part of the text, not syntax of a command line the person never saw: such text is passed as
// one quoted argument, so the workflow gets exactly what was typed instead of a parse error about
// a column of that line, or a path with its backslashes dropped.
func freeText(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if _, err := commands.Parse("/workflow run x " + s); err == nil && !strings.Contains(s, `\`) {
		return s
	}
	return commands.Quote(s)
}

func str(opts map[string]any, name string) string {
	s, _ := opts[name].(string)
	return s
}

// appendArgs appends the non-empty args.
func appendArgs(parts []string, args ...string) []string {
	for _, a := range args {
		if a = strings.TrimSpace(a); a != "" {
			parts = append(parts, a)
		}
	}
	return parts
}

func quoteNonEmpty(s string) string {
	if s == "" {
		return ""
	}
	return quote(s)
}

// quote makes s one token of a text command: as is when it is a plain word, else double-quoted
// with backslash and double quote escaped.
func quote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n\r\"'`\\") {
		return s
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}
