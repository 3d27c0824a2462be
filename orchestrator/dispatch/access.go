package dispatch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"threadflow/conversation"
	"threadflow/platform"
	"threadflow/workflow"
)

// GroupMembers reads who is in one of a platform's groups of people (a Slack user group) at the
// moment someone acts. Implementations may cache briefly (the Slack adapter keeps an answer for
// slack.GroupCacheTTL); an error means the answer is unknown, and whoever asked refuses.
type GroupMembers interface {
	GroupMembers(ctx context.Context, group string) ([]string, error) // platform-qualified user ids
}

// GroupLookupError says that a group's membership could not be read: the person is refused, never
// let in on an unknown answer.
type GroupLookupError struct {
	Group string // the group entry, "slack:group:S123"
	Err   error
}

func (e *GroupLookupError) Error() string {
	return fmt.Sprintf("could not check whether you are in %s (%v)", e.Group, e.Err)
}

func (e *GroupLookupError) Unwrap() error { return e.Err }

// AccessError is a refusal by a workflow's `access`; nothing was written. Msg says it to the
// person and names the rule; Rule is the rule alone, for logs ("access.run", "access.channels").
type AccessError struct{ Rule, Msg string }

func (e *AccessError) Error() string { return e.Msg }

// memberOf returns the groups of list the person is in: Discord roles from what Discord sent with
// the message, Slack user groups read from Slack now (Groups). Membership is checked when the
// person acts, never remembered in a run, so someone removed from a group loses the right at once.
// A person listed by id needs no lookup.
func (b *Dispatcher) memberOf(ctx context.Context, who conversation.Person, list platform.People) ([]string, error) {
	if slices.Contains(list, who.ID) {
		return nil, nil
	}
	mine, _, _ := strings.Cut(who.ID, ":")
	var out []string
	for _, g := range list.Groups() {
		name, group, _ := platform.SplitGroup(g)
		if name != mine {
			continue
		}
		in, err := b.inGroup(ctx, who, name, group)
		if err != nil {
			return out, &GroupLookupError{Group: g, Err: err}
		}
		if in {
			out = append(out, g)
		}
	}
	return out, nil
}

// inGroup reports whether who is in the group of the platform name.
func (b *Dispatcher) inGroup(ctx context.Context, who conversation.Person, name, group string) (bool, error) {
	if name == platform.Discord {
		return slices.Contains(who.Roles, group), nil
	}
	dir := b.Groups[name]
	if dir == nil {
		return false, errors.New("this bot is not connected to " + name)
	}
	members, err := dir.GroupMembers(ctx, group)
	if err != nil {
		return false, err
	}
	return slices.Contains(members, who.ID), nil
}

// CheckAccess decides whether by may start wf at at, by the workflow's `access`: the one place
// every way of starting a run asks (chat commands and buttons on every platform, the terminal's
// `bot workflow run`, through StartRun). It returns *AccessError when refused.
func (b *Dispatcher) CheckAccess(ctx context.Context, wf *workflow.Workflow, at conversation.Address, by conversation.Person) error {
	a := wf.Access
	if a == nil {
		return nil
	}
	if !a.AllowsChannel(at.Platform, at.ChannelID) {
		return &AccessError{Rule: "access.channels", Msg: fmt.Sprintf("Workflow %s cannot be started here: its access.channels allows only %s. Nothing was started.",
			wf.Name, strings.Join(a.Channels, ", "))}
	}
	if !a.RunRestricted() {
		return nil
	}
	groups, err := b.memberOf(ctx, by, a.Run)
	var lookup *GroupLookupError
	if errors.As(err, &lookup) && !a.MayRun(by.ID, groups, b.Auth.IsAdmin(by.ID)) {
		return &AccessError{Rule: "access.run (group lookup failed)", Msg: fmt.Sprintf("Workflow %s was not started: its access.run lists %s, and whether you are in it could not be checked (%v), so you are refused. Nothing was started; try again in a moment.",
			wf.Name, lookup.Group, lookup.Err)}
	}
	if !a.MayRun(by.ID, groups, b.Auth.IsAdmin(by.ID)) {
		return &AccessError{Rule: "access.run", Msg: fmt.Sprintf("You (%s) may not start workflow %s: its access.run allows only %s. Nothing was started; ask one of them to run it, or an admin to add you.",
			by.ID, wf.Name, runners(a))}
	}
	return nil
}

// runners lists who access.run lets start a workflow.
func runners(a *workflow.Access) string {
	who := slices.Clone([]string(a.Run))
	if a.RunAdmins {
		who = append(who, workflow.AdminsApprover)
	}
	return strings.Join(who, ", ")
}
