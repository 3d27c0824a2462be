package orchestrator

import (
	"strings"

	"threadflow/db"
)

// LocalConsoleUser is the default user of `bot chat`: an admin only while no admins are configured,
// so a newcomer can try everything and a configured deployment keeps its rules.
const LocalConsoleUser = "console:local"

// Auth holds the authorization rules, the same on every platform. Ids are platform-qualified.
type Auth struct {
	Allowed map[string]bool // empty: everyone may use the bot
	Admins  map[string]bool // may abandon any run
}

// NewAuth builds Auth from id lists.
func NewAuth(allowed, admins []string) Auth {
	return Auth{Allowed: set(allowed), Admins: set(admins)}
}

func set(ids []string) map[string]bool {
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// Permits reports whether user may use the bot at all.
func (a Auth) Permits(user string) bool {
	return len(a.Allowed) == 0 || a.Allowed[user] || a.isAdmin(user)
}

func (a Auth) isAdmin(user string) bool {
	return a.Admins[user] || (len(a.Admins) == 0 && user == LocalConsoleUser)
}

// MayAbandon reports whether user may abandon run: admins any run, owners their own.
func (a Auth) MayAbandon(user string, run db.Run) bool { return a.isAdmin(user) || run.UserID == user }

// MaskUser hides most of a user id for logs: the platform and the last three characters.
func MaskUser(id string) string {
	platform, rest, ok := strings.Cut(id, ":")
	if !ok {
		platform, rest = "", id
	}
	if len(rest) > 3 {
		rest = strings.Repeat("*", len(rest)-3) + rest[len(rest)-3:]
	}
	return platform + ":" + rest
}
