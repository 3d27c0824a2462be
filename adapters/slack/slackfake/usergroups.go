package slackfake

import "net/http"

// SetUserGroup makes the user group id (S…) have exactly the members (user ids, U…); nil members
// removes it, so usergroups.users.list answers no_such_subteam.
func (s *Server) SetUserGroup(id string, members ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if members == nil {
		delete(s.usergroups, id)
		return
	}
	s.usergroups[id] = append([]string(nil), members...)
}

// FailUserGroups makes usergroups.users.list answer the error code (like "ratelimited" or
// "missing_scope") until called with "".
func (s *Server) FailUserGroups(code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.usergroupError = code
}

// UserGroupReads is how many times usergroups.users.list was called for the group.
func (s *Server) UserGroupReads(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.usergroupReads[id]
}

// usergroupsUsersList answers usergroups.users.list as Slack does: the members' ids of the group
// named by the usergroup form field.
func (s *Server) usergroupsUsersList(r *http.Request) apiResult {
	id := r.Form.Get("usergroup")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.usergroupReads[id]++
	if s.usergroupError != "" {
		return apiResult{"error": s.usergroupError}
	}
	members, ok := s.usergroups[id]
	if !ok {
		return apiResult{"error": "no_such_subteam"}
	}
	return apiResult{"ok": true, "users": append([]string{}, members...)}
}
