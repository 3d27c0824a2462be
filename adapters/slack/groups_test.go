package slack

import (
	"context"
	"slices"
	"testing"
	"time"

	"threadflow/adapters/slack/slackfake"
)

// GroupMembers reads a user group through slack-go's usergroups.users.list against the fake, keeps
// the answer for GroupCacheTTL, and never keeps a failure.
func TestGroupMembers(t *testing.T) {
	t.Parallel()
	fake := slackfake.New(t)
	fake.SetUserGroup("S1", "U1", "U2")
	a := newAdapter(t, fake, &recorder{})
	now := time.Now()
	a.groups.now = func() time.Time { return now }
	ctx := context.Background()

	got, err := a.GroupMembers(ctx, "S1")
	if err != nil || !slices.Equal(got, []string{"slack:U1", "slack:U2"}) {
		t.Fatalf("GroupMembers(S1) = %q, %v; want slack:U1, slack:U2", got, err)
	}
	fake.SetUserGroup("S1", "U3")
	if got, _ = a.GroupMembers(ctx, "S1"); !slices.Equal(got, []string{"slack:U1", "slack:U2"}) || fake.UserGroupReads("S1") != 1 {
		t.Errorf("within the cache lifetime: %q after %d reads; want the cached members after 1 read", got, fake.UserGroupReads("S1"))
	}
	now = now.Add(GroupCacheTTL)
	if got, _ = a.GroupMembers(ctx, "S1"); !slices.Equal(got, []string{"slack:U3"}) {
		t.Errorf("after the cache lifetime: %q; want slack:U3 read again", got)
	}

	if _, err := a.GroupMembers(ctx, "S404"); err == nil {
		t.Error("an unknown group answered members; want Slack's no_such_subteam")
	}
	fake.FailUserGroups("ratelimited")
	fake.SetUserGroup("S2", "U1")
	if got, err := a.GroupMembers(ctx, "S2"); err == nil {
		t.Errorf("a failed read answered %q; want the error", got)
	}
	fake.FailUserGroups("")
	if got, err := a.GroupMembers(ctx, "S2"); err != nil || !slices.Equal(got, []string{"slack:U1"}) {
		t.Errorf("after a failed read: %q, %v; want it read again, not the failure kept", got, err)
	}
}
