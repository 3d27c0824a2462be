package orchestrator_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"threadflow/db"
	"threadflow/orchestrator/dispatch"
)

// slackGroups answers who is in a Slack user group as the Slack adapter would, or fails; the
// adapter itself is tested against the Slack fake (adapters/slack).
type slackGroups struct {
	members map[string][]string
	err     error
}

func (g slackGroups) GroupMembers(_ context.Context, group string) ([]string, error) {
	if g.err != nil {
		return nil, g.err
	}
	return g.members[group], nil
}

const restricted = `name: restricted
description: release managers only
access:
  run: ["slack:group:S1", "console:alice"]
  channels: ["console"]
nodes:
  - id: a
    bash: echo restricted ran
`

// access.run with a Slack user group: a member starts, a non-member and anyone while the group
// cannot be read are refused, each before anything is written, with the rule named; an admin not
// listed is refused too. /workflow list shows each person what they may run.
func TestAccessByGroupIsDecidedWhenThePersonAsks(t *testing.T) {
	engines(t, func(t *testing.T, open opener) {
		h := newHarness(t, open)
		h.writeWorkflow("restricted", restricted)
		d := h.engine.Dispatcher
		d.Groups = map[string]dispatch.GroupMembers{"slack": slackGroups{members: map[string][]string{"S1": {"slack:U1"}}}}

		for _, c := range []struct{ user, want string }{
			{"slack:U2", "You (slack:U2) may not start workflow restricted: its access.run allows only slack:group:S1, console:alice. Nothing was started"},
			{admin, "You (console:admin) may not start workflow restricted"},
		} {
			if got := joined(h.say(c.user, "", "/workflow run restricted")); !strings.Contains(got, c.want) {
				t.Errorf("%s was told %q, want %q", c.user, got, c.want)
			}
		}
		d.Groups = map[string]dispatch.GroupMembers{"slack": slackGroups{err: errors.New("slack: ratelimited")}}
		if got := joined(h.say("slack:U1", "", "/workflow run restricted")); !strings.Contains(got,
			"Workflow restricted was not started: its access.run lists slack:group:S1, and whether you are in it could not be checked (slack: ratelimited), so you are refused.") {
			t.Errorf("while the group cannot be read, a member was told %q", got)
		}
		if got := joined(h.say("console:alice", "", "/workflow list")); !strings.Contains(got, "restricted") {
			t.Errorf("alice, listed by id, needs no lookup; her list = %q", got)
		}
		if n := len(h.runs("restricted")); n != 0 {
			t.Fatalf("%d runs after three refusals, want 0", n)
		}

		d.Groups = map[string]dispatch.GroupMembers{"slack": slackGroups{members: map[string][]string{"S1": {"slack:U1"}}}}
		if got := joined(h.say("slack:U2", "", "/workflow list")); strings.Contains(got, "restricted") {
			t.Errorf("slack:U2's list shows restricted: %q", got)
		}
		if got := joined(h.say("slack:U1", "", "/workflow list")); !strings.Contains(got, "restricted") {
			t.Errorf("slack:U1's list lacks restricted: %q", got)
		}
		h.say("slack:U1", "", "/workflow run restricted")
		runs := h.runs("restricted")
		if len(runs) != 1 || runs[0].UserID != "slack:U1" {
			t.Fatalf("runs after the member asked = %+v, want one by slack:U1", runs)
		}
		h.waitStatus(runs[0].ID, db.StatusCompleted)
	})
}
