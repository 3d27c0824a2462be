package dispatch

import (
	"strings"

	"threadflow/db"
	"threadflow/orchestrator/reporting"
)

// LocalConsoleUser is the default user of `bot chat`: an admin only while no admins are configured,
// so a newcomer can try everything and a configured deployment keeps its rules.
const LocalConsoleUser = "console:local"

// Auth holds the authorization rules of the bot, the same on every platform. Ids are
// platform-qualified. Who may answer a gate is declared on the gate itself (approvers,
// allow_self_approval, required_approvals) and decided by db.JudgeGate; Auth says only who is an
// admin there.
type Auth struct {
	Allowed map[string]bool // empty: everyone may use the bot
	Admins  map[string]bool // may resume and abandon anyone's runs; `@admins` on a gate names them
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
	return len(a.Allowed) == 0 || a.Allowed[user] || a.IsAdmin(user)
}

// IsAdmin reports whether user is an admin: listed in ADMIN_USER_IDS, or the terminal's default
// user while none are configured.
func (a Auth) IsAdmin(user string) bool {
	return a.Admins[user] || (len(a.Admins) == 0 && user == LocalConsoleUser)
}

// MayControl reports whether user may resume or abandon run: its owner may, and admins may do so
// with anyone's run. Resuming re-runs the owner's request in the owner's name, so a bystander may
// not; answering a gate is not controlling the run and follows the gate's own rules.
func (a Auth) MayControl(user string, run db.Run) bool { return a.IsAdmin(user) || run.UserID == user }

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

// GateOffer says what user, found in the groups memberOf when they acted, may answer at the gate
// run waits at.
func (a Auth) GateOffer(run db.Run, user string, memberOf ...string) reporting.GateOffer {
	ask := func(d db.GateDecision) db.RefusalReason {
		return db.GateRefusal(run, db.GateResolution{By: user, Admin: a.IsAdmin(user), MemberOf: memberOf, Decision: d}, nil)
	}
	return reporting.GateOffer{Run: run, User: user, Approve: ask(db.DecisionApprove), Reject: ask(db.DecisionReject)}
}
