package discordfake

import (
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
)

// Guild members and direct messages, as Discord serves them: List Guild Members (GET
// /guilds/{guild}/members, paged by limit and after, answered 403 Missing Access unless the
// application has the Server Members intent), Create DM (POST /users/@me/channels) and messages
// to a DM channel, refused with 50007 for a user who does not take DMs from the bot.

// The guild's members are the users with a profile (SetProfile), with the profile's roles.

// DenyMemberList makes List Guild Members answer 403 Missing Access, as Discord does for an
// application without the Server Members privileged intent; false serves the list again.
func (s *Server) DenyMemberList(deny bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.denyMembers = deny
}

// NoDMs makes messages to the DM channel with user fail with 50007 "Cannot send messages to this
// user" (the user closed DMs from server members), or succeed again with false.
func (s *Server) NoDMs(user string, refuse bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if refuse {
		s.noDMs[user] = true
	} else {
		delete(s.noDMs, user)
	}
}

// DMs are the bot's messages in its DM channel with user, oldest first.
func (s *Server) DMs(user string) []Message { return s.Messages(DMChannel(user)) }

// MemberListReads is how many List Guild Members pages were read.
func (s *Server) MemberListReads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.memberReads
}

// listMembers is List Guild Members: members ordered by user id, after the id `after`, at most
// `limit` (1 to 1000, default 1).
func (s *Server) listMembers(r *http.Request, args []string, _ []byte) (int, any) {
	limit := 1
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return 400, invalidForm("limit", "NUMBER_TYPE_MAX", "int value should be between 1 and 1000.")
		}
		limit = n
	}
	after, _ := strconv.ParseUint(r.URL.Query().Get("after"), 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.memberReads++
	if s.denyMembers {
		return 403, map[string]any{"code": 50001, "message": "Missing Access"}
	}
	if args[0] != GuildID {
		return 404, map[string]any{"code": 10004, "message": "Unknown Guild"}
	}
	var ids []uint64
	for id := range s.profiles {
		if n, err := strconv.ParseUint(id, 10, 64); err == nil && n > after {
			ids = append(ids, n)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	out := []map[string]any{}
	for _, n := range ids[:min(limit, len(ids))] {
		id := strconv.FormatUint(n, 10)
		p := s.profiles[id]
		roles := append([]string{}, p.Roles...)
		out = append(out, map[string]any{"user": map[string]any{"id": id, "username": p.Username}, "nick": p.Nick, "roles": roles})
	}
	return 200, out
}

// createDM is Create DM: the DM channel between the bot and recipient_id, the same one each time.
func (s *Server) createDM(_ *http.Request, _ []string, raw []byte) (int, any) {
	var b struct {
		RecipientID string `json:"recipient_id"`
	}
	if err := json.Unmarshal(raw, &b); err != nil || b.RecipientID == "" {
		return 400, invalidForm("recipient_id", "BASE_TYPE_REQUIRED", "This field is required")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id := DMChannel(b.RecipientID)
	s.channels[id] = channel{ID: id, Type: 1, Recipient: b.RecipientID}
	return 200, map[string]any{"id": id, "type": 1, "recipients": []map[string]any{{"id": b.RecipientID}}}
}
