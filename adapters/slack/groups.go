package slack

import (
	"context"
	"sync"
	"time"
)

// GroupCacheTTL is how long a user group's members, once read from Slack, answer who is in it.
// Membership is checked whenever someone acts on a list that names the group; a short lifetime
// keeps that to one usergroups.users.list call per group and minute in a busy channel (the method
// is rate-limited, tier 2: about 20 a minute), while someone removed from a group loses the right
// within a minute. A failed read is never cached: the next act asks again.
const GroupCacheTTL = 60 * time.Second

// groupCache remembers the members of user groups for GroupCacheTTL.
type groupCache struct {
	mu      sync.Mutex
	entries map[string]groupEntry
	now     func() time.Time
}

type groupEntry struct {
	members []string // platform-qualified
	read    time.Time
}

// GroupMembers reads the members of the Slack user group (its id, S…) as platform-qualified user
// ids, through a cache of GroupCacheTTL. It implements dispatch.GroupMembers; the bot token needs
// the usergroups:read scope.
func (a *Adapter) GroupMembers(ctx context.Context, group string) ([]string, error) {
	if m, ok := a.groups.get(group); ok {
		return m, nil
	}
	ids, err := a.api.GetUserGroupMembersContext(ctx, group)
	if err != nil {
		return nil, err
	}
	members := make([]string, len(ids))
	for i, id := range ids {
		members[i] = Platform + ":" + id
	}
	a.groups.put(group, members)
	return members, nil
}

func (c *groupCache) get(group string) ([]string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[group]
	if !ok || c.clock().Sub(e.read) >= GroupCacheTTL {
		return nil, false
	}
	return e.members, true
}

func (c *groupCache) put(group string, members []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]groupEntry{}
	}
	c.entries[group] = groupEntry{members: members, read: c.clock()}
}

func (c *groupCache) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}
