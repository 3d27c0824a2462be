package workflow

import (
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"threadflow/platform"
)

var accessFields = []string{"run", "channels"}

// Access is a workflow's `access:`: who may start it and where. A workflow without it may be
// started by anyone allowed to use the bot, anywhere. Gate approvers are the gate's own rule.
type Access struct {
	Run       platform.People // who may start a run; empty with RunAdmins false: anyone
	RunAdmins bool            // `@admins` in run: ADMIN_USER_IDS may start it
	Channels  []string        // where: "slack:C123", "discord:<channel id>", "web", "console"; empty: anywhere
}

// RunRestricted reports whether `access.run` limits who may start the workflow.
func (a *Access) RunRestricted() bool { return a != nil && (len(a.Run) > 0 || a.RunAdmins) }

// MayRun reports whether the person with the platform-qualified id may start the workflow, given
// the groups they were found in when they asked (platform.People.Includes) and whether they are an
// admin.
func (a *Access) MayRun(id string, memberOf []string, admin bool) bool {
	return !a.RunRestricted() || a.Run.Includes(id, memberOf) || (a.RunAdmins && admin)
}

// AllowsChannel reports whether the workflow may be started in the channel channelID of the
// platform: a listed "platform:channel", or the bare platform name for the terminal and the web chat,
// which have no channels of their own.
func (a *Access) AllowsChannel(platformName, channelID string) bool {
	if a == nil || len(a.Channels) == 0 {
		return true
	}
	return slices.Contains(a.Channels, platformName) || slices.Contains(a.Channels, platformName+":"+channelID)
}

// wholePlatforms are the channel entries that name a platform rather than a channel of it.
var wholePlatforms = []string{platform.Web, platform.Console}

func (d *decoder) access(f field) *Access {
	fs := d.mapping(f.val, "`access`", accessFields)
	if fs == nil {
		return nil
	}
	a := &Access{}
	if g, ok := fs["run"]; ok {
		a.Run, a.RunAdmins = d.people(g, "access.run", "`access.run` entry", "remove it to let anyone allowed start the workflow")
	}
	if g, ok := fs["channels"]; ok {
		a.Channels = d.channels(g)
	}
	if len(fs) == 0 {
		d.errorf(f.val, "`access` needs `run` (who may start the workflow), `channels` (where), or both; remove it to let anyone start it anywhere")
	}
	return a
}

// channels reads `access.channels`.
func (d *decoder) channels(f field) []string {
	if f.val.Kind != yaml.SequenceNode || len(f.val.Content) == 0 {
		d.errorf(f.val, "`access.channels` must be a non-empty list like [\"slack:C0123ABCD\", \"discord:80351110224678914\", \"web\", \"console\"], found %s; remove it to allow every channel", describe(f.val))
		return nil
	}
	var out []string
	for _, item := range f.val.Content {
		ch, ok := d.str(field{f.key, item})
		switch {
		case !ok:
		case !validChannel(ch):
			d.errorf(item, "channel %q is not a channel; write slack:<channel id> (like slack:C0123ABCD), discord:<channel id>, web or console", clip(ch))
		case slices.Contains(out, ch):
			d.errorf(item, "channel %q is listed twice; remove one", ch)
		default:
			out = append(out, ch)
		}
	}
	return out
}

// validChannel reports whether ch is a Slack or Discord channel id with its platform, or a platform
// without channels.
func validChannel(ch string) bool {
	if slices.Contains(wholePlatforms, ch) {
		return true
	}
	name, id, ok := strings.Cut(ch, ":")
	return ok && (name == platform.Slack || name == platform.Discord) && id != "" && len(ch) <= 200 &&
		plainID(id) && !strings.Contains(id, ":")
}
